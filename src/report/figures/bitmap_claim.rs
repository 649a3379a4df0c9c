//! The second article's bitmap claim: the raw bitmap at m = n bits and more, beside a Bloom filter of the same size.

use super::*;
use crate::kind::Role;
use crate::registry::role_id;

pub struct BitmapClaim;

impl Figure for BitmapClaim {
    fn stem(&self) -> &'static str {
        "bitmap_claim"
    }
    fn title(&self) -> &'static str {
        "The bitmap claim: one hash, m bits for n keys, vs a Bloom filter of the same size"
    }
    fn size(&self, _: &Results) -> (u32, u32) {
        panels::size(1)
    }
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, r: &Results) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        if r.bitmap_claim.is_empty() {
            return empty(area, self.title(), "the bitmap experiment did not run");
        }
        let bpk = |p: &RatePoint| p.bits as f64 / p.n_inserted.max(1) as f64;
        let x = log_range(r.bitmap_claim.iter().map(bpk));
        let floor = 1e-7;
        let y = log_range(
            r.bitmap_claim
                .iter()
                .flat_map(|p| [p.observed_fpr_wilson95.high, p.expected_fpr.max(floor), 1.0]),
        );
        let panels = one_panel(&[role_id(Role::RawBitmap), role_id(Role::ReferenceBloom)]);
        draw_panels(area, self.title(), &panels, |plot, panel, keys| {
            let mut chart = log_log_chart(
                plot,
                &panel.title,
                (x.clone(), "bits per key (m / n)"),
                (y.clone(), "share of new keys reported as seen"),
                YAxis::Rate,
            )?;
            target_line(&mut chart, x.clone(), r.bitmap_claim[0].target_fpr, keys)?;
            rate_point_series(&mut chart, &r.bitmap_claim, &panel.ids, bpk, floor, keys)?;
            if let Some(p) = r
                .bitmap_claim
                .iter()
                .find(|p| p.structure == role_id(Role::RawBitmap) && p.bits == p.n_inserted)
            {
                chart.draw_series(std::iter::once(Text::new(
                    format!("m = n: {} of new keys dropped", human_rate(p.observed_fpr)),
                    (1.15, p.observed_fpr * 0.8),
                    ("sans-serif", 15).into_font(),
                )))?;
            }
            Ok(())
        })
    }
    fn verdict(&self, r: &Results) -> String {
        bitmap(r)
    }
    fn tables(&self, r: &Results) -> Result<String> {
        point_table(&r.bitmap_claim)
    }
}

fn bitmap(r: &Results) -> String {
    let one = r
        .bitmap_claim
        .iter()
        .find(|p| p.structure == role_id(Role::RawBitmap) && p.bits == p.n_inserted);
    let Some(one) = one else {
        return "The bitmap experiment did not run.".into();
    };
    let target = one.target_fpr;
    // Measured: the fewest bits per key tried whose observed rate is at or below the target.
    let reach = |id: &str| {
        r.bitmap_claim
            .iter()
            .filter(|p| p.structure == id && p.observed_fpr <= target)
            .map(|p| p.bits / p.n_inserted.max(1))
            .min()
            .map(|b| format!("{b}"))
            .unwrap_or_else(|| "more than the largest size tried".into())
    };
    let bitmap_formula = -1.0 / (-target).ln_1p();
    let bloom_formula = -target.ln() / std::f64::consts::LN_2.powi(2);
    format!(
        "At one bit per key (the article's 6·10⁹ bits for 6·10⁹ URLs) the bitmap reports {} of new keys as already seen (theory {}): a crawler using it silently drops that share of new URLs. Reaching p = {} takes the bitmap {bitmap_formula:.1} bits per key by its formula (on the tried grid 1, 2, 4 … 100: {} measured) and a Bloom filter {bloom_formula:.2} (grid: {}).",
        human_rate(one.observed_fpr),
        human_rate(one.expected_fpr),
        human_rate(target),
        reach(role_id(Role::RawBitmap)),
        reach(role_id(Role::ReferenceBloom))
    )
}

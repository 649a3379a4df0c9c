//! The growth experiment: a fixed Bloom filter against the scalable one when n is unknown.

use super::*;
use crate::kind::Role;
use crate::registry::role_id;

pub struct Growth;

impl Figure for Growth {
    fn stem(&self) -> &'static str {
        "growth"
    }
    fn title(&self) -> &'static str {
        "Unknown growth: bloom sized for n0 vs scalable from n0, fed 64 x n0"
    }
    fn size(&self, _: &Results) -> (u32, u32) {
        panels::size(1)
    }
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, r: &Results) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        if r.growth.is_empty() {
            return empty(area, self.title(), "the growth experiment did not run");
        }
        let x = log_range(r.growth.iter().map(|p| p.n_inserted as f64));
        let floor = 1e-6;
        let y = rate_y_range(&r.growth, floor);
        let panels = one_panel(&[role_id(Role::ReferenceBloom), role_id(Role::GrowingFilter)]);
        draw_panels(area, self.title(), &panels, |plot, panel, keys| {
            let mut chart = log_log_chart(
                plot,
                &panel.title,
                (x.clone(), "keys inserted"),
                (y.clone(), "false-positive rate"),
                YAxis::Rate,
            )?;
            target_line(&mut chart, x.clone(), r.growth[0].target_fpr, keys)?;
            rate_point_series(
                &mut chart,
                &r.growth,
                &panel.ids,
                |p| p.n_inserted as f64,
                floor,
                keys,
            )
        })
    }
    fn verdict(&self, r: &Results) -> String {
        growth(r)
    }
    fn tables(&self, r: &Results) -> Result<String> {
        point_table(&r.growth)
    }
}

fn growth(r: &Results) -> String {
    let last = |id: &str| {
        r.growth
            .iter()
            .filter(|p| p.structure == id)
            .max_by_key(|p| p.n_inserted)
    };
    match (last(role_id(Role::ReferenceBloom)), last(role_id(Role::GrowingFilter))) {
        (Some(b), Some(s)) => format!(
            "Fed {}× its design size, the fixed Bloom filter answers 'seen' for {} of new keys (target {}, {:.1}× over); the scalable filter measures {} with {} against the fixed filter's {} ({:.1}× the memory).",
            b.n_inserted / b.design_n.max(1),
            human_rate(b.observed_fpr),
            human_rate(b.target_fpr),
            b.observed_fpr / b.target_fpr,
            human_rate(s.observed_fpr),
            human_bytes(s.bytes as f64),
            human_bytes(b.bytes as f64),
            s.bytes as f64 / b.bytes.max(1) as f64
        ),
        _ => "The growth experiment did not run.".into(),
    }
}

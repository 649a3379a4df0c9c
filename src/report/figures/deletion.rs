//! The deletion experiment: a counting filter filled, half removed.

use super::*;
use crate::kind::Role;
use crate::registry::role_id;

pub struct Deletion;

impl Figure for Deletion {
    fn stem(&self) -> &'static str {
        "deletion"
    }
    fn title(&self) -> &'static str {
        "Deletion: counting filter filled, half removed (rates with 95% bars; memory vs bloom)"
    }
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, r: &Results) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let Some(d) = r.deletion.first() else {
            return empty(area, self.title(), "the deletion experiment did not run");
        };
        let (left, right) = area.split_horizontally(area.dim_in_pixel().0 * 3 / 5);
        let before = crate::stats::wilson(d.false_positives_before, d.n_queries, 0.95);
        let after = crate::stats::wilson(d.false_positives_after, d.n_queries, 0.95);
        let rates = [
            (
                "before",
                d.false_positives_before as f64 / d.n_queries.max(1) as f64,
                before,
                d.expected_fpr_before,
            ),
            (
                "after removing half",
                d.false_positives_after as f64 / d.n_queries.max(1) as f64,
                after,
                d.expected_fpr_after,
            ),
        ];
        let top = rates
            .iter()
            .map(|r| r.2.high.max(r.3))
            .fold(d.target_fpr, f64::max)
            * 1.25;
        let mut chart = ChartBuilder::on(&left)
            .caption("false-positive rate", ("sans-serif", 18))
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(RATE_LABEL_AREA_PX)
            .build_cartesian_2d(0.0..2.0, 0.0..top)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_label_formatter(&|v| rate_label(*v))
            .label_style(("sans-serif", 14))
            .draw()?;
        let c = colour(role_id(Role::DeletingFilter));
        for (i, (label, observed, interval, expected)) in rates.iter().enumerate() {
            let x0 = i as f64 + 0.2;
            chart.draw_series(std::iter::once(Rectangle::new(
                [(x0, 0.0), (x0 + 0.6, *observed)],
                c.mix(0.7).filled(),
            )))?;
            chart.draw_series(std::iter::once(ErrorBar::new_vertical(
                x0 + 0.3,
                interval.low,
                *observed,
                interval.high,
                BLACK.filled(),
                10,
            )))?;
            chart.draw_series(std::iter::once(Cross::new(
                (x0 + 0.3, *expected),
                7,
                RED.stroke_width(2),
            )))?;
            chart.draw_series(std::iter::once(Text::new(
                label.to_string(),
                (x0, -top * 0.04),
                ("sans-serif", 14).into_font(),
            )))?;
        }
        chart.draw_series(std::iter::once(Text::new(
            format!(
                "red x: theory; false negatives among the rest: {}",
                d.false_negatives_remaining
            ),
            (0.05, top * 0.95),
            ("sans-serif", 14).into_font(),
        )))?;
        // Drawn in one IEC unit, so a linear axis's round ticks are round in it.
        let (unit_bytes, unit) = bytes_unit(d.counting_bytes.max(d.bloom_bytes) as f64);
        let bytes_top = d.counting_bytes.max(d.bloom_bytes) as f64 * 1.2 / unit_bytes;
        let mut mem = ChartBuilder::on(&right)
            .caption("bytes at the same p", ("sans-serif", 18))
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(0.0..2.0, 0.0..bytes_top.max(1.0 / unit_bytes))?;
        mem.configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_label_formatter(&|v| trim_number(&format!("{v:.2} {unit}")))
            .label_style(("sans-serif", 14))
            .draw()?;
        for (i, (id, bytes)) in [
            (role_id(Role::DeletingFilter), d.counting_bytes),
            (role_id(Role::ReferenceBloom), d.bloom_bytes),
        ]
        .iter()
        .enumerate()
        {
            let x0 = i as f64 + 0.2;
            mem.draw_series(std::iter::once(Rectangle::new(
                [(x0, 0.0), (x0 + 0.6, *bytes as f64 / unit_bytes)],
                colour(id).filled(),
            )))?;
            mem.draw_series(std::iter::once(Text::new(
                id.to_string(),
                (x0 + 0.1, -bytes_top * 0.04),
                ("sans-serif", 14).into_font(),
            )))?;
        }
        Ok(())
    }
    fn verdict(&self, r: &Results) -> String {
        deletion(r)
    }
}

fn deletion(r: &Results) -> String {
    let Some(d) = r.deletion.first() else {
        return "The deletion experiment did not run.".into();
    };
    let mut text = format!(
        "The counting filter held {} keys at {} ({:.1}× the Bloom filter's {} for the same p); removing {} of them brought the rate from {} to {} (theory {} → {}), with {} false negatives among the keys left and {} removed keys still answered present, as non-members would be.",
        human_count(d.n_inserted as f64),
        human_bytes(d.counting_bytes as f64),
        d.counting_bytes as f64 / d.bloom_bytes.max(1) as f64,
        human_bytes(d.bloom_bytes as f64),
        human_count(d.n_removed as f64),
        human_rate(d.false_positives_before as f64 / d.n_queries.max(1) as f64),
        human_rate(d.false_positives_after as f64 / d.n_queries.max(1) as f64),
        human_rate(d.expected_fpr_before),
        human_rate(d.expected_fpr_after),
        d.false_negatives_remaining,
        d.removed_still_present
    );
    if let (Some(saturated), Some(bound)) = (d.saturated_counters, d.saturation_bound) {
        text += &format!(
            " After the distinct inserts {saturated} counters sat at the sticky maximum (Fan et al.'s bound on the expected number: {}).",
            super::super::markup::expected_count(bound)
        );
    }
    if let Some(r) = d.repeat_stream {
        text += &format!(
            " Offered each of {} keys {} times, a counting filter that inserts only keys it does not hold (as dedup does) left {} counters saturated; one that counts every repeat left {}, and those counters can never be decremented.",
            human_count(r.keys as f64),
            r.offers_per_key,
            r.saturated_counters_if_new,
            r.saturated_counters_counted
        );
    }
    text
}

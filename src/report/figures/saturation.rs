//! The saturation experiment: filters filled past the n they were sized for.

use super::*;

pub struct Saturation;

impl Figure for Saturation {
    fn stem(&self) -> &'static str {
        "saturation"
    }
    fn title(&self) -> &'static str {
        "Saturation: filters sized for n, filled past it (observed, 95% bars; theory dashed)"
    }
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, r: &Results) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        if r.saturation.is_empty() {
            return empty(area, self.title(), "the saturation experiment did not run");
        }
        let ratio = |p: &RatePoint| p.n_inserted as f64 / p.design_n.max(1) as f64;
        let max_ratio = r.saturation.iter().map(ratio).fold(1.0, f64::max);
        let floor = 1e-7;
        let y = log_range(r.saturation.iter().flat_map(|p| {
            [
                p.observed_fpr_wilson95.high,
                p.expected_fpr.max(floor),
                floor,
            ]
        }));
        let mut chart = ChartBuilder::on(area)
            .caption(self.title(), ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..max_ratio * 1.05, y.log_scale())?;
        chart
            .configure_mesh()
            .x_desc("fill ratio (keys inserted / design capacity)")
            .y_desc("false-positive rate")
            .y_label_formatter(&|v| axis_label(*v))
            .label_style(("sans-serif", 14))
            .draw()?;
        target_line(
            &mut chart,
            0.0..max_ratio * 1.05,
            r.saturation[0].target_fpr,
        )?;
        rate_point_series(
            &mut chart,
            &r.saturation,
            &[bloom::ID, scalable::ID],
            ratio,
            floor,
        )?;
        legend(&mut chart, SeriesLabelPosition::LowerRight)
    }
    fn verdict(&self, r: &Results) -> String {
        saturation(r)
    }
    fn tables(&self, out: &mut String, r: &Results) {
        point_table(out, &r.saturation);
    }
}

fn saturation(r: &Results) -> String {
    let at = |id: &str, ratio: f64| {
        r.saturation
            .iter()
            .filter(|p| p.structure == id)
            .find(|p| (p.n_inserted as f64 / p.design_n as f64 - ratio).abs() < 1e-9)
    };
    match (at(bloom::ID, 1.0), at(bloom::ID, 2.0), at(bloom::ID, 4.0)) {
        (Some(one), Some(two), Some(four)) => {
            let mut text = format!(
                "A Bloom filter sized for {} keys at p = {} shows {} at its design fill, {} at 2× and {} at 4×: {} (theory inside the interval at {} of {} points).",
                human_count(one.design_n as f64),
                one.target_fpr,
                pct(one.observed_fpr),
                pct(two.observed_fpr),
                pct(four.observed_fpr),
                if one.observed_fpr < two.observed_fpr && two.observed_fpr < four.observed_fpr {
                    "past capacity it keeps answering, its rate rising with every step of fill"
                } else {
                    "its rate did not rise at every step of fill"
                },
                r.saturation.iter().filter(|p| p.structure == bloom::ID && p.theory_in_interval).count(),
                r.saturation.iter().filter(|p| p.structure == bloom::ID).count()
            );
            if let Some(s) = at(scalable::ID, 4.0) {
                text.push_str(&format!(
                    " The scalable filter at 4× measures {} using {} (the fixed filter: {}).",
                    pct(s.observed_fpr),
                    human_bytes(s.bytes as f64),
                    human_bytes(four.bytes as f64)
                ));
            }
            text
        }
        _ => "The saturation experiment did not run.".into(),
    }
}

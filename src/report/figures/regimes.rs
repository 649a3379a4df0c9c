//! The regime ladder of the run's budget and rate.

use super::*;

pub struct Regimes;

impl Figure for Regimes {
    fn stem(&self) -> &'static str {
        "regimes"
    }
    fn title(&self) -> &'static str {
        "Regimes: the recommended structure by number of keys, for this run's budget and rate"
    }
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, r: &Results) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let Some(ladder) = crate::analysis::run_ladder(r) else {
            return empty(area, self.title(), "no run header in these results");
        };
        let last_from = ladder.last().map(|l| l.from_n).unwrap_or(1.0);
        let x = log_range([1e3, last_from * 100.0]);
        let mut chart = ChartBuilder::on(area)
            .caption(self.title(), ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(20)
            .build_cartesian_2d(x.clone().log_scale(), 0.0..1.0)?;
        chart
            .configure_mesh()
            .x_desc("distinct keys (n)")
            .disable_y_mesh()
            .y_labels(0)
            .x_label_formatter(&|v| axis_label(*v))
            .label_style(("sans-serif", 14))
            .draw()?;
        for (i, rung) in ladder.iter().enumerate() {
            let from = rung.from_n.max(x.start);
            let to = rung.to_n.unwrap_or(x.end).min(x.end);
            if to <= from {
                continue;
            }
            let c = if rung.to_n.is_none() {
                RGBColor(200, 200, 200)
            } else {
                colour(&rung.id)
            };
            chart.draw_series(std::iter::once(Rectangle::new(
                [(from, 0.15), (to, 0.85)],
                c.mix(0.55).filled(),
            )))?;
            let y = if i % 2 == 0 { 0.55 } else { 0.4 };
            chart.draw_series(std::iter::once(Text::new(
                rung.id.clone(),
                (from * 1.15, y),
                ("sans-serif", 17).into_font(),
            )))?;
            if let Some(to_n) = rung.to_n {
                chart.draw_series(std::iter::once(Text::new(
                    format!("{} keys", axis_label(to_n)),
                    (to_n * 0.8, 0.9),
                    ("sans-serif", 14).into_font(),
                )))?;
            }
        }
        Ok(())
    }
    fn verdict(&self, r: &Results) -> String {
        regimes(r)
    }
}

fn regimes(r: &Results) -> String {
    let Some(ladder) = crate::analysis::run_ladder(r) else {
        return "No run header.".into();
    };
    let budget = r
        .header
        .as_ref()
        .map(|h| human_bytes(h.memory_budget_bytes as f64))
        .unwrap_or_default();
    let steps: Vec<String> = ladder
        .iter()
        .map(|rung| match rung.to_n {
            Some(to) => format!("{} up to {} keys ({})", rung.id, human_count(to), rung.why),
            None => format!(
                "from {} keys, {} ({})",
                human_count(rung.from_n),
                rung.id,
                rung.why
            ),
        })
        .collect();
    format!(
        "For a {budget} budget, with the exact sets' bytes per key measured in this run and the filters' from the sizing formulas: {}.",
        steps.join("; then ")
    )
}

//! The cache guard's churn: every structure that deletes, holding a steady population while its oldest
//! quarter is replaced round after round; its observed rate (95% bars) against its theory at n, and
//! whether any key of the population was lost.

use super::*;

pub struct Churn;

/// The filters of the churn (exact sets have no rate to draw), in report order.
fn filters(r: &Results) -> Vec<&str> {
    let mut ids: Vec<&str> = Vec::new();
    let exact = |id: &str| crate::registry::find(id).is_ok_and(|k| k.exact());
    for c in r.churn.iter().filter(|c| !exact(&c.point.structure)) {
        if !ids.contains(&c.point.structure.as_str()) {
            ids.push(&c.point.structure);
        }
    }
    ids
}

impl Figure for Churn {
    fn stem(&self) -> &'static str {
        "churn"
    }
    fn title(&self) -> &'static str {
        "Cache guard: the rate through rounds of deletes and inserts (95% bars; dashed: theory at n)"
    }
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, r: &Results) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let ids = filters(r);
        if ids.is_empty() {
            return empty(
                area,
                self.title(),
                "the churn experiment did not run (bench --workload cache-guard runs it)",
            );
        }
        let rounds = r.churn.iter().map(|c| c.round).max().unwrap_or(0) as f64;
        let top = r
            .churn
            .iter()
            .map(|c| c.point.observed_fpr_wilson95.high.max(c.point.expected_fpr))
            .fold(0.0, f64::max)
            * 1.2;
        let mut chart = ChartBuilder::on(area)
            .caption(self.title(), ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(RATE_LABEL_AREA_PX)
            .build_cartesian_2d(-0.5..rounds + 0.5, 0.0..top.max(1e-9))?;
        chart
            .configure_mesh()
            .x_desc("round (each replaces a quarter of the population)")
            .y_desc("false-positive rate")
            .x_labels(rounds as usize + 1)
            .x_label_formatter(&|v| format!("{v:.0}"))
            .y_label_formatter(&|v| rate_label(*v))
            .label_style(("sans-serif", 14))
            .draw()?;
        let width = 0.6 / ids.len() as f64;
        for (i, id) in ids.iter().enumerate() {
            let c = colour(id);
            let points: Vec<_> = r
                .churn
                .iter()
                .filter(|p| p.point.structure == *id)
                .collect();
            let offset = -0.3 + width * (i as f64 + 0.5);
            chart
                .draw_series(points.iter().map(|p| {
                    let w = p.point.observed_fpr_wilson95;
                    ErrorBar::new_vertical(
                        p.round as f64 + offset,
                        w.low,
                        p.point.observed_fpr,
                        w.high,
                        c.filled(),
                        8,
                    )
                }))?
                .label(id.to_string())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], c.filled()));
            if let Some(theory) = points.first().map(|p| p.point.expected_fpr) {
                chart.draw_series(DashedLineSeries::new(
                    [(-0.5, theory), (rounds + 0.5, theory)],
                    6,
                    4,
                    c.stroke_width(1),
                ))?;
            }
        }
        chart
            .configure_series_labels()
            .border_style(BLACK)
            .background_style(WHITE.mix(0.8))
            .label_font(("sans-serif", 14))
            .draw()?;
        Ok(())
    }
    fn verdict(&self, r: &Results) -> String {
        churn(r)
    }
    fn tables(&self, r: &Results) -> Result<String> {
        #[derive(serde::Serialize)]
        struct Row<'a> {
            structure: &'a str,
            round: u32,
            population: String,
            bytes: String,
            delete_ns: String,
            insert_ns: String,
            lookup_ns: String,
            n_queries: u64,
            observed: String,
            low: String,
            high: String,
            theory: String,
            inside: &'static str,
            lost: u64,
            deletes_refused: u64,
            failure: String,
        }
        #[derive(serde::Serialize)]
        struct Rows<'a> {
            rows: Vec<Row<'a>>,
        }
        let ns = |v: f64| {
            if v > 0.0 {
                format!("{v:.1}")
            } else {
                "-".into()
            }
        };
        let rows = r
            .churn
            .iter()
            .map(|c| Row {
                structure: &c.point.structure,
                round: c.round,
                population: human_count(c.point.n_inserted as f64),
                bytes: human_bytes(c.point.bytes as f64),
                delete_ns: ns(c.delete_ns_per_key),
                insert_ns: ns(c.insert_ns_per_key),
                lookup_ns: ns(c.member_query_ns_per_key),
                n_queries: c.point.n_queries,
                observed: human_rate(c.point.observed_fpr),
                low: human_rate(c.point.observed_fpr_wilson95.low),
                high: human_rate(c.point.observed_fpr_wilson95.high),
                theory: human_rate(c.point.expected_fpr),
                inside: if c.point.theory_in_interval {
                    "yes"
                } else {
                    "no"
                },
                lost: c.point.false_negatives,
                deletes_refused: c.deletes_refused,
                failure: c.failure.clone().unwrap_or_default(),
            })
            .collect();
        template::render("figures/churn.html", &Rows { rows })
    }
}

/// The churn in words: per structure, its rate after the last round against theory, and any key lost.
fn churn(r: &Results) -> String {
    let mut ids: Vec<&str> = Vec::new();
    for c in &r.churn {
        if !ids.contains(&c.point.structure.as_str()) {
            ids.push(&c.point.structure);
        }
    }
    if ids.is_empty() {
        return "The churn experiment did not run (bench --workload cache-guard runs it).".into();
    }
    let lines: Vec<String> = ids
        .iter()
        .filter_map(|id| {
            let last = r
                .churn
                .iter()
                .filter(|c| c.point.structure == *id)
                .max_by_key(|c| c.round)?;
            let lost: u64 = r
                .churn
                .iter()
                .filter(|c| c.point.structure == *id)
                .map(|c| c.point.false_negatives)
                .sum();
            let rate = if !crate::registry::find(id).is_ok_and(|k| k.exact()) {
                format!(
                    "{} [{}, {}] against {} in theory ({})",
                    human_rate(last.point.observed_fpr),
                    human_rate(last.point.observed_fpr_wilson95.low),
                    human_rate(last.point.observed_fpr_wilson95.high),
                    human_rate(last.point.expected_fpr),
                    if last.point.theory_in_interval {
                        "inside"
                    } else {
                        "outside"
                    }
                )
            } else {
                "exact".to_string()
            };
            Some(format!(
                "{id}: after {} rounds {rate}, {} bytes per key, {}",
                last.round,
                format_args!(
                    "{:.1}",
                    last.point.bytes as f64 / last.point.n_inserted.max(1) as f64
                ),
                if lost == 0 {
                    "no key of the population lost".to_string()
                } else {
                    format!("{lost} keys of the population LOST")
                }
            ))
        })
        .collect();
    format!(
        "Through {} rounds of replacing a quarter of the population: {}.",
        r.churn.iter().map(|c| c.round).max().unwrap_or(0),
        lines.join("; ")
    )
}

//! Observed against theoretical false-positive rates over n, with their intervals.

use super::*;

pub struct RateVsN<'a> {
    /// The run's missed rate targets (from `analysis.json`).
    pub missed_rates: &'a [String],
}

/// The approximate structures of the grid, in report order.
fn filter_ids(r: &Results) -> Vec<String> {
    cell_structures(r, |c| !c.exact)
}

impl Figure for RateVsN<'_> {
    fn stem(&self) -> &'static str {
        "fpr_vs_n"
    }
    fn title(&self) -> &'static str {
        "False-positive rate vs keys (observed, 95% Wilson bars; theory dashed where it differs)"
    }
    fn size(&self, r: &Results) -> (u32, u32) {
        panels::size_for(r, filter_ids)
    }
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, r: &Results) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let cells: Vec<_> = r.cells.iter().filter(|c| !c.exact).collect();
        if cells.is_empty() {
            return empty(
                area,
                self.title(),
                "no approximate structures in these results",
            );
        }
        let x = log_range(cells.iter().map(|c| c.n as f64));
        let floor = 1e-6;
        let y = log_range(cells.iter().flat_map(|c| {
            [
                c.observed_fpr_wilson95.high.max(floor),
                c.expected_fpr.max(floor),
                floor,
            ]
        }));
        let panels = panels::panels(&filter_ids(r));
        draw_panels(area, self.title(), &panels, |plot, panel, keys| {
            let mut chart = log_log_chart(
                plot,
                &panel.title,
                (x.clone(), "keys inserted (n)"),
                (y.clone(), "false-positive rate"),
                YAxis::Rate,
            )?;
            if let Some(h) = &r.header {
                target_line(&mut chart, x.clone(), h.fpr, keys)?;
            }
            for id in &panel.ids {
                let mut mine: Vec<_> = cells.iter().filter(|c| c.structure == *id).collect();
                mine.sort_by_key(|c| c.n);
                let points: Vec<_> = mine
                    .iter()
                    .map(|c| {
                        (
                            c.n as f64,
                            c.observed_fpr,
                            c.observed_fpr_wilson95.low,
                            c.observed_fpr_wilson95.high,
                            c.expected_fpr,
                        )
                    })
                    .collect();
                rate_series(&mut chart, id, colour(id), &points, floor, keys)?;
            }
            Ok(())
        })
    }
    fn verdict(&self, r: &Results) -> String {
        rates(r, self.missed_rates)
    }
    fn tables(&self, r: &Results) -> Result<String> {
        rate_table(r)
    }
}

fn rates(r: &Results, missed: &[String]) -> String {
    let filters: Vec<&CellRecord> = r.cells.iter().filter(|c| !c.exact).collect();
    let inside = filters.iter().filter(|c| c.theory_in_interval).count();
    let outside: Vec<String> = filters
        .iter()
        .filter(|c| !c.theory_in_interval)
        .map(|c| {
            format!(
                "{} at n = {} (observed {}, theory {})",
                c.structure,
                human_count(c.n as f64),
                human_rate(c.observed_fpr),
                human_rate(c.expected_fpr)
            )
        })
        .collect();
    let negatives: u64 = r.cells.iter().map(|c| c.false_negatives).sum();
    let mut text = format!(
        "Theory lies inside the observed 95% interval in {inside} of {} filter cells. The interval covers the sampling error of the one filter that was built; theory is the mean over all filters, so small arrays (a few thousand bits), whose fill varies from filter to filter, fall outside more often than 1 in 20.",
        filters.len()
    );
    if !outside.is_empty() {
        text.push_str(&format!(" Outside: {}.", outside.join("; ")));
    }
    let with_fill: Vec<&&CellRecord> = filters
        .iter()
        .filter(|c| c.fill_fpr_in_interval.is_some())
        .collect();
    if !with_fill.is_empty() {
        text.push_str(&format!(
            " Against the rate implied by each filter's actual fill (bitmap, bloom), the interval holds it in {} of {} cells.",
            with_fill.iter().filter(|c| c.fill_fpr_in_interval == Some(true)).count(),
            with_fill.len()
        ));
    }
    if !missed.is_empty() {
        text.push_str(&format!(" Missing their target: {}.", missed.join("; ")));
    }
    text.push_str(&if negatives == 0 {
        " False negatives: 0 in every cell.".to_string()
    } else {
        format!(" FALSE NEGATIVES: {negatives} — a bug.")
    });
    text
}

/// `templates/figures/rates.html`: every cell's counts and rates.
#[derive(serde::Serialize)]
struct RateTable<'a> {
    cells: Vec<RateRow<'a>>,
}

#[derive(serde::Serialize)]
struct RateRow<'a> {
    structure: &'a str,
    n: String,
    n_member_queries: u64,
    false_negatives: u64,
    n_non_member_queries: u64,
    n_false_positives: u64,
    observed: String,
    low: String,
    high: String,
    theory: String,
    inside: &'static str,
    fill: String,
    fill_inside: &'static str,
}

fn rate_table(r: &Results) -> Result<String> {
    let cells = r
        .cells
        .iter()
        .map(|c| RateRow {
            structure: &c.structure,
            n: human_count(c.n as f64),
            n_member_queries: c.n_member_queries,
            false_negatives: c.false_negatives,
            n_non_member_queries: c.n_non_member_queries,
            n_false_positives: c.n_false_positives,
            observed: human_rate(c.observed_fpr),
            low: human_rate(c.observed_fpr_wilson95.low),
            high: human_rate(c.observed_fpr_wilson95.high),
            theory: human_rate(c.expected_fpr),
            inside: if c.theory_in_interval { "yes" } else { "no" },
            fill: c.fill_fpr.map(human_rate).unwrap_or_else(|| "–".into()),
            fill_inside: match c.fill_fpr_in_interval {
                Some(true) => "yes",
                Some(false) => "no",
                None => "–",
            },
        })
        .collect();
    template::render("figures/rates.html", &RateTable { cells })
}

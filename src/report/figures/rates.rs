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
                axis_label,
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
    fn tables(&self, out: &mut String, r: &Results) {
        rate_table(out, r);
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
                pct(c.observed_fpr),
                pct(c.expected_fpr)
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

fn rate_table(s: &mut String, r: &Results) {
    let _ = writeln!(
        s,
        "<table><tr><th>structure</th><th>n</th><th>member queries</th><th>false negatives</th><th>non-member queries</th><th>false positives</th><th>observed rate</th><th>95% Wilson interval</th><th>new URLs wrongly skipped</th><th>theory</th><th>theory inside</th><th>rate from this filter's fill</th><th>fill rate inside</th></tr>"
    );
    for c in &r.cells {
        let fn_cell = if c.false_negatives > 0 {
            format!("<td class=\"bad\">{}</td>", c.false_negatives)
        } else {
            "<td>0</td>".into()
        };
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td>{}<td>{}</td><td>{}</td><td>{}</td><td>[{}, {}]</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&c.structure),
            human_count(c.n as f64),
            c.n_member_queries,
            fn_cell,
            c.n_non_member_queries,
            c.n_false_positives,
            sci(c.observed_fpr),
            sci(c.observed_fpr_wilson95.low),
            sci(c.observed_fpr_wilson95.high),
            esc(&per_million(c.observed_fpr)),
            sci(c.expected_fpr),
            if c.theory_in_interval { "yes" } else { "no" },
            c.fill_fpr.map(sci).unwrap_or_else(|| "–".into()),
            match c.fill_fpr_in_interval {
                Some(true) => "yes",
                Some(false) => "no",
                None => "–",
            }
        );
    }
    let _ = writeln!(s, "</table>");
}

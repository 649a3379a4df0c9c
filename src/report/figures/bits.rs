//! Bits per key against n, measured.

use super::*;

pub struct BitsPerKey;

impl Figure for BitsPerKey {
    fn stem(&self) -> &'static str {
        "bits_per_key"
    }
    fn title(&self) -> &'static str {
        "Bits per key vs keys (measured heap footprint)"
    }
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, r: &Results) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        if r.cells.is_empty() {
            return empty(area, self.title(), "no measured cells in these results");
        }
        let x = log_range(r.cells.iter().map(|c| c.n as f64));
        let y = log_range(r.cells.iter().map(|c| c.bits_per_key));
        let mut chart = log_log_chart(
            area,
            self.title(),
            (x, "keys inserted (n)"),
            (y, "bits per key"),
            axis_label,
        )?;
        for id in structure_order(r) {
            let c = colour(&id);
            let mut points: Vec<(f64, f64)> = r
                .cells
                .iter()
                .filter(|cell| cell.structure == id)
                .map(|cell| (cell.n as f64, cell.bits_per_key))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            chart
                .draw_series(LineSeries::new(points.clone(), c.stroke_width(2)))?
                .label(id.clone())
                .legend(move |(a, b)| {
                    PathElement::new(vec![(a, b), (a + 20, b)], c.stroke_width(2))
                });
            chart.draw_series(points.iter().map(|p| Circle::new(*p, 4, c.filled())))?;
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)
    }
    fn verdict(&self, r: &Results) -> String {
        bits(r)
    }
}

fn bits(r: &Results) -> String {
    let mut rows: Vec<(f64, &str)> = Vec::new();
    let top = r.cells.iter().map(|c| c.n).max().unwrap_or(0);
    for c in r.cells.iter().filter(|c| c.n == top) {
        rows.push((c.bits_per_key, &c.structure));
    }
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    if rows.is_empty() {
        return "No measured cells.".into();
    }
    let list: Vec<String> = rows.iter().map(|(b, id)| format!("{id} {b:.1}")).collect();
    format!(
        "Bits per key at n = {}, smallest first: {}. The filters' cost per key is flat in n; the exact sets' grows in steps as hashbrown doubles its table.",
        human_count(top as f64),
        list.join(", ")
    )
}

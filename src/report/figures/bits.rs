//! Bits per key against n, measured.

use super::*;

pub struct BitsPerKey;

impl Figure for BitsPerKey {
    fn stem(&self) -> &'static str {
        "bits_per_key"
    }
    fn title(&self) -> &'static str {
        "Bits per key vs keys (measured heap footprint, bits / key)"
    }
    fn size(&self, r: &Results) -> (u32, u32) {
        panels::size_for(r, |r| cell_structures(r, |_| true))
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
        let panels = panels::panels(&cell_structures(r, |_| true));
        draw_panels(area, self.title(), &panels, |plot, panel, keys| {
            let mut chart = log_log_chart(
                plot,
                &panel.title,
                (x.clone(), "keys inserted (n)"),
                (y.clone(), "bits per key"),
                YAxis::Plain,
            )?;
            for id in &panel.ids {
                let c = colour(id);
                let mut points: Vec<(f64, f64)> = r
                    .cells
                    .iter()
                    .filter(|cell| cell.structure == *id)
                    .map(|cell| (cell.n as f64, cell.bits_per_key))
                    .collect();
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                chart.draw_series(LineSeries::new(points.clone(), c.stroke_width(2)))?;
                keys.push(Key::solid(id.as_str(), c));
                chart.draw_series(points.iter().map(|p| Circle::new(*p, 4, c.filled())))?;
            }
            Ok(())
        })
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
    let mut text = format!(
        "Bits per key at n = {}, smallest first: {}.",
        human_count(top as f64),
        list.join(", ")
    );
    // How much each group's bits per key move across the measured n (largest / smallest, per structure).
    let spread = |exact: bool| {
        let mut widest: Option<(f64, &str)> = None;
        for (_, id) in &rows {
            if crate::registry::find(id)
                .map(|k| k.exact())
                .unwrap_or(false)
                != exact
            {
                continue;
            }
            let per_n: Vec<f64> = r
                .cells
                .iter()
                .filter(|c| c.structure == *id)
                .map(|c| c.bits_per_key)
                .collect();
            let (low, high) = per_n
                .iter()
                .fold((f64::MAX, 0.0f64), |(l, h), b| (l.min(*b), h.max(*b)));
            if per_n.len() > 1 && low > 0.0 && widest.is_none_or(|(w, _)| high / low > w) {
                widest = Some((high / low, id));
            }
        }
        widest
    };
    let scales = r
        .cells
        .iter()
        .map(|c| c.n)
        .collect::<std::collections::BTreeSet<_>>();
    if let (Some(first), Some(last)) = (scales.first(), scales.last()) {
        let (first, last) = (human_count(*first as f64), human_count(*last as f64));
        if let Some((ratio, id)) = spread(false) {
            text += &format!(
                " From n = {first} to {last} the filters' bits per key move by at most {} ({id}).",
                relative(ratio - 1.0)
            );
        }
        if let Some((ratio, id)) = spread(true) {
            text += &format!(
                " The exact sets' move by up to {} ({id}): hashbrown's table grows by doubling.",
                relative(ratio - 1.0)
            );
        }
    }
    text
}

/// A relative change as a percentage with one decimal (not a rate: rates have
/// [`crate::units::human_rate`]).
fn relative(change: f64) -> String {
    format!("{:.1}%", change * 100.0)
}

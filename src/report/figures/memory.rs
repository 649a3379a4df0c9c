//! The memory figure: bytes held against n, measured and projected, with the exact sets' crossovers.

use super::*;
use crate::kind::Role;
use crate::registry::role_id;

pub struct BytesVsN;

/// The structures drawn: measured cells and the projections of skipped ones, in report order.
fn memory_ids(r: &Results) -> Vec<String> {
    structure_order(r)
}

impl Figure for BytesVsN {
    fn stem(&self) -> &'static str {
        "bytes_vs_n"
    }
    fn title(&self) -> &'static str {
        "Memory held vs keys (measured; hollow = projected from the model)"
    }
    fn size(&self, r: &Results) -> (u32, u32) {
        panels::size_for(r, memory_ids)
    }
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, r: &Results) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        if r.cells.is_empty() && r.skipped.is_empty() {
            return empty(area, self.title(), "no cells in these results");
        }
        let header = r.header.as_ref();
        let budget = header.map(|h| h.memory_budget_bytes as f64).unwrap_or(0.0);
        let ram = header
            .map(|h| h.machine.total_memory_bytes as f64)
            .unwrap_or(0.0);
        // Projections: the exact sets at their largest measured bytes per key, up to the budget.
        let crossovers: Vec<(&str, f64, f64)> =
            [role_id(Role::ExactSet), role_id(Role::ExactFingerprints)]
                .iter()
                .filter_map(|id| {
                    crate::analysis::exact_crossover(r, id, budget).map(|(n, _)| (*id, n, budget))
                })
                .filter(|(_, n, _)| *n > 0.0 && n.is_finite())
                .collect();
        let ns = r
            .cells
            .iter()
            .map(|c| c.n as f64)
            .chain(structure_skips(r).map(|s| s.n as f64))
            .chain(crossovers.iter().map(|c| c.1 * 1.5));
        let x = log_range(ns);
        let ys = r
            .cells
            .iter()
            .map(|c| c.heap_footprint_bytes as f64)
            .chain(structure_skips(r).map(|s| {
                crate::analysis::fit_bytes(r, &s.subject.to_string())
                    .map(|f| f.at(s.n as f64))
                    .unwrap_or(s.projected_bytes)
            }))
            .chain([budget, ram]);
        let y = log_range(ys);
        let panels = panels::panels(&memory_ids(r));
        draw_panels(area, self.title(), &panels, |plot, panel, keys| {
            let mut chart = log_log_chart(
                plot,
                &panel.title,
                (x.clone(), "keys inserted (n)"),
                (y.clone(), "bytes held"),
                YAxis::Bytes,
            )?;
            for (value, name, style) in
                [(budget, "memory budget", RED), (ram, "machine RAM", BLACK)]
            {
                if value > 0.0 {
                    chart.draw_series(DashedLineSeries::new(
                        vec![(x.start, value), (x.end, value)],
                        8,
                        6,
                        style.stroke_width(1),
                    ))?;
                    keys.push(Key::dashed(format!("{name} {}", human_bytes(value)), style));
                }
            }
            for id in &panel.ids {
                let id = id.clone();
                let c = colour(&id);
                let mut measured: Vec<(f64, f64)> = r
                    .cells
                    .iter()
                    .filter(|cell| cell.structure == id)
                    .map(|cell| (cell.n as f64, cell.heap_footprint_bytes as f64))
                    .collect();
                measured.sort_by(|a, b| a.0.total_cmp(&b.0));
                // Projections from the line fitted to this run's measured cells; the size model otherwise.
                let fit = crate::analysis::fit_bytes(r, &id);
                let mut projected: Vec<(f64, f64)> = structure_skips(r)
                    .filter(|s| s.subject.cell() == Some(id.as_str()))
                    .map(|s| {
                        let n = s.n as f64;
                        (n, fit.map(|f| f.at(n)).unwrap_or(s.projected_bytes))
                    })
                    .collect();
                projected.sort_by(|a, b| a.0.total_cmp(&b.0));
                chart.draw_series(LineSeries::new(measured.clone(), c.stroke_width(2)))?;
                keys.push(Key::solid(id.as_str(), c));
                chart.draw_series(measured.iter().map(|p| Circle::new(*p, 4, c.filled())))?;
                if !projected.is_empty() {
                    let mut line = measured.last().copied().into_iter().collect::<Vec<_>>();
                    line.extend(projected.iter().copied());
                    chart.draw_series(DashedLineSeries::new(line, 6, 5, c.stroke_width(1)))?;
                    chart.draw_series(
                        projected
                            .iter()
                            .map(|p| Circle::new(*p, 5, c.stroke_width(2))),
                    )?;
                }
            }
            for (id, n_cross, bytes) in crossovers
                .iter()
                .filter(|c| panel.ids.iter().any(|i| i == c.0))
            {
                if let Some(last) = r
                    .cells
                    .iter()
                    .filter(|c| c.structure == *id)
                    .max_by_key(|c| c.n)
                {
                    let c = colour(id);
                    let line = vec![
                        (last.n as f64, last.heap_footprint_bytes as f64),
                        (*n_cross, *bytes),
                    ];
                    chart.draw_series(DashedLineSeries::new(line, 3, 5, c.stroke_width(1)))?;
                    chart.draw_series(std::iter::once(Circle::new(
                        (*n_cross, *bytes),
                        5,
                        c.stroke_width(2),
                    )))?;
                }
            }
            let crossing = crate::analysis::exact_crossover(r, role_id(Role::ExactSet), budget)
                .filter(|_| panel.ids.iter().any(|i| i == role_id(Role::ExactSet)));
            if let Some((n_cross, _)) = crossing {
                if n_cross > x.start && n_cross < x.end {
                    let red = RGBColor(200, 0, 0);
                    chart.draw_series(DashedLineSeries::new(
                        vec![(n_cross, y.start), (n_cross, y.end)],
                        4,
                        4,
                        red.stroke_width(1),
                    ))?;
                    chart.draw_series(std::iter::once(Text::new(
                        format!("exact set exceeds budget at n ≈ {}", axis_label(n_cross)),
                        (n_cross, y.start * 4.0),
                        ("sans-serif", 14).into_font().color(&red),
                    )))?;
                }
            }
            Ok(())
        })
    }
    fn verdict(&self, r: &Results) -> String {
        memory(r)
    }
    fn tables(&self, r: &Results) -> Result<String> {
        memory_table(r)
    }
}

fn memory(r: &Results) -> String {
    let budget = r
        .header
        .as_ref()
        .map(|h| h.memory_budget_bytes as f64)
        .unwrap_or(0.0);
    let mut out = Vec::new();
    if let (Some(h), Some(b)) = (
        largest(r, role_id(Role::ExactSet)),
        largest(r, role_id(Role::ReferenceBloom)),
    ) {
        let n = h.n.min(b.n);
        let hb = r
            .cells
            .iter()
            .find(|c| c.structure == role_id(Role::ExactSet) && c.n == n);
        let bb = r
            .cells
            .iter()
            .find(|c| c.structure == role_id(Role::ReferenceBloom) && c.n == n);
        if let (Some(hb), Some(bb)) = (hb, bb) {
            out.push(format!(
                "At n = {}, the exact set holds {} ({:.0} bits per key) against {} for the Bloom filter at p = {} ({:.1} bits per key): {:.0}× less memory for the filter.",
                human_count(n as f64),
                human_bytes(hb.heap_footprint_bytes as f64),
                hb.bits_per_key,
                human_bytes(bb.heap_footprint_bytes as f64),
                human_rate(r.header.as_ref().map(|h| h.fpr).unwrap_or(0.0)),
                bb.bits_per_key,
                hb.heap_footprint_bytes as f64 / bb.heap_footprint_bytes.max(1) as f64
            ));
        }
    }
    for (id, name) in [
        (role_id(Role::ExactSet), "exact set of URLs"),
        (role_id(Role::ExactFingerprints), "64-bit fingerprint set"),
    ] {
        let ram = r
            .header
            .as_ref()
            .map(|h| h.machine.total_memory_bytes as f64)
            .unwrap_or(0.0);
        if let Some(fit) = crate::analysis::fit_bytes(r, id) {
            out.push(format!(
                "Fitted to its {} measured cells of ≥ 10⁵ keys, the {name} takes {:.1} bytes per key (+ {}); it outgrows the {} budget at n ≈ {} and this machine's {} of RAM at n ≈ {} (projections from this run's measurements; the table grows in doubling steps, so the real edge can come earlier).",
                fit.points,
                fit.bytes_per_key,
                human_bytes(fit.intercept_bytes.max(0.0)),
                human_bytes(budget),
                human_count(fit.keys_at(budget)),
                human_bytes(ram),
                human_count(fit.keys_at(ram))
            ));
        } else if let Some((n, bytes_per_key)) = exact_crossover(r, id, budget) {
            out.push(format!(
                "With the measured {:.1} bytes per key, the {name} outgrows the {} budget at n ≈ {} (a projection from the largest measured cell).",
                bytes_per_key,
                human_bytes(budget),
                human_count(n)
            ));
        }
    }
    let cells_at = |skips: Vec<&crate::results::SkippedCell>| -> Vec<String> {
        skips
            .iter()
            .map(|s| format!("{} at n = {}", s.subject, human_count(s.n as f64)))
            .collect()
    };
    let capped = r
        .skipped
        .iter()
        .filter(|s| s.cause == crate::results::SkipCause::Capped)
        .collect();
    for (label, cells) in [
        (
            "over budget, drawn as projections",
            cells_at(structure_skips(r).collect()),
        ),
        (
            "capped by the suite or the row; results.csv gives each reason and the command that runs it",
            cells_at(capped),
        ),
    ] {
        if !cells.is_empty() {
            out.push(format!("Not run ({label}): {}.", cells.join(", ")));
        }
    }
    let registry = crate::registry::ids();
    let others: Vec<String> = r
        .skipped
        .iter()
        .filter(|s| {
            !s.subject.cell().is_some_and(|id| registry.contains(&id))
                && s.cause == crate::results::SkipCause::Memory
        })
        .map(|s| format!("the {}", s.describe()))
        .collect();
    if !others.is_empty() {
        out.push(format!(
            "Not run (over the memory limit): {}.",
            others.join("; ")
        ));
    }
    if out.is_empty() {
        "Not enough cells to compare structures.".into()
    } else {
        out.join(" ")
    }
}

/// `templates/figures/memory.html`: every cell's bytes, and the cells skipped for memory.
#[derive(serde::Serialize)]
struct MemoryTable<'a> {
    cells: Vec<MemoryRow<'a>>,
    skipped: Vec<SkippedRow<'a>>,
}

#[derive(serde::Serialize)]
struct MemoryRow<'a> {
    structure: &'a str,
    n: String,
    bits: String,
    hashes: String,
    bytes_held: u64,
    heap_requested: i64,
    heap_footprint: i64,
    model_footprint: String,
    model_over_measured: String,
    bits_per_key: String,
    rss_after: String,
    rss_peak: String,
}

#[derive(serde::Serialize)]
struct SkippedRow<'a> {
    structure: String,
    n: String,
    reason: &'a str,
    projected_bytes: String,
    bits_per_key: String,
}

fn memory_table(r: &Results) -> Result<String> {
    let cells = r
        .cells
        .iter()
        .map(|c| MemoryRow {
            structure: &c.structure,
            n: human_count(c.n as f64),
            bits: c
                .geometry
                .bits
                .map(|b| b.to_string())
                .unwrap_or_else(|| "–".into()),
            hashes: c
                .geometry
                .hashes
                .map(|k| k.to_string())
                .unwrap_or_else(|| "–".into()),
            bytes_held: c.bytes_held,
            heap_requested: c.heap_requested_bytes,
            heap_footprint: c.heap_footprint_bytes,
            model_footprint: c.model_footprint_bytes.round().to_string(),
            model_over_measured: format!(
                "{:.4}",
                c.model_footprint_bytes / (c.heap_footprint_bytes.max(1) as f64)
            ),
            bits_per_key: format!("{:.2}", c.bits_per_key),
            rss_after: human_bytes(c.rss_after_bytes as f64),
            rss_peak: human_bytes(c.rss_peak_bytes as f64),
        })
        .collect();
    let skipped = structure_skips(r)
        .map(|k| SkippedRow {
            structure: k.subject.to_string(),
            n: human_count(k.n as f64),
            reason: &k.reason,
            projected_bytes: k.projected_bytes.round().to_string(),
            bits_per_key: format!("{:.2}", k.projected_bytes * 8.0 / k.n.max(1) as f64),
        })
        .collect();
    template::render("figures/memory.html", &MemoryTable { cells, skipped })
}

//! Insert and lookup throughput against n, with the speed ratios and the probe costs under the lookup figure.

use super::*;

pub struct Throughput<'a> {
    pub insert: bool,
    /// The run's verdicts, shown under the lookup figure.
    pub analysis: &'a crate::analysis::Analysis,
}

impl Figure for Throughput<'_> {
    fn stem(&self) -> &'static str {
        if self.insert {
            "insert_throughput"
        } else {
            "query_throughput"
        }
    }
    fn title(&self) -> &'static str {
        if self.insert {
            "Insert throughput vs keys (hash + probe; median, bars min–max over reps)"
        } else {
            "Member query throughput vs keys (hash + probe; median, bars min–max)"
        }
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
        let pick = |c: &crate::results::CellRecord| {
            if self.insert {
                c.insert_ns_per_key
            } else {
                c.member_query_ns_per_key
            }
        };
        let x = log_range(r.cells.iter().map(|c| c.n as f64));
        let y = log_range(
            r.cells
                .iter()
                .flat_map(|c| [1e9 / pick(c).min, 1e9 / pick(c).max]),
        );
        let panels = panels::panels(&cell_structures(r, |_| true));
        draw_panels(area, self.title(), &panels, |plot, panel, keys| {
            let mut chart = log_log_chart(
                plot,
                &panel.title,
                (x.clone(), "keys inserted (n)"),
                (y.clone(), "keys per second (1/s)"),
                axis_label,
            )?;
            for id in &panel.ids {
                let c = colour(id);
                let mut cells: Vec<_> = r
                    .cells
                    .iter()
                    .filter(|cell| cell.structure == *id)
                    .collect();
                cells.sort_by_key(|cell| cell.n);
                let points: Vec<(f64, f64)> = cells
                    .iter()
                    .map(|cell| (cell.n as f64, 1e9 / pick(cell).median))
                    .collect();
                chart.draw_series(LineSeries::new(points.clone(), c.stroke_width(2)))?;
                keys.push(Key::solid(id.as_str(), c));
                chart.draw_series(cells.iter().map(|cell| {
                    let s = pick(cell);
                    ErrorBar::new_vertical(
                        cell.n as f64,
                        1e9 / s.max,
                        1e9 / s.median,
                        1e9 / s.min,
                        c.filled(),
                        8,
                    )
                }))?;
            }
            Ok(())
        })
    }
    fn verdict(&self, r: &Results) -> String {
        speed(r, self.insert)
    }
    fn tables(&self, out: &mut String, r: &Results) {
        if !self.insert {
            speed_table(out, r, self.analysis);
            probe_table(out, r);
        }
    }
}

fn speed(r: &Results, insert: bool) -> String {
    let top = r.cells.iter().map(|c| c.n).max().unwrap_or(0);
    let mut rows: Vec<(&CellRecord, f64)> = r
        .cells
        .iter()
        .filter(|c| c.n == top)
        .map(|c| {
            (
                c,
                if insert {
                    c.insert_ns_per_key.median
                } else {
                    c.member_query_ns_per_key.median
                },
            )
        })
        .collect();
    rows.sort_by(|a, b| a.1.total_cmp(&b.1));
    let Some((fastest, ns)) = rows.first() else {
        return "No measured cells.".into();
    };
    let Some((slowest, slowest_ns)) = rows.last() else {
        return "No measured cells.".into();
    };
    format!(
        "At n = {}, the cells' medians to {} run from {:.1} ns per key ({}; hashing alone {:.1} ns) to {:.1} ns ({}). Each cell is timed on its own, minutes from the others, on a machine whose speed drifts: read one structure's curve here, and the paired ratios of the interleaved rounds (Speed ratios) to compare two.",
        human_count(top as f64),
        if insert { "insert" } else { "query" },
        ns,
        fastest.structure,
        fastest.hash_ns_per_key.median,
        slowest_ns,
        slowest.structure
    )
}

fn speed_table(s: &mut String, r: &Results, analysis: &crate::analysis::Analysis) {
    let _ = writeln!(
        s,
        "<h3 id=\"speed\">Speed</h3><p>Nanoseconds per key: median [min, max] over repetitions. Hashing is timed alone on the same keys; probe = the structure's own cost.</p>\
<table><tr><th>structure</th><th>n</th><th>insert ns</th><th>hash ns</th><th>probe (insert) ns</th><th>member query ns</th><th>non-member query ns</th><th>insert keys/s</th><th>query keys/s</th></tr>"
    );
    let span = |x: crate::stats::Summary| format!("{:.1} [{:.1}, {:.1}]", x.median, x.min, x.max);
    for c in &r.cells {
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&c.structure),
            human_count(c.n as f64),
            span(c.insert_ns_per_key),
            // An external tool hashes inside its own calls: no separate hash time.
            if c.external.is_some() {
                "in its calls".to_string()
            } else {
                span(c.hash_ns_per_key)
            },
            if c.external.is_some() {
                "in its calls".to_string()
            } else {
                span(c.probe_insert_ns_per_key)
            },
            span(c.member_query_ns_per_key),
            span(c.non_member_query_ns_per_key),
            human_count(c.insert_keys_per_s()),
            human_count(c.query_keys_per_s())
        );
    }
    let _ = writeln!(s, "</table>");
    paths_table(s, r);
    super::super::speed::section(s, analysis);
}

/// Each structure with a batch API of its own, per key beside batched, with the memory floor at that n.
fn paths_table(s: &mut String, r: &Results) {
    let cells: Vec<&CellRecord> = r
        .cells
        .iter()
        .filter(|c| c.timed_per_key && c.batched_insert_ns_per_key.is_some())
        .collect();
    if cells.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "<h3 id=\"paths\">Per key and batched</h3><p>The same structure on its two paths, ns per key (medians, hashing included): one call per key, as every structure is timed above, and its own batch API (prefetching ahead; a fresh build for the insert). Only structures with a batch API of their own are listed; the others are timed per key alone (above). The memory floor is one random cache-line read per key, prefetched as a batched lookup is, in one array per n (a <code>blocked</code> filter's size), median [min, max] of its repeats.</p>\
<table><tr><th>structure</th><th>n</th><th>insert: per key / batched</th><th>member query: per key / batched</th><th>non-member query: per key / batched</th><th>memory floor ns</th></tr>"
    );
    let pair =
        |per_key: crate::stats::Summary, batched: Option<crate::stats::Summary>| match batched {
            Some(b) => format!(
                "{:.1} / {:.1} ({:.2}×)",
                per_key.median,
                b.median,
                per_key.median / b.median.max(1e-9)
            ),
            None => format!("{:.1} / –", per_key.median),
        };
    for c in cells {
        let floor = match (c.memory_floor_reads_ns_per_key, c.memory_floor_array_bytes) {
            (Some(f), Some(bytes)) => format!(
                "{:.1} [{:.1}, {:.1}] in {}",
                f.median,
                f.min,
                f.max,
                human_bytes(bytes as f64)
            ),
            (Some(f), None) => format!("{:.1} [{:.1}, {:.1}] (own array)", f.median, f.min, f.max),
            _ => "–".into(),
        };
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{floor}</td></tr>",
            esc(&c.structure),
            human_count(c.n as f64),
            pair(c.insert_ns_per_key, c.batched_insert_ns_per_key),
            pair(c.member_query_ns_per_key, c.batched_member_query_ns_per_key),
            pair(
                c.non_member_query_ns_per_key,
                c.batched_non_member_query_ns_per_key
            ),
        );
    }
    let _ = writeln!(s, "</table>");
}

/// Random-read costs of this machine by page size and access pattern, as measured.
fn probe_table(s: &mut String, r: &Results) {
    for p in &r.memory_probe {
        let ratio = p.independent_ns / p.independent_huge_ns.max(1e-9);
        // Within 5% either way is read as no change: the probe's own spread between runs is about that.
        let effect = if ratio > 1.05 {
            "cut"
        } else if ratio < 1.0 / 1.05 {
            "raised"
        } else {
            "left about unchanged"
        };
        let _ = writeln!(
            s,
            "<h3>Memory access on this machine ({} array, {} reads)</h3>\
<table><tr><th>pages</th><th>dependent reads, ns</th><th>independent reads, ns</th></tr>\
<tr><td>4 KiB (MADV_NOHUGEPAGE)</td><td>{:.1}</td><td>{:.1}</td></tr>\
<tr><td>huge pages asked for (MADV_HUGEPAGE; {} granted)</td><td>{:.1}</td><td>{:.1}</td></tr></table>\
<p>Huge pages {effect} the independent read: {:.1} to {:.1} ns ({:.2}×). The structures ask for huge pages on arrays of 4 MiB or more; each cell records how many bytes the kernel granted.</p>",
            human_bytes(p.array_bytes as f64),
            p.reads,
            p.dependent_ns,
            p.independent_ns,
            human_bytes(p.huge_page_bytes as f64),
            p.dependent_huge_ns,
            p.independent_huge_ns,
            p.independent_ns,
            p.independent_huge_ns,
            ratio
        );
    }
}

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
                YAxis::Plain,
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
    fn tables(&self, r: &Results) -> Result<String> {
        if self.insert {
            return Ok(String::new());
        }
        template::render(
            "figures/throughput.html",
            &SpeedTables {
                cells: speed_rows(r),
                paths: path_rows(r),
                ratios: super::super::speed::view(self.analysis),
                probes: probe_rows(r),
            },
        )
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

/// `templates/figures/throughput.html`: every cell's speeds, the two call paths, the speed ratios and
/// the machine's memory probe.
#[derive(serde::Serialize)]
struct SpeedTables<'a> {
    cells: Vec<SpeedRow<'a>>,
    paths: Vec<PathRow<'a>>,
    ratios: super::super::speed::Ratios,
    probes: Vec<ProbeRow>,
}

/// ns per key, median [min, max] over repetitions.
#[derive(serde::Serialize)]
struct SpeedRow<'a> {
    structure: &'a str,
    n: String,
    insert: String,
    hash: String,
    probe: String,
    member_query: String,
    non_member_query: String,
    insert_keys_per_s: String,
    query_keys_per_s: String,
}

/// Per key against batched, ns per key (medians), with the memory floor.
#[derive(serde::Serialize)]
struct PathRow<'a> {
    structure: &'a str,
    n: String,
    insert: String,
    member_query: String,
    non_member_query: String,
    floor: String,
}

/// Random reads on this machine by page size and access pattern.
#[derive(serde::Serialize)]
struct ProbeRow {
    array: String,
    reads: u64,
    dependent: String,
    independent: String,
    huge_granted: String,
    dependent_huge: String,
    independent_huge: String,
    /// What huge pages did to the independent read.
    effect: &'static str,
    ratio: String,
}

fn speed_rows(r: &Results) -> Vec<SpeedRow<'_>> {
    let span = |x: crate::stats::Summary| format!("{:.1} [{:.1}, {:.1}]", x.median, x.min, x.max);
    r.cells
        .iter()
        .map(|c| SpeedRow {
            structure: &c.structure,
            n: human_count(c.n as f64),
            insert: span(c.insert_ns_per_key),
            // An external tool hashes inside its own calls: no separate hash time.
            hash: if c.external.is_some() {
                "in its calls".to_string()
            } else {
                span(c.hash_ns_per_key)
            },
            probe: if c.external.is_some() {
                "in its calls".to_string()
            } else {
                span(c.probe_insert_ns_per_key)
            },
            member_query: span(c.member_query_ns_per_key),
            non_member_query: span(c.non_member_query_ns_per_key),
            insert_keys_per_s: human_count(c.insert_keys_per_s()),
            query_keys_per_s: human_count(c.query_keys_per_s()),
        })
        .collect()
}

/// Each structure with a batch API of its own, per key beside batched, with the memory floor at that n.
fn path_rows(r: &Results) -> Vec<PathRow<'_>> {
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
    r.cells
        .iter()
        .filter(|c| c.timed_per_key && c.batched_insert_ns_per_key.is_some())
        .map(|c| PathRow {
            structure: &c.structure,
            n: human_count(c.n as f64),
            insert: pair(c.insert_ns_per_key, c.batched_insert_ns_per_key),
            member_query: pair(c.member_query_ns_per_key, c.batched_member_query_ns_per_key),
            non_member_query: pair(
                c.non_member_query_ns_per_key,
                c.batched_non_member_query_ns_per_key,
            ),
            floor: match (c.memory_floor_reads_ns_per_key, c.memory_floor_array_bytes) {
                (Some(f), Some(bytes)) => format!(
                    "{:.1} [{:.1}, {:.1}] in {}",
                    f.median,
                    f.min,
                    f.max,
                    human_bytes(bytes as f64)
                ),
                (Some(f), None) => {
                    format!("{:.1} [{:.1}, {:.1}] (own array)", f.median, f.min, f.max)
                }
                _ => "–".into(),
            },
        })
        .collect()
}

/// Random-read costs of this machine by page size and access pattern, as measured.
fn probe_rows(r: &Results) -> Vec<ProbeRow> {
    r.memory_probe
        .iter()
        .map(|p| {
            let ratio = p.independent_ns / p.independent_huge_ns.max(1e-9);
            // Within 5% either way is read as no change: the probe's own spread between runs is about that.
            let effect = if ratio > 1.05 {
                "cut"
            } else if ratio < 1.0 / 1.05 {
                "raised"
            } else {
                "left about unchanged"
            };
            ProbeRow {
                array: human_bytes(p.array_bytes as f64),
                reads: p.reads,
                dependent: format!("{:.1}", p.dependent_ns),
                independent: format!("{:.1}", p.independent_ns),
                huge_granted: human_bytes(p.huge_page_bytes as f64),
                dependent_huge: format!("{:.1}", p.dependent_huge_ns),
                independent_huge: format!("{:.1}", p.independent_huge_ns),
                effect,
                ratio: format!("{ratio:.2}"),
            }
        })
        .collect()
}

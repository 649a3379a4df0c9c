//! The dedup-cli experiment read: each tool's lines per second (the median over its rounds of lines over
//! the process's wall time, with the order-statistics interval of [`crate::stats::median_interval`]), its
//! peak resident set and its wrong answers; and every structure's `DedupOverExactTools` target, judged on
//! the per-round ratio of its lines per second over the fastest Unix tool's (awk, sort -u, huniq, runiq:
//! the exact tools an operator already has; the one with the highest median), met when the interval lies
//! above the target.

use super::speed::TargetStatus;
use crate::kind::OwnTarget;
use crate::registry::{find, REGISTRY};
use crate::results::{DedupCliRecord, DedupTool, Results};
use crate::stats::{median_interval, summarize};
use serde::{Deserialize, Serialize};

/// One tool's row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DedupCliRow {
    pub tool: DedupTool,
    pub command: String,
    pub version: Option<String>,
    /// Whether it answers exactly (awk and sort keep every line, huniq and runiq a 64-bit hash of it,
    /// `dedup` with an exact structure).
    pub exact: bool,
    pub lines_per_s_median: Option<f64>,
    pub lines_per_s_low: Option<f64>,
    pub lines_per_s_high: Option<f64>,
    pub rounds: usize,
    pub peak_rss_bytes: Option<u64>,
    pub lines_out: u64,
    pub wrongly_dropped: u64,
    pub wrongly_passed: u64,
    pub order_kept: bool,
    pub unavailable: Option<String>,
}

/// A structure's target against the fastest exact tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DedupCliTarget {
    pub ours: DedupTool,
    pub against: DedupTool,
    pub min_ratio: f64,
    pub ratio_median: f64,
    pub ratio_low: f64,
    pub ratio_high: f64,
    pub coverage: f64,
    pub status: TargetStatus,
}

/// The experiment's analysis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DedupCliAnalysis {
    pub lines: u64,
    pub distinct_lines: u64,
    pub input_bytes: u64,
    /// What `/usr/bin/time` holds itself: a peak at or below it says only "at most this".
    pub rss_floor_bytes: Option<u64>,
    pub rows: Vec<DedupCliRow>,
    pub targets: Vec<DedupCliTarget>,
}

/// Whether `tool` answers exactly.
fn exact(tool: &DedupTool) -> bool {
    match tool {
        DedupTool::Dedup { structure } => find(structure).map(|k| k.exact()).unwrap_or(false),
        _ => true,
    }
}

/// Lines per second in each round.
fn rates(r: &DedupCliRecord) -> Vec<f64> {
    r.wall_s.iter().map(|s| r.lines as f64 / s).collect()
}

/// The analysis of the experiment's records (`None` without any).
pub fn dedup_cli(results: &Results) -> Option<DedupCliAnalysis> {
    let first = results.dedup_cli.first()?;
    let rows: Vec<DedupCliRow> = results
        .dedup_cli
        .iter()
        .map(|r| {
            let rates = rates(r);
            let interval = median_interval(&rates);
            DedupCliRow {
                tool: r.tool.clone(),
                command: r.command.clone(),
                version: r.version.clone(),
                exact: exact(&r.tool),
                lines_per_s_median: (!rates.is_empty()).then(|| summarize(&rates).median),
                lines_per_s_low: interval.map(|i| i.low),
                lines_per_s_high: interval.map(|i| i.high),
                rounds: rates.len(),
                peak_rss_bytes: r.peak_rss_bytes,
                lines_out: r.lines_out,
                wrongly_dropped: r.wrongly_dropped,
                wrongly_passed: r.wrongly_passed,
                order_kept: r.order_kept,
                unavailable: r.unavailable.clone(),
            }
        })
        .collect();
    Some(DedupCliAnalysis {
        lines: first.lines,
        distinct_lines: first.distinct_lines,
        input_bytes: first.input_bytes,
        rss_floor_bytes: first.rss_floor_bytes,
        targets: targets(results, &rows),
        rows,
    })
}

/// Every `DedupOverExactTools` target whose structure ran, against the fastest Unix tool that ran (each
/// exact; `dedup`'s own exact structures are rows of the table, not the bar).
fn targets(results: &Results, rows: &[DedupCliRow]) -> Vec<DedupCliTarget> {
    let record = |tool: &DedupTool| results.dedup_cli.iter().find(|r| &r.tool == tool);
    let Some(fastest) = rows
        .iter()
        .filter(|r| r.exact && r.unavailable.is_none() && DedupTool::UNIX.contains(&r.tool))
        .filter_map(|r| Some((r, r.lines_per_s_median?)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .and_then(|(r, _)| record(&r.tool))
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for kind in REGISTRY {
        for own in kind.descriptor().own_targets {
            let OwnTarget::DedupOverExactTools { min_ratio } = *own else {
                continue;
            };
            let ours = DedupTool::Dedup {
                structure: kind.id().to_string(),
            };
            let Some(ours_record) = record(&ours).filter(|r| r.unavailable.is_none()) else {
                continue;
            };
            // Round r of one against round r of the other: run moments apart.
            let ratios: Vec<f64> = rates(ours_record)
                .iter()
                .zip(rates(fastest))
                .map(|(o, f)| o / f)
                .collect();
            let Some(i) = median_interval(&ratios) else {
                continue;
            };
            let status = if i.low > min_ratio {
                TargetStatus::Met
            } else if i.high < min_ratio {
                TargetStatus::Missed
            } else {
                TargetStatus::Undecided
            };
            out.push(DedupCliTarget {
                ours,
                against: fastest.tool.clone(),
                min_ratio,
                ratio_median: i.median,
                ratio_low: i.low,
                ratio_high: i.high,
                coverage: i.coverage,
                status,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(tool: DedupTool, wall_s: Vec<f64>) -> DedupCliRecord {
        DedupCliRecord {
            tool,
            command: String::new(),
            version: None,
            lines: 1_000_000,
            distinct_lines: 700_000,
            input_bytes: 0,
            wall_s,
            lines_out: 700_000,
            wrongly_dropped: 0,
            wrongly_passed: 0,
            order_kept: true,
            peak_rss_bytes: None,
            rss_floor_bytes: None,
            unavailable: None,
        }
    }

    fn blocked() -> DedupTool {
        DedupTool::Dedup {
            structure: crate::registry::role_id(crate::kind::Role::BlockedBloom).to_string(),
        }
    }

    #[test]
    fn the_target_pairs_rounds_against_the_fastest_exact_tool() {
        let mut r = Results::default();
        r.dedup_cli.push(record(DedupTool::Awk, vec![2.0; 7]));
        r.dedup_cli.push(record(
            DedupTool::Huniq,
            vec![0.5, 0.6, 0.5, 0.6, 0.5, 0.6, 0.5],
        ));
        r.dedup_cli.push(record(blocked(), vec![0.1; 7]));
        let a = dedup_cli(&r).unwrap();
        let t = &a.targets[0];
        assert_eq!(t.against, DedupTool::Huniq);
        assert_eq!((t.ratio_low, t.ratio_high), (5.0, 6.0));
        assert_eq!(t.status, TargetStatus::Met);
        // Three times as fast as huniq, give or take: the interval holds 3.
        r.dedup_cli[2].wall_s = vec![0.15, 0.2, 0.17, 0.18, 0.2, 0.16, 0.17];
        assert_eq!(
            dedup_cli(&r).unwrap().targets[0].status,
            TargetStatus::Undecided
        );
        r.dedup_cli[2].wall_s = vec![0.5; 7];
        assert_eq!(
            dedup_cli(&r).unwrap().targets[0].status,
            TargetStatus::Missed
        );
        // A tool that did not run is never the one to beat.
        r.dedup_cli[1].unavailable = Some("huniq is not installed".into());
        r.dedup_cli[1].wall_s.clear();
        assert_eq!(dedup_cli(&r).unwrap().targets[0].against, DedupTool::Awk);
    }
}

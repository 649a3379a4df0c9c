//! The dedup-cli experiment read: each tool's lines per second (the median over its rounds of lines over
//! the process's wall time, with the order-statistics interval of [`crate::stats::median_interval`] and
//! its coverage) and per CPU second, its peak resident set and its wrong answers; and every structure's
//! `DedupOverExactTools` target, judged on the per-round ratio of its lines per second over the fastest
//! Unix tool's (awk, sort -u, huniq, runiq: the exact tools an operator already has, huniq and runiq by
//! 64-bit digests as our `fingerprint`; only one whose output was checked clean can be the bar), met when
//! the interval lies above the target, and only on streams of the target's length. Beside it, for what the
//! structure itself buys, the same ratio against `dedup`'s own fastest exact structure: the same binary,
//! the same reading and writing of lines.

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
    /// Whether it keeps 64-bit digests of the lines rather than the lines (exact up to their collisions).
    pub digests: bool,
    pub lines_per_s_median: Option<f64>,
    pub lines_per_s_low: Option<f64>,
    pub lines_per_s_high: Option<f64>,
    pub lines_per_s_coverage: Option<f64>,
    /// Median over the rounds of lines per CPU second (user and system), where measured.
    pub lines_per_cpu_s_median: Option<f64>,
    pub rounds: usize,
    pub peak_rss_bytes: Option<u64>,
    pub lines_out: u64,
    pub wrongly_dropped: u64,
    pub wrongly_passed: u64,
    pub order_kept: bool,
    pub unavailable: Option<String>,
    pub failed: Option<String>,
}

/// A paired ratio of lines per second, ours over another tool's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairedRatio {
    pub against: DedupTool,
    pub median: f64,
    pub low: f64,
    pub high: f64,
    pub coverage: f64,
}

/// A structure's target against the fastest Unix tool, and what it gains over `dedup`'s own exact
/// structures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DedupCliTarget {
    pub ours: DedupTool,
    pub min_ratio: f64,
    /// The stream length from which it is judged.
    pub at_lines: u64,
    /// Against the fastest Unix tool checked clean (`None`: none ran clean).
    pub against_unix: Option<PairedRatio>,
    /// Against the fastest of `dedup`'s exact structures (same plumbing: the structure's own gain).
    pub against_own_exact: Option<PairedRatio>,
    /// `None`: not judged (a shorter stream, or no Unix tool to judge against).
    pub status: Option<TargetStatus>,
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

impl DedupCliTarget {
    /// The verdict in words, for the report and the console.
    pub fn words(&self) -> String {
        let ratio = |r: &PairedRatio| {
            format!(
                "{:.2}× the lines per second of {} ({:.1}% interval {:.2}–{:.2})",
                r.median,
                r.against,
                100.0 * r.coverage,
                r.low,
                r.high
            )
        };
        let mut out = match &self.against_unix {
            Some(r) => format!("{}: {}, the fastest Unix tool here", self.ours, ratio(r)),
            None => format!(
                "{}: no Unix tool ran with a clean answer to compare",
                self.ours
            ),
        };
        out += &match self.status {
            Some(status) => format!("; target ≥ {}: {}", self.min_ratio, status.words()),
            None if self.against_unix.is_some() => format!(
                "; target ≥ {} not judged below {} lines",
                self.min_ratio,
                crate::units::human_count(self.at_lines as f64)
            ),
            None => String::new(),
        };
        if let Some(r) = &self.against_own_exact {
            out += &format!("; the structure's own gain: {}, same binary", ratio(r));
        }
        out
    }
}

/// Whether `tool` keeps 64-bit digests of the lines.
fn digests(tool: &DedupTool) -> bool {
    match tool {
        DedupTool::Dedup { structure } => {
            find(structure).is_ok_and(|k| k.exact() && !k.plays(crate::kind::Role::ExactSet))
        }
        DedupTool::Huniq | DedupTool::Runiq => true,
        DedupTool::Awk | DedupTool::SortUnique => false,
    }
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
            let per_cpu: Vec<f64> = r.cpu_s.iter().map(|s| r.lines as f64 / s).collect();
            DedupCliRow {
                tool: r.tool.clone(),
                command: r.command.clone(),
                version: r.version.clone(),
                exact: exact(&r.tool),
                digests: digests(&r.tool),
                lines_per_s_median: (!rates.is_empty()).then(|| summarize(&rates).median),
                lines_per_s_low: interval.map(|i| i.low),
                lines_per_s_high: interval.map(|i| i.high),
                lines_per_s_coverage: interval.map(|i| i.coverage),
                lines_per_cpu_s_median: (!per_cpu.is_empty()).then(|| summarize(&per_cpu).median),
                rounds: rates.len(),
                peak_rss_bytes: r.peak_rss_bytes,
                lines_out: r.lines_out,
                wrongly_dropped: r.wrongly_dropped,
                wrongly_passed: r.wrongly_passed,
                order_kept: r.order_kept,
                unavailable: r.unavailable.clone(),
                failed: r.failed.clone(),
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

/// The fastest of `rows` that `eligible` lets through, ran in every round and answered clean.
fn fastest(rows: &[DedupCliRow], eligible: impl Fn(&DedupCliRow) -> bool) -> Option<&DedupCliRow> {
    rows.iter()
        .filter(|r| r.exact && r.wrongly_dropped == 0 && r.wrongly_passed == 0 && eligible(r))
        .filter_map(|r| Some((r, r.lines_per_s_median?)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(r, _)| r)
}

/// Round r of `ours` against round r of `other` (run moments apart): lines per second, ours over theirs.
fn paired(ours: &DedupCliRecord, other: &DedupCliRecord) -> Option<PairedRatio> {
    let ratios: Vec<f64> = rates(ours)
        .iter()
        .zip(rates(other))
        .map(|(o, t)| o / t)
        .collect();
    let i = median_interval(&ratios)?;
    Some(PairedRatio {
        against: other.tool.clone(),
        median: i.median,
        low: i.low,
        high: i.high,
        coverage: i.coverage,
    })
}

/// Every `DedupOverExactTools` target whose structure ran.
fn targets(results: &Results, rows: &[DedupCliRow]) -> Vec<DedupCliTarget> {
    let record = |tool: &DedupTool| results.dedup_cli.iter().find(|r| &r.tool == tool);
    let unix = fastest(rows, |r| DedupTool::UNIX.contains(&r.tool)).and_then(|r| record(&r.tool));
    let mut out = Vec::new();
    for kind in REGISTRY {
        for own in kind.descriptor().own_targets {
            let OwnTarget::DedupOverExactTools {
                min_ratio,
                at_lines,
            } = *own
            else {
                continue;
            };
            let ours = DedupTool::Dedup {
                structure: kind.id().to_string(),
            };
            let Some(ours_record) = record(&ours).filter(|r| !r.wall_s.is_empty()) else {
                continue;
            };
            let own_exact = fastest(rows, |r| {
                matches!(r.tool, DedupTool::Dedup { .. }) && r.tool != ours
            })
            .and_then(|r| record(&r.tool));
            let against_unix = unix.and_then(|u| paired(ours_record, u));
            let status = against_unix
                .as_ref()
                .filter(|_| ours_record.lines >= at_lines)
                .map(|r| {
                    if r.low > min_ratio {
                        TargetStatus::Met
                    } else if r.high < min_ratio {
                        TargetStatus::Missed
                    } else {
                        TargetStatus::Undecided
                    }
                });
            out.push(DedupCliTarget {
                ours,
                min_ratio,
                at_lines,
                against_unix,
                against_own_exact: own_exact.and_then(|e| paired(ours_record, e)),
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
            lines: crate::results::DEDUP_CLI_LINES,
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
            failed: None,
            cpu_s: Vec::new(),
        }
    }

    fn blocked() -> DedupTool {
        DedupTool::Dedup {
            structure: crate::registry::role_id(crate::kind::Role::BlockedBloom).to_string(),
        }
    }

    #[test]
    fn the_target_pairs_rounds_against_the_fastest_clean_unix_tool() {
        let mut r = Results::default();
        r.dedup_cli.push(record(DedupTool::Awk, vec![2.0; 7]));
        r.dedup_cli.push(record(
            DedupTool::Huniq,
            vec![0.5, 0.6, 0.5, 0.6, 0.5, 0.6, 0.5],
        ));
        r.dedup_cli.push(record(blocked(), vec![0.1; 7]));
        let target = |r: &Results| dedup_cli(r).unwrap().targets[0].clone();
        let t = target(&r);
        let unix = t.against_unix.clone().unwrap();
        assert_eq!(unix.against, DedupTool::Huniq);
        assert!(
            (unix.low - 5.0).abs() < 1e-9 && (unix.high - 6.0).abs() < 1e-9,
            "{unix:?}"
        );
        assert_eq!(t.status, Some(TargetStatus::Met));
        assert_eq!(t.against_own_exact, None);
        // Three times as fast as huniq, give or take: the interval holds 3.
        r.dedup_cli[2].wall_s = vec![0.15, 0.2, 0.17, 0.18, 0.2, 0.16, 0.17];
        assert_eq!(target(&r).status, Some(TargetStatus::Undecided));
        r.dedup_cli[2].wall_s = vec![0.5; 7];
        assert_eq!(target(&r).status, Some(TargetStatus::Missed));
        // A tool whose output was wrong is never the one to beat, nor one that did not run.
        r.dedup_cli[1].wrongly_passed = 3;
        assert_eq!(target(&r).against_unix.unwrap().against, DedupTool::Awk);
        r.dedup_cli[0].wall_s.clear();
        r.dedup_cli[0].unavailable = Some("awk is not installed".into());
        assert_eq!(target(&r).against_unix, None);
        assert_eq!(target(&r).status, None);
        // A short stream is not judged; our own exact structure is the second bar.
        r.dedup_cli[1].wrongly_passed = 0;
        r.dedup_cli.push(record(
            DedupTool::Dedup {
                structure: crate::registry::role_id(crate::kind::Role::ExactSet).to_string(),
            },
            vec![0.25; 7],
        ));
        for x in &mut r.dedup_cli {
            x.lines = 20_000;
        }
        let t = target(&r);
        assert_eq!(t.status, None);
        assert!((t.against_own_exact.unwrap().median - 0.5).abs() < 1e-9);
    }
}

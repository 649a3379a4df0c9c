//! `dedup` among the Unix tools: the dedup-cli experiment's table, from the analysis (which computed the
//! rates, their intervals and the targets; nothing is recomputed here).

use crate::analysis::dedup_cli::{DedupCliAnalysis, DedupCliRow};
use crate::analysis::Analysis;
use crate::units::{human_bytes, human_count};
use serde::Serialize;

/// The section's view.
#[derive(Serialize)]
pub struct DedupCli {
    pub verdict: String,
    pub lines: String,
    pub distinct: String,
    pub input: String,
    pub floor: Option<String>,
    pub rows: Vec<Row>,
    pub not_run: Vec<String>,
}

/// One tool's row, formatted.
#[derive(Serialize)]
pub struct Row {
    pub tool: String,
    pub command: String,
    pub version: String,
    pub exact: &'static str,
    pub lines_per_s: String,
    pub interval: String,
    pub per_cpu_s: String,
    pub rss: String,
    pub dropped: String,
    pub passed: u64,
    pub order: &'static str,
}

/// Millions of lines per second, two decimals.
fn mps(v: f64) -> String {
    format!("{:.2} M", v / 1e6)
}

fn row(r: &DedupCliRow, floor: Option<u64>, distinct: u64) -> Row {
    let rss = match (r.peak_rss_bytes, floor) {
        (Some(p), Some(f)) if p <= f => format!("≤ {}", human_bytes(p as f64)),
        (Some(p), _) => human_bytes(p as f64),
        (None, _) => "not measured".into(),
    };
    Row {
        tool: r.tool.to_string(),
        command: r.command.clone(),
        version: r.version.clone().unwrap_or_default(),
        exact: match (r.exact, r.digests) {
            (true, false) => "exact",
            (true, true) => "exact (64-bit digests)",
            (false, _) => "filter",
        },
        lines_per_s: r.lines_per_s_median.map(mps).unwrap_or_default(),
        interval: match (
            r.lines_per_s_low,
            r.lines_per_s_high,
            r.lines_per_s_coverage,
        ) {
            (Some(l), Some(h), Some(c)) => format!("[{}, {}] ({:.1}%)", mps(l), mps(h), 100.0 * c),
            _ => String::new(),
        },
        per_cpu_s: r.lines_per_cpu_s_median.map(mps).unwrap_or_default(),
        rss,
        dropped: if r.wrongly_dropped == 0 {
            "0".into()
        } else {
            format!(
                "{} ({:.3}%)",
                r.wrongly_dropped,
                100.0 * r.wrongly_dropped as f64 / distinct.max(1) as f64
            )
        },
        passed: r.wrongly_passed,
        order: if r.order_kept { "kept" } else { "lost" },
    }
}

/// The one-line verdict: each target against the fastest Unix tool and against our own exact ones.
pub fn verdict(a: &DedupCliAnalysis) -> String {
    let parts: Vec<String> = a.targets.iter().map(|t| t.words()).collect();
    if parts.is_empty() {
        return "No structure with a target ran.".into();
    }
    format!("{}.", parts.join(". "))
}

/// The section, where the run has the experiment.
pub fn view(analysis: &Analysis) -> Option<DedupCli> {
    let a = analysis.dedup_cli.as_ref()?;
    let (ran, not_run): (Vec<&DedupCliRow>, Vec<&DedupCliRow>) = a
        .rows
        .iter()
        .partition(|r| r.unavailable.is_none() && r.failed.is_none());
    let mut ran = ran;
    ran.sort_by(|x, y| {
        y.lines_per_s_median
            .unwrap_or(0.0)
            .total_cmp(&x.lines_per_s_median.unwrap_or(0.0))
    });
    Some(DedupCli {
        verdict: verdict(a),
        lines: human_count(a.lines as f64),
        distinct: human_count(a.distinct_lines as f64),
        input: human_bytes(a.input_bytes as f64),
        floor: a.rss_floor_bytes.map(|f| human_bytes(f as f64)),
        rows: ran
            .into_iter()
            .map(|r| row(r, a.rss_floor_bytes, a.distinct_lines))
            .collect(),
        not_run: not_run
            .into_iter()
            .map(|r| {
                let why = r.unavailable.as_ref().or(r.failed.as_ref());
                format!("{}: {}", r.tool, why.cloned().unwrap_or_default())
            })
            .collect(),
    })
}

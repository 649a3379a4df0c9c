//! The speed verdicts, as `analysis.json` holds them: each compared pair's median per-round ratio with
//! its 95% interval and verdict, the targets judged on those intervals, and the ratios measured once.
//! Nothing is computed here beyond choosing rows and formatting them.

use crate::analysis::{Analysis, SpeedRatio, TargetStatus};
use crate::membership::CallPath;
use crate::results::SpeedTiming;
use crate::units::human_count;
use serde::Serialize;

/// What `templates/speed.html` shows.
#[derive(Serialize)]
pub struct Ratios {
    /// The headline size's group first, then the others by n.
    groups: Vec<Group>,
    /// The other groups' sizes, for the fold's summary.
    others: String,
    left_out: Vec<LeftOut>,
    once: Vec<Once>,
    /// The filters that miss their rate, in one line (empty: none).
    missed_rates: String,
    /// Whether every ratio's times are the structures' calls alone (the hash timed apart).
    probe_only: bool,
    /// The run's hash per key on the lookups' keys, median over the groups' slices (probe-alone groups).
    hash_ns: String,
}

/// The ratios at one n.
#[derive(Serialize)]
struct Group {
    n: String,
    rounds: u32,
    /// Builds shared by the rounds (none: each round on a fresh build).
    shared_builds: Option<u32>,
    coverage: String,
    rows: Vec<Row>,
}

#[derive(Serialize)]
struct Row {
    ours: String,
    peer: String,
    op: &'static str,
    path: &'static str,
    ours_ns: String,
    peer_ns: String,
    figure: String,
    verdict: &'static str,
    target: Option<Target>,
    note: Option<String>,
}

/// A target: its minimum ratio, and where the interval puts it (none: judged at another n).
#[derive(Serialize)]
struct Target {
    min: String,
    status: Option<&'static str>,
    /// The sizes it is judged at: "10⁷", "10⁶, 10⁷, 10⁸".
    judged_at: String,
}

/// "10⁷" for a power of ten, else the count as the report writes counts.
fn size_words(n: u64) -> String {
    const SUPERSCRIPTS: [&str; 10] = ["⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"];
    let exponent = (n as f64).log10().round() as u32;
    if exponent > 0 && exponent < 10 && 10u64.pow(exponent) == n {
        format!("10{}", SUPERSCRIPTS[exponent as usize])
    } else {
        human_count(n as f64)
    }
}

#[derive(Serialize)]
struct LeftOut {
    n: String,
    structure: String,
    reason: String,
}

/// A ratio measured once.
#[derive(Serialize)]
struct Once {
    what: String,
    value: String,
    target: String,
    met: Option<bool>,
}

fn row(q: &SpeedRatio) -> Row {
    Row {
        ours: q.ours.clone(),
        peer: q.peer.clone(),
        op: q.op.words(),
        path: match (q.path, q.peer_path) {
            (CallPath::PerKey, _) => "per key vs per key",
            (CallPath::Batched, CallPath::Batched) => "batched vs its batched",
            (CallPath::Batched, CallPath::PerKey) => "batched vs its per key",
        },
        ours_ns: format!("{:.1}", q.ours_ns_median),
        peer_ns: format!("{:.1}", q.peer_ns_median),
        figure: q.figure(),
        verdict: q.verdict.words(),
        target: q.target_min_ratio.map(|t| Target {
            min: format!("{t:.1}"),
            status: q.target.map(TargetStatus::words),
            judged_at: if q.target_sizes.is_empty() {
                size_words(crate::analysis::TARGET_N)
            } else {
                q.target_sizes
                    .iter()
                    .map(|n| size_words(*n))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        }),
        note: q.note.clone(),
    }
}

/// The section under the lookup figure: the target size's group in full, the others folded.
pub fn view(a: &Analysis) -> Ratios {
    let mut sizes: Vec<u64> = a.speed_ratios.iter().map(|q| q.n).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let main = a.headline_n.or(sizes.last().copied());
    let others: Vec<u64> = sizes.into_iter().filter(|n| Some(*n) != main).collect();
    let group = |n: u64| {
        let ratios: Vec<&SpeedRatio> = a.speed_ratios.iter().filter(|q| q.n == n).collect();
        let (rounds, builds) = (ratios[0].rounds, ratios[0].builds);
        Group {
            n: human_count(n as f64),
            rounds,
            shared_builds: (builds != rounds).then_some(builds),
            coverage: format!("{:.1}", ratios[0].coverage * 100.0),
            rows: ratios.into_iter().map(row).collect(),
        }
    };
    let groups = if a.speed_ratios.is_empty() {
        Vec::new()
    } else {
        main.into_iter()
            .chain(others.iter().copied())
            .map(group)
            .collect()
    };
    let probe_only = !a.speed_ratios.is_empty()
        && a.speed_ratios
            .iter()
            .all(|q| q.timed == SpeedTiming::ProbeOnly);
    let hash_medians: Vec<f64> = a
        .speed_ratios
        .iter()
        .filter_map(|q| q.hash_ns_median)
        .collect();
    let hash_ns = if hash_medians.is_empty() {
        String::new()
    } else {
        format!("{:.1}", crate::stats::summarize(&hash_medians).median)
    };
    Ratios {
        probe_only,
        hash_ns,
        groups,
        others: others
            .iter()
            .map(|n| human_count(*n as f64))
            .collect::<Vec<_>>()
            .join(", "),
        left_out: a
            .left_out
            .iter()
            .map(|l| LeftOut {
                n: human_count(l.n as f64),
                structure: l.structure.clone(),
                reason: l.reason.clone(),
            })
            .collect(),
        once: a
            .other_ratios
            .iter()
            .map(|q| Once {
                what: q.what.clone(),
                value: format!("{:.2}", q.value),
                target: q.target.clone(),
                met: q.met,
            })
            .collect(),
        missed_rates: a.missed_rates.join("; "),
    }
}

/// "bloom / fastbloom insert 0.93 [0.90, 0.97]", short enough for the first screen.
pub fn short(q: &SpeedRatio) -> String {
    let path = match q.path {
        CallPath::PerKey => "per key",
        CallPath::Batched => "batched",
    };
    format!(
        "{} / {} {} ({path}) {} against ≥ {:.1}",
        q.ours,
        q.peer,
        q.op.words(),
        q.figure(),
        q.target_min_ratio.unwrap_or(f64::NAN)
    )
}

//! The targets the run missed (speed ratios against the peers, ratios measured once, filters above the
//! rate they were built for): one short line with every figure behind a fold. They judge dedupbench's own
//! structures, not the reader's question, so the page shows them after the answer and the run.

use serde::Serialize;

/// The targets the run missed: one short line, and every figure behind a fold.
#[derive(Serialize)]
pub struct Missed {
    /// The short line (empty: none missed).
    short: String,
    speed: Vec<MissedRatio>,
    once: Vec<MissedOnce>,
    rates: Vec<String>,
    /// Targets whose interval holds them.
    undecided: Vec<MissedRatio>,
}

#[derive(Serialize)]
struct MissedRatio {
    label: String,
    figure: String,
    target: String,
}

#[derive(Serialize)]
struct MissedOnce {
    what: String,
    value: String,
    target: String,
}

/// The targets the run missed, in one short line, with every figure behind a fold; targets whose
/// interval holds them are named there too, as undecided.
pub fn missed_targets(a: &crate::analysis::Analysis) -> Missed {
    use crate::analysis::TargetStatus;
    let speed: Vec<&crate::analysis::SpeedRatio> = a.targets(TargetStatus::Missed).collect();
    let undecided: Vec<&crate::analysis::SpeedRatio> = a.targets(TargetStatus::Undecided).collect();
    let rates = &a.missed_rates;
    let once: Vec<&crate::analysis::Ratio> = a.missed_other_ratios().collect();
    let short: Vec<String> = speed
        .iter()
        .map(|q| super::speed::short(q))
        .chain(once.iter().map(|q| {
            let name = q.what.split(" at n = ").next().unwrap_or(&q.what);
            format!("{name} {:.2} (target {}; measured once)", q.value, q.target)
        }))
        .collect();
    let mut rate_structures: Vec<&str> = Vec::new();
    for m in rates {
        let name = m.split(" at n = ").next().unwrap_or(m);
        if !rate_structures.contains(&name) {
            rate_structures.push(name);
        }
    }
    let mut parts = Vec::new();
    if !short.is_empty() {
        parts.push(format!("speed: {}", short.join("; ")));
    }
    // The dedup-cli experiment's targets, missed or undecided, with their figures.
    let dedup_cli: Vec<String> = a
        .dedup_cli
        .iter()
        .flat_map(|d| &d.targets)
        .filter(|t| {
            matches!(
                t.status,
                Some(TargetStatus::Missed | TargetStatus::Undecided)
            )
        })
        .map(|t| t.words())
        .collect();
    if !dedup_cli.is_empty() {
        parts.push(format!("dedup-cli: {}", dedup_cli.join("; ")));
    }
    if !rate_structures.is_empty() {
        parts.push(format!(
            "rate above its target: {}",
            rate_structures.join(", ")
        ));
    }
    let ratio = |q: &&crate::analysis::SpeedRatio| MissedRatio {
        label: q.label(),
        figure: q.figure(),
        target: format!("{:.1}", q.target_min_ratio.unwrap_or(f64::NAN)),
    };
    Missed {
        short: parts.join(". "),
        speed: speed.iter().map(ratio).collect(),
        once: once
            .iter()
            .map(|q| MissedOnce {
                what: q.what.clone(),
                value: format!("{:.2}", q.value),
                target: q.target.clone(),
            })
            .collect(),
        rates: rates.clone(),
        undecided: undecided.iter().map(ratio).collect(),
    }
}

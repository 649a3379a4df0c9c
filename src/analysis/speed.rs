//! The "Speed" verdicts. Ratios between our structures and the peers come only from the interleaved
//! speed groups (`src/run/speed_group.rs`): for each round, the peer's nanoseconds per key over ours on
//! the same keys, timed moments apart; the ratio reported is the median of those per-round ratios with a
//! distribution-free 95% interval (order statistics, [`crate::stats::median_interval`]). A pair is
//! `faster` when the interval lies above 1, `slower` below, `within noise` otherwise; a target is `met`
//! when the interval lies above it, `missed` below, `undecided` otherwise, judged only at the size it is
//! set for. Every pair gets both comparisons ([`Comparison`]): per key against per key, and our batched
//! path against the peer's best (its batch API where it has one and it is faster over the rounds, else
//! per key). Ratios measured once (the memory floor, the bits, the parallel build) are listed apart as
//! single measurements. Computed here once and written to `analysis.json` ([`super::file`]).

use crate::kind::{Comparison, OwnTarget};
use crate::membership::{CallPath, Op};
use crate::registry::{find, speed_targets, PeerTarget, REGISTRY};
use crate::results::{CellRecord, Results, SpeedGroupRecord, SpeedTiming};
use crate::stats::median_interval;
use serde::{Deserialize, Serialize};

/// A ratio measured once (no rounds to pair), with its target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    pub what: String,
    pub value: f64,
    pub target: String,
    pub met: Option<bool>,
}

/// What a paired ratio's interval says about ours against the peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    /// The interval lies above 1: ours is faster.
    #[serde(rename = "faster")]
    Faster,
    /// The interval lies below 1.
    #[serde(rename = "slower")]
    Slower,
    /// The interval holds 1.
    #[serde(rename = "within noise")]
    WithinNoise,
}

impl Verdict {
    /// Words for reports.
    pub fn words(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::WithinNoise => "within noise",
        }
    }
}

/// Where a target stands against a paired ratio's interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetStatus {
    /// The interval lies above the target.
    Met,
    /// The interval lies below it (or ours misses its rate).
    Missed,
    /// The interval holds it.
    Undecided,
}

impl TargetStatus {
    /// Words for reports.
    pub fn words(self) -> &'static str {
        match self {
            TargetStatus::Met => "met",
            TargetStatus::Missed => "missed",
            TargetStatus::Undecided => "undecided",
        }
    }
}

/// One paired speed ratio: peer time over ours per key, from one speed group's rounds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpeedRatio {
    pub ours: String,
    pub peer: String,
    pub op: Op,
    /// Our side's path: `per_key` (against the peer's per key) or `batched` (against the peer's best).
    pub path: CallPath,
    /// The peer's side: its per-key path, or its best path for `batched`.
    pub peer_path: CallPath,
    pub n: u64,
    pub ratio_median: f64,
    pub ratio_low: f64,
    pub ratio_high: f64,
    /// The interval's exact coverage (≥ 0.95).
    pub coverage: f64,
    pub rounds: u32,
    /// Fresh builds the rounds were spread over (each round its own where it equals `rounds`).
    pub builds: u32,
    pub verdict: Verdict,
    /// Medians over the rounds of each side's ns per key (what they hold: `timed`).
    pub ours_ns_median: f64,
    pub peer_ns_median: f64,
    /// Whether those times hold the hash (groups recorded before it was timed apart) or the probe alone.
    #[serde(default)]
    pub timed: SpeedTiming,
    /// Where the probe is timed alone: the median over the group's lookup slices of the run's hash, ns per
    /// key on the same keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash_ns_median: Option<f64>,
    /// The target this ratio is held to, where one applies to this pair, op and path.
    pub target_min_ratio: Option<f64>,
    /// Judged only at the target's sizes (`target_sizes`).
    pub target: Option<TargetStatus>,
    /// The sizes the target applying here is judged at (empty: no target, or an analysis written before
    /// targets named their sizes, when every target was judged at [`TARGET_N`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub target_sizes: Vec<u64>,
    /// Why a target was missed other than by speed (ours misses its rate), or where the peer misses its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl SpeedRatio {
    /// "bloom / fastbloom, insert, per key vs per key at n = 10M".
    pub fn label(&self) -> String {
        let comparison = match self.path {
            CallPath::PerKey => Comparison::PerKey,
            CallPath::Batched => Comparison::OursBatchedVsBest,
        };
        let peer_side = match (self.path, self.peer_path) {
            (CallPath::Batched, CallPath::Batched) => " (the peer's batched path)",
            (CallPath::Batched, CallPath::PerKey) => " (the peer per key)",
            _ => "",
        };
        let timed = match self.timed {
            SpeedTiming::ProbeOnly => ", probe alone",
            SpeedTiming::HashAndProbe => "",
        };
        format!(
            "{} / {}, {}, {}{peer_side} at n = {}{timed}",
            self.ours,
            self.peer,
            self.op.words(),
            comparison.words(),
            crate::units::human_count(self.n as f64)
        )
    }

    /// "1.12 [1.05, 1.19]".
    pub fn figure(&self) -> String {
        format!(
            "{:.2} [{:.2}, {:.2}]",
            self.ratio_median, self.ratio_low, self.ratio_high
        )
    }
}

/// The headline size of the speed ratios, and the one most targets are judged at (a target names its own
/// sizes: [`crate::kind::SpeedTarget::judged_at`]).
pub const TARGET_N: u64 = crate::kind::AT_TEN_MILLION[0];

/// "at n = …", with a note when the target belongs to another size.
fn at(n: u64) -> String {
    let human = crate::units::human_count(n as f64);
    if n == TARGET_N {
        format!("at n = {human}")
    } else {
        format!("at n = {human}; the target applies at 10⁷")
    }
}

/// The grid cell of `id` at `n`, if measured.
fn cell<'a>(r: &'a Results, id: &str, n: u64) -> Option<&'a CellRecord> {
    r.cells.iter().find(|c| c.structure == id && c.n == n)
}

/// The n nearest to [`TARGET_N`] (by ratio; the larger on a tie) at which every id in `ids` has a cell.
fn common_n(r: &Results, ids: &[&str]) -> Option<u64> {
    nearest_target_n(
        r.cells
            .iter()
            .map(|c| c.n)
            .filter(|n| ids.iter().all(|id| cell(r, id, *n).is_some())),
    )
}

/// Of `sizes`, the nearest to [`TARGET_N`] by ratio (the larger on a tie).
fn nearest_target_n(sizes: impl Iterator<Item = u64>) -> Option<u64> {
    let distance = |n: u64| (n.max(1) as f64 / TARGET_N as f64).ln().abs();
    sizes.min_by(|a, b| distance(*a).total_cmp(&distance(*b)).then(b.cmp(a)))
}

/// A batched non-member lookup's cost: the batched path where the cell has it, else (files before schema
/// 3) the recorded one, which for `blocked` was batched.
fn batched_lookup_ns(c: &CellRecord) -> f64 {
    c.batched_non_member_query_ns_per_key
        .unwrap_or(c.non_member_query_ns_per_key)
        .median
}

/// The ops a group timed, inserts first.
const OPS: [Op; 6] = [
    Op::Insert,
    Op::NonMemberQuery,
    Op::Query25,
    Op::Query50,
    Op::Query75,
    Op::MemberQuery,
];

/// Pairs `peer` against `ours` round by round; `None` when either series is missing or too short.
fn paired(ours: &[f64], peer: &[f64]) -> Option<(crate::stats::MedianInterval, f64, f64)> {
    if ours.len() != peer.len() {
        return None;
    }
    let ratios: Vec<f64> = ours.iter().zip(peer).map(|(o, p)| p / o).collect();
    let interval = median_interval(&ratios)?;
    let median = |v: &[f64]| crate::stats::summarize(v).median;
    Some((interval, median(ours), median(peer)))
}

/// Every paired ratio of one group: each pair of structures with a target in it, each op, both
/// comparisons; each ratio once, judged by the pair's target for that comparison and op when it has one
/// (a peer may set several targets against one of ours: per key, and batched).
fn group_ratios(r: &Results, g: &SpeedGroupRecord, out: &mut Vec<SpeedRatio>) {
    let timed = |id: &str| g.structures.iter().any(|s| s == id);
    let targets: Vec<PeerTarget> = speed_targets()
        .filter(|t| timed(t.ours) && timed(t.peer))
        .collect();
    let mut pairs_done = Vec::new();
    for first in &targets {
        if pairs_done.contains(&(first.ours, first.peer)) {
            continue;
        }
        pairs_done.push((first.ours, first.peer));
        for op in OPS {
            for path in [CallPath::PerKey, CallPath::Batched] {
                let comparison = match path {
                    CallPath::PerKey => Comparison::PerKey,
                    CallPath::Batched => Comparison::OursBatchedVsBest,
                };
                let target = targets
                    .iter()
                    .filter(|t| (t.ours, t.peer) == (first.ours, first.peer))
                    .find(|t| t.target.comparison == comparison && t.target.ops.contains(&op))
                    .unwrap_or(first);
                out.extend(one_ratio(r, g, target, op, path));
            }
        }
    }
}

/// Where `interval` lies against `x`: wholly above (`Greater`), wholly below (`Less`), or holding it.
fn against(interval: &crate::stats::MedianInterval, x: f64) -> std::cmp::Ordering {
    if interval.low > x {
        std::cmp::Ordering::Greater
    } else if interval.high < x {
        std::cmp::Ordering::Less
    } else {
        std::cmp::Ordering::Equal
    }
}

/// The paired ratio of `target`'s structure against `peer` for `op` on our `path`, where the group
/// timed both sides for enough rounds.
fn one_ratio(
    r: &Results,
    g: &SpeedGroupRecord,
    pair: &PeerTarget,
    op: Op,
    path: CallPath,
) -> Option<SpeedRatio> {
    use std::cmp::Ordering::{Equal, Greater, Less};
    let (peer, target) = (pair.peer, pair.target);
    let ours_ns = g.series(pair.ours, op, path)?;
    // The peer's best path is decided before looking at any time: its batch API where it has one of its
    // own (what a batch API is for), else one call per key.
    let (peer_path, peer_ns) = match (
        path,
        g.series(peer, op, CallPath::PerKey),
        g.series(peer, op, CallPath::Batched),
    ) {
        (CallPath::Batched, _, Some(b)) => (CallPath::Batched, b),
        (_, Some(k), _) => (CallPath::PerKey, k),
        _ => return None,
    };
    let (interval, ours_median, peer_median) = paired(ours_ns, peer_ns)?;
    let verdict = match against(&interval, 1.0) {
        Greater => Verdict::Faster,
        Less => Verdict::Slower,
        Equal => Verdict::WithinNoise,
    };
    let comparison = match path {
        CallPath::PerKey => Comparison::PerKey,
        CallPath::Batched => Comparison::OursBatchedVsBest,
    };
    let applies = comparison == target.comparison && target.ops.contains(&op);
    // A faster filter whose rate misses its theory has met nothing.
    let ours_rate_ok = cell(r, pair.ours, g.n).is_none_or(|c| c.theory_in_interval);
    let judged = match (ours_rate_ok, against(&interval, target.min_ratio)) {
        (true, Greater) => TargetStatus::Met,
        (true, Equal) => TargetStatus::Undecided,
        (false, _) | (true, Less) => TargetStatus::Missed,
    };
    let mut notes = Vec::new();
    if !ours_rate_ok {
        notes.push(format!(
            "{}'s rate is outside its theory, so no speed target is met",
            pair.ours
        ));
    }
    if cell(r, peer, g.n).is_some_and(|c| !c.theory_in_interval) {
        notes.push(format!("{peer}'s rate is outside its theory"));
    }
    if g.builds < g.rounds {
        notes.push(format!(
            "the {} rounds shared {} build(s), so the interval leaves out how much where the arrays landed in memory moves this ratio",
            g.rounds, g.builds
        ));
    }
    Some(SpeedRatio {
        ours: pair.ours.to_string(),
        peer: peer.to_string(),
        op,
        path,
        peer_path,
        n: g.n,
        ratio_median: interval.median,
        ratio_low: interval.low,
        ratio_high: interval.high,
        coverage: interval.coverage,
        rounds: g.rounds,
        builds: g.builds,
        verdict,
        ours_ns_median: ours_median,
        peer_ns_median: peer_median,
        timed: g.timed,
        hash_ns_median: (!g.hash_ns_per_key.is_empty())
            .then(|| crate::stats::summarize(&g.hash_ns_per_key).median),
        target_min_ratio: applies.then_some(target.min_ratio),
        target: (applies && target.judged_at.contains(&g.n)).then_some(judged),
        target_sizes: if applies {
            target.judged_at.to_vec()
        } else {
            Vec::new()
        },
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    })
}

/// Every paired ratio the results' speed groups allow, by n.
pub fn speed_ratios(r: &Results) -> Vec<SpeedRatio> {
    let mut groups: Vec<&SpeedGroupRecord> = r.speed_groups.iter().collect();
    groups.sort_by_key(|g| g.n);
    let mut out = Vec::new();
    for g in groups {
        group_ratios(r, g, &mut out);
    }
    out
}

/// A structure a speed group could not time with the others.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LeftOutAt {
    pub n: u64,
    pub structure: String,
    pub reason: String,
}

/// What the speed groups left out, and why.
pub fn left_out(r: &Results) -> Vec<LeftOutAt> {
    r.speed_groups
        .iter()
        .flat_map(|g| {
            g.left_out.iter().map(move |l| LeftOutAt {
                n: g.n,
                structure: l.structure.clone(),
                reason: l.reason.clone(),
            })
        })
        .collect()
}

/// The size whose speed ratios are the headline: [`TARGET_N`] where a group ran there, else the timed
/// size nearest to it (by ratio; the larger on a tie).
pub fn headline_n(ratios: &[SpeedRatio]) -> Option<u64> {
    nearest_target_n(ratios.iter().map(|q| q.n))
}

/// The ratios measured once: what a filter probing at the memory floor would reach against each peer,
/// blocked's bits against bloom's, blocked's batched lookup against the floor, and the parallel builds.
pub fn other_ratios(r: &Results) -> Vec<Ratio> {
    let mut out = Vec::new();
    let human = |n: u64| crate::units::human_count(n as f64);
    for t in speed_targets().filter(|t| t.target.floor_reach) {
        let (ours_id, peer_id) = (t.ours, t.peer);
        let Some(n) = common_n(r, &[ours_id, peer_id]) else {
            continue;
        };
        let (Some(ours), Some(peer)) = (cell(r, ours_id, n), cell(r, peer_id, n)) else {
            continue;
        };
        // What a one-line-per-key filter probing at the memory floor would reach against this peer at
        // this hash cost: the peer's lookup over (hashing + the floor of our array). The floor is
        // timed apart, so at cache-resident sizes the filter can come within a nanosecond of it, or under.
        if let Some(floor) = ours.memory_floor_ns_per_key {
            let hash = ours.hash_ns_per_key.median;
            let peer_ns = peer.non_member_query_ns_per_key.median;
            out.push(Ratio {
                what: format!(
                    "at the memory floor: non-member query throughput / {peer_id} {}, {peer_id}'s {peer_ns:.1} ns over hashing {hash:.1} ns + floor {floor:.1} ns ({} probes in {:.1} ns, batched)",
                    at(n),
                    ours_id,
                    batched_lookup_ns(ours) - hash
                ),
                value: peer_ns / (hash + floor),
                target: "(reach at the floor)".into(),
                met: None,
            });
        }
    }
    for kind in REGISTRY {
        for own in kind.descriptor().own_targets {
            out.extend(own_ratio(r, kind.id(), own));
        }
    }
    for c in r
        .cells
        .iter()
        .filter(|c| c.parallel_insert_ns_per_key.is_some())
    {
        let parallel = c
            .parallel_insert_ns_per_key
            .map(|s| s.median)
            .unwrap_or(f64::NAN);
        let largest = r
            .cells
            .iter()
            .filter(|x| x.structure == c.structure)
            .map(|x| x.n)
            .max()
            .unwrap_or(0);
        if c.n != largest {
            continue;
        }
        // One thread on the batched path (hash + prefetched insert, as each thread of the parallel build
        // runs) where the structure has one; one call per key otherwise, and the label says so.
        let (one_thread, path) = match c.batched_insert_ns_per_key {
            Some(batched) => (batched.median, "batched path"),
            None => (c.insert_ns_per_key.median, "one call per key"),
        };
        let writes = if c.parallel_owner_writes {
            "owner-writes, waits excluded"
        } else {
            "atomic ors"
        };
        let speedup = own_targets(&c.structure).find_map(|t| match t {
            OwnTarget::ParallelSpeedup { min_ratio, at_keys } => Some((min_ratio, at_keys)),
            _ => None,
        });
        out.push(Ratio {
            what: format!(
                "{} insert throughput, {} threads ({writes}) / 1 thread ({path}) at n = {}",
                c.structure,
                c.threads,
                human(c.n)
            ),
            value: one_thread / parallel,
            target: match speedup {
                Some((min, at_keys)) => format!("≥ {min} at {}", keys_words(at_keys)),
                None => "(scaling)".into(),
            },
            met: speedup
                .filter(|(_, at_keys)| c.n >= *at_keys)
                .map(|(min, _)| one_thread / parallel >= min),
        });
    }
    out
}

/// The targets the structure `id` sets itself (none for an unregistered one).
fn own_targets(id: &str) -> impl Iterator<Item = OwnTarget> {
    find(id)
        .map(|k| k.descriptor().own_targets)
        .unwrap_or_default()
        .iter()
        .copied()
}

/// "10⁹ keys" for a power of ten, the count otherwise.
fn keys_words(n: u64) -> String {
    match n {
        1_000_000_000 => "10⁹ keys".into(),
        _ => format!("{} keys", crate::units::human_count(n as f64)),
    }
}

/// The ratio of one of `id`'s own targets measured once, where the run has the cells for it (the parallel
/// builds are read with every structure's scaling in [`other_ratios`]).
fn own_ratio(r: &Results, id: &str, own: &OwnTarget) -> Option<Ratio> {
    let human = |n: u64| crate::units::human_count(n as f64);
    match *own {
        OwnTarget::BitsAgainst { of, max_ratio } => {
            let of = crate::registry::role_id(of);
            let n = common_n(r, &[id, of])?;
            let (ours, other) = (cell(r, id, n)?, cell(r, of, n)?);
            let v = ours.bits_per_key / other.bits_per_key;
            Some(Ratio {
                what: format!(
                    "{id} bits per key / {of} {} (observed {:.4} vs {:.4})",
                    at(n),
                    ours.observed_fpr,
                    other.observed_fpr
                ),
                value: v,
                target: format!("≤ {max_ratio}"),
                met: (n == TARGET_N).then_some(v <= max_ratio),
            })
        }
        OwnTarget::LookupOverFloor { max_ratio, at_keys } => {
            let c = r
                .cells
                .iter()
                .filter(|c| c.structure == id && c.memory_floor_ns_per_key.is_some())
                .max_by_key(|c| c.n)?;
            let floor = c.memory_floor_ns_per_key.unwrap_or(f64::NAN);
            let hash = c.hash_ns_per_key.median;
            let lookup = batched_lookup_ns(c);
            let spread = c
                .memory_floor_reads_ns_per_key
                .map(|s| format!(", floor over its repeats {:.1}–{:.1} ns", s.min, s.max))
                .unwrap_or_default();
            Some(Ratio {
                what: format!(
                    "{id} batched lookup / (hashing + memory floor) at n = {} ({lookup:.1} ns vs {hash:.1} + {floor:.1} ns{spread}; target applies at {})",
                    human(c.n),
                    keys_words(at_keys).trim_end_matches(" keys")
                ),
                value: lookup / (hash + floor),
                target: format!("≤ {max_ratio} at {}", keys_words(at_keys)),
                met: (c.n >= at_keys).then_some(lookup / (hash + floor) <= max_ratio),
            })
        }
        // Judged with their own rounds: the parallel build above, the dedup-cli experiment apart.
        OwnTarget::ParallelSpeedup { .. } | OwnTarget::DedupOverExactTools { .. } => None,
    }
}

/// Whether the structure `id` was built for the run's rate (an unregistered one is assumed so).
fn sized_for_rate(id: &str) -> bool {
    find(id).map(|k| k.sized_for_rate()).unwrap_or(true)
}

/// Filters (ours and peers) whose observed rate is significantly above the rate they were built for.
pub fn missed_rates(r: &Results) -> Vec<String> {
    let target = r.header.as_ref().map(|h| h.fpr).unwrap_or(0.0);
    r.cells
        .iter()
        .filter(|c| !c.exact && sized_for_rate(&c.structure) && c.observed_fpr_wilson95.low > target * 1.02)
        .map(|c| {
            format!(
                "{}{} at n = {}: observed {:.3}% (95% interval {:.3}–{:.3}%) against the {:.2}% it was built for",
                c.structure,
                if c.peer { " (peer)" } else { "" },
                crate::units::human_count(c.n as f64),
                c.observed_fpr * 100.0,
                c.observed_fpr_wilson95.low * 100.0,
                c.observed_fpr_wilson95.high * 100.0,
                target * 100.0
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::RoundSeries;

    /// A group of `rounds` rounds in which `series` gives each (structure, op, path) its ns per round.
    fn group(n: u64, rounds: u32, series: Vec<(&str, Op, CallPath, Vec<f64>)>) -> SpeedGroupRecord {
        let mut structures: Vec<String> = Vec::new();
        for (id, ..) in &series {
            if !structures.iter().any(|s| s == id) {
                structures.push(id.to_string());
            }
        }
        SpeedGroupRecord {
            n,
            rounds,
            builds: 1,
            insert_keys_per_round: n / rounds as u64,
            lookup_keys_per_round: 1 << 17,
            order_seed: 1,
            structures,
            left_out: Vec::new(),
            predicted_peak_bytes: 0.0,
            timed: SpeedTiming::ProbeOnly,
            hash_ns_per_key: vec![20.0; rounds as usize],
            series: series
                .into_iter()
                .map(|(id, op, path, ns_per_key)| RoundSeries {
                    structure: id.to_string(),
                    op,
                    path,
                    ns_per_key,
                })
                .collect(),
        }
    }

    /// A machine whose speed drifts by up to 2× from round to round (deterministic).
    fn drift(rounds: usize) -> Vec<f64> {
        (0..rounds)
            .map(|r| 1.0 + ((r * 7919) % 13) as f64 / 12.0)
            .collect()
    }

    fn find<'a>(
        all: &'a [SpeedRatio],
        ours: &str,
        peer: &str,
        op: Op,
        path: CallPath,
    ) -> &'a SpeedRatio {
        all.iter()
            .find(|q| q.ours == ours && q.peer == peer && q.op == op && q.path == path)
            .unwrap_or_else(|| panic!("no {ours}/{peer} {op:?} {path:?}"))
    }

    /// Drift of 2× between rounds moves both sides alike, so the paired ratio stays put and its interval
    /// is narrow; verdicts follow the interval, targets are judged only at 10⁷.
    #[test]
    fn paired_ratios_survive_drift_and_give_three_verdicts() {
        let d = drift(15);
        let scaled = |ns: f64, wobble: &[f64]| -> Vec<f64> {
            d.iter().zip(wobble).map(|(f, w)| ns * f * w).collect()
        };
        let flat = vec![1.0; 15];
        // ±3% of noise of its own on one side, alternating.
        let noisy: Vec<f64> = (0..15)
            .map(|r| if r % 2 == 0 { 1.03 } else { 0.97 })
            .collect();
        let mut r = Results::default();
        r.speed_groups.push(group(
            TARGET_N,
            15,
            vec![
                // bloom 20% faster than fastbloom to insert, as fast for non-members, slower for members.
                ("bloom", Op::Insert, CallPath::PerKey, scaled(25.0, &flat)),
                (
                    "fastbloom",
                    Op::Insert,
                    CallPath::PerKey,
                    scaled(30.0, &flat),
                ),
                (
                    "bloom",
                    Op::NonMemberQuery,
                    CallPath::PerKey,
                    scaled(20.0, &noisy),
                ),
                (
                    "fastbloom",
                    Op::NonMemberQuery,
                    CallPath::PerKey,
                    scaled(20.0, &flat),
                ),
                (
                    "bloom",
                    Op::MemberQuery,
                    CallPath::PerKey,
                    scaled(30.0, &flat),
                ),
                (
                    "fastbloom",
                    Op::MemberQuery,
                    CallPath::PerKey,
                    scaled(24.0, &flat),
                ),
            ],
        ));
        let all = speed_ratios(&r);
        let insert = find(&all, "bloom", "fastbloom", Op::Insert, CallPath::PerKey);
        assert!((insert.ratio_median - 1.2).abs() < 1e-9, "{insert:?}");
        assert!((insert.ratio_high - insert.ratio_low).abs() < 1e-9);
        assert_eq!(insert.verdict, Verdict::Faster);
        assert_eq!(insert.target, Some(TargetStatus::Met));
        assert_eq!(insert.target_min_ratio, Some(1.0));
        assert_eq!(insert.rounds, 15);
        assert!((insert.coverage - 0.96484375).abs() < 1e-12);
        let non_member = find(
            &all,
            "bloom",
            "fastbloom",
            Op::NonMemberQuery,
            CallPath::PerKey,
        );
        assert_eq!(non_member.verdict, Verdict::WithinNoise, "{non_member:?}");
        assert_eq!(non_member.target, Some(TargetStatus::Undecided));
        assert!(non_member.ratio_low < 1.0 && non_member.ratio_high > 1.0);
        let member = find(
            &all,
            "bloom",
            "fastbloom",
            Op::MemberQuery,
            CallPath::PerKey,
        );
        assert_eq!(member.verdict, Verdict::Slower);
        assert_eq!(member.target, Some(TargetStatus::Missed));

        // The same group at another n: the same verdicts, no target judged.
        r.speed_groups[0].n = 1_000_000;
        let all = speed_ratios(&r);
        let member = find(
            &all,
            "bloom",
            "fastbloom",
            Op::MemberQuery,
            CallPath::PerKey,
        );
        assert_eq!(member.verdict, Verdict::Slower);
        assert_eq!(member.target, None);
        assert_eq!(member.target_min_ratio, Some(1.0));
    }

    /// Our batched path is set against the peer's batch API where it has one, decided before any time is
    /// read (even when it is slower here), and against its per-key path otherwise. A target of another
    /// comparison is not judged on this one.
    #[test]
    fn batched_ratios_take_the_peers_best_path() {
        let rounds = 9;
        let at = |ns: f64| vec![ns; rounds];
        let mut r = Results::default();
        r.speed_groups.push(group(
            TARGET_N,
            rounds as u32,
            vec![
                ("blocked", Op::NonMemberQuery, CallPath::PerKey, at(12.0)),
                ("blocked", Op::NonMemberQuery, CallPath::Batched, at(6.0)),
                ("fastbloom", Op::NonMemberQuery, CallPath::PerKey, at(24.0)),
                ("sbbf", Op::NonMemberQuery, CallPath::PerKey, at(10.0)),
                ("sbbf", Op::NonMemberQuery, CallPath::Batched, at(11.0)),
            ],
        ));
        let all = speed_ratios(&r);
        let vs_fastbloom = find(
            &all,
            "blocked",
            "fastbloom",
            Op::NonMemberQuery,
            CallPath::Batched,
        );
        assert_eq!(vs_fastbloom.peer_path, CallPath::PerKey);
        assert!((vs_fastbloom.ratio_median - 4.0).abs() < 1e-12);
        assert_eq!(vs_fastbloom.target, Some(TargetStatus::Met));
        let vs_sbbf = find(
            &all,
            "blocked",
            "sbbf",
            Op::NonMemberQuery,
            CallPath::Batched,
        );
        assert_eq!(vs_sbbf.peer_path, CallPath::Batched);
        assert!((vs_sbbf.ratio_median - 11.0 / 6.0).abs() < 1e-12);
        // sbbf's target is per key: none on the batched comparison.
        assert_eq!(vs_sbbf.target_min_ratio, None);
        let per_key = find(
            &all,
            "blocked",
            "sbbf",
            Op::NonMemberQuery,
            CallPath::PerKey,
        );
        assert!((per_key.ratio_median - 10.0 / 12.0).abs() < 1e-12);
        assert_eq!(per_key.target, Some(TargetStatus::Missed));
    }

    /// A target is judged at the sizes it names: Boost's at 10⁶ (and 10⁷, 10⁸), sbbf's only at 10⁷; a
    /// probe-alone group says so in its label and carries its hash's median, an older group neither.
    #[test]
    fn targets_are_judged_at_their_own_sizes() {
        let rounds = 9;
        let at = |ns: f64| vec![ns; rounds];
        let mut r = Results::default();
        for n in [1_000_000, 2_000_000] {
            r.speed_groups.push(group(
                n,
                rounds as u32,
                vec![
                    ("blocked", Op::NonMemberQuery, CallPath::PerKey, at(10.0)),
                    ("sbbf", Op::NonMemberQuery, CallPath::PerKey, at(12.0)),
                    (
                        "boost-multiblock32",
                        Op::NonMemberQuery,
                        CallPath::PerKey,
                        at(8.0),
                    ),
                ],
            ));
        }
        let all = speed_ratios(&r);
        let one = |peer: &str, n: u64| {
            all.iter()
                .find(|q| q.peer == peer && q.n == n && q.path == CallPath::PerKey)
                .unwrap_or_else(|| panic!("{peer} at {n}"))
        };
        let boost = one("boost-multiblock32", 1_000_000);
        assert_eq!(boost.target, Some(TargetStatus::Missed));
        assert_eq!(boost.target_sizes, [1_000_000, 10_000_000, 100_000_000]);
        assert_eq!(one("boost-multiblock32", 2_000_000).target, None);
        let sbbf = one("sbbf", 1_000_000);
        assert_eq!((sbbf.target, sbbf.target_min_ratio), (None, Some(1.0)));
        assert_eq!(sbbf.target_sizes, [TARGET_N]);
        assert_eq!(boost.timed, SpeedTiming::ProbeOnly);
        assert_eq!(boost.hash_ns_median, Some(20.0));
        assert!(
            boost.label().ends_with("at n = 1M, probe alone"),
            "{}",
            boost.label()
        );
        r.speed_groups[0].timed = SpeedTiming::HashAndProbe;
        r.speed_groups[0].hash_ns_per_key.clear();
        let older = speed_ratios(&r);
        let q = &older[0];
        assert_eq!(
            (q.timed, q.hash_ns_median),
            (SpeedTiming::HashAndProbe, None)
        );
        assert!(q.label().ends_with("at n = 1M"), "{}", q.label());
    }

    /// Too few rounds give no interval, so no ratio; a group without both sides of a target gives none.
    #[test]
    fn no_ratio_without_an_interval_or_a_pair() {
        let mut r = Results::default();
        r.speed_groups.push(group(
            TARGET_N,
            5,
            vec![
                ("bloom", Op::Insert, CallPath::PerKey, vec![1.0; 5]),
                ("fastbloom", Op::Insert, CallPath::PerKey, vec![2.0; 5]),
            ],
        ));
        r.speed_groups.push(group(
            100_000,
            15,
            vec![
                ("bloom", Op::Insert, CallPath::PerKey, vec![1.0; 15]),
                ("sbbf", Op::Insert, CallPath::PerKey, vec![2.0; 15]),
            ],
        ));
        assert!(speed_ratios(&r).is_empty());
    }

    /// A target measured once that is missed reaches the analysis's missed list (the first screen and
    /// the summary read it there); blocked's bits are judged only at 10⁷.
    #[test]
    fn a_missed_target_measured_once_is_listed() {
        let fixture = include_str!("../../tests/fixtures/skips-and-scenario/results.jsonl");
        let mut r = Results::default();
        for line in fixture.lines() {
            if let Ok(crate::results::Line {
                record: crate::results::Record::Cell(c),
                ..
            }) = serde_json::from_str(line)
            {
                if c.structure == "bloom" || c.structure == "blocked" {
                    r.cells.push(c);
                }
            }
        }
        assert!(r.cells.len() >= 2);
        let bits = |r: &Results| {
            other_ratios(r)
                .into_iter()
                .find(|q| q.what.starts_with("blocked bits per key / bloom"))
                .unwrap()
        };
        assert_eq!(bits(&r).met, None, "judged only at 10⁷");
        for c in &mut r.cells {
            c.n = TARGET_N;
            if c.structure == "blocked" {
                c.bits_per_key *= 2.0;
            }
        }
        assert_eq!(bits(&r).met, Some(false));
        let a = crate::analysis::Analysis::of(&r, 0);
        assert!(a
            .missed_other_ratios()
            .any(|q| q.what.starts_with("blocked bits per key")));
    }
}

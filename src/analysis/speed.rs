//! The "Speed" ratios: our structures against the peers and the machine's memory floor, each measured in
//! the same run (ratios, not absolute times, carry across machines). The peer ratios are taken at 10⁷ keys,
//! the size the targets are set for, or at the measured size nearest to it; a target is judged only at its
//! own size. Every pair gets both comparisons ([`Comparison`]): per key against per key, and our batched
//! path against the peer's best; each target is judged on its own. Cells from files before schema 3
//! (`bloom` and `blocked` timed batched in the per-key fields) give their ratio labelled so, unjudged.

use crate::peers::SPEED_TARGETS;
use crate::registry::find;
use crate::results::{CellRecord, Results};
use crate::structures::{blocked, bloom, Comparison, Op};

/// One ratio with its target.
pub struct Ratio {
    pub what: String,
    pub value: f64,
    pub target: String,
    pub met: Option<bool>,
}

fn cell<'a>(r: &'a Results, id: &str, n: u64) -> Option<&'a CellRecord> {
    r.cells.iter().find(|c| c.structure == id && c.n == n)
}

/// The size the peer targets are set for.
pub const TARGET_N: u64 = 10_000_000;

/// The n nearest to [`TARGET_N`] (by ratio; the larger on a tie) at which every id in `ids` has a cell.
fn common_n(r: &Results, ids: &[&str]) -> Option<u64> {
    let distance = |n: u64| (n.max(1) as f64 / TARGET_N as f64).ln().abs();
    r.cells
        .iter()
        .map(|c| c.n)
        .filter(|n| ids.iter().all(|id| cell(r, id, *n).is_some()))
        .min_by(|a, b| distance(*a).total_cmp(&distance(*b)).then(b.cmp(a)))
}

/// "at n = …", with a note when the target belongs to another size.
fn at(n: u64) -> String {
    let human = crate::units::human_count(n as f64);
    if n == TARGET_N {
        format!("at n = {human}")
    } else {
        format!("at n = {human}; the target applies at 10⁷")
    }
}

/// The time of `op` per key in a cell, one call per key.
fn ns_of(c: &CellRecord, op: Op) -> f64 {
    match op {
        Op::Insert => c.insert_ns_per_key.median,
        Op::MemberQuery => c.member_query_ns_per_key.median,
        Op::NonMemberQuery => c.non_member_query_ns_per_key.median,
    }
}

/// The time of `op` per key through the cell's batch API, where it has one.
fn batched_ns_of(c: &CellRecord, op: Op) -> Option<f64> {
    match op {
        Op::Insert => c.batched_insert_ns_per_key,
        Op::MemberQuery => c.batched_member_query_ns_per_key,
        Op::NonMemberQuery => c.batched_non_member_query_ns_per_key,
    }
    .map(|s| s.median)
}

/// A batched non-member lookup's cost: the batched path where the cell has it, else (files before schema
/// 3) the recorded one, which for `blocked` was batched.
fn batched_lookup_ns(c: &CellRecord) -> f64 {
    batched_ns_of(c, Op::NonMemberQuery).unwrap_or(c.non_member_query_ns_per_key.median)
}

/// The two sides of `comparison` for `op` (ours, peer's) and how the label names the peer's side; `None`
/// when the cells lack that path.
fn sides(
    ours: &CellRecord,
    peer: &CellRecord,
    op: Op,
    comparison: Comparison,
) -> Option<(f64, f64, String)> {
    match comparison {
        Comparison::PerKey => Some((ns_of(ours, op), ns_of(peer, op), String::new())),
        Comparison::OursBatchedVsBest => {
            let ours_ns = batched_ns_of(ours, op)?;
            let per_key = ns_of(peer, op);
            Some(match batched_ns_of(peer, op) {
                Some(b) if b < per_key => (ours_ns, b, "; the peer's batched path".into()),
                Some(_) => (ours_ns, per_key, "; the peer's per-key path".into()),
                None => (
                    ours_ns,
                    per_key,
                    "; the peer has no batch API: per key".into(),
                ),
            })
        }
    }
}

/// Every ratio the results allow: the registry's speed targets against each peer, then our own.
pub fn ratios(r: &Results) -> Vec<Ratio> {
    let mut out = Vec::new();
    let human = |n: u64| crate::units::human_count(n as f64);
    let judged = |n: u64, met: bool| (n == TARGET_N).then_some(met);
    for &(peer_id, targets) in SPEED_TARGETS {
        for target in targets {
            let Some(n) = common_n(r, &[target.ours, peer_id]) else {
                continue;
            };
            let (Some(ours), Some(peer)) = (cell(r, target.ours, n), cell(r, peer_id, n)) else {
                continue;
            };
            let old_timings = !(ours.timed_per_key && peer.timed_per_key);
            for &op in target.ops {
                for comparison in [Comparison::PerKey, Comparison::OursBatchedVsBest] {
                    if old_timings && comparison == Comparison::OursBatchedVsBest {
                        continue;
                    }
                    let Some((ours_ns, peer_ns, peer_side)) = sides(ours, peer, op, comparison)
                    else {
                        continue;
                    };
                    let ratio = peer_ns / ours_ns;
                    let applies = comparison == target.comparison && !old_timings;
                    out.push(Ratio {
                        what: format!(
                            "{} {} throughput / {peer_id}, {}{} {} ({:.2} vs {:.2} bits per key{}{})",
                            target.ours,
                            op.words(),
                            if old_timings {
                                "as timed before schema 3 (ours batched, the peer per key)"
                            } else {
                                comparison.words()
                            },
                            peer_side,
                            at(n),
                            ours.bits_per_key,
                            peer.bits_per_key,
                            if peer.theory_in_interval {
                                String::new()
                            } else {
                                format!("; {peer_id}'s rate is outside its theory")
                            },
                            if !old_timings && comparison != target.comparison {
                                format!("; the target is {}", target.comparison.words())
                            } else {
                                String::new()
                            }
                        ),
                        value: ratio,
                        target: if applies {
                            format!("≥ {:.1}", target.min_ratio)
                        } else {
                            "(no target)".into()
                        },
                        // A faster filter whose rate misses its theory has not met anything.
                        met: if applies {
                            judged(n, ratio >= target.min_ratio && ours.theory_in_interval)
                        } else {
                            None
                        },
                    });
                }
            }
            // What a one-line-per-key filter probing at the memory floor would reach against this peer at
            // this hash cost: the peer's lookup over (hashing + the floor of our array). The floor is
            // timed apart, so at cache-resident sizes the filter can come within a nanosecond of it, or under.
            if let (Some(floor), true) = (ours.memory_floor_ns_per_key, target.floor_reach) {
                let hash = ours.hash_ns_per_key.median;
                let peer_ns = peer.non_member_query_ns_per_key.median;
                out.push(Ratio {
                    what: format!(
                        "at the memory floor: non-member query throughput / {peer_id} {}, {peer_id}'s {peer_ns:.1} ns over hashing {hash:.1} ns + floor {floor:.1} ns ({} probes in {:.1} ns, batched)",
                        at(n),
                        target.ours,
                        batched_lookup_ns(ours) - hash
                    ),
                    value: peer_ns / (hash + floor),
                    target: "(reach at the floor)".into(),
                    met: None,
                });
            }
        }
    }
    if let Some(n) = common_n(r, &[blocked::ID, bloom::ID]) {
        let (ours, bloom) = (
            cell(r, blocked::ID, n).unwrap(),
            cell(r, bloom::ID, n).unwrap(),
        );
        let v = ours.bits_per_key / bloom.bits_per_key;
        out.push(Ratio {
            what: format!(
                "blocked bits per key / bloom {} (observed {:.4} vs {:.4})",
                at(n),
                ours.observed_fpr,
                bloom.observed_fpr
            ),
            value: v,
            target: "≤ 1.15".into(),
            met: judged(n, v <= 1.15),
        });
    }
    if let Some(c) = r
        .cells
        .iter()
        .filter(|c| c.structure == blocked::ID && c.memory_floor_ns_per_key.is_some())
        .max_by_key(|c| c.n)
    {
        let floor = c.memory_floor_ns_per_key.unwrap_or(f64::NAN);
        let hash = c.hash_ns_per_key.median;
        let lookup = batched_lookup_ns(c);
        let spread = c
            .memory_floor_reads_ns_per_key
            .map(|s| format!(", floor over its repeats {:.1}–{:.1} ns", s.min, s.max))
            .unwrap_or_default();
        out.push(Ratio {
            what: format!(
                "blocked batched lookup / (hashing + memory floor) at n = {} ({lookup:.1} ns vs {hash:.1} + {floor:.1} ns{spread}; target applies at 10⁹)",
                human(c.n)
            ),
            value: lookup / (hash + floor),
            target: "≤ 1.3 at 10⁹ keys".into(),
            met: (c.n >= 1_000_000_000).then_some(lookup / (hash + floor) <= 1.3),
        });
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
        let is_blocked = c.structure == crate::structures::blocked::ID;
        out.push(Ratio {
            what: format!(
                "{} insert throughput, {} threads ({writes}) / 1 thread ({path}) at n = {}",
                c.structure,
                c.threads,
                human(c.n)
            ),
            value: one_thread / parallel,
            target: if is_blocked {
                "≥ 1.6 at 10⁹ keys".into()
            } else {
                "(scaling)".into()
            },
            met: (is_blocked && c.n >= 1_000_000_000).then_some(one_thread / parallel >= 1.6),
        });
    }
    out
}

/// Whether the structure `id` was built for the run's rate (an unregistered one is assumed so).
fn sized_for_rate(id: &str) -> bool {
    find(id).map(|k| k.sized_for_rate()).unwrap_or(true)
}

/// Filters (ours and peers) whose observed rate is significantly above the rate they were built for.
pub fn missed_targets(r: &Results) -> Vec<String> {
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
    use crate::stats::{Interval, Summary};
    use crate::structures::Geometry;

    fn ns(v: f64) -> Summary {
        Summary {
            median: v,
            min: v,
            max: v,
        }
    }

    /// A cell with the timings that matter here (lookups take `query_ns`, hashing 10 ns).
    fn cell(structure: &str, n: u64, query_ns: f64, floor: Option<f64>) -> CellRecord {
        CellRecord {
            structure: structure.into(),
            peer: structure == "fastbloom",
            exact: false,
            n,
            n_distinct: n,
            n_reported_new: n,
            reps: 1,
            geometry: Geometry::default(),
            insert_ns_per_key: ns(query_ns),
            hash_ns_per_key: ns(10.0),
            probe_insert_ns_per_key: ns(query_ns - 10.0),
            member_query_ns_per_key: ns(query_ns),
            non_member_query_ns_per_key: ns(query_ns),
            n_member_queries: n,
            false_negatives: 0,
            n_non_member_queries: 100_000,
            n_false_positives: 1000,
            observed_fpr: 0.01,
            observed_fpr_wilson95: Interval {
                low: 0.0094,
                high: 0.0106,
            },
            expected_fpr: 0.01,
            theory_in_interval: true,
            fill_fpr: None,
            fill_fpr_in_interval: None,
            bytes_held: n * 10 / 8,
            heap_requested_bytes: (n * 10 / 8) as i64,
            heap_footprint_bytes: (n * 10 / 8) as i64,
            model_heap_bytes: 0.0,
            model_footprint_bytes: 0.0,
            rss_before_bytes: 0,
            rss_after_bytes: 0,
            rss_peak_bytes: 0,
            bits_per_key: 10.0,
            wall_s: 1.0,
            threads: 1,
            parallel_insert_ns_per_key: None,
            parallel_owner_writes: false,
            timed_per_key: true,
            batched_insert_ns_per_key: Some(ns(query_ns * 0.8)),
            batched_member_query_ns_per_key: Some(ns(query_ns * 0.8)),
            batched_non_member_query_ns_per_key: Some(ns(query_ns * 0.8)),
            memory_floor_ns_per_key: floor,
            memory_floor_reads_ns_per_key: floor.map(ns),
            memory_floor_array_bytes: None,
            external: None,
            anon_huge_pages_bytes: 0,
        }
    }

    fn find<'a>(ratios: &'a [Ratio], starts: &str) -> &'a Ratio {
        ratios
            .iter()
            .find(|q| q.what.starts_with(starts))
            .unwrap_or_else(|| panic!("no ratio starting with {starts:?}"))
    }

    /// The peer ratios come from 10⁷ even when a larger n ran (where a peer may be broken), and a target
    /// is only judged at its own size.
    #[test]
    fn peer_ratios_are_taken_and_judged_at_ten_million() {
        let mut r = Results::default();
        for (n, blocked, fastbloom) in [
            (1_000_000, 15.0, 30.0),
            (10_000_000, 20.0, 50.0),
            (1_000_000_000, 50.0, 500.0),
        ] {
            r.cells.push(cell("blocked", n, blocked, Some(5.0)));
            let mut peer = cell("fastbloom", n, fastbloom, None);
            peer.batched_insert_ns_per_key = None;
            peer.batched_member_query_ns_per_key = None;
            peer.batched_non_member_query_ns_per_key = None;
            r.cells.push(peer);
        }
        let all = ratios(&r);
        // The target is batched against the peer's best: fastbloom has no batch API, so its per-key path.
        let q = find(
            &all,
            "blocked non-member query throughput / fastbloom, our batched path vs the peer's best; the peer has no batch API",
        );
        assert!(
            q.what.contains("at n = 10M") && !q.what.contains("applies"),
            "{}",
            q.what
        );
        assert!((q.value - 50.0 / 16.0).abs() < 1e-12);
        assert_eq!(q.met, Some(true));
        // Per key against per key is reported beside it, without a target of its own here.
        let per_key = find(
            &all,
            "blocked non-member query throughput / fastbloom, per key vs per key",
        );
        assert!((per_key.value - 2.5).abs() < 1e-12);
        assert_eq!(per_key.met, None);
        let reach = find(&all, "at the memory floor");
        assert!((reach.value - 50.0 / 15.0).abs() < 1e-12);
        assert_eq!(reach.met, None);

        r.cells.retain(|c| c.n == 1_000_000);
        let all = ratios(&r);
        let q = find(
            &all,
            "blocked non-member query throughput / fastbloom, our batched",
        );
        assert!(q.what.contains("the target applies at 10⁷"), "{}", q.what);
        assert!((q.value - 30.0 / 12.0).abs() < 1e-12);
        assert_eq!(q.met, None);

        // Cells of a file before schema 3 give one ratio, labelled as timed then, and judge nothing.
        for c in &mut r.cells {
            c.timed_per_key = false;
            c.batched_insert_ns_per_key = None;
            c.batched_member_query_ns_per_key = None;
            c.batched_non_member_query_ns_per_key = None;
        }
        let all = ratios(&r);
        let old = find(
            &all,
            "blocked non-member query throughput / fastbloom, as timed before schema 3",
        );
        assert_eq!(old.met, None);
    }
}

//! "Where a lookup's time goes": the hash study's tables (each keyed hash's cost at three key lengths and
//! the rates of the filters it built against their theory), and the run's batched lookups split into
//! hash, probe and the machine's memory floor. Reads the results only.

use crate::hash::candidates::HashFn;
use crate::kind::Role;
use crate::registry::role_id;
use crate::results::{CellRecord, HashQualityRecord, HashSpeedRecord, Results};
use crate::units::human_count;
use serde::Serialize;
use std::fmt::Write;

/// The key length the verdict compares hashes at (the default profile's mean URL).
const VERDICT_KEY_BYTES: u32 = 77;

/// The hash the run's structures hashed with (its header's; xxh3-128 before headers named it).
fn run_hash(r: &Results) -> &str {
    r.header
        .as_ref()
        .map_or(HashFn::FORMER_DEFAULT.id(), |h| h.hash.as_str())
}

fn speed<'r>(r: &'r Results, hash: &str, bytes: u32) -> Option<&'r HashSpeedRecord> {
    r.hash_speed
        .iter()
        .find(|s| s.hash == hash && s.key_bytes == bytes)
}

fn quality<'r>(r: &'r Results, hash: &str) -> Vec<&'r HashQualityRecord> {
    r.hash_quality.iter().filter(|q| q.hash == hash).collect()
}

/// Whether `hash` is documented to pass SMHasher, may build a structure (`HashFn::usable`: also
/// persistent, as `--hash` and saved files require), and every filter it built kept its rate inside the
/// 99.9% interval, with no false negative: what a default must show.
fn passes(r: &Results, hash: &str) -> bool {
    if !crate::hash::HashFn::from_id(hash).is_some_and(crate::hash::HashFn::usable) {
        return false;
    }
    let built = quality(r, hash);
    let documented = r
        .hash_speed
        .iter()
        .any(|s| s.hash == hash && s.smhasher_passes);
    documented
        && !built.is_empty()
        && built
            .iter()
            .all(|q| q.theory_in_interval && q.false_negatives == 0)
}

/// The sizes `hash`'s filters were built at, as "10M and 1G".
fn sizes_built(r: &Results, hash: &str) -> String {
    let mut sizes: Vec<u64> = quality(r, hash).iter().map(|q| q.n).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let named: Vec<String> = sizes.iter().map(|n| human_count(*n as f64)).collect();
    named.join(" and ")
}

/// The hashes the run measured, in registry order.
fn measured(r: &Results) -> Vec<&'static str> {
    HashFn::ALL
        .iter()
        .map(|h| h.id())
        .filter(|id| r.hash_speed.iter().any(|s| s.hash == *id))
        .collect()
}

/// The fastest hash at [`VERDICT_KEY_BYTES`] whose filters all passed.
fn fastest_passing(r: &Results) -> Option<(&'static str, f64)> {
    measured(r)
        .into_iter()
        .filter(|id| passes(r, id))
        .filter_map(|id| speed(r, id, VERDICT_KEY_BYTES).map(|s| (id, s.ns_per_key.median)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// One line for the verdict list.
pub fn verdict(r: &Results) -> String {
    let default_id = run_hash(r);
    let Some(default) = speed(r, default_id, VERDICT_KEY_BYTES) else {
        return "not measured in this run".into();
    };
    let failing: Vec<&str> = measured(r)
        .into_iter()
        .filter(|id| !passes(r, id))
        .collect();
    let mut out = match fastest_passing(r) {
        Some((id, ns)) if id != default_id => format!(
            "at {VERDICT_KEY_BYTES}-byte keys {id} hashes in {ns:.1} ns against the run's {default_id}'s {:.1} ns ({:.1}×); it is documented to pass SMHasher, and its bloom and blocked filters kept their rates inside the 99.9% interval at n = {}",
            default.ns_per_key.median,
            default.ns_per_key.median / ns,
            sizes_built(r, id)
        ),
        Some(_) => format!(
            "the run's hash, {default_id}, is the fastest hash whose filters kept their rates ({:.1} ns at {VERDICT_KEY_BYTES} bytes)",
            default.ns_per_key.median
        ),
        None => "no hash documented to pass SMHasher kept every filter inside its 99.9% interval".into(),
    };
    if !failing.is_empty() {
        let _ = write!(
            out,
            "; not usable (not documented to pass SMHasher, or its output not fixed across versions and machines), or a filter outside the interval or with false negatives: {}",
            failing.join(", ")
        );
    }
    out
}

/// What `templates/hashes.html` shows.
#[derive(Serialize)]
pub struct Hashes {
    verdict: String,
    run_hash: String,
    verdict_key_bytes: u32,
    /// The fastest passing hash, when it is not the run's: the split table projects it.
    faster: Option<&'static str>,
    split: Vec<SplitRow>,
    /// Distinct keys per length of the speed table.
    speed_keys: u64,
    lengths: Vec<u32>,
    speeds: Vec<SpeedRow>,
    quality: Vec<QualityRow>,
}

/// A batched member lookup of the largest n split into hash, probe and the memory floor.
#[derive(Serialize)]
struct SplitRow {
    structure: String,
    n: String,
    lookup: String,
    hash: String,
    probe: String,
    floor: String,
    /// The lookup with the faster hash's cost in place of the run's.
    projected: Option<String>,
}

/// One hash's speed at each key length.
#[derive(Serialize)]
struct SpeedRow {
    hash: &'static str,
    the_runs: bool,
    output_bits: u32,
    cells: Vec<String>,
    smhasher: String,
}

/// One filter built with one hash, against its theory.
#[derive(Serialize)]
struct QualityRow {
    hash: String,
    structure: String,
    n: String,
    queries: String,
    observed: String,
    low: String,
    high: String,
    theory: String,
    inside: bool,
    false_negatives: u64,
    members_checked: String,
}

/// The section, when the run has a hash study.
pub fn view(r: &Results) -> Option<Hashes> {
    if r.hash_speed.is_empty() && r.hash_quality.is_empty() {
        return None;
    }
    let default_id = run_hash(r);
    let faster = fastest_passing(r).filter(|(id, _)| *id != default_id);
    let lengths: Vec<u32> = {
        let mut l: Vec<u32> = r.hash_speed.iter().map(|x| x.key_bytes).collect();
        l.sort_unstable();
        l.dedup();
        l
    };
    let speeds = measured(r)
        .into_iter()
        .map(|id| {
            let first = speed(r, id, lengths[0]);
            SpeedRow {
                hash: id,
                the_runs: id == default_id,
                output_bits: first.map_or(0, |x| x.output_bits),
                cells: lengths
                    .iter()
                    .map(|l| {
                        speed(r, id, *l).map_or("—".into(), |x| {
                            format!(
                                "{:.2} [{:.2}–{:.2}]",
                                x.ns_per_key.median, x.ns_per_key.min, x.ns_per_key.max
                            )
                        })
                    })
                    .collect(),
                smhasher: first.map_or(String::new(), |x| x.smhasher.clone()),
            }
        })
        .collect();
    Some(Hashes {
        verdict: verdict(r),
        run_hash: default_id.to_string(),
        verdict_key_bytes: VERDICT_KEY_BYTES,
        faster: faster.map(|(id, _)| id),
        split: lookup_split(r, faster),
        speed_keys: r.hash_speed.first().map_or(0, |x| x.keys),
        lengths,
        speeds,
        quality: r
            .hash_quality
            .iter()
            .map(|q| QualityRow {
                hash: q.hash.clone(),
                structure: q.structure.clone(),
                n: human_count(q.n as f64),
                queries: human_count(q.queries as f64),
                observed: crate::units::human_rate(q.observed_fpr),
                low: crate::units::human_rate(q.observed_fpr_wilson999.low),
                high: crate::units::human_rate(q.observed_fpr_wilson999.high),
                theory: crate::units::human_rate(q.theory_fpr),
                inside: q.theory_in_interval,
                false_negatives: q.false_negatives,
                members_checked: human_count(q.members_checked as f64),
            })
            .collect(),
    })
}

/// Batched lookups of the largest n split into hash, probe and memory floor; with `faster`, the lookup
/// projected with that hash's cost.
fn lookup_split(r: &Results, faster: Option<(&'static str, f64)>) -> Vec<SplitRow> {
    let largest = |id: &str| -> Option<&CellRecord> {
        r.cells
            .iter()
            .filter(|c| c.structure == id && c.batched_member_query_ns_per_key.is_some())
            .max_by_key(|c| c.n)
    };
    let default_ns = speed(r, run_hash(r), VERDICT_KEY_BYTES).map(|s| s.ns_per_key.median);
    [role_id(Role::ReferenceBloom), role_id(Role::BlockedBloom)]
        .into_iter()
        .filter_map(largest)
        .map(|c| {
            let lookup = c
                .batched_member_query_ns_per_key
                .map(|x| x.median)
                .unwrap_or(f64::NAN);
            let hash = c.hash_ns_per_key.median;
            SplitRow {
                structure: c.structure.clone(),
                n: human_count(c.n as f64),
                lookup: format!("{lookup:.1}"),
                hash: format!("{hash:.1}"),
                probe: format!("{:.1}", lookup - hash),
                floor: c
                    .memory_floor_ns_per_key
                    .map_or("—".to_string(), |f| format!("{f:.1}")),
                projected: match (faster, default_ns) {
                    (Some((_, ns)), Some(d)) => Some(format!("{:.1}", lookup - d + ns)),
                    _ => None,
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{summarize, Interval};
    use crate::structures::{blocked, bloom};

    fn results(speeds: &[(&str, f64)], outside: &[&str]) -> Results {
        let mut r = Results::default();
        for (hash, ns) in speeds {
            r.hash_speed.push(HashSpeedRecord {
                hash: hash.to_string(),
                output_bits: 64,
                smhasher: String::new(),
                smhasher_passes: true,
                key_bytes: VERDICT_KEY_BYTES,
                keys: 4096,
                ns_per_key: summarize(&[*ns]),
            });
            for structure in [bloom::ID, blocked::ID] {
                let inside = !outside.contains(hash);
                r.hash_quality.push(HashQualityRecord {
                    hash: hash.to_string(),
                    structure: structure.into(),
                    n: 1000,
                    queries: 100,
                    false_positives: 1,
                    observed_fpr: 0.01,
                    observed_fpr_wilson999: Interval {
                        low: 0.0,
                        high: 0.1,
                    },
                    theory_fpr: 0.01,
                    theory_in_interval: inside,
                    members_checked: 10,
                    false_negatives: 0,
                });
            }
        }
        r
    }

    #[test]
    fn the_verdict_names_the_fastest_hash_whose_filters_kept_their_rates() {
        let r = results(
            &[("xxh3-128", 11.0), ("rapidhash-v3", 8.0), ("wyhash", 6.0)],
            &["wyhash"],
        );
        let v = verdict(&r);
        assert!(v.contains("rapidhash-v3 hashes in 8.0 ns"), "{v}");
        assert!(v.contains("1.4×"), "{v}");
        assert!(v.ends_with("false negatives: wyhash"), "{v}");
        // A hash its documentation does not pass is never the pick, however fast.
        let mut r = results(&[("xxh3-128", 11.0), ("foldhash-fast", 5.0)], &[]);
        r.hash_speed[1].smhasher_passes = false;
        assert!(
            verdict(&r).starts_with("the run's hash, xxh3-128, is the fastest"),
            "{}",
            verdict(&r)
        );
        let r = results(&[("xxh3-128", 5.0), ("rapidhash-v3", 8.0)], &[]);
        // A run without a header (or whose header predates the field) hashed with xxh3-128.
        assert!(verdict(&r).starts_with("the run's hash, xxh3-128, is the fastest"));
        #[derive(Serialize)]
        struct Page {
            hashes: Option<Hashes>,
        }
        let page = super::super::template::render("hashes.html", &Page { hashes: view(&r) })
            .expect("the section renders");
        assert!(page.contains("id=\"hashes\"") && page.contains("rapidhash-v3"));
        // The run's own hash, from its header, is what the others are set against.
        let mut r = results(&[("xxh3-128", 9.0), ("xxh3-64", 7.0)], &[]);
        let mut header: crate::results::RunHeader = serde_json::from_str(
            include_str!("../../tests/fixtures/skips-and-scenario/results.jsonl")
                .lines()
                .next()
                .expect("a header"),
        )
        .expect("the fixture's header");
        assert_eq!(header.hash, "xxh3-128", "a header without the field");
        header.hash = "xxh3-64".into();
        r.header = Some(header);
        assert!(
            verdict(&r).starts_with("the run's hash, xxh3-64, is the fastest"),
            "{}",
            verdict(&r)
        );
    }
}

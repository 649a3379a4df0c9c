//! "Where a lookup's time goes": the hash study's tables (each keyed hash's cost at three key lengths and
//! the rates of the filters it built against their theory), and the run's batched lookups split into
//! hash, probe and the machine's memory floor. Reads the results only.

use super::markup::esc;
use crate::hash::candidates::HashFn;
use crate::kind::Role;
use crate::registry::role_id;
use crate::results::{CellRecord, HashQualityRecord, HashSpeedRecord, Results};
use crate::units::human_count;
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

/// The section, when the run has a hash study.
pub fn section(s: &mut String, r: &Results) {
    if r.hash_speed.is_empty() && r.hash_quality.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "<h2 id=\"hashes\">Where a lookup's time goes</h2><p class=\"verdict\">{}</p>",
        esc(&verdict(r))
    );
    lookup_split(s, r);
    speed_table(s, r);
    quality_table(s, r);
}

/// Batched lookups of the largest n split into hash, probe and memory floor.
fn lookup_split(s: &mut String, r: &Results) {
    let largest = |id: &str| -> Option<&CellRecord> {
        r.cells
            .iter()
            .filter(|c| c.structure == id && c.batched_member_query_ns_per_key.is_some())
            .max_by_key(|c| c.n)
    };
    let cells: Vec<&CellRecord> = [role_id(Role::ReferenceBloom), role_id(Role::BlockedBloom)]
        .into_iter()
        .filter_map(largest)
        .collect();
    if cells.is_empty() {
        return;
    }
    let default_id = run_hash(r);
    let faster = fastest_passing(r).filter(|(id, _)| *id != default_id);
    let default_ns = speed(r, default_id, VERDICT_KEY_BYTES).map(|s| s.ns_per_key.median);
    let _ = writeln!(
        s,
        "<p>A member lookup on the batched path, at the largest n of each filter: the hash (the run's {default_id} on its URLs), the probe (the rest), and the machine's memory floor (one prefetched random line read per key, in an array of the filter's size).{}</p>",
        match faster {
            Some((id, _)) => format!(" The last column is a projection: the same lookup with the hash's share replaced by {id}'s cost at {VERDICT_KEY_BYTES} bytes less {default_id}'s, both from the speed table below."),
            None => String::new(),
        }
    );
    let _ = write!(
        s,
        "<table><tr><th>structure</th><th>n</th><th>lookup ns</th><th>hash ns</th><th>probe ns</th><th>memory floor ns</th>{}</tr>",
        faster.map_or(String::new(), |(id, _)| format!("<th>with {id} (projected) ns</th>"))
    );
    for c in cells {
        let lookup = c
            .batched_member_query_ns_per_key
            .map(|x| x.median)
            .unwrap_or(f64::NAN);
        let hash = c.hash_ns_per_key.median;
        let floor = c
            .memory_floor_ns_per_key
            .map_or("—".to_string(), |f| format!("{f:.1}"));
        let projected = match (faster, default_ns) {
            (Some((_, ns)), Some(d)) => format!("<td>{:.1}</td>", lookup - d + ns),
            _ => String::new(),
        };
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{lookup:.1}</td><td>{hash:.1}</td><td>{:.1}</td><td>{floor}</td>{projected}</tr>",
            esc(&c.structure),
            human_count(c.n as f64),
            lookup - hash
        );
    }
    let _ = writeln!(s, "</table>");
}

fn speed_table(s: &mut String, r: &Results) {
    let lengths: Vec<u32> = {
        let mut l: Vec<u32> = r.hash_speed.iter().map(|x| x.key_bytes).collect();
        l.sort_unstable();
        l.dedup();
        l
    };
    let _ = write!(
        s,
        "<p>Each keyed hash on the same {} distinct keys per length (generated URLs cut or repeated to length, then a 10-digit index), ns per key: median and min–max over repetitions interleaved across hashes. 64-bit hashes give the probe step by the murmur3 finaliser of their output. SMHasher: what each crate's documentation states (not rerun here). gxhash is absent: it does not build without AES target flags.</p><table><tr><th>hash</th><th>output bits</th><th>keyed</th>",
        r.hash_speed.first().map_or(0, |x| x.keys)
    );
    for l in &lengths {
        let _ = write!(s, "<th>{l} B ns</th>");
    }
    let _ = writeln!(s, "<th>SMHasher (documented)</th></tr>");
    let default_id = run_hash(r);
    for id in measured(r) {
        let first = speed(r, id, lengths[0]);
        let _ = write!(
            s,
            "<tr><td>{}{}</td><td>{}</td><td>yes (the seed changes the hash; unit-tested)</td>",
            esc(id),
            if id == default_id { " (the run's)" } else { "" },
            first.map_or(0, |x| x.output_bits)
        );
        for l in &lengths {
            let cell = speed(r, id, *l).map_or("—".into(), |x| {
                format!(
                    "{:.2} [{:.2}–{:.2}]",
                    x.ns_per_key.median, x.ns_per_key.min, x.ns_per_key.max
                )
            });
            let _ = write!(s, "<td>{cell}</td>");
        }
        let _ = writeln!(
            s,
            "<td>{}</td></tr>",
            esc(first.map_or("", |x| x.smhasher.as_str()))
        );
    }
    let _ = writeln!(s, "</table>");
}

fn quality_table(s: &mut String, r: &Results) {
    if r.hash_quality.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "<p>Each hash's own <code>bloom</code> and <code>blocked</code> filters, sized for n at the run's rate, filled with members [0, n) and asked the same non-members; the theory is the filter's rate from its fill. Outside the 99.9% Wilson interval is marked. Above 10⁷ keys only the hashes documented to pass SMHasher build filters: the report recommends no other.</p><table><tr><th>hash</th><th>structure</th><th>n</th><th>non-members</th><th>observed rate [99.9%]</th><th>theory</th><th>inside</th><th>false negatives (of members checked)</th></tr>"
    );
    for q in &r.hash_quality {
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.4}% [{:.4}–{:.4}%]</td><td>{:.4}%</td><td{}>{}</td><td{}>{} of {}</td></tr>",
            esc(&q.hash),
            esc(&q.structure),
            human_count(q.n as f64),
            human_count(q.queries as f64),
            q.observed_fpr * 100.0,
            q.observed_fpr_wilson999.low * 100.0,
            q.observed_fpr_wilson999.high * 100.0,
            q.theory_fpr * 100.0,
            if q.theory_in_interval { "" } else { " class=\"bad\"" },
            if q.theory_in_interval { "yes" } else { "no" },
            if q.false_negatives == 0 { "" } else { " class=\"bad\"" },
            q.false_negatives,
            human_count(q.members_checked as f64)
        );
    }
    let _ = writeln!(s, "</table>");
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
        let mut page = String::new();
        section(&mut page, &r);
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

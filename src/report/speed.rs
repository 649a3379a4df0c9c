//! The "Speed" ratios: our structures against the peers and the machine's memory floor, each measured in
//! the same run at the largest n where both ran (ratios, not absolute times, carry across machines).

use crate::results::{CellRecord, Results};

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

/// The largest n at which every id in `ids` has a measured cell.
fn common_n(r: &Results, ids: &[&str]) -> Option<u64> {
    r.cells
        .iter()
        .map(|c| c.n)
        .filter(|n| ids.iter().all(|id| cell(r, id, *n).is_some()))
        .max()
}

/// Every ratio the results allow.
pub fn ratios(r: &Results) -> Vec<Ratio> {
    let mut out = Vec::new();
    let human = |n: u64| crate::units::human_count(n as f64);
    if let Some(n) = common_n(r, &["bloom", "fastbloom"]) {
        let (ours, peer) = (
            cell(r, "bloom", n).unwrap(),
            cell(r, "fastbloom", n).unwrap(),
        );
        for (what, a, b) in [
            (
                "insert",
                ours.insert_ns_per_key.median,
                peer.insert_ns_per_key.median,
            ),
            (
                "member query",
                ours.member_query_ns_per_key.median,
                peer.member_query_ns_per_key.median,
            ),
            (
                "non-member query",
                ours.non_member_query_ns_per_key.median,
                peer.non_member_query_ns_per_key.median,
            ),
        ] {
            out.push(Ratio {
                what: format!(
                    "bloom {what} throughput / fastbloom at n = {} ({:.2} vs {:.2} bits per key)",
                    human(n),
                    ours.bits_per_key,
                    peer.bits_per_key
                ),
                value: b / a,
                target: "≥ 1.0".into(),
                met: Some(b / a >= 1.0 && ours.theory_in_interval),
            });
        }
    }
    // The same kind of lookup on both sides: members (every probe taken) and non-members (early exits).
    let lookups = |c: &CellRecord| {
        [
            ("member", c.member_query_ns_per_key.median),
            ("non-member", c.non_member_query_ns_per_key.median),
        ]
    };
    for (peer_id, target) in [("fastbloom", 2.5), ("sbbf", 1.0)] {
        if let Some(n) = common_n(r, &["blocked", peer_id]) {
            let (ours, peer) = (cell(r, "blocked", n).unwrap(), cell(r, peer_id, n).unwrap());
            for ((what, a), (_, b)) in lookups(ours).into_iter().zip(lookups(peer)) {
                out.push(Ratio {
                    what: format!(
                        "blocked {what} query throughput / {peer_id} at n = {} ({:.2} vs {:.2} bits per key)",
                        human(n),
                        ours.bits_per_key,
                        peer.bits_per_key
                    ),
                    value: b / a,
                    target: format!("≥ {target}"),
                    met: Some(b / a >= target),
                });
            }
        }
    }
    if let Some(n) = common_n(r, &["blocked", "bloom"]) {
        let (ours, bloom) = (cell(r, "blocked", n).unwrap(), cell(r, "bloom", n).unwrap());
        let v = ours.bits_per_key / bloom.bits_per_key;
        out.push(Ratio {
            what: format!(
                "blocked bits per key / bloom at n = {} (observed {:.4} vs {:.4})",
                human(n),
                ours.observed_fpr,
                bloom.observed_fpr
            ),
            value: v,
            target: "≤ 1.15".into(),
            met: Some(v <= 1.15),
        });
    }
    if let Some(c) = r
        .cells
        .iter()
        .filter(|c| c.structure == "blocked" && c.memory_floor_ns_per_key.is_some())
        .max_by_key(|c| c.n)
    {
        let floor = c.memory_floor_ns_per_key.unwrap_or(f64::NAN);
        let probe = c.non_member_query_ns_per_key.median - c.hash_ns_per_key.median;
        out.push(Ratio {
            what: format!(
                "blocked batched lookup probe cost / memory floor at n = {} ({probe:.1} ns vs {floor:.1} ns; target applies at 10⁹)",
                human(c.n)
            ),
            value: probe / floor,
            target: "≤ 1.5 at 10⁹ keys".into(),
            met: (c.n >= 1_000_000_000).then_some(probe / floor <= 1.5),
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
        if c.n
            == r.cells
                .iter()
                .filter(|x| x.structure == c.structure)
                .map(|x| x.n)
                .max()
                .unwrap_or(0)
        {
            out.push(Ratio {
                what: format!(
                    "{} insert throughput, {} threads / 1 thread at n = {}",
                    c.structure,
                    c.threads,
                    human(c.n)
                ),
                value: c.insert_ns_per_key.median / parallel,
                target: "(scaling)".into(),
                met: None,
            });
        }
    }
    out
}

/// Filters (ours and peers) whose observed rate is significantly above the rate they were built for.
pub fn missed_targets(r: &Results) -> Vec<String> {
    let target = r.header.as_ref().map(|h| h.fpr).unwrap_or(0.0);
    r.cells
        .iter()
        .filter(|c| !c.exact && c.structure != "bitmap" && c.observed_fpr_wilson95.low > target * 1.02)
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

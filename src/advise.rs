//! The advisor: turns a workload (keys, rate, memory, deletions, growth, sharing) and optionally a bench
//! run's measurements into a ranked recommendation, the thresholds where each structure stops fitting, and
//! the regime ladder exact strings → 64-bit fingerprints → Bloom → beyond one machine.
//!
//! Bytes per key: Bloom-family sizes come from the formulas in [`crate::theory`] (exact, so they agree with
//! `size`); the exact sets' come from a bench run's largest measured cell when one is given, else from the
//! hashbrown layout model with 77-byte keys. Throughput is only ever quoted from a measured run.

use crate::results::Results;
use crate::structures::{hashset, BuildConfig, KeyLengths};
use crate::theory::{self, BloomSizing, ScalableParams};
use crate::{Error, Result};
use serde::Serialize;
use std::f64::consts::LN_2;

/// What the user needs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Workload {
    /// Smallest and largest expected distinct keys (equal for a single n).
    pub n_low: u64,
    pub n_high: u64,
    pub fpr: f64,
    pub memory_bytes: u64,
    pub deletes: bool,
    pub growth_unknown: bool,
    pub shared: bool,
}

impl Workload {
    /// Validates the workload: p in (0, 1), n ≥ 1, low ≤ high, memory > 0.
    pub fn validate(&self) -> Result<()> {
        if !(self.fpr > 0.0 && self.fpr < 1.0) {
            return Err(Error::invalid(
                "--fpr",
                format!("{} is outside (0, 1)", self.fpr),
            ));
        }
        if self.n_high >= crate::keys::NON_MEMBER_BASE {
            return Err(Error::invalid(
                "--n",
                format!("{} is beyond the supported 2^47 keys", self.n_high),
            ));
        }
        if self.n_low == 0 || self.n_low > self.n_high {
            return Err(Error::invalid(
                "--n",
                "must be ≥ 1, and a range must be low..high with low ≤ high",
            ));
        }
        if self.memory_bytes == 0 {
            return Err(Error::invalid("--memory", "must be > 0"));
        }
        Ok(())
    }
}

/// Where the exact sets' bytes per key come from.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExactCosts {
    pub hashset_bytes_per_key: f64,
    pub fingerprint_bytes_per_key: f64,
    /// "measured in <run>" or "model".
    pub source: String,
}

impl ExactCosts {
    /// The model's bytes per key at `n` for 77-byte URLs.
    pub fn model(n: u64) -> Self {
        let lengths = KeyLengths {
            mean_bytes: 77.0,
            mean_chunk_bytes: 96.0,
        };
        let config = BuildConfig::new(n.max(1), 0.01, 0);
        ExactCosts {
            hashset_bytes_per_key: hashset::model(config.expected_keys, lengths).footprint_bytes
                / n.max(1) as f64,
            fingerprint_bytes_per_key: theory::hashbrown_table_bytes(n.max(1), 8) as f64
                / n.max(1) as f64,
            source: "model (hashbrown layout, 77-byte URLs)".into(),
        }
    }

    /// Bytes per key from the largest measured cells of a run, falling back to the model.
    pub fn from_results(results: &Results, label: &str, n: u64) -> Self {
        let mut costs = ExactCosts::model(n);
        let mut measured = false;
        for (id, slot) in [
            ("hashset", &mut costs.hashset_bytes_per_key),
            ("fingerprint", &mut costs.fingerprint_bytes_per_key),
        ] {
            if let Some(cell) = results
                .cells
                .iter()
                .filter(|c| c.structure == id)
                .max_by_key(|c| c.n)
            {
                *slot = cell.heap_footprint_bytes as f64 / cell.n as f64;
                measured = true;
            }
        }
        if measured {
            costs.source = format!("measured in {label} (largest cell of each exact set)");
        }
        costs
    }
}

/// One structure's standing for the workload.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Candidate {
    pub id: &'static str,
    pub bits: Option<u64>,
    pub hashes: Option<u32>,
    /// Bytes at the workload's largest n.
    pub bytes: f64,
    pub expected_fpr: f64,
    /// Measured medians at the closest n of the run, with that n.
    pub insert_ns_per_key: Option<f64>,
    pub query_ns_per_key: Option<f64>,
    pub measured_at_n: Option<u64>,
    /// Why it ranks where it does, or why it fails.
    pub reason: String,
    pub fits: bool,
}

/// A threshold: the largest n at which a structure fits the budget at the target rate.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Threshold {
    pub id: &'static str,
    pub max_n: f64,
}

/// One rung of the regime ladder: from `from_n` keys up to `to_n` (None: no upper end), use `id`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Rung {
    pub id: String,
    pub from_n: f64,
    pub to_n: Option<f64>,
    pub why: String,
}

/// The advisor's answer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Advice {
    pub workload: Workload,
    pub exact_costs: ExactCosts,
    pub recommended: Vec<Candidate>,
    pub rejected: Vec<Candidate>,
    pub thresholds: Vec<Threshold>,
    /// The lowest rate any filter reaches at the largest n within the budget (a Bloom filter of the
    /// budget's bits with the best k), and that k.
    pub best_fpr_in_budget: f64,
    /// (k is capped at [`MAX_HASHES`].)
    pub best_hashes_in_budget: u32,
    /// Bytes a Bloom filter needs for the target rate at the largest n.
    pub bloom_bytes_for_target: f64,
    /// Bytes the cache-blocked filter needs for the target rate at the largest n.
    pub blocked_bytes_for_target: f64,
    pub ladder: Vec<Rung>,
    pub notes: Vec<String>,
}

/// Relative slack on the target rate: the standard sizing with k rounded to an integer lands within it.
pub const RATE_TOLERANCE: f64 = 0.01;
/// The most probes the advisor proposes (more costs a cache miss each for a vanishing gain).
pub const MAX_HASHES: u32 = 32;

/// Largest n for which `bytes(n) ≤ budget` (bytes non-decreasing in n), by doubling then bisection.
fn largest_n(budget: f64, bytes: impl Fn(u64) -> f64) -> f64 {
    if bytes(1) > budget {
        return 0.0;
    }
    let mut high = 2u64;
    while bytes(high) <= budget {
        if high > 1 << 50 {
            return high as f64;
        }
        high *= 2;
    }
    let mut low = high / 2;
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if bytes(mid) <= budget {
            low = mid;
        } else {
            high = mid;
        }
    }
    low as f64
}

/// The scalable filter the advisor proposes: first slice sized for the expected n.
fn scalable_params(n: u64, fpr: f64) -> ScalableParams {
    ScalableParams {
        initial_capacity: n.max(1),
        fpr,
        growth: 2.0,
        tightening: 0.9,
    }
}

/// Advises on `workload`; `run` is a bench run's results with a label for the output.
pub fn advise(workload: &Workload, run: Option<(&Results, String)>) -> Result<Advice> {
    workload.validate()?;
    let n = workload.n_high;
    let p = workload.fpr;
    let budget = workload.memory_bytes as f64;
    let exact = match &run {
        Some((results, label)) => ExactCosts::from_results(results, label, n),
        None => ExactCosts::model(n),
    };
    let bloom = BloomSizing::for_rate(n, p);
    let counting_bytes = bloom.bits.div_ceil(2) as f64;
    let scalable = scalable_params(n, p);
    let bitmap_bits = (-(n as f64) / (-p).ln_1p()).ceil() as u64;
    let measured = |id: &str| -> (Option<f64>, Option<f64>, Option<u64>) {
        let Some((results, _)) = &run else {
            return (None, None, None);
        };
        let cell = results
            .cells
            .iter()
            .filter(|c| c.structure == id)
            .min_by_key(|c| {
                ((c.n as f64).ln() - (n as f64).ln())
                    .abs()
                    .mul_add(1e6, 0.0) as u64
            });
        match cell {
            Some(c) => (
                Some(c.insert_ns_per_key.median),
                Some(c.member_query_ns_per_key.median),
                Some(c.n),
            ),
            None => (None, None, None),
        }
    };
    let human = crate::units::human_bytes;
    let mut all: Vec<Candidate> = Vec::new();
    let mut push = |id: &'static str,
                    bits: Option<u64>,
                    hashes: Option<u32>,
                    bytes: f64,
                    fpr: f64,
                    removable: bool,
                    grows: bool,
                    class: &str| {
        let (insert, query, at) = measured(id);
        let mut fails = Vec::new();
        if bytes > budget {
            fails.push(format!(
                "needs {} at {} keys; budget {}",
                human(bytes),
                crate::units::human_count(n as f64),
                human(budget)
            ));
        }
        // The standard sizing rounds k, which can leave the rate a fraction of a percent above p.
        if fpr > p * (1.0 + RATE_TOLERANCE) {
            fails.push(format!(
                "its rate at this size is {fpr:.3e}, above the target {p}"
            ));
        }
        if workload.deletes && !removable {
            fails.push("cannot delete keys".into());
        }
        if workload.growth_unknown && !grows {
            fails.push(
                "fixed size: its rate climbs past its capacity when growth is unknown".into(),
            );
        }
        let fits = fails.is_empty();
        all.push(Candidate {
            id,
            bits,
            hashes,
            bytes,
            expected_fpr: fpr,
            insert_ns_per_key: insert,
            query_ns_per_key: query,
            measured_at_n: at,
            reason: if fits {
                class.to_string()
            } else {
                fails.join("; ")
            },
            fits,
        });
    };
    push(
        "hashset",
        None,
        None,
        exact.hashset_bytes_per_key * n as f64,
        0.0,
        true,
        true,
        "exact: no false positives at all",
    );
    push(
        "fingerprint",
        Some(64),
        None,
        exact.fingerprint_bytes_per_key * n as f64,
        theory::fingerprint_fpr(n),
        true,
        true,
        "exact in practice (collision rate n/2^64), 8-byte slots",
    );
    push(
        "bloom",
        Some(bloom.bits),
        Some(bloom.hashes),
        bloom.bytes() as f64,
        bloom.fpr(n),
        false,
        false,
        "the smallest filter that meets the rate",
    );
    let (blocks, blocked_k) = theory::blocked_sizing(n, p);
    push(
        "blocked",
        Some(blocks * theory::BLOCK_BITS),
        Some(blocked_k),
        (blocks * 64) as f64,
        theory::blocked_sector_fpr(blocks * theory::BLOCK_BITS, blocked_k, n),
        false,
        false,
        "one cache miss per lookup for a few % more bits than bloom",
    );
    push(
        "scalable",
        Some(scalable.slice(0).1.bits),
        Some(scalable.slice(0).1.hashes),
        scalable.bytes(n) as f64,
        scalable.fpr(n),
        false,
        true,
        "grows by slices (s = 2, r = 0.9), rate bounded by p however far it grows; first slice sized for n",
    );
    push(
        "counting",
        Some(bloom.bits),
        Some(bloom.hashes),
        counting_bytes,
        bloom.fpr(n),
        true,
        false,
        "deletions at 4× a Bloom filter's memory",
    );
    push(
        "bitmap",
        Some(bitmap_bits),
        Some(1),
        bitmap_bits.div_ceil(64) as f64 * 8.0,
        theory::bitmap_fpr(bitmap_bits, n),
        false,
        false,
        "one probe: needs ≈ 1/p bits per key",
    );
    // Rank: exact first (use a set until memory says no), then by bytes.
    let rank = |c: &Candidate| match c.id {
        "hashset" => 0.0,
        "fingerprint" => 1.0,
        _ => 2.0 + c.bytes / budget.max(1.0),
    };
    let (mut recommended, rejected): (Vec<Candidate>, Vec<Candidate>) =
        all.into_iter().partition(|c| c.fits);
    recommended.sort_by(|a, b| rank(a).total_cmp(&rank(b)));
    if let Some((i, _)) = recommended
        .iter()
        .enumerate()
        .find(|(_, c)| c.id == "counting")
    {
        if workload.growth_unknown {
            recommended[i]
                .reason
                .push_str("; resize plan: rebuild at 2× when the count reaches capacity");
        }
    }

    let budget_bits = budget * 8.0;
    let hashset_bpk = exact.hashset_bytes_per_key;
    let thresholds = vec![
        Threshold {
            id: "hashset",
            max_n: budget / hashset_bpk,
        },
        Threshold {
            id: "fingerprint",
            max_n: largest_n(budget, |k| theory::hashbrown_table_bytes(k, 8) as f64),
        },
        Threshold {
            id: "bloom",
            max_n: budget_bits * LN_2 * LN_2 / -p.ln(),
        },
        Threshold {
            id: "blocked",
            max_n: {
                let (blocks, _) = theory::blocked_sizing(1_000_000, p);
                budget_bits / (blocks as f64 * theory::BLOCK_BITS as f64 / 1e6)
            },
        },
        Threshold {
            id: "counting",
            max_n: budget_bits / 4.0 * LN_2 * LN_2 / -p.ln(),
        },
        Threshold {
            id: "scalable",
            max_n: largest_n(budget, |k| scalable_params(k, p).slice(0).1.bytes() as f64),
        },
        Threshold {
            id: "bitmap",
            max_n: budget_bits * -(-p).ln_1p(),
        },
    ];
    let mut best = BloomSizing::for_bits(n, (budget_bits as u64).max(1));
    best.hashes = best.hashes.min(MAX_HASHES);
    let mut notes = vec![format!("exact-set bytes per key: {}", exact.source)];
    if run.is_none() {
        notes.push(
            "no --results given: sizes from theory and the built-in model; no throughput is quoted"
                .into(),
        );
    }
    if workload.shared {
        notes.push(
            "shared across processes: this build has no Redis backend yet, so sharing costs are not measured; \
the sizes above are what the shared filter (e.g. RedisBloom BF.RESERVE with this capacity and rate) holds on the server"
                .into(),
        );
    }
    if recommended.is_empty() {
        notes.push(format!(
            "no structure meets every constraint: in {} a Bloom filter reaches at best {:.3e} (k = {}) at {} keys; the target {} needs {}",
            human(budget),
            best.fpr(n),
            best.hashes,
            crate::units::human_count(n as f64),
            p,
            human(bloom.bytes() as f64)
        ));
    }
    let ladder = ladder(&thresholds, workload);
    Ok(Advice {
        workload: workload.clone(),
        exact_costs: exact,
        recommended,
        rejected,
        thresholds,
        best_fpr_in_budget: best.fpr(n),
        best_hashes_in_budget: best.hashes,
        bloom_bytes_for_target: bloom.bytes() as f64,
        blocked_bytes_for_target: (blocks * 64) as f64,
        ladder,
        notes,
    })
}

/// The regime ladder for the budget: exact strings → fingerprints → a filter → beyond one machine.
pub fn ladder(thresholds: &[Threshold], workload: &Workload) -> Vec<Rung> {
    let max = |id: &str| {
        thresholds
            .iter()
            .find(|t| t.id == id)
            .map(|t| t.max_n)
            .unwrap_or(0.0)
    };
    let filter = if workload.deletes {
        "counting"
    } else if workload.growth_unknown {
        "scalable"
    } else {
        "bloom"
    };
    let mut rungs = Vec::new();
    let mut from = 1.0;
    for (id, why) in [
        (
            "hashset",
            "the exact set of URLs fits: no false positive to explain",
        ),
        (
            "fingerprint",
            "the URL strings no longer fit, 64-bit fingerprints do (collision rate n/2^64)",
        ),
        (
            filter,
            "even fingerprints no longer fit: a filter sized by m = -n ln p / ln²2 meets the rate",
        ),
    ] {
        let to = max(id);
        if to > from {
            rungs.push(Rung {
                id: id.to_string(),
                from_n: from,
                to_n: Some(to),
                why: why.to_string(),
            });
            from = to;
        }
    }
    rungs.push(Rung {
        id: if workload.shared { "shared store (Redis) or sharding".into() } else { "beyond one budget".into() },
        from_n: from,
        to_n: None,
        why: format!("no in-memory structure meets p = {} in the budget: shard, share a server-side filter, or accept a higher rate", workload.fpr),
    });
    rungs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workload(n: u64, memory: u64) -> Workload {
        Workload {
            n_low: n,
            n_high: n,
            fpr: 0.01,
            memory_bytes: memory,
            deletes: false,
            growth_unknown: false,
            shared: false,
        }
    }

    #[test]
    fn fifty_million_urls_at_one_percent_in_one_gib() {
        let a = advise(&workload(50_000_000, 1 << 30), None).unwrap();
        let bloom = a.recommended.iter().find(|c| c.id == "bloom").unwrap();
        assert_eq!(bloom.bits, Some(479_252_919));
        assert!((bloom.bytes / 1e6 - 59.9).abs() < 0.05, "{}", bloom.bytes);
        // Exact first while it fits (the 720 MB fingerprint set), then the 60 MB filter.
        assert_eq!(a.recommended[0].id, "fingerprint", "{:?}", a.recommended);
        assert_eq!(a.recommended[1].id, "bloom", "{:?}", a.recommended);
        let hashset = a.rejected.iter().find(|c| c.id == "hashset").unwrap();
        assert!(
            hashset.bytes > 4e9 && hashset.reason.contains("budget"),
            "{hashset:?}"
        );
        let stop = a
            .thresholds
            .iter()
            .find(|t| t.id == "hashset")
            .unwrap()
            .max_n;
        assert!(
            stop > 5e6 && stop < 15e6,
            "the exact set stops fitting 1 GiB near 9M keys, got {stop}"
        );
        assert_eq!(a.ladder[0].id, "hashset");
        assert_eq!(a.ladder[2].id, "bloom");
    }

    #[test]
    fn six_billion_urls_in_one_gib_cannot_reach_one_percent() {
        let a = advise(&workload(6_000_000_000, 1 << 30), None).unwrap();
        assert!(a.recommended.is_empty(), "{:?}", a.recommended);
        assert_eq!(a.best_hashes_in_budget, 1);
        assert!(
            (a.best_fpr_in_budget - 0.503).abs() < 0.01,
            "{}",
            a.best_fpr_in_budget
        );
        assert!(
            (a.bloom_bytes_for_target / 1e9 - 7.19).abs() < 0.01,
            "{}",
            a.bloom_bytes_for_target
        );
        // The blocked filter pays its penalty in bits: ≈ 7.6 GB for 1% at 6·10⁹ keys.
        let blocked = a.blocked_bytes_for_target / 1e9;
        assert!((blocked - 7.57).abs() < 0.05, "{blocked}");
        assert!(a.notes.iter().any(|n| n.contains("no structure meets")));
    }

    #[test]
    fn deletions_get_counting_or_the_exact_set_never_bloom() {
        let mut w = workload(200_000_000, 1 << 30);
        w.deletes = true;
        let a = advise(&w, None).unwrap();
        assert_eq!(a.recommended[0].id, "counting");
        assert!(a.recommended.iter().all(|c| c.id != "bloom"));
        assert!(a
            .rejected
            .iter()
            .any(|c| c.id == "bloom" && c.reason.contains("cannot delete")));
        let small = advise(
            &Workload {
                deletes: true,
                ..workload(100_000, 1 << 30)
            },
            None,
        )
        .unwrap();
        assert_eq!(small.recommended[0].id, "hashset");
    }

    #[test]
    fn unknown_growth_gets_the_scalable_filter() {
        let w = Workload {
            growth_unknown: true,
            ..workload(200_000_000, 1 << 30)
        };
        let a = advise(&w, None).unwrap();
        assert_eq!(a.recommended[0].id, "scalable");
        assert!(a
            .rejected
            .iter()
            .any(|c| c.id == "bloom" && c.reason.contains("fixed size")));
    }

    #[test]
    fn nonsense_is_refused() {
        assert!(advise(
            &Workload {
                fpr: 1.5,
                ..workload(10, 100)
            },
            None
        )
        .is_err());
        assert!(advise(
            &Workload {
                n_low: 0,
                ..workload(10, 100)
            },
            None
        )
        .is_err());
        assert!(advise(&workload(10, 0), None).is_err());
        assert!(advise(
            &Workload {
                n_low: 20,
                n_high: 10,
                ..workload(10, 100)
            },
            None
        )
        .is_err());
    }
}

//! The advisor: turns a workload (keys, rate, memory, deletions, growth, sharing) and optionally a bench
//! run's measurements into a ranked recommendation, the thresholds where each structure stops fitting, and
//! the regime ladder exact strings → 64-bit fingerprints → Bloom → beyond one machine.
//!
//! Every structure the registry marks as advised is weighed with its own models (so `advise` and `size`
//! agree); the exact set's bytes come from the line fitted to a bench run's cells when one is given
//! ([`crate::analysis`]), else from its hashbrown layout model with 77-byte keys. Throughput is only ever
//! quoted from a measured run.

mod cost;
pub mod fleet;
pub mod rates;
mod request;

pub use cost::{costs, lookup_ns_at, CostAnswer, Costed};

pub use request::{answer, Answer, Request};

use crate::analysis::regimes::{advice_config, advised_kinds, server_needs, Sizing};
pub use crate::analysis::regimes::{ladder, Demand, KeyCost, Rung, Threshold};
use crate::results::Results;
use crate::theory::BloomSizing;
use crate::workload::Operation;
use crate::Result;
use serde::Serialize;

/// One structure's standing for the workload.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Candidate {
    pub id: &'static str,
    /// The id, with the crate and version for a peer crate's row.
    pub label: String,
    pub bits: Option<u64>,
    pub hashes: Option<u32>,
    /// Bytes at the workload's largest n.
    #[serde(serialize_with = "crate::units::serde_bytes::serialize")]
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

/// The advisor's answer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Advice {
    pub workload: Demand,
    /// Bytes per key of the structures whose model depends on the keys.
    pub key_costs: Vec<KeyCost>,
    pub recommended: Vec<Candidate>,
    pub rejected: Vec<Candidate>,
    pub thresholds: Vec<Threshold>,
    /// The lowest rate any filter reaches at the largest n within the budget (a Bloom filter of the
    /// budget's bits with the best k), and that k.
    pub best_fpr_in_budget: f64,
    /// (k is capped at [`MAX_HASHES`].)
    pub best_hashes_in_budget: u32,
    /// Bytes the Bloom-filter formula m = -n ln p / ln²2 needs for the target rate at the largest n
    /// (every candidate's own bytes are in `recommended` and `rejected`).
    #[serde(serialize_with = "crate::units::serde_bytes::serialize")]
    pub bloom_bytes_for_target: f64,
    pub ladder: Vec<Rung>,
    pub notes: Vec<String>,
    /// The user's current tool as a run measured it (`advise --current ID`), beside the advice.
    pub current: Option<CurrentTool>,
    /// The first recommended filter's rate if n turns out larger than planned.
    pub overshoot: Option<Overshoot>,
    /// Past one process: one shared node or a cluster of N (`advise --node-memory`, `--inserts-per-sec`).
    pub nodes: Option<crate::analysis::nodes::NodePlan>,
    /// With `--results`: the run's paired speed ratios (from its `analysis.json`) of the recommended
    /// structures against the peers their targets name, at the speed group nearest 10⁷ keys.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub speed_ratios: Vec<crate::analysis::SpeedRatio>,
    /// With `--fp-cost`: every contender at the size that minimises lookup time + rate × fp-cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<CostAnswer>,
    /// The price of each rate and the rate picked (`advise` always; absent from a bare [`advise`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rates: Option<rates::RatePrices>,
    /// With `--machines`: every fleet design priced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fleet: Option<fleet::FleetPlan>,
}

/// A filter sized for the workload's n, filled past it: its theoretical rate at each overshoot.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Overshoot {
    pub id: &'static str,
    pub planned_n: u64,
    /// (keys inserted / planned n, theoretical rate).
    pub rates: Vec<(f64, f64)>,
}

/// The overshoots `advise` quotes: a planned n missed by a quarter, by half and five-fold.
pub const OVERSHOOT_FACTORS: [f64; 3] = [1.25, 2.0, 5.0];

/// The rate of the first recommended filter with a model past its capacity, at each overshoot factor.
fn overshoot(recommended: &[Candidate], n: u64, p: f64) -> Option<Overshoot> {
    recommended.iter().find_map(|c| {
        let kind = crate::registry::find(c.id).ok()?;
        if kind.exact() {
            return None;
        }
        let config = advice_config(kind, n, p);
        let rates = OVERSHOOT_FACTORS
            .iter()
            .map(|f| {
                let filled = (n as f64 * f).round() as u64;
                kind.predicted_fpr_after(&config, filled).map(|r| (*f, r))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Overshoot {
            id: kind.id(),
            planned_n: n,
            rates,
        })
    })
}

/// The tool a user has now, as a bench run measured it, projected to the workload.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CurrentTool {
    pub id: String,
    /// The measured cell nearest the workload's n (log scale).
    pub measured_at_n: u64,
    pub bytes_per_key: f64,
    pub insert_ns_per_key: f64,
    pub query_ns_per_key: f64,
    pub observed_fpr: f64,
    pub observed_fpr_wilson95: crate::stats::Interval,
    /// Bytes at the workload's largest n: the line fitted to its cells of ≥ 10⁵ keys, else the nearest
    /// cell's bytes per key × n (a projection either way).
    #[serde(serialize_with = "crate::units::serde_bytes::serialize")]
    pub bytes_at_n: f64,
    /// Where `bytes_at_n` comes from.
    pub bytes_source: String,
    pub fits_budget: bool,
    /// The rate the run built filters for (its header), where it differs from the workload's.
    pub measured_at_fpr: Option<f64>,
}

/// `id` as the run in `results` measured it, projected to `workload` (an error when the run holds no
/// measured cell of it, naming how to measure it).
pub fn current_tool(workload: &Demand, results: &Results, id: &str) -> Result<CurrentTool> {
    let kind =
        crate::registry::find(id).map_err(|e| crate::Error::invalid("--current", e.to_string()))?;
    let n = workload.n_high;
    let Some(cell) = results
        .cells
        .iter()
        .filter(|c| c.structure == kind.id())
        .min_by(|a, b| {
            let distance = |c: &&crate::results::CellRecord| ((c.n as f64) / (n as f64)).ln().abs();
            distance(a).total_cmp(&distance(b))
        })
    else {
        return Err(crate::Error::invalid(
            "--current",
            format!(
                "the results hold no measured cell of {id}; measure it with: dedupbench bench --structures {id}"
            ),
        ));
    };
    let bytes_per_key = cell.heap_footprint_bytes as f64 / cell.n_distinct.max(1) as f64;
    let (bytes_at_n, bytes_source) = match crate::analysis::fit_bytes(results, kind.id()) {
        Some(fit) => (
            fit.at(n as f64),
            format!("the line fitted to its {} cells of ≥ 10⁵ keys", fit.points),
        ),
        None => (
            bytes_per_key * n as f64,
            format!(
                "its bytes per key at n = {}",
                crate::units::human_count(cell.n as f64)
            ),
        ),
    };
    Ok(CurrentTool {
        id: kind.id().to_string(),
        measured_at_n: cell.n,
        bytes_per_key,
        insert_ns_per_key: cell.insert_ns_per_key.median,
        query_ns_per_key: cell.member_query_ns_per_key.median,
        observed_fpr: cell.observed_fpr,
        observed_fpr_wilson95: cell.observed_fpr_wilson95,
        bytes_at_n,
        bytes_source,
        fits_budget: bytes_at_n <= workload.memory_bytes as f64,
        measured_at_fpr: results
            .header
            .as_ref()
            .map(|h| h.fpr)
            .filter(|p| (p - workload.fpr).abs() > workload.fpr * 1e-9),
    })
}

pub use crate::analysis::regimes::RATE_TOLERANCE;
/// The most probes the advisor proposes (more costs a cache miss each for a vanishing gain).
pub const MAX_HASHES: u32 = 32;

/// Advises on `workload`; `run` is a bench run's results with a label for the output.
pub fn advise(workload: &Demand, run: Option<(&Results, String)>) -> Result<Advice> {
    workload.validate()?;
    let n = workload.n_high;
    let p = workload.fpr;
    let budget = workload.memory_bytes as f64;
    let sizing = Sizing {
        run: run.as_ref().map(|(r, label)| (*r, label.as_str())),
        fpr: p,
        budget_bytes: budget,
    };
    let measured_speed = |id: &str| -> (Option<f64>, Option<f64>, Option<u64>) {
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
    let bloom_id = crate::registry::role_id(crate::kind::Role::ReferenceBloom);
    let bloom_bytes = advised_kinds()
        .find(|(k, _)| k.id() == bloom_id)
        .map(|(k, a)| sizing.bytes_of(k, &a, n))
        .unwrap_or(0.0);
    let mut key_costs = Vec::new();
    let mut all: Vec<(Candidate, (u8, f64))> = Vec::new();
    let mut thresholds = Vec::new();
    for (order, (kind, advisor)) in workload.weighed_kinds().into_iter().enumerate() {
        let config = advice_config(kind, n, p);
        let size = sizing.of(kind, &advisor, n);
        let at_n = size.bytes_at_n;
        thresholds.push(Threshold {
            id: kind.id(),
            max_n: size.max_n,
        });
        key_costs.extend(size.key_cost);
        let fpr = kind.predicted_fpr(&config);
        let geometry = kind.planned_geometry(&config);
        let mut fails = Vec::new();
        if at_n > budget {
            fails.push(format!(
                "needs {} at {} keys; budget {}",
                human(at_n),
                crate::units::human_count(n as f64),
                human(budget)
            ));
        }
        // The standard sizing rounds k, which can leave the rate a fraction of a percent above p.
        if fpr > p * (1.0 + RATE_TOLERANCE) {
            fails.push(format!(
                "its rate at this size is {}, above the target {}",
                crate::units::human_rate(fpr),
                crate::units::human_rate(p)
            ));
        }
        fails.extend(workload.unmet_by(kind));
        let fits = fails.is_empty();
        let (insert, query, measured_at) = measured_speed(kind.id());
        // Exact sets first, in registry order, while they fit; then the filters the run measured, by
        // their lookup time at this size; then the others by bytes.
        let lookup = run
            .as_ref()
            .and_then(|(r, _)| lookup_ns_at(r, kind.id(), at_n));
        // A lookup time projected past the cells measured is not a ranking (a larger array leaves the
        // caches the cells fitted in).
        let rank = match lookup {
            _ if kind.exact() => (0, order as f64),
            Some((ns, false)) => (1, ns),
            _ => (2, at_n),
        };
        let mut pitch = advisor.pitch.to_string();
        if let Some(needs) = server_needs(kind) {
            pitch.push_str(&format!("; {needs}"));
        }
        if !kind.exact() && kind.id() != bloom_id && bloom_bytes > 0.0 {
            let more = at_n / bloom_bytes - 1.0;
            if more.abs() >= 0.005 {
                pitch.push_str(&format!(
                    "; {:.0}% {} bytes than bloom at this rate",
                    100.0 * more.abs(),
                    if more > 0.0 { "more" } else { "fewer" }
                ));
            }
        }
        if let Some((ns, projected)) = lookup {
            pitch.push_str(&format!(
                "; ranked by its measured non-member lookup, {ns:.0} ns at this size{}",
                if projected {
                    " (a projection past the cells measured)"
                } else {
                    ""
                }
            ));
        }
        all.push((
            Candidate {
                id: kind.id(),
                label: kind.descriptor().label(),
                bits: geometry.bits,
                hashes: geometry.hashes,
                bytes: at_n,
                expected_fpr: fpr,
                insert_ns_per_key: insert,
                query_ns_per_key: query,
                measured_at_n: measured_at,
                reason: if fits { pitch } else { fails.join("; ") },
                fits,
            },
            rank,
        ));
    }
    all.sort_by(|a, b| a.1 .0.cmp(&b.1 .0).then(a.1 .1.total_cmp(&b.1 .1)));
    let (recommended, rejected): (Vec<Candidate>, Vec<Candidate>) =
        all.into_iter().map(|(c, _)| c).partition(|c| c.fits);

    let budget_bits = budget * 8.0;
    let mut best = BloomSizing::for_bits(n, (budget_bits as u64).max(1));
    best.hashes = best.hashes.min(MAX_HASHES);
    let target = BloomSizing::for_rate(n, p);
    let mut notes: Vec<String> = key_costs
        .iter()
        .map(|c| format!("{} bytes per key: {}", c.id, c.source))
        .collect();
    if run.is_none() {
        notes.push(
            "no --results given: sizes from theory and the built-in model; no throughput is quoted"
                .into(),
        );
    }
    if workload.shared {
        notes.push(
            "shared across processes: the structures weighed are those on a Redis server, and the sizes are what each \
holds on the server (redis-bloom: BF.RESERVE with this capacity and rate); `bench --suite redis --redis URL` measures them"
                .into(),
        );
    }
    if workload.workload == crate::workload::Workload::Shipped {
        let unsaved: Vec<String> = advised_kinds()
            .filter(|(k, _)| k.descriptor().peer() && !k.descriptor().supports(Operation::Save))
            .map(|(k, _)| k.id().to_string())
            .collect();
        notes.push(format!(
            "shipped: only structures this workbench can save and load are weighed; the peers {} (some of whose crates serialize by their own means, xorf's and qfilter's through serde) are not",
            unsaved.join(", ")
        ));
    }
    if recommended.is_empty() {
        notes.push(format!(
            "no structure meets every constraint: in {} a Bloom filter reaches at best {:.3e} (k = {}) at {} keys; the target {} needs {}",
            human(budget),
            best.fpr(n),
            best.hashes,
            crate::units::human_count(n as f64),
            p,
            human(target.bytes() as f64)
        ));
    }
    // The ladder climbs the structures in this process before the last rung; shared, that rung is Redis.
    let ladder = if workload.shared {
        ladder(&sizing.thresholds(n), workload)
    } else {
        ladder(&thresholds, workload)
    };
    let overshoot = overshoot(&recommended, n, p);
    Ok(Advice {
        overshoot,
        workload: workload.clone(),
        key_costs,
        recommended,
        rejected,
        thresholds,
        best_fpr_in_budget: best.fpr(n),
        best_hashes_in_budget: best.hashes,
        bloom_bytes_for_target: target.bytes() as f64,
        ladder,
        notes,
        current: None,
        nodes: None,
        speed_ratios: Vec::new(),
        cost: None,
        rates: None,
        fleet: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workload(n: u64, memory: u64) -> Demand {
        Demand::new(n, 0.01, memory, Default::default())
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
    fn overshoot_follows_the_bloom_formula_past_the_planned_n() {
        let a = advise(&workload(50_000_000, 1 << 30), None).unwrap();
        let o = a.overshoot.expect("a filter is recommended");
        assert_eq!(o.id, "bloom");
        let (m, k) = (479_252_919f64, 7i32);
        for (factor, rate) in &o.rates {
            let n = 50e6 * factor;
            let want = (1.0 - (-(k as f64) * n / m).exp()).powi(k);
            assert!(
                (rate / want - 1.0).abs() < 1e-6,
                "{factor}: {rate} vs {want}"
            );
        }
        // A quarter more keys than planned takes 1% to 2.8%; five times, to 83%.
        assert!((o.rates[0].1 - 0.0276).abs() < 5e-4, "{:?}", o.rates);
        assert!(o.rates[2].1 > 0.8, "{:?}", o.rates);
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
        let blocked = a.rejected.iter().find(|c| c.id == "blocked").unwrap().bytes / 1e9;
        assert!((blocked - 7.57).abs() < 0.05, "{blocked}");
        assert!(a.notes.iter().any(|n| n.contains("no structure meets")));
    }

    /// Deletions get the smallest deleting filter (ours or a peer's), or the exact set; never a Bloom
    /// filter.
    #[test]
    fn deletions_get_a_filter_of_at_most_16_bits_per_key_or_the_exact_set_never_bloom() {
        // 50M keys at 1% in 256 MiB: the exact fingerprint set (576 MiB) does not fit.
        let mut w = workload(50_000_000, 256 << 20);
        w.deletes = true;
        let a = advise(&w, None).unwrap();
        let first = &a.recommended[0];
        let kind = crate::registry::find(first.id).unwrap();
        assert!(kind.removable() && !kind.exact(), "{first:?}");
        assert!(first.bytes * 8.0 / 50e6 <= 16.0, "{first:?}");
        assert!(first.expected_fpr <= 0.01, "{first:?}");
        assert!(a.recommended.iter().all(|c| c.id != "bloom"));
        assert!(a
            .rejected
            .iter()
            .any(|c| c.id == "bloom" && c.reason.contains("cannot delete")));
        let small = advise(
            &Demand {
                deletes: true,
                ..workload(100_000, 1 << 30)
            },
            None,
        )
        .unwrap();
        assert_eq!(small.recommended[0].id, "hashset");
    }

    #[test]
    fn a_blocklist_gets_a_static_filter_and_a_crawl_never_does() {
        let blocklist = Demand {
            workload: crate::workload::Workload::Blocklist,
            ..workload(50_000_000, 256 << 20)
        };
        let a = advise(&blocklist, None).unwrap();
        let first = crate::registry::find(a.recommended[0].id).unwrap();
        assert_eq!(
            first.descriptor().family,
            crate::kind::Family::StaticFilter,
            "{:?}",
            a.recommended[0]
        );
        let crawl = advise(&workload(50_000_000, 256 << 20), None).unwrap();
        for c in &crawl.recommended {
            let kind = crate::registry::find(c.id).unwrap();
            assert!(kind.capabilities().dynamic, "{c:?}");
        }
        assert!(crawl
            .rejected
            .iter()
            .any(|c| c.reason.contains("cannot insert-if-new")));
    }

    #[test]
    fn unknown_growth_gets_the_scalable_filter() {
        let w = Demand {
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
            &Demand {
                fpr: 1.5,
                ..workload(10, 100)
            },
            None
        )
        .is_err());
        assert!(advise(
            &Demand {
                n_low: 0,
                ..workload(10, 100)
            },
            None
        )
        .is_err());
        assert!(advise(&workload(10, 0), None).is_err());
        assert!(advise(
            &Demand {
                n_low: 20,
                n_high: 10,
                ..workload(10, 100)
            },
            None
        )
        .is_err());
    }
}

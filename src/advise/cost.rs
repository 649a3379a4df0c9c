//! The cost model: the rate a user should ask for follows from what a false positive costs. For a
//! non-member lookup (the only lookup a false positive can hit), the expected cost is
//!
//! cost = lookup time + rate × fp-cost
//!
//! (Lang, Neumann, Kemper, Boncz, "Performance-Optimal Filtering: Bloom Overtakes Cuckoo at High
//! Throughput", PVLDB 12(5), 2019: overhead per lookup = lookup time + f × t_w, t_w the work a false
//! positive triggers). Every contender that serves the workload is tried at every size its models give
//! for a rate on [`RATE_GRID`] that fits the budget; the cheapest size of each is kept and the contenders
//! are ranked by it.
//!
//! Lookup time at a size is read from a bench run: the median non-member lookup of the kind's cells,
//! interpolated on log bytes between the two cells nearest in bytes (a larger array misses more cache),
//! projected outside them: past the largest cell along the line through its two largest cells (on log
//! bytes, never falling: a larger array is not faster), held at the smallest cell's figure below it, and
//! held at the one cell's figure when the run measured one. Such a size is flagged as a projection (one
//! cell's figure flatters a larger array). The run measured each kind at its own p; a non-member lookup stops at the first
//! unset bit or empty slot, so its time depends little on the k or fingerprint width another p brings,
//! and the run's figure is used for every size: an approximation, stated here. Without a run, or for a kind it did not measure, only the
//! rate term is counted, and the answer says so: the largest size in the budget then always wins.

use super::Demand;
use crate::analysis::regimes::{advice_config, advised_kinds, Sizing};
use crate::kind::Kind;
use crate::results::Results;
use serde::Serialize;

/// The rates each contender is sized for: 10^-0.3 (≈ 0.5) down to 10^-12, 20 steps per decade.
pub const RATE_GRID: std::ops::RangeInclusive<u32> = 6..=240;

/// The rate at a step of [`RATE_GRID`].
fn grid_rate(step: u32) -> f64 {
    10f64.powf(-f64::from(step) / 20.0)
}

/// One contender at its cheapest size.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Costed {
    pub id: &'static str,
    /// The id, with crate and version for a peer.
    pub label: String,
    /// The rate it was sized for, and the rate its model gives at that size.
    pub sized_for_fpr: f64,
    pub fpr: f64,
    #[serde(serialize_with = "crate::units::serde_bytes::serialize")]
    pub bytes: f64,
    pub bits_per_key: f64,
    /// The measured lookup time at that size, when the run measured the kind.
    pub lookup_ns: Option<f64>,
    /// Whether the size lies outside the measured cells' bytes, so the lookup time is the nearest end
    /// cell's.
    pub lookup_beyond_measured: bool,
    /// lookup time (0 when unmeasured) + rate × fp-cost.
    pub cost_ns: f64,
}

/// The cost model's answer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CostAnswer {
    pub fp_cost_ns: f64,
    /// Best first.
    pub ranked: Vec<Costed>,
    /// With a run: the contenders it did not measure (their rate term alone, not ranked with the others).
    pub unmeasured: Vec<Costed>,
    /// Where the lookup times come from, or that only the rate term was used.
    pub lookup_source: String,
}

/// Non-member lookup time of `id` at `bytes`, from the run's cells, and whether `bytes` lies outside
/// them (by more than a quarter).
pub fn lookup_ns_at(results: &Results, id: &str, bytes: f64) -> Option<(f64, bool)> {
    let mut points: Vec<(f64, f64)> = results
        .cells
        .iter()
        .filter(|c| c.structure == id && c.heap_footprint_bytes > 0)
        .map(|c| {
            (
                (c.heap_footprint_bytes as f64).ln(),
                c.non_member_query_ns_per_key.median,
            )
        })
        .filter(|(_, ns)| ns.is_finite() && *ns > 0.0)
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (first, last) = (points.first()?, points.last()?);
    let x = bytes.max(1.0).ln();
    let margin = 1.25f64.ln();
    if x <= first.0 {
        return Some((first.1, x < first.0 - margin));
    }
    if x >= last.0 {
        let slope = match points.len() {
            0 | 1 => 0.0,
            len => {
                let before = points[len - 2];
                if last.0 > before.0 {
                    ((last.1 - before.1) / (last.0 - before.0)).max(0.0)
                } else {
                    0.0
                }
            }
        };
        return Some((last.1 + slope * (x - last.0), x > last.0 + margin));
    }
    let upper = points.iter().position(|p| p.0 >= x)?;
    let (a, b) = (points[upper - 1], points[upper]);
    let t = if b.0 > a.0 {
        (x - a.0) / (b.0 - a.0)
    } else {
        0.0
    };
    Some((a.1 + t * (b.1 - a.1), false))
}

/// A kind's lookup time at a size in bytes, and whether that size is outside what was measured.
type LookupAt<'a> = &'a dyn Fn(&str, f64) -> Option<(f64, bool)>;

/// The cheapest size of `kind` for `demand` at `fp_cost_ns`, or `None` when no size fits the budget.
fn cheapest(
    kind: &dyn Kind,
    advisor: &crate::kind::Advisor,
    demand: &Demand,
    fp_cost_ns: f64,
    lookup: LookupAt<'_>,
    run: Option<(&Results, &str)>,
) -> Option<Costed> {
    let n = demand.n_high;
    let budget = demand.memory_bytes as f64;
    RATE_GRID
        .filter_map(|step| {
            let p = grid_rate(step);
            let sizing = Sizing {
                run,
                fpr: p,
                budget_bytes: budget,
            };
            let bytes = sizing.bytes_of(kind, advisor, n);
            if bytes > budget {
                return None;
            }
            let fpr = kind.predicted_fpr(&advice_config(kind, n, p));
            let measured = lookup(kind.id(), bytes);
            let lookup_ns = measured.map(|(ns, _)| ns);
            Some(Costed {
                lookup_beyond_measured: measured.is_some_and(|(_, beyond)| beyond),
                id: kind.id(),
                label: kind.descriptor().label(),
                sized_for_fpr: p,
                fpr,
                bytes,
                bits_per_key: bytes * 8.0 / n as f64,
                lookup_ns,
                cost_ns: lookup_ns.unwrap_or(0.0) + fpr * fp_cost_ns,
            })
        })
        .min_by(|a, b| {
            a.cost_ns
                .total_cmp(&b.cost_ns)
                .then(a.bytes.total_cmp(&b.bytes))
        })
}

/// Every contender that serves `demand`, at its cheapest size within the budget, cheapest first.
pub fn costs(demand: &Demand, fp_cost_ns: f64, run: Option<(&Results, &str)>) -> CostAnswer {
    let lookup = |id: &str, bytes: f64| run.and_then(|(r, _)| lookup_ns_at(r, id, bytes));
    let mut ranked: Vec<Costed> = advised_kinds()
        .filter(|(k, _)| demand.served_by(*k, demand.growth_unknown))
        .filter_map(|(k, advisor)| cheapest(k, &advisor, demand, fp_cost_ns, &lookup, run))
        .collect();
    ranked.sort_by(|a, b| a.cost_ns.total_cmp(&b.cost_ns));
    // With a run, a contender it did not measure would pay no lookup time: it is set apart, not ranked.
    let unmeasured: Vec<Costed> = if run.is_some() {
        let (measured, unmeasured): (Vec<Costed>, Vec<Costed>) =
            ranked.into_iter().partition(|c| c.lookup_ns.is_some());
        ranked = measured;
        unmeasured
    } else {
        Vec::new()
    };
    let lookup_source = match run {
        Some((_, label)) => format!(
            "lookup times: median non-member lookups measured in {label}, interpolated on log bytes between the cells nearest in size"
        ),
        None => "no --results given: only the rate term (rate × fp-cost) is counted, so every contender takes the largest size in the budget; give a bench run to weigh lookup time".into(),
    };
    CostAnswer {
        fp_cost_ns,
        ranked,
        unmeasured,
        lookup_source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::theory::BloomSizing;

    fn demand(n: u64, memory: u64) -> Demand {
        Demand::new(n, 0.01, memory, Default::default())
    }

    /// A made-up lookup time for the test (not a measurement): a constant, plus a rise per e-fold of
    /// the array's bytes past e¹⁰, so that a larger filter costs more to look up.
    fn lookup_ns(bytes: f64) -> f64 {
        48.0 + 3.0 * (bytes.ln() - 10.0).max(0.0)
    }

    #[test]
    fn the_optimum_matches_a_brute_force_search_over_sizes() {
        // The reference Bloom filter, with a lookup time that grows with its bytes: the grid's cheapest
        // size against every bit count from 1 to 40 bits per key in steps of 1/64 bit.
        let n = 1_000_000u64;
        let d = demand(n, 8 << 20);
        let bloom = crate::registry::role(crate::kind::Role::ReferenceBloom);
        let advisor = bloom.advisor().unwrap();
        for fp_cost_ns in [50.0, 2_000.0, 1e6] {
            let lookup = |_: &str, bytes: f64| Some((lookup_ns(bytes), false));
            let grid = cheapest(bloom, &advisor, &d, fp_cost_ns, &lookup, None).unwrap();
            let brute = (64..=40 * 64)
                .map(|sixty_fourths| {
                    let bits = n * sixty_fourths / 64;
                    let sizing = BloomSizing::for_bits(n, bits);
                    let k = sizing.hashes.min(crate::advise::MAX_HASHES);
                    let rate = BloomSizing { bits, hashes: k }.fpr(n);
                    let cost = lookup_ns(bits as f64 / 8.0) + rate * fp_cost_ns;
                    (cost, sixty_fourths as f64 / 64.0)
                })
                .fold((f64::INFINITY, 0.0), |a, b| if b.0 < a.0 { b } else { a });
            // The grid can only do as well as the finer search, and no worse than 10⁻⁴ of it: the
            // rate term is 1–5% of the cost here, so a term weighed wrongly moves it by more.
            assert!(
                grid.cost_ns <= brute.0 * (1.0 + 1e-4) && grid.cost_ns >= brute.0 * (1.0 - 1e-9),
                "fp-cost {fp_cost_ns}: grid {} vs brute force {}",
                grid.cost_ns,
                brute.0
            );
            assert!(
                (grid.bits_per_key / brute.1 - 1.0).abs() < 0.05,
                "fp-cost {fp_cost_ns}: grid {} bits per key vs brute force {}",
                grid.bits_per_key,
                brute.1
            );
        }
    }

    /// Three bloom cells from a fixture, their bytes and lookup times set: between them the line on log
    /// bytes, below the first its figure, past the last the line through the last two, never falling.
    #[test]
    fn lookup_time_follows_the_cells_and_is_projected_past_them() {
        let fixture = include_str!("../../tests/fixtures/skips-and-scenario/results.jsonl");
        let template = fixture
            .lines()
            .find_map(|line| match serde_json::from_str(line) {
                Ok(crate::results::Line {
                    record: crate::results::Record::Cell(c),
                    ..
                }) if c.structure == "bloom" => Some(c),
                _ => None,
            })
            .expect("the fixture has a bloom cell");
        let mut r = Results::default();
        for (bytes, ns) in [(1e3, 10.0), (1e5, 20.0), (1e7, 40.0)] {
            let mut c = template.clone();
            c.heap_footprint_bytes = bytes as i64;
            c.non_member_query_ns_per_key.median = ns;
            r.cells.push(c);
        }
        let at = |r: &Results, bytes: f64| lookup_ns_at(r, "bloom", bytes).unwrap();
        assert_eq!(at(&r, 1e3), (10.0, false));
        assert!((at(&r, 1e4).0 - 15.0).abs() < 1e-9, "{:?}", at(&r, 1e4));
        assert_eq!(at(&r, 10.0), (10.0, true));
        // Past 10⁷: 20 ns per factor 100, so 10⁹ bytes costs 60 ns, flagged.
        let (ns, projected) = at(&r, 1e9);
        assert!((ns - 60.0).abs() < 1e-9 && projected, "{ns}");
        // A last cell faster than the one before is held, not extended downwards.
        r.cells[2].non_member_query_ns_per_key.median = 15.0;
        assert_eq!(at(&r, 1e9).0, 15.0);
        assert!(lookup_ns_at(&r, "blocked", 1e6).is_none());
        // A run that measured bloom alone ranks bloom alone: the others would pay no lookup time.
        let d = Demand::new(
            1_000_000,
            0.01,
            4 << 20,
            crate::workload::Workload::Blocklist,
        );
        let answer = costs(&d, 1e4, Some((&r, "a run")));
        let ranked: Vec<&str> = answer.ranked.iter().map(|c| c.id).collect();
        assert_eq!(ranked, ["bloom"]);
        assert!(answer.unmeasured.iter().any(|c| c.id == "binary-fuse8"));
    }

    #[test]
    fn a_dear_false_positive_buys_a_lower_rate_and_without_a_run_the_budget_is_spent() {
        let d = Demand::new(
            1_000_000,
            0.01,
            4 << 20,
            crate::workload::Workload::Blocklist,
        );
        let answer = costs(&d, 1e6, None);
        assert!(answer.lookup_source.contains("only the rate term"));
        for c in &answer.ranked {
            assert!(c.bytes <= (4 << 20) as f64, "{c:?}");
        }
        let best = &answer.ranked[0];
        assert!(best.fpr < 1e-3, "{best:?}");
    }
}

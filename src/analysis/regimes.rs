//! The regimes of a budget: where each structure the advisor weighs stops fitting (from its model, or
//! from the line fitted to a run's measured bytes where the model depends on the keys), and the ladder
//! exact strings → 64-bit fingerprints → a filter → beyond one machine. `advise` and the report's
//! regime figure read the same thresholds.

use super::fit::measured_line;
use crate::kind::{Advisor, BuildConfig, Kind};
use crate::registry::REGISTRY;
use crate::results::Results;
use crate::workload::{Operation, Workload};
use crate::{Error, Result};
use serde::Serialize;

/// What the user needs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Demand {
    /// Smallest and largest expected distinct keys (equal for a single n).
    pub n_low: u64,
    pub n_high: u64,
    pub fpr: f64,
    pub memory_bytes: u64,
    pub deletes: bool,
    pub growth_unknown: bool,
    pub shared: bool,
    /// What the structure will be asked to do (a crawl unless told).
    pub workload: Workload,
}

impl Demand {
    /// `n` keys of `workload` at rate `fpr` in `memory_bytes`: no deletes beyond the workload's, bounded
    /// growth, not shared.
    pub fn new(n: u64, fpr: f64, memory_bytes: u64, workload: Workload) -> Demand {
        Demand {
            n_low: n,
            n_high: n,
            fpr,
            memory_bytes,
            deletes: false,
            growth_unknown: false,
            shared: false,
            workload,
        }
    }

    /// Whether `kind` can serve it: the workload's operations, deletion when it deletes, growth when
    /// `growth` is asked (the ladder falls back to fixed-size filters when none that grows deletes).
    pub fn served_by(&self, kind: &dyn Kind, growth: bool) -> bool {
        kind.descriptor().serves(self.workload)
            && (!self.deletes || kind.removable())
            && (!growth || kind.growable())
    }

    /// The kinds it weighs: those on a Redis server when it is shared, else those in this process.
    pub fn weighed_kinds(&self) -> Vec<(&'static dyn Kind, Advisor)> {
        if self.shared {
            shared_kinds().collect()
        } else {
            advised_kinds().collect()
        }
    }

    /// Why `kind` cannot serve it, one phrase per missing operation (empty when it can).
    pub fn unmet_by(&self, kind: &dyn Kind) -> Vec<String> {
        let d = kind.descriptor();
        let mut unmet: Vec<String> = self
            .workload
            .needs()
            .iter()
            .filter(|op| !d.supports(**op))
            .map(|op| format!("cannot {} ({} needs it)", op.words(), self.workload))
            .collect();
        if d.capabilities.expires && !self.workload.forgets() {
            unmet.push(format!(
                "forgets keys after its window ({} keeps them)",
                self.workload
            ));
        }
        if self.deletes && !d.supports(Operation::Delete) {
            unmet.push("cannot delete keys".into());
        }
        if self.growth_unknown && !d.supports(Operation::Grow) {
            unmet.push(
                "fixed size: its rate climbs past its capacity when growth is unknown".into(),
            );
        }
        unmet
    }

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

/// Bytes per key of a structure whose model depends on the keys (the exact set of strings): a line
/// bytes = intercept + per key · n, and where it comes from.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KeyCost {
    pub id: &'static str,
    pub bytes_per_key: f64,
    #[serde(serialize_with = "crate::units::serde_bytes::serialize")]
    pub intercept_bytes: f64,
    /// "fitted to … measured cells in <run>", "measured in <run> …" or "model (…)".
    pub source: String,
}

impl KeyCost {
    fn at(&self, n: f64) -> f64 {
        self.intercept_bytes + self.bytes_per_key * n
    }
}

/// The configuration the advice sizes `kind` with for `n` keys at rate `p`.
pub fn advice_config(kind: &dyn Kind, n: u64, p: f64) -> BuildConfig {
    let mut config = BuildConfig::new(n.max(1), p, 0);
    if let Some(size) = kind.advisor().and_then(|a| a.size_for_advice) {
        size(&mut config);
    }
    config
}

/// Relative slack on the target rate: the standard sizing with k rounded to an integer lands within it.
pub const RATE_TOLERANCE: f64 = 0.01;

/// Whether `kind`, sized for `n` keys at `p`, reaches `p` (a peer whose fingerprints are fixed, a
/// binary fuse filter's 2⁻⁸ or the cuckoofilter crate's 8 bits, cannot reach every rate).
pub fn meets_rate(kind: &dyn Kind, n: u64, p: f64) -> bool {
    kind.predicted_fpr(&advice_config(kind, n, p)) <= p * (1.0 + RATE_TOLERANCE)
}

/// The kinds the advisor weighs, in registry order: every kind in this process, ours and the peer
/// crates' (a peer without advice of its own is pitched by its summary and sized by its models).
pub fn advised_kinds() -> impl Iterator<Item = (&'static dyn Kind, Advisor)> {
    REGISTRY
        .iter()
        .filter(|k| k.descriptor().in_process())
        .map(|k| {
            let advisor = k.advisor().unwrap_or(Advisor {
                pitch: k.summary(),
                rung: k.summary(),
                prefers_measured_bytes: false,
                size_for_advice: None,
            });
            (*k, advisor)
        })
}

/// The kinds a shared filter can be, in registry order: ours on a Redis server, each pitched by its
/// summary ([`server_needs`] says what the server needs).
pub fn shared_kinds() -> impl Iterator<Item = (&'static dyn Kind, Advisor)> {
    REGISTRY
        .iter()
        .filter(|k| {
            matches!(
                k.descriptor().placement,
                crate::kind::Placement::OurServer(_)
            )
        })
        .map(|k| {
            (
                *k,
                Advisor {
                    pitch: k.summary(),
                    rung: k.summary(),
                    prefers_measured_bytes: false,
                    size_for_advice: None,
                },
            )
        })
}

/// What the Redis server must have loaded for a kind that lives on one (None for any other kind).
pub fn server_needs(kind: &dyn Kind) -> Option<String> {
    match kind.descriptor().placement {
        crate::kind::Placement::OurServer(server) => Some(match server.module {
            Some(module) => {
                format!("needs the RedisBloom module on every node (`{module}` in MODULE LIST)")
            }
            None => "plain Redis, no module".into(),
        }),
        _ => None,
    }
}

/// How big each advised kind is at any n, for one rate and budget.
pub struct Sizing<'a> {
    /// A bench run's results and its label, whose measurements replace models that depend on keys.
    pub run: Option<(&'a Results, &'a str)>,
    pub fpr: f64,
    pub budget_bytes: f64,
}

/// One kind's size: its bytes at the workload's n and the largest n within the budget.
pub struct KindSize {
    pub bytes_at_n: f64,
    pub max_n: f64,
    /// The line used, for kinds whose model depends on the keys.
    pub key_cost: Option<KeyCost>,
}

impl Sizing<'_> {
    /// The line charged to `kind` when its model depends on the keys: the run's measured line, else
    /// the model's bytes per key at `n`.
    fn key_cost(&self, kind: &dyn Kind, advisor: &Advisor, n: u64) -> Option<KeyCost> {
        if !advisor.prefers_measured_bytes {
            return None;
        }
        let measured = self
            .run
            .and_then(|(results, label)| measured_line(results, kind.id()).map(|l| (l, label)));
        Some(match measured {
            Some((line, label)) => KeyCost {
                id: kind.id(),
                bytes_per_key: line.bytes_per_key,
                intercept_bytes: line.intercept_bytes,
                source: if line.points > 1 {
                    format!(
                        "fitted to {} measured cells of ≥ 10⁵ keys in {label}",
                        line.points
                    )
                } else {
                    format!("measured in {label} (its largest cell)")
                },
            },
            None => KeyCost {
                id: kind.id(),
                bytes_per_key: kind
                    .predicted_memory(&advice_config(kind, n, self.fpr))
                    .footprint_bytes
                    / n.max(1) as f64,
                intercept_bytes: 0.0,
                source: "model (hashbrown layout, 77-byte URLs)".into(),
            },
        })
    }

    /// The size of `kind` for `n` keys; a kind that cannot reach the rate holds no keys at it.
    pub fn of(&self, kind: &dyn Kind, advisor: &Advisor, n: u64) -> KindSize {
        let model_bytes = |k: u64| {
            kind.predicted_memory(&advice_config(kind, k, self.fpr))
                .footprint_bytes
        };
        if !meets_rate(kind, n, self.fpr) {
            return KindSize {
                bytes_at_n: model_bytes(n),
                max_n: 0.0,
                key_cost: None,
            };
        }
        match self.key_cost(kind, advisor, n) {
            Some(cost) => KindSize {
                bytes_at_n: cost.at(n as f64),
                max_n: (self.budget_bytes - cost.intercept_bytes) / cost.bytes_per_key,
                key_cost: Some(cost),
            },
            None => KindSize {
                bytes_at_n: model_bytes(n),
                max_n: largest_n(self.budget_bytes, model_bytes),
                key_cost: None,
            },
        }
    }

    /// The bytes of `kind` for `n` keys alone (cheaper than [`Sizing::of`], which also searches the
    /// largest n within the budget); without limit for a kind that cannot reach the rate.
    pub fn bytes_of(&self, kind: &dyn Kind, advisor: &Advisor, n: u64) -> f64 {
        if !meets_rate(kind, n, self.fpr) {
            return f64::INFINITY;
        }
        match self.key_cost(kind, advisor, n) {
            Some(cost) => cost.at(n as f64),
            None => {
                kind.predicted_memory(&advice_config(kind, n, self.fpr))
                    .footprint_bytes
            }
        }
    }

    /// Where every advised kind stops fitting the budget.
    pub fn thresholds(&self, n: u64) -> Vec<Threshold> {
        advised_kinds()
            .map(|(kind, advisor)| Threshold {
                id: kind.id(),
                max_n: self.of(kind, &advisor, n).max_n,
            })
            .collect()
    }
}

pub use crate::theory::largest_n;

/// The regime ladder for the budget: the exact sets in registry order, then the filter the workload
/// calls for (removable if it deletes, growable if its growth is unknown; the one that fits the most
/// keys), then beyond one machine.
pub fn ladder(thresholds: &[Threshold], workload: &Demand) -> Vec<Rung> {
    let max_n = |id: &str| {
        thresholds
            .iter()
            .find(|t| t.id == id)
            .map(|t| t.max_n)
            .unwrap_or(0.0)
    };
    let filters: Vec<(&dyn Kind, Advisor)> = advised_kinds().filter(|(k, _)| !k.exact()).collect();
    // The first in registry order among equals: ours before a peer that matches it.
    let pick = |growth: bool| {
        filters
            .iter()
            .filter(|(k, _)| workload.served_by(*k, growth))
            .fold(None, |best: Option<&(&dyn Kind, Advisor)>, c| match best {
                Some(b) if max_n(b.0.id()) >= max_n(c.0.id()) => Some(b),
                _ => Some(c),
            })
            .copied()
    };
    // A workload that both deletes and grows gets the deleting filter: deletes cannot be emulated,
    // growth can (rebuild larger).
    let filter = pick(workload.growth_unknown).or_else(|| pick(false));
    let mut rungs = Vec::new();
    let mut from = 1.0;
    for (kind, advisor) in advised_kinds()
        .filter(|(k, _)| k.exact() && workload.served_by(*k, false))
        .chain(filter)
    {
        let to = max_n(kind.id());
        if to > from {
            rungs.push(Rung {
                id: kind.id().to_string(),
                from_n: from,
                to_n: Some(to),
                why: advisor.rung.to_string(),
            });
            from = to;
        }
    }
    rungs.push(Rung {
        id: if workload.shared { "shared store (Redis) or sharding".into() } else { "beyond one budget".into() },
        from_n: from,
        to_n: None,
        why: format!("no in-memory structure meets p = {} in the budget: shard, share a server-side filter, or accept a higher rate", crate::units::human_rate(workload.fpr)),
    });
    rungs
}

/// The demand a bench run answers: its workload, largest scale, rate and budget, bounded growth (a
/// cache guard's deletes come with its workload).
pub fn run_workload(r: &Results) -> Option<Demand> {
    let h = r.header.as_ref()?;
    let n = h.scales.iter().copied().max().unwrap_or(1_000_000);
    Some(Demand {
        n_low: n,
        n_high: n,
        fpr: h.fpr,
        memory_bytes: h.memory_budget_bytes.max(1),
        deletes: false,
        growth_unknown: false,
        shared: false,
        workload: h.workload,
    })
}

/// The regime ladder of a run's budget and rate at its largest scale, with its measured bytes.
pub fn run_ladder(r: &Results) -> Option<Vec<Rung>> {
    let h = r.header.as_ref()?;
    let workload = run_workload(r)?;
    let n = workload.n_high;
    workload.validate().ok()?;
    let sizing = Sizing {
        run: Some((r, "this run")),
        fpr: h.fpr,
        budget_bytes: h.memory_budget_bytes as f64,
    };
    Some(ladder(&sizing.thresholds(n), &workload))
}

/// Memory of one server node the regime map and the answer assume for a shared filter (a common large
/// cloud instance), past which the filter must be sharded.
pub const NODE_MEMORY_BYTES: u64 = 64 << 30;

/// Where a workload lands on the ladder: an in-process structure, one shared server, or a cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Regime {
    /// The registered structure the ladder picks within the budget.
    InProcess(&'static str),
    /// Past the budget: a filter on one shared server (`redis-bloom`), which fits a node.
    SharedServer,
    /// Past one node: a filter sharded over a cluster (not yet measured by dedupbench).
    Cluster,
    /// Past the budget for a workload that deletes: no server-side structure here deletes (RedisBloom's
    /// Bloom filters cannot).
    NothingDeletes,
}

impl Regime {
    /// The words a legend or a table uses.
    pub fn label(self) -> String {
        match self {
            Regime::InProcess(id) => id.to_string(),
            Regime::SharedServer => format!(
                "shared server ({})",
                crate::registry::role_id(crate::kind::Role::SharedBloom)
            ),
            Regime::Cluster => "sharded cluster (not measured here)".into(),
            Regime::NothingDeletes => "nothing here deletes past the budget".into(),
        }
    }
}

/// Every advised kind's bytes at `n` (the run's measured line where the model depends on the keys):
/// what [`regime_of`] decides from.
pub fn bytes_at(sizing: &Sizing, n: u64) -> Vec<(&'static dyn Kind, f64)> {
    advised_kinds()
        .map(|(kind, advisor)| (kind, sizing.bytes_of(kind, &advisor, n)))
        .collect()
}

/// The regime of `n` keys within `budget_bytes`, given every advised kind's bytes at n: the first exact
/// set that fits (registry order), else the workload's filter if it fits: as in [`ladder`], the filter is
/// chosen among those the workload can use (removable if it deletes, growable if its growth is unknown,
/// falling back to fixed-size ones only when no growable kind deletes), the one holding the most keys
/// (the fewest bytes at n); past those, a shared server while a Bloom filter for n at the rate fits
/// `node_memory_bytes`, else a cluster; a workload that deletes gets no server (RedisBloom's Bloom
/// filters cannot delete). The ladder's rungs, read at one n.
pub fn regime_of(
    bytes: &[(&'static dyn Kind, f64)],
    budget_bytes: f64,
    workload: &Demand,
    n: u64,
    node_memory_bytes: u64,
) -> Regime {
    let fits = |b: f64| b <= budget_bytes;
    if let Some((kind, _)) = bytes
        .iter()
        .find(|(k, b)| k.exact() && workload.served_by(*k, false) && fits(*b))
    {
        return Regime::InProcess(kind.id());
    }
    let wanted = |k: &dyn Kind, growth: bool| !k.exact() && workload.served_by(k, growth);
    let smallest = |growth: bool| {
        bytes
            .iter()
            .filter(|(k, _)| wanted(*k, growth))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    };
    if let Some((kind, b)) = smallest(workload.growth_unknown).or_else(|| smallest(false)) {
        if fits(*b) {
            return Regime::InProcess(kind.id());
        }
    }
    if workload.deletes {
        return Regime::NothingDeletes;
    }
    let server_bytes = crate::theory::BloomSizing::for_rate(n.max(1), workload.fpr).bytes();
    if server_bytes <= node_memory_bytes {
        Regime::SharedServer
    } else {
        Regime::Cluster
    }
}

/// The regime of `n` keys under `sizing`'s rate and budget ([`regime_of`]).
pub fn regime_at(sizing: &Sizing, workload: &Demand, n: u64, node_memory_bytes: u64) -> Regime {
    let workload = Demand {
        fpr: sizing.fpr,
        ..workload.clone()
    };
    regime_of(
        &bytes_at(sizing, n),
        sizing.budget_bytes,
        &workload,
        n,
        node_memory_bytes,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workload(fpr: f64) -> Demand {
        Demand {
            n_low: 1,
            n_high: 1,
            fpr,
            memory_bytes: 1,
            deletes: false,
            growth_unknown: false,
            shared: false,
            workload: Default::default(),
        }
    }

    #[test]
    fn one_gib_climbs_the_whole_ladder_as_n_grows() {
        let sizing = Sizing {
            run: None,
            fpr: 0.01,
            budget_bytes: (1u64 << 30) as f64,
        };
        let at = |n: u64| regime_at(&sizing, &workload(0.01), n, NODE_MEMORY_BYTES);
        assert_eq!(at(1_000_000), Regime::InProcess("hashset"));
        assert_eq!(at(50_000_000), Regime::InProcess("fingerprint"));
        assert_eq!(at(500_000_000), Regime::InProcess("bloom"));
        // 6·10⁹ at 1% needs 7.2 GB: past the budget, within one 64 GiB node.
        assert_eq!(at(6_000_000_000), Regime::SharedServer);
        // 10¹¹ needs 120 GB: past one node.
        assert_eq!(at(100_000_000_000), Regime::Cluster);
    }

    #[test]
    fn the_regime_agrees_with_the_ladder_of_thresholds() {
        let budget = (1u64 << 30) as f64;
        let sizing = Sizing {
            run: None,
            fpr: 0.01,
            budget_bytes: budget,
        };
        let w = workload(0.01);
        for n in [
            10_000u64,
            3_000_000,
            9_000_000,
            40_000_000,
            300_000_000,
            800_000_000,
        ] {
            let rungs = ladder(&sizing.thresholds(n), &w);
            let rung = rungs
                .iter()
                .find(|r| r.to_n.is_some_and(|to| n as f64 <= to))
                .map(|r| r.id.clone());
            let regime = regime_at(&sizing, &w, n, NODE_MEMORY_BYTES);
            match rung {
                Some(id) => assert_eq!(
                    regime,
                    Regime::InProcess(crate::registry::find(&id).unwrap().id()),
                    "n = {n}"
                ),
                None => assert_eq!(regime, Regime::SharedServer, "n = {n}"),
            }
        }
    }

    #[test]
    fn the_regime_agrees_with_the_ladder_on_both_sides_of_every_crossover() {
        let sizing = Sizing {
            run: None,
            fpr: 0.01,
            budget_bytes: (1u64 << 30) as f64,
        };
        // The ladder's rung holding n, from thresholds computed at n (the exact set's bytes per key
        // depend on n).
        let rung_at = |w: &Demand, n: u64| -> Regime {
            let rungs = ladder(&sizing.thresholds(n), w);
            match rungs
                .iter()
                .find(|r| r.to_n.is_some_and(|to| n as f64 <= to))
            {
                Some(r) => Regime::InProcess(crate::registry::find(&r.id).unwrap().id()),
                None if w.deletes => Regime::NothingDeletes,
                None => Regime::SharedServer,
            }
        };
        for w in [
            workload(0.01),
            Demand {
                growth_unknown: true,
                ..workload(0.01)
            },
            Demand {
                deletes: true,
                ..workload(0.01)
            },
        ] {
            let crossovers: Vec<f64> = ladder(&sizing.thresholds(10_000_000), &w)
                .iter()
                .filter_map(|r| r.to_n)
                .collect();
            assert!(crossovers.len() >= 2, "{w:?}");
            for to in crossovers {
                for n in [(to * 0.9) as u64, (to * 1.1) as u64] {
                    assert_eq!(
                        regime_at(&sizing, &w, n, NODE_MEMORY_BYTES),
                        rung_at(&w, n),
                        "{w:?} at n = {n}"
                    );
                }
            }
        }
    }

    #[test]
    fn growth_unknown_keeps_the_growable_filter_and_deletes_get_no_server() {
        let sizing = Sizing {
            run: None,
            fpr: 0.01,
            budget_bytes: (1u64 << 30) as f64,
        };
        let grows = Demand {
            growth_unknown: true,
            ..workload(0.01)
        };
        assert_eq!(
            regime_at(&sizing, &grows, 300_000_000, NODE_MEMORY_BYTES),
            Regime::InProcess("scalable")
        );
        // Past scalable's reach a fixed filter would still fit, but the workload cannot use one.
        let past = regime_at(&sizing, &grows, 800_000_000, NODE_MEMORY_BYTES);
        assert_eq!(past, Regime::SharedServer);
        let deletes = Demand {
            deletes: true,
            ..workload(0.01)
        };
        assert_eq!(
            regime_at(&sizing, &deletes, 6_000_000_000, NODE_MEMORY_BYTES),
            Regime::NothingDeletes
        );
    }

    /// A workload that deletes gets the deleting filter that holds the most keys, ours or a peer's; the
    /// cuckoo filter's reach is its model's (10-bit slots at 1%), the counting filter's 4 × 9.6 bits.
    #[test]
    fn deletes_pick_the_smallest_filter_that_deletes() {
        let sizing = Sizing {
            run: None,
            fpr: 0.01,
            budget_bytes: (1u64 << 30) as f64,
        };
        let w = Demand {
            deletes: true,
            ..workload(0.01)
        };
        let n = 100_000_000;
        let smallest = bytes_at(&sizing, n)
            .into_iter()
            .filter(|(k, _)| !k.exact() && k.removable() && k.descriptor().serves(w.workload))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .expect("a filter deletes");
        assert_eq!(
            regime_at(&sizing, &w, n, NODE_MEMORY_BYTES),
            Regime::InProcess(smallest.0.id())
        );
        // Not the counting filter's 4× a Bloom filter: at most 16 bits per key.
        assert!(smallest.1 * 8.0 / n as f64 <= 16.0, "{}", smallest.1);
        let thresholds = sizing.thresholds(n);
        let max_n = |id: &str| thresholds.iter().find(|t| t.id == id).unwrap().max_n;
        // 1 GiB holds 10-bit slots at a load of 0.95: 8·2³⁰ × 0.95/40 × 4 ≈ 8.16·10⁸ keys; counting
        // filters 2.2·10⁸.
        let cuckoo = 8.0 * (1u64 << 30) as f64 * 0.95 / 10.0;
        assert!(
            (max_n("cuckoo") / cuckoo - 1.0).abs() < 1e-3,
            "{}",
            max_n("cuckoo")
        );
        assert!(max_n("counting") > 2.2e8 && max_n("counting") < 2.3e8);
        let most = thresholds
            .iter()
            .filter(|t| w.served_by(find_kind(t.id), false) && !find_kind(t.id).exact())
            .map(|t| t.max_n)
            .fold(0.0, f64::max);
        assert_eq!(ladder(&thresholds, &w).last().unwrap().from_n, most);
    }

    fn find_kind(id: &str) -> &'static dyn Kind {
        crate::registry::find(id).unwrap()
    }
}

//! The price of each rate: for a range of false-positive rates, every contender that serves the workload
//! at its size for that rate, its lookup time where a run measured it, and the work a false positive
//! loses in the workload's own terms; then the rate `advise` picks, and why.
//!
//! Work lost:
//! - a crawl (and a window) loses the new URLs it wrongly calls seen. A filter sized for n and filled from
//!   empty answers at its rate after each fill, so over the crawl of n new URLs it skips
//!   Σ rate(fill) ≈ ∫₀ⁿ rate(x) dx ([`lost_over_fill`], each kind's own model of its
//!   rate after x keys); a crawl that finds 1.5× n URLs keeps filling past the size it was planned for.
//!   A kind without a model of its rate during the fill is charged its rate at n throughout (an upper
//!   bound, flagged); one without a model past n gets no figure there.
//! - a blocklist, a cache guard and a shipped filter answer strangers at the rate of the full structure:
//!   wrong answers per million lookups of absent keys.
//!
//! The pick: the rate asked (`--fpr P`), the cost model's optimum (`--fp-cost`), or else the lowest rate
//! of the table whose first contender still fits the budget: memory left over buys a lower rate.

use super::Demand;
use crate::analysis::regimes::{advice_config, meets_rate, Sizing};
use crate::kind::Kind;
use crate::kind::{Family, Placement, Role};
use crate::registry::{find, role_id};
use crate::results::Results;
pub use crate::theory::lost_over_fill;
use crate::workload::Workload;
use crate::{Error, Result};
use serde::Serialize;

/// The rates the table spans without `--fpr`: 10⁻² down to 10⁻⁶, a decade a row.
pub const DEFAULT_RATES: (f64, f64) = (1e-6, 1e-2);
/// The rate the rest of the advice uses when nothing else decides it.
pub const DEFAULT_FPR: f64 = 0.01;
/// A crawl's overshoot the table prices besides the planned n.
pub const OVERSHOOT: f64 = 1.5;
/// Contenders the table shows per rate (those that fit first, smallest first).
pub const SHOWN_PER_RATE: usize = 8;

/// What `--fpr` asked.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum RateAsk {
    /// Nothing: the table spans [`DEFAULT_RATES`] and the pick spends the budget's headroom.
    Default,
    /// One rate: the table still spans the default decades, with it among them.
    Fixed { fpr: f64 },
    /// LOW..HIGH: the table spans it, the pick spends the headroom within it.
    Range { low: f64, high: f64 },
}

impl RateAsk {
    /// Parses `P` or `LOW..HIGH`, each a rate in (0, 1) as [`crate::units::fpr_arg`] takes it.
    pub fn parse(text: &str) -> std::result::Result<RateAsk, String> {
        match text.split_once("..") {
            Some((low, high)) => {
                let (low, high) = (crate::units::fpr_arg(low)?, crate::units::fpr_arg(high)?);
                if low >= high {
                    return Err(format!(
                        "'{text}': a range is LOW..HIGH with LOW below HIGH, such as 1e-6..1e-2"
                    ));
                }
                Ok(RateAsk::Range { low, high })
            }
            None => crate::units::fpr_arg(text).map(|fpr| RateAsk::Fixed { fpr }),
        }
    }

    /// The rates the table prices, highest first: each decade from the top of the span down to its
    /// bottom, with the span's ends and an asked rate among them.
    pub fn table_rates(self) -> Vec<f64> {
        let (low, high) = match self {
            RateAsk::Range { low, high } => (low, high),
            _ => DEFAULT_RATES,
        };
        let mut rates = vec![high];
        let mut decade = 10f64.powf(high.log10().floor());
        if decade >= high * (1.0 - 1e-9) {
            decade /= 10.0;
        }
        while decade > low * (1.0 + 1e-9) {
            rates.push(decade);
            decade /= 10.0;
        }
        rates.push(low);
        if let RateAsk::Fixed { fpr } = self {
            rates.push(fpr);
        }
        rates.sort_by(|a, b| b.total_cmp(a));
        rates.dedup_by(|a, b| (*a / *b - 1.0).abs() < 1e-9);
        rates
    }
}

/// Work lost at one rate, in the workload's terms.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Loss {
    /// New URLs never crawled: over the planned n filling from empty, and over 1.5× n (None: no model
    /// of its rate past n). `bound`: the rate at n charged throughout the fill (no model of the fill).
    Crawl {
        pages_lost_at_n: f64,
        pages_lost_at_overshoot: Option<f64>,
        bound: bool,
    },
    /// Wrong answers per million lookups of absent keys.
    PerMillionChecks { wrong_per_million: f64 },
}

/// One contender at one rate.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PricedRow {
    pub id: &'static str,
    pub label: String,
    pub bytes: u64,
    pub bits_per_key: f64,
    /// Its model's rate at n at that size.
    pub fpr: f64,
    pub fits: bool,
    /// The run's median non-member lookup at that size, and whether that size lies outside the cells
    /// it measured (a projection).
    pub lookup_ns: Option<f64>,
    pub lookup_projected: bool,
    pub loss: Loss,
}

/// One rate of the table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RateRow {
    pub fpr: f64,
    /// Contenders that fit first, smallest first (at most [`SHOWN_PER_RATE`]); when none fits, the
    /// smallest, marked over the budget.
    pub rows: Vec<PricedRow>,
}

/// Why the pick is the rate it is.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum PickReason {
    /// `--fpr P`.
    Asked,
    /// `--fp-cost`: the cheapest contender's rate at its cheapest size.
    CostOptimum { id: &'static str, fp_cost_ns: f64 },
    /// The lowest rate of the table whose first contender fits the budget.
    Headroom {
        id: &'static str,
        bytes: u64,
        budget_bytes: u64,
    },
    /// An exact set fits the budget: it is the answer and makes no false positive; the rate is the
    /// headroom's pick for the filters that follow it.
    ExactFits { id: &'static str, bytes: u64 },
    /// Nothing fits even at the table's highest rate: that rate, and the advice says what fails.
    NothingFits,
}

/// The rate table and the pick.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RatePrices {
    pub workload: Workload,
    pub n: u64,
    pub ask: RateAsk,
    pub rates: Vec<RateRow>,
    pub picked_fpr: f64,
    pub reason: PickReason,
    /// Where the lookup times come from.
    pub lookup_source: String,
}

/// The rate of `kind`, sized for `n` keys at `p`, after `x` keys (None where there is no model):
/// - its own model of its fill;
/// - an exact set (of keys or of their fingerprints), whose only errors are collisions of what it
///   holds: its model at x keys;
/// - a fixed filter on a Redis server, sized by the same formula as `bloom` (RedisBloom's, our bitmap's
///   strings): `bloom`'s model.
pub fn rate_after_fill(kind: &'static dyn Kind, n: u64, p: f64) -> Box<dyn Fn(u64) -> Option<f64>> {
    let config = advice_config(kind, n, p);
    if kind.predicted_fpr_after(&config, n).is_some() {
        return Box::new(move |x| kind.predicted_fpr_after(&config, x));
    }
    if kind.descriptor().family == Family::ExactSet {
        return Box::new(move |x| Some(kind.predicted_fpr(&advice_config(kind, x.max(1), p))));
    }
    let on_server = matches!(kind.descriptor().placement, Placement::OurServer(_));
    match find(role_id(Role::ReferenceBloom)) {
        Ok(bloom) if on_server && !kind.growable() => {
            let config = advice_config(bloom, n, p);
            Box::new(move |x| bloom.predicted_fpr_after(&config, x))
        }
        _ => Box::new(|_| None),
    }
}

/// What a contender sized for n at its rate loses in `workload`.
fn loss(kind: &'static dyn Kind, workload: Workload, n: u64, p: f64, rate_at_n: f64) -> Loss {
    match workload {
        Workload::Crawl | Workload::Window => {
            let rate_after = rate_after_fill(kind, n, p);
            let modelled = lost_over_fill(n as f64, &rate_after);
            Loss::Crawl {
                pages_lost_at_n: modelled.unwrap_or(rate_at_n * n as f64),
                pages_lost_at_overshoot: lost_over_fill(
                    (n as f64 * OVERSHOOT).round(),
                    &rate_after,
                ),
                bound: modelled.is_none(),
            }
        }
        Workload::Blocklist | Workload::CacheGuard | Workload::Shipped => Loss::PerMillionChecks {
            wrong_per_million: rate_at_n * 1e6,
        },
    }
}

/// Every contender serving `demand` at rate `p`, those that fit first, smallest first.
fn priced_at(demand: &Demand, p: f64, run: Option<(&Results, &str)>) -> Vec<PricedRow> {
    let n = demand.n_high;
    let sizing = Sizing {
        run,
        fpr: p,
        budget_bytes: demand.memory_bytes as f64,
    };
    let mut rows: Vec<PricedRow> = demand
        .weighed_kinds()
        .into_iter()
        .filter(|(kind, _)| !kind.exact() && demand.unmet_by(*kind).is_empty())
        .filter(|(kind, _)| meets_rate(*kind, n, p))
        .map(|(kind, advisor)| {
            let bytes = sizing.bytes_of(kind, &advisor, n);
            let rate = kind.predicted_fpr(&advice_config(kind, n, p));
            let lookup = run.and_then(|(r, _)| super::lookup_ns_at(r, kind.id(), bytes));
            PricedRow {
                id: kind.id(),
                label: kind.descriptor().label(),
                bytes: bytes.round() as u64,
                bits_per_key: bytes * 8.0 / n as f64,
                fpr: rate,
                fits: bytes <= demand.memory_bytes as f64,
                lookup_ns: lookup.map(|l| l.0),
                lookup_projected: lookup.is_some_and(|l| l.1),
                loss: loss(kind, demand.workload, n, p, rate),
            }
        })
        .collect();
    rows.sort_by(|a, b| b.fits.cmp(&a.fits).then(a.bytes.cmp(&b.bytes)));
    let fitting = rows.iter().filter(|r| r.fits).count();
    rows.truncate(fitting.clamp(1, SHOWN_PER_RATE));
    rows
}

/// The table for `demand` (its rate is ignored: the table spans `ask`'s rates) and the pick; `cost` is
/// the cost model's answer when `--fp-cost` was given.
pub fn price_rates(
    demand: &Demand,
    ask: RateAsk,
    cost: Option<&super::CostAnswer>,
    run: Option<(&Results, &str)>,
) -> Result<RatePrices> {
    let rates: Vec<RateRow> = ask
        .table_rates()
        .into_iter()
        .map(|fpr| RateRow {
            fpr,
            rows: priced_at(demand, fpr, run),
        })
        .collect();
    let headroom = |rates: &[RateRow]| match rates
        .iter()
        .rev()
        .find_map(|r| r.rows.first().filter(|c| c.fits).map(|c| (r.fpr, c)))
    {
        Some((fpr, first)) => (
            fpr,
            PickReason::Headroom {
                id: first.id,
                bytes: first.bytes,
                budget_bytes: demand.memory_bytes,
            },
        ),
        None => (
            rates.first().map(|r| r.fpr).unwrap_or(DEFAULT_FPR),
            PickReason::NothingFits,
        ),
    };
    // The cost model picks only from measured lookup times, within a range asked, and never an exact
    // set's rate (the exact set comes first anyway).
    let cost_pick = match (cost, run) {
        (Some(c), Some(_)) => c.ranked.iter().find(|b| b.fpr > 0.0).map(|best| {
            let fpr = match ask {
                RateAsk::Range { low, high } => best.fpr.clamp(low, high),
                _ => best.fpr,
            };
            (
                fpr,
                PickReason::CostOptimum {
                    id: best.id,
                    fp_cost_ns: c.fp_cost_ns,
                },
            )
        }),
        _ => None,
    };
    let (picked_fpr, reason) = match (ask, cost_pick) {
        (RateAsk::Fixed { fpr }, _) => (fpr, PickReason::Asked),
        (_, Some(pick)) => pick,
        _ => headroom(&rates),
    };
    let exact = demand
        .weighed_kinds()
        .into_iter()
        .filter(|(kind, _)| kind.exact() && demand.unmet_by(*kind).is_empty())
        .map(|(kind, advisor)| {
            let sizing = Sizing {
                run,
                fpr: picked_fpr,
                budget_bytes: demand.memory_bytes as f64,
            };
            (kind.id(), sizing.bytes_of(kind, &advisor, demand.n_high))
        })
        .filter(|(_, bytes)| *bytes <= demand.memory_bytes as f64)
        .min_by(|a, b| a.1.total_cmp(&b.1));
    let reason = match (exact, &reason) {
        (Some((id, bytes)), PickReason::Headroom { .. }) => PickReason::ExactFits {
            id,
            bytes: bytes.round() as u64,
        },
        _ => reason,
    };
    if !(picked_fpr > 0.0 && picked_fpr < 1.0) {
        return Err(Error::invalid(
            "--fpr",
            format!("the picked rate {picked_fpr} is outside (0, 1)"),
        ));
    }
    Ok(RatePrices {
        workload: demand.workload,
        n: demand.n_high,
        ask,
        rates,
        picked_fpr,
        reason,
        lookup_source: match run {
            Some((_, label)) => format!(
                "lookup: the median non-member lookup {label} measured, at the nearest sizes in bytes (* a projection past them)"
            ),
            None => "lookup: not measured (give --results DIR of a bench run)".into(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crawl(n: u64, memory: u64) -> Demand {
        Demand::new(n, DEFAULT_FPR, memory, Workload::Crawl)
    }

    #[test]
    fn rates_parse_as_one_or_a_range_and_the_table_spans_decades() {
        assert_eq!(RateAsk::parse("0.001"), Ok(RateAsk::Fixed { fpr: 0.001 }));
        assert_eq!(
            RateAsk::parse("1e-6..1e-2"),
            Ok(RateAsk::Range {
                low: 1e-6,
                high: 1e-2
            })
        );
        assert!(RateAsk::parse("1e-2..1e-6").unwrap_err().contains("LOW"));
        assert!(RateAsk::parse("2").is_err());
        let decades = RateAsk::Default.table_rates();
        assert_eq!(decades.len(), 5, "{decades:?}");
        assert!((decades[0] - 1e-2).abs() < 1e-12 && (decades[4] - 1e-6).abs() < 1e-15);
        let fixed = RateAsk::Fixed { fpr: 0.003 }.table_rates();
        assert_eq!(fixed.len(), 6, "{fixed:?}");
        assert!((fixed[1] - 0.003).abs() < 1e-12, "{fixed:?}");
        let odd = RateAsk::Range {
            low: 2e-5,
            high: 0.05,
        }
        .table_rates();
        assert_eq!(odd, vec![0.05, 0.01, 1e-3, 1e-4, 2e-5]);
    }

    #[test]
    fn a_bloom_filter_filling_from_empty_loses_the_integral_of_its_rate() {
        // m bits, k hashes: rate after x keys (1 − e^{−kx/m})^k; summed over the fill by the midpoint
        // rule it matches a fine numerical integral within 0.1%.
        let d = crawl(2_000_000_000, 16 << 30);
        let prices = price_rates(&d, RateAsk::Default, None, None).unwrap();
        let bloom_at = |p: f64| {
            let row = prices
                .rates
                .iter()
                .find(|r| (r.fpr / p - 1.0).abs() < 1e-9)
                .unwrap();
            row.rows.iter().find(|c| c.id == "bloom").cloned().unwrap()
        };
        let bloom = bloom_at(1e-2);
        let sizing = crate::theory::BloomSizing::for_rate(2_000_000_000, 1e-2);
        let (m, k) = (sizing.bits as f64, sizing.hashes as i32);
        let fine: f64 = (0..100_000)
            .map(|i| {
                let x = (i as f64 + 0.5) * 2e9 / 1e5;
                (1.0 - (-(k as f64) * x / m).exp()).powi(k) * 2e9 / 1e5
            })
            .sum();
        let Loss::Crawl {
            pages_lost_at_n,
            pages_lost_at_overshoot,
            bound,
        } = bloom.loss
        else {
            panic!("{bloom:?}")
        };
        assert!(!bound);
        assert!(
            (pages_lost_at_n / fine - 1.0).abs() < 1e-3,
            "{pages_lost_at_n} {fine}"
        );
        // The lead's sums: about 3.3M pages at 1e-2, 243k at 1e-3, 19k at 1e-4 over 2·10⁹ URLs.
        assert!(
            (pages_lost_at_n / 3.3e6 - 1.0).abs() < 0.05,
            "{pages_lost_at_n}"
        );
        let at = |p: f64| match bloom_at(p).loss {
            Loss::Crawl {
                pages_lost_at_n, ..
            } => pages_lost_at_n,
            other => panic!("{other:?}"),
        };
        assert!((at(1e-3) / 243e3 - 1.0).abs() < 0.05, "{}", at(1e-3));
        assert!((at(1e-4) / 19e3 - 1.0).abs() < 0.1, "{}", at(1e-4));
        // Past the planned n the rate climbs: 1.5× n loses far more than 1.5× as much.
        let over = pages_lost_at_overshoot.expect("bloom has a model past n");
        assert!(over > 5.0 * pages_lost_at_n, "{over} {pages_lost_at_n}");
    }

    #[test]
    fn headroom_buys_the_lowest_rate_that_fits_and_an_asked_rate_is_kept() {
        // 2·10⁹ URLs in 16 GiB: a Bloom filter at 1e-6 needs ≈ 6.7 GiB, so the table's lowest rate fits.
        let roomy = price_rates(
            &crawl(2_000_000_000, 16 << 30),
            RateAsk::Default,
            None,
            None,
        )
        .unwrap();
        assert!((roomy.picked_fpr - 1e-6).abs() < 1e-12, "{roomy:?}");
        assert!(
            matches!(roomy.reason, PickReason::Headroom { .. }),
            "{roomy:?}"
        );
        // In 4 GiB: 1e-3 needs ≈ 3.35 GiB and fits, 1e-4 needs ≈ 4.46 GiB and does not.
        let tight =
            price_rates(&crawl(2_000_000_000, 4 << 30), RateAsk::Default, None, None).unwrap();
        assert!((tight.picked_fpr - 1e-3).abs() < 1e-12, "{tight:?}");
        let PickReason::Headroom { bytes, .. } = tight.reason else {
            panic!("{tight:?}")
        };
        assert!(bytes <= 4 << 30);
        let asked = price_rates(
            &crawl(2_000_000_000, 16 << 30),
            RateAsk::Fixed { fpr: 0.01 },
            None,
            None,
        )
        .unwrap();
        assert_eq!(
            (asked.picked_fpr, &asked.reason),
            (0.01, &PickReason::Asked)
        );
        let exact = price_rates(&crawl(50_000_000, 1 << 30), RateAsk::Default, None, None).unwrap();
        assert!(
            matches!(
                exact.reason,
                PickReason::ExactFits {
                    id: "fingerprint",
                    ..
                }
            ),
            "{exact:?}"
        );
        let none =
            price_rates(&crawl(2_000_000_000, 1 << 20), RateAsk::Default, None, None).unwrap();
        assert_eq!(none.reason, PickReason::NothingFits);
        assert!(none.rates[0].rows.iter().all(|r| !r.fits) && !none.rates[0].rows.is_empty());
    }

    #[test]
    fn a_blocklist_counts_wrong_blocks_per_million_checks() {
        let d = Demand::new(5_000_000, DEFAULT_FPR, 16 << 30, Workload::Blocklist);
        let prices = price_rates(&d, RateAsk::Default, None, None).unwrap();
        // binary-fuse8's 2⁻⁸ (3906 per million) serves 1% but no lower rate.
        let fuse8 = |row: &RateRow| row.rows.iter().any(|r| r.id == "binary-fuse8");
        assert!(
            fuse8(&prices.rates[0]) && !prices.rates[1..].iter().any(fuse8),
            "{prices:?}"
        );
        for rate in &prices.rates {
            for row in &rate.rows {
                let Loss::PerMillionChecks { wrong_per_million } = row.loss else {
                    panic!("{row:?}")
                };
                assert!((wrong_per_million - row.fpr * 1e6).abs() < 1e-9);
                assert!(row.fpr <= rate.fpr * 1.01, "{row:?} at {}", rate.fpr);
            }
        }
    }
}

//! The first screen: the answer to the question asked ([`super::Question`]: the run's own budget, rate
//! and largest scale unless re-asked) before any evidence. The question in words; the pick for its n in
//! one sentence; with machines asked, the fleet's designs priced ([`super::fleet`]); the regime ladder
//! with its crossovers in n; the structure the advisor picks at that n and, for context, at a few
//! typical scales, with its bytes per key, nanoseconds per operation and false-positive rate (with its
//! interval, and in a crawler's terms: new URLs wrongly skipped); then the regime map. Every figure says
//! whether this run measured it or it is projected (the model, theory, or a measurement at another n).
//! The run's own targets are not part of the answer: they follow it ([`super::targets`]).

use super::markup::lost_in_crawl;
use super::Question;
use crate::advise::rates::rate_after_fill;
use crate::analysis::regimes::{
    advice_config, advised_kinds, ladder, regime_at, Demand, Regime, Rung as LadderRung, Sizing,
    NODE_MEMORY_BYTES,
};
use crate::registry::find;
use crate::results::{CellRecord, Results};
use crate::stats::Summary;
use crate::theory::BloomSizing;
use crate::units::{human_bytes, human_count, human_rate};
use crate::workload::Lookups;
use serde::Serialize;

/// File stem of the regime map's images.
pub const MAP_STEM: &str = "regime_map";

/// The scales the answer quotes for context, after the n asked: one measured by the quick suite, and the
/// three regimes past it (a filter in one process, the articles' 6·10⁹, past one server).
const TYPICAL_N: [u64; 4] = [10_000_000, 1_000_000_000, 6_000_000_000, 100_000_000_000];

/// Batch size whose shared-filter figures the answer quotes.
const SHARED_BATCH_KEYS: u64 = 1024;

/// Measured speeds are quoted up to this multiple of the largest n they were measured at; past it a
/// structure leaves the caches the measured cell fitted in, and its speed would be a guess.
const SPEED_REACH: u64 = 10;

/// One row of the answer: what to use at n, and what it costs.
struct Pick {
    n: u64,
    regime: Regime,
    bytes_per_key: f64,
    bytes_source: &'static str,
    /// Insert and lookup ns per key, and where they were measured.
    speed: Option<(Summary, Summary, String)>,
    rate: f64,
    /// The 95% interval of a measured rate.
    interval: Option<(f64, f64)>,
    rate_source: &'static str,
    /// Expected new URLs wrongly skipped in a crawl of n new URLs into this structure, sized for n and
    /// filling from empty (the sum of its theoretical rate at every fill).
    crawl_skipped: f64,
}

fn cell<'a>(r: &'a Results, id: &str, n: u64) -> Option<&'a CellRecord> {
    r.cells.iter().find(|c| c.structure == id && c.n == n)
}

/// The measured cell of `id` with the largest n ≤ `n`, if it lies within [`SPEED_REACH`]× of n.
fn nearest_cell<'a>(r: &'a Results, id: &str, n: u64) -> Option<&'a CellRecord> {
    r.cells
        .iter()
        .filter(|c| c.structure == id && c.n <= n)
        .max_by_key(|c| c.n)
        .filter(|c| c.n.saturating_mul(SPEED_REACH) >= n)
}

/// Σ over a crawl of n new URLs of the rate at each fill ([`crate::theory::lost_over_fill`]).
fn crawl_skipped(n: u64, rate_after: impl Fn(u64) -> f64) -> f64 {
    crate::theory::lost_over_fill(n as f64, |x| Some(rate_after(x))).unwrap_or_default()
}

/// The run's rate when it is not `fpr`: its cells were built for another rate than the one asked.
fn other_run_rate(r: &Results, fpr: f64) -> Option<f64> {
    r.header
        .as_ref()
        .map(|h| h.fpr)
        .filter(|run| (run - fpr).abs() > fpr * 1e-9)
}

/// The ladder of `demand`'s rate and budget at its n, with the run's measured bytes (none when the
/// demand is not one the advisor can size).
fn question_ladder(r: &Results, demand: &Demand) -> Option<Vec<LadderRung>> {
    demand.validate().ok()?;
    let sizing = Sizing {
        run: Some((r, "this run")),
        fpr: demand.fpr,
        budget_bytes: demand.memory_bytes as f64,
    };
    Some(ladder(&sizing.thresholds(demand.n_high), demand))
}

fn pick(r: &Results, sizing: &Sizing, workload: &Demand, n: u64) -> Pick {
    let regime = regime_at(sizing, workload, n, NODE_MEMORY_BYTES);
    let p = sizing.fpr;
    // A filter's cell built for another rate says nothing of this one's bytes or rate; its speed still
    // tells. An exact set is built the same at every rate.
    let other_rate = other_run_rate(r, p);
    match regime {
        Regime::InProcess(id) => {
            let (kind, advisor) = advised_kinds()
                .find(|(k, _)| k.id() == id)
                .expect("regime_at picks advised kinds only");
            let config = advice_config(kind, n, p);
            let other_rate = other_rate.filter(|_| !kind.exact());
            let built_for = other_rate
                .map(|run| format!(", built for the run's p = {}", human_rate(run)))
                .unwrap_or_default();
            let at_n = cell(r, id, n).filter(|_| other_rate.is_none());
            let (bytes_per_key, bytes_source) = match at_n {
                Some(c) => (c.heap_footprint_bytes as f64 / n as f64, "measured"),
                None => (
                    sizing.of(kind, &advisor, n).bytes_at_n / n as f64,
                    "projected",
                ),
            };
            let speed = nearest_cell(r, id, n).map(|c| {
                (
                    c.insert_ns_per_key,
                    match workload.workload.lookups() {
                        Lookups::NonMembers => c.non_member_query_ns_per_key,
                        Lookups::Members | Lookups::Mixed => c.member_query_ns_per_key,
                    },
                    if c.n == n {
                        format!("measured{built_for}")
                    } else {
                        format!(
                            "measured at n = {}{built_for}; larger arrays are slower",
                            human_count(c.n as f64)
                        )
                    },
                )
            });
            let predicted = kind.predicted_fpr(&config);
            let (rate, interval, rate_source) = match at_n {
                Some(c) => (
                    c.observed_fpr,
                    Some((c.observed_fpr_wilson95.low, c.observed_fpr_wilson95.high)),
                    "observed",
                ),
                None => (predicted, None, "theory"),
            };
            // The one fill rule advise uses; a kind with no model of its fill is charged half its
            // final rate on average, as a rate growing with the fill would be.
            let crawl = crate::theory::lost_over_fill(n as f64, rate_after_fill(kind, n, p))
                .unwrap_or(predicted * n as f64 / 2.0);
            Pick {
                n,
                regime,
                bytes_per_key,
                bytes_source,
                speed,
                rate,
                interval,
                rate_source,
                crawl_skipped: crawl,
            }
        }
        Regime::SharedServer | Regime::Cluster | Regime::NothingDeletes => {
            let sizing = BloomSizing::for_rate(n, p);
            let shared = crate::analysis::sweep::point(
                r,
                &crate::analysis::sweep::shared_bloom(),
                SHARED_BATCH_KEYS,
            )
            .filter(|s| regime == Regime::SharedServer && s.n.saturating_mul(SPEED_REACH) >= n);
            // One sweep point: its ns per key is a single figure.
            let keys_per_s = |v: f64| Summary {
                median: 1e9 / v,
                min: 1e9 / v,
                max: 1e9 / v,
            };
            Pick {
                n,
                regime,
                bytes_per_key: sizing.bytes() as f64 / n as f64,
                bytes_source: "Bloom formula (on the server)",
                speed: shared.map(|s| {
                    (
                        keys_per_s(s.insert_keys_per_s),
                        keys_per_s(s.member_query_keys_per_s),
                        format!(
                            "measured on one loopback server at n = {}, {SHARED_BATCH_KEYS} keys per round trip",
                            human_count(s.n as f64)
                        ),
                    )
                }),
                rate: sizing.fpr(n),
                interval: None,
                rate_source: "theory",
                crawl_skipped: crawl_skipped(n, |i| sizing.fpr(i)),
            }
        }
    }
}

/// What the run measured of a rung's structure, at its largest measured n up to the rung's end: bits per
/// key, the rate with its 95% interval, insert time and the lookups the workload asks most.
fn rung_figures(
    r: &Results,
    id: &str,
    to_n: Option<f64>,
    lookups: Lookups,
    fpr: f64,
) -> Option<String> {
    let c = r
        .cells
        .iter()
        .filter(|c| c.structure == id && to_n.is_none_or(|to| c.n as f64 <= to * 1.000_001))
        .max_by_key(|c| c.n)?;
    let (lookup, which) = match lookups {
        Lookups::NonMembers => (c.non_member_query_ns_per_key.median, "non-member lookup"),
        Lookups::Members | Lookups::Mixed => (c.member_query_ns_per_key.median, "member lookup"),
    };
    let rate = if c.exact && c.observed_fpr == 0.0 {
        "rate 0 (exact)".to_string()
    } else {
        format!(
            "rate {} [{}, {}]",
            human_rate(c.observed_fpr),
            human_rate(c.observed_fpr_wilson95.low),
            human_rate(c.observed_fpr_wilson95.high)
        )
    };
    // A list built once pays its inserts as its build.
    let insert = if lookups == Lookups::NonMembers {
        "build"
    } else {
        "insert"
    };
    let built_for = match other_run_rate(r, fpr) {
        Some(run) if !c.exact => format!(" (built for the run's p = {})", human_rate(run)),
        _ => String::new(),
    };
    Some(format!(
        "measured at n = {}{built_for}: {:.1} bits per key, {rate}, {insert} {:.1} ns, {which} {lookup:.1} ns per key",
        human_count(c.n as f64),
        c.bits_per_key,
        c.insert_ns_per_key.median,
    ))
}

/// The largest n this run measured `id` at (any structure for an id without cells: the shared server).
fn measured_max_n(r: &Results, id: &str) -> u64 {
    let of = |only: bool| {
        r.cells
            .iter()
            .filter(|c| !only || c.structure == id)
            .map(|c| c.n)
            .max()
    };
    of(true).or(of(false)).unwrap_or(0)
}

/// What `templates/answer.html` shows: the first screen.
#[derive(Serialize)]
pub struct Answer {
    /// The workload's heading.
    workload: &'static str,
    /// Whether the crawl's column (new URLs skipped) applies.
    crawl: bool,
    /// The question answered, in words.
    question: QuestionView,
    /// The n asked.
    n: String,
    fpr: String,
    budget: String,
    /// The pick for the n asked, in one sentence's parts.
    lead: Lead,
    /// The fleet's designs, when the question has machines.
    fleet: Option<super::fleet::FleetView>,
    /// The regime ladder, when the question has one.
    ladder: Option<Vec<Rung>>,
    /// The bytes of the node a shared server's rung is sized for.
    node_bytes: String,
    /// The cluster's rung, past one node.
    cluster: Option<ClusterRung>,
    /// The largest n this run measured any structure at.
    measured_max_n: String,
    /// The n asked first, then the typical scales for context.
    picks: Vec<PickRow>,
    map_stem: &'static str,
    verdict: String,
}

/// The question in words: each part and where it comes from (asked, or the run's).
#[derive(Serialize)]
struct QuestionView {
    /// Nothing re-asked: the run's own question.
    own: bool,
    /// The flags that re-asked it (empty: none).
    flags: String,
    n: String,
    n_source: &'static str,
    fpr: String,
    fpr_source: &'static str,
    budget: String,
    budget_source: &'static str,
    /// What the run measured, for a re-asked question: its largest n, rate and budget.
    run_max_n: String,
    run_fpr: String,
    run_budget: String,
}

/// The pick for the n asked: what to use, its bytes in all and per key, where the budget leaves it, and
/// its rate (where each comes from: its row of the table).
#[derive(Serialize)]
struct Lead {
    n: String,
    regime: String,
    bytes_per_key: String,
    total: String,
    /// Within the budget (in process), or past it (a server or a cluster).
    within: bool,
    rate: String,
}

/// A rung of the ladder: `n ≤ to_n`, `from_n – to_n` or `n > from_n` (a `*` marks a projected bound).
#[derive(Serialize)]
struct Rung {
    from_n: Option<String>,
    to_n: Option<String>,
    /// The structure (none: a shared server).
    id: Option<&'static str>,
    summary: &'static str,
    /// What this run measured of it: at its largest measured n within the rung, bytes per key, rate with
    /// interval and speed of the workload's operations.
    measured: Option<String>,
}

#[derive(Serialize)]
struct ClusterRung {
    from_n: String,
    /// What this run measured of the cluster, or how to measure it.
    measured: String,
}

/// One row of the answer's table.
#[derive(Serialize)]
struct PickRow {
    /// The row of the n asked (the others are context).
    asked: bool,
    n: String,
    regime: String,
    bytes_per_key: String,
    bytes_source: &'static str,
    speed: Option<SpeedCell>,
    rate: String,
    /// The measured rate's 95% interval.
    interval: Option<(String, String)>,
    rate_source: &'static str,
    lost_in_crawl: String,
}

/// Insert and lookup ns per key (median, min, max) and where they were measured.
#[derive(Serialize)]
struct SpeedCell {
    insert: String,
    lookup: String,
    insert_min: String,
    insert_max: String,
    lookup_min: String,
    lookup_max: String,
    source: String,
}

/// The answer to `question` of the run `r`, first on the page (none without a run header or a
/// workload).
pub fn view(r: &Results, question: &Question) -> Option<Answer> {
    let h = r.header.as_ref()?;
    let demand = question.demand_of(r)?;
    let budget = demand.memory_bytes as f64;
    let sizing = Sizing {
        run: Some((r, "this run")),
        fpr: demand.fpr,
        budget_bytes: budget,
    };
    let mark = |n: f64, id: &str| {
        if n > measured_max_n(r, id) as f64 * 1.000_001 {
            format!("{}*", human_count(n))
        } else {
            human_count(n)
        }
    };
    // One node holds a Bloom filter for the rate up to this n.
    let node_n = crate::analysis::regimes::largest_n(NODE_MEMORY_BYTES as f64, |n| {
        BloomSizing::for_rate(n, demand.fpr).bytes() as f64
    });
    let ladder = question_ladder(r, &demand);
    let rungs = ladder.as_ref().map(|ladder| {
        ladder
            .iter()
            .map(|rung| {
                let id = rung.id.as_str();
                let (from_n, to_n) = match rung.to_n {
                    Some(to) if rung.from_n <= 1.0 => (None, Some(mark(to, id))),
                    Some(to) => (Some(mark(rung.from_n, id)), Some(mark(to, id))),
                    None if node_n > rung.from_n => {
                        (Some(mark(rung.from_n, id)), Some(mark(node_n, id)))
                    }
                    None => (Some(mark(rung.from_n, id)), None),
                };
                let kind = find(&rung.id).ok();
                Rung {
                    from_n,
                    to_n,
                    id: kind.map(|k| k.id()),
                    summary: kind.map_or("", |k| k.summary()),
                    measured: kind.and_then(|k| {
                        rung_figures(r, k.id(), rung.to_n, demand.workload.lookups(), demand.fpr)
                    }),
                }
            })
            .collect()
    });
    let cluster = ladder
        .as_ref()
        .and_then(|l| l.last())
        .filter(|last| last.to_n.is_none() && node_n > last.from_n)
        .map(|_| ClusterRung {
            from_n: mark(node_n, ""),
            measured: match crate::analysis::sweep::cluster_ratio(r, SHARED_BATCH_KEYS) {
                Some(ratio) => format!(
                    "this run measured {} split over a loopback cluster at {:.0}% of one node's inserts",
                    crate::registry::role_id(crate::kind::Role::SharedBloom),
                    100.0 * ratio
                ),
                None => "`bench --suite redis --redis-cluster URLS` measures it".to_string(),
            },
        });
    // The n asked leads; the typical scales follow, smallest first, for context.
    let asked_n = demand.n_high;
    let mut context: Vec<u64> = TYPICAL_N.into_iter().filter(|n| *n != asked_n).collect();
    context.sort_unstable();
    let computed: Vec<Pick> = std::iter::once(asked_n)
        .chain(context)
        .map(|n| pick(r, &sizing, &demand, n))
        .collect();
    let lead = &computed[0];
    let picks = computed
        .iter()
        .enumerate()
        .map(|(row, p)| {
            let exact =
                matches!(p.regime, Regime::InProcess(id) if find(id).is_ok_and(|k| k.exact()));
            PickRow {
                asked: row == 0,
                n: human_count(p.n as f64),
                regime: p.regime.label(),
                bytes_per_key: format!("{:.1}", p.bytes_per_key),
                bytes_source: p.bytes_source,
                speed: p.speed.as_ref().map(|(insert, lookup, source)| SpeedCell {
                    insert: format!("{:.1}", insert.median),
                    lookup: format!("{:.1}", lookup.median),
                    insert_min: format!("{:.1}", insert.min),
                    insert_max: format!("{:.1}", insert.max),
                    lookup_min: format!("{:.1}", lookup.min),
                    lookup_max: format!("{:.1}", lookup.max),
                    source: source.clone(),
                }),
                rate: rate_words(p.rate, exact),
                interval: p
                    .interval
                    .map(|(low, high)| (human_rate(low), human_rate(high))),
                rate_source: p.rate_source,
                lost_in_crawl: lost_in_crawl(p.crawl_skipped, p.n),
            }
        })
        .collect();
    let total_bytes = lead.bytes_per_key * lead.n as f64;
    let lead_exact =
        matches!(lead.regime, Regime::InProcess(id) if find(id).is_ok_and(|k| k.exact()));
    let given = |asked: bool| if asked { "asked" } else { "the run's" };
    Some(Answer {
        workload: demand.workload.title(),
        crawl: demand.workload == crate::workload::Workload::Crawl,
        question: QuestionView {
            own: question.is_own(),
            flags: question.flags(),
            n: human_count(asked_n as f64),
            n_source: if question.n.is_some() {
                "asked"
            } else {
                "the run's largest scale"
            },
            fpr: human_rate(demand.fpr),
            fpr_source: given(question.fpr.is_some()),
            budget: human_bytes(budget),
            budget_source: given(question.memory_bytes.is_some()),
            run_max_n: human_count(measured_max_n(r, "") as f64),
            run_fpr: human_rate(h.fpr),
            run_budget: human_bytes(h.memory_budget_bytes as f64),
        },
        n: human_count(asked_n as f64),
        fpr: human_rate(demand.fpr),
        budget: human_bytes(budget),
        lead: Lead {
            n: human_count(asked_n as f64),
            regime: lead.regime.label(),
            bytes_per_key: format!("{:.1}", lead.bytes_per_key),
            total: human_bytes(total_bytes),
            within: matches!(lead.regime, Regime::InProcess(_)),
            rate: rate_words(lead.rate, lead_exact),
        },
        // The command checked the question before writing: a plan that fails here is left off.
        fleet: question
            .fleet_plan(r)
            .ok()
            .flatten()
            .map(|plan| super::fleet::view(&plan)),
        ladder: rungs,
        node_bytes: human_bytes(NODE_MEMORY_BYTES as f64),
        cluster,
        measured_max_n: human_count(measured_max_n(r, "") as f64),
        picks,
        map_stem: MAP_STEM,
        verdict: verdict(r, question),
    })
}

/// A pick's rate: "0 (exact)" for an exact set without a collision, else the rate.
fn rate_words(rate: f64, exact: bool) -> String {
    if exact && rate == 0.0 {
        "0 (exact)".to_string()
    } else {
        human_rate(rate)
    }
}

/// The ladder of `question` in words, with where each figure comes from.
pub fn verdict(r: &Results, question: &Question) -> String {
    let Some(demand) = question.demand_of(r) else {
        return "No run header.".into();
    };
    let Some(ladder) = question_ladder(r, &demand) else {
        return "No ladder for this question.".into();
    };
    let budget = human_bytes(demand.memory_bytes as f64);
    let steps: Vec<String> = ladder
        .iter()
        .map(|rung| match rung.to_n {
            Some(to) => format!("{} up to {} keys ({})", rung.id, human_count(to), rung.why),
            None => format!(
                "from {} keys, {} ({})",
                human_count(rung.from_n),
                rung.id,
                rung.why
            ),
        })
        .collect();
    format!(
        "For a {budget} budget, with the exact set's bytes per key from this run's measured cells where it measured them (the hashbrown model otherwise) and the filters' from the sizing formulas: {}.",
        steps.join("; then ")
    )
}

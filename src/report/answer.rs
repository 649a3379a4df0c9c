//! The first screen: the answer for the run's budget and rate before any evidence. The regime ladder
//! with its crossovers in n; the structure the advisor picks at a few typical scales with its bytes per
//! key, nanoseconds per operation and false-positive rate (with its interval, and in a crawler's terms:
//! new URLs wrongly skipped); which targets the run missed; then the regime map. Every figure says
//! whether this run measured it or it is projected (the model, theory, or a measurement at another n).

use super::markup::{esc, lost_in_crawl, pct, per_million};
use crate::analysis::regimes::{
    advice_config, advised_kinds, regime_at, run_ladder, Regime, Sizing, Workload,
    NODE_MEMORY_BYTES,
};
use crate::registry::find;
use crate::results::{CellRecord, Results};
use crate::stats::Summary;
use crate::theory::BloomSizing;
use crate::units::{human_bytes, human_count};
use std::fmt::Write;

/// File stem of the regime map's images.
pub const MAP_STEM: &str = "regime_map";

/// The scales the answer quotes, besides the run's largest.
const TYPICAL_N: [u64; 5] = [
    100_000,
    10_000_000,
    1_000_000_000,
    6_000_000_000,
    100_000_000_000,
];

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

/// Slices of the fill the crawl's losses are summed over.
const CRAWL_STEPS: u64 = 200;

/// Σ over a crawl of n new URLs of the rate at each fill (midpoint rule over [`CRAWL_STEPS`] slices).
fn crawl_skipped(n: u64, rate_after: impl Fn(u64) -> f64) -> f64 {
    let slice = n as f64 / CRAWL_STEPS as f64;
    (0..CRAWL_STEPS)
        .map(|i| rate_after(((i as f64 + 0.5) * slice) as u64) * slice)
        .sum()
}

fn pick(r: &Results, sizing: &Sizing, workload: &Workload, n: u64) -> Pick {
    let regime = regime_at(sizing, workload, n, NODE_MEMORY_BYTES);
    let p = sizing.fpr;
    match regime {
        Regime::InProcess(id) => {
            let (kind, advisor) = advised_kinds()
                .find(|(k, _)| k.id() == id)
                .expect("regime_at picks advised kinds only");
            let config = advice_config(kind, n, p);
            let at_n = cell(r, id, n);
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
                    c.member_query_ns_per_key,
                    if c.n == n {
                        "measured".to_string()
                    } else {
                        format!(
                            "measured at n = {}; larger arrays are slower",
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
            let crawl = match kind.predicted_fpr_after(&config, n) {
                Some(_) => {
                    crawl_skipped(n, |i| kind.predicted_fpr_after(&config, i).unwrap_or(0.0))
                }
                // Collisions of an exact set grow with its fill: half its final rate on average.
                None => predicted * n as f64 / 2.0,
            };
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

/// The answer section, first on the page.
pub fn section(s: &mut String, r: &Results, analysis: &crate::analysis::Analysis) {
    let Some(h) = &r.header else {
        return;
    };
    let budget = h.memory_budget_bytes as f64;
    let Some(workload) = crate::analysis::regimes::run_workload(r) else {
        return;
    };
    let sizing = Sizing {
        run: Some((r, "this run")),
        fpr: h.fpr,
        budget_bytes: budget,
    };
    let _ = writeln!(
        s,
        "<section id=\"answer\"><h2>The answer: p = {}, memory budget {}</h2>",
        h.fpr,
        human_bytes(budget)
    );
    if let Some(ladder) = run_ladder(r) {
        let mark = |n: f64, id: &str| {
            if n > measured_max_n(r, id) as f64 * 1.000_001 {
                format!("{}*", human_count(n))
            } else {
                human_count(n)
            }
        };
        // One node holds a Bloom filter for the rate up to this n.
        let node_n = crate::analysis::regimes::largest_n(NODE_MEMORY_BYTES as f64, |n| {
            BloomSizing::for_rate(n, h.fpr).bytes() as f64
        });
        let _ = writeln!(s, "<ol id=\"ladder\" class=\"ladder\">");
        for rung in &ladder {
            let id = rung.id.as_str();
            let range = match rung.to_n {
                Some(to) if rung.from_n <= 1.0 => format!("n ≤ {}", mark(to, id)),
                Some(to) => format!("{} – {}", mark(rung.from_n, id), mark(to, id)),
                None if node_n > rung.from_n => {
                    format!("{} – {}", mark(rung.from_n, id), mark(node_n, id))
                }
                None => format!("n > {}", mark(rung.from_n, id)),
            };
            let name = match find(&rung.id) {
                Ok(k) => format!("<b>{}</b> — {}", esc(k.id()), esc(k.summary())),
                Err(_) => format!(
                    "<b>a shared server</b>: past the budget, a Bloom filter on one Redis server (redis-bloom), while it fits one {} node",
                    human_bytes(NODE_MEMORY_BYTES as f64)
                ),
            };
            let _ = writeln!(s, "<li><span class=\"range\">{range}</span> {name}</li>");
        }
        if ladder
            .last()
            .is_some_and(|r| r.to_n.is_none() && node_n > r.from_n)
        {
            let measured = match crate::analysis::sweep::cluster_ratio(r, SHARED_BATCH_KEYS) {
                Some(ratio) => format!(
                    "this run measured redis-bloom split over a loopback cluster at {:.0}% of one node's inserts",
                    100.0 * ratio
                ),
                None => "`bench --suite redis --redis-cluster URLS` measures it".to_string(),
            };
            let _ = writeln!(
                s,
                "<li><span class=\"range\">n > {}</span> <b>a sharded cluster</b>: past one node, the filter split over the masters of a Redis Cluster (--redis-cluster; {})</li>",
                mark(node_n, ""),
                esc(&measured)
            );
        }
        let _ = writeln!(s, "</ol>");
        let _ = writeln!(
            s,
            "<p><small>* projected: past the largest n this run measured that structure at (any structure: {}), from the size models and the line fitted to this run's measured bytes.</small></p>",
            human_count(measured_max_n(r, "") as f64)
        );
    }
    let mut scales: Vec<u64> = TYPICAL_N.to_vec();
    if let Some(top) = h.scales.iter().copied().max() {
        if !scales.contains(&top) {
            scales.push(top);
        }
    }
    scales.sort_unstable();
    let _ = writeln!(
        s,
        "<table class=\"answer\"><tr><th>n</th><th>use</th><th>bytes per key</th><th>insert / lookup, ns per key (median)</th><th>false-positive rate at n (95% interval)</th><th>new URLs skipped in a crawl of n</th></tr>"
    );
    for n in scales {
        let p = pick(r, &sizing, &workload, n);
        let speed = match &p.speed {
            Some((insert, lookup, source)) => format!(
                "{:.1} / {:.1}<br><small>min–max {:.1}–{:.1} / {:.1}–{:.1}; {}</small>",
                insert.median,
                lookup.median,
                insert.min,
                insert.max,
                lookup.min,
                lookup.max,
                esc(source)
            ),
            None => "<small>not measured at this size</small>".into(),
        };
        let interval = p
            .interval
            .map(|(low, high)| format!(" [{}, {}]", pct(low), pct(high)))
            .unwrap_or_default();
        let exact = matches!(p.regime, Regime::InProcess(id) if find(id).is_ok_and(|k| k.exact()));
        let rate = if exact && p.rate == 0.0 {
            "0 (exact)".to_string()
        } else {
            pct(p.rate)
        };
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{:.1}<br><small>{}</small></td><td>{}</td><td>{}{}<br><small>{}; {}</small></td><td>{}<br><small>theory, filling from empty</small></td></tr>",
            human_count(p.n as f64),
            esc(&p.regime.label()),
            p.bytes_per_key,
            p.bytes_source,
            speed,
            rate,
            interval,
            p.rate_source,
            esc(&per_million(p.rate)),
            esc(&lost_in_crawl(p.crawl_skipped, p.n))
        );
    }
    let _ = writeln!(s, "</table>");
    missed_targets(s, analysis);
    let _ = writeln!(
        s,
        "<p><small>Measured: this run's cells at that n. Projected: the size model (or the line fitted to this run's measured bytes) and theory; speeds from the nearest measured n below. A crawler skips a new URL when the filter wrongly answers \"seen\": that page is never fetched.</small></p>"
    );
    let _ = writeln!(
        s,
        "<figure id=\"{MAP_STEM}\"><img src=\"{MAP_STEM}.png\" alt=\"Regime map\"><figcaption><a href=\"{MAP_STEM}.svg\">SVG</a>. Each region is what the advisor picks for that n and budget at p = {}; each line is a structure's bytes at n (it fits any budget above its line); dots are this run's measured cells at its budget. The same map for any workload: <code>dedupbench advise --n N --fpr P --map FILE.svg</code>.</figcaption></figure><p class=\"verdict\">{}</p></section>",
        h.fpr,
        esc(&verdict(r))
    );
}

/// The targets the run missed, in one short line, with every figure behind a fold; targets whose
/// interval holds them are named there too, as undecided.
fn missed_targets(s: &mut String, a: &crate::analysis::Analysis) {
    use crate::analysis::TargetStatus;
    let speed: Vec<&crate::analysis::SpeedRatio> = a.targets(TargetStatus::Missed).collect();
    let undecided: Vec<&crate::analysis::SpeedRatio> = a.targets(TargetStatus::Undecided).collect();
    let rates = &a.missed_rates;
    let once: Vec<&crate::analysis::Ratio> = a.missed_other_ratios().collect();
    if speed.is_empty() && rates.is_empty() && once.is_empty() {
        let _ = writeln!(s, "<p id=\"missed\">Targets missed in this run: none.</p>");
    } else {
        let short: Vec<String> = speed
            .iter()
            .map(|q| super::speed::short(q))
            .chain(once.iter().map(|q| {
                let name = q.what.split(" at n = ").next().unwrap_or(&q.what);
                format!("{name} {:.2} (target {}; measured once)", q.value, q.target)
            }))
            .collect();
        let mut rate_structures: Vec<&str> = Vec::new();
        for m in rates {
            let name = m.split(" at n = ").next().unwrap_or(m);
            if !rate_structures.contains(&name) {
                rate_structures.push(name);
            }
        }
        let mut parts = Vec::new();
        if !short.is_empty() {
            parts.push(format!("speed: {}", short.join("; ")));
        }
        if !rate_structures.is_empty() {
            parts.push(format!(
                "rate above its target: {}",
                rate_structures.join(", ")
            ));
        }
        let _ = writeln!(
            s,
            "<p id=\"missed\">Targets missed in this run: {}.</p>",
            esc(&parts.join(". "))
        );
    }
    if speed.is_empty() && rates.is_empty() && once.is_empty() && undecided.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "<details><summary>Every missed target{}</summary><ul>",
        if undecided.is_empty() {
            ""
        } else {
            ", and those the intervals leave undecided"
        }
    );
    for q in &speed {
        let _ = writeln!(
            s,
            "<li>missed: {} = {} (target ≥ {:.1})</li>",
            esc(&q.label()),
            q.figure(),
            q.target_min_ratio.unwrap_or(f64::NAN)
        );
    }
    for q in &once {
        let _ = writeln!(
            s,
            "<li>missed: {} = {:.2} (target {}; measured once, no interval)</li>",
            esc(&q.what),
            q.value,
            esc(&q.target)
        );
    }
    for m in rates {
        let _ = writeln!(s, "<li>{}</li>", esc(m));
    }
    for q in &undecided {
        let _ = writeln!(
            s,
            "<li>undecided: {} = {} (target ≥ {:.1}: the interval holds it)</li>",
            esc(&q.label()),
            q.figure(),
            q.target_min_ratio.unwrap_or(f64::NAN)
        );
    }
    let _ = writeln!(s, "</ul></details>");
}

/// The ladder in words, with where each figure comes from.
pub fn verdict(r: &Results) -> String {
    let Some(ladder) = crate::analysis::run_ladder(r) else {
        return "No run header.".into();
    };
    let budget = r
        .header
        .as_ref()
        .map(|h| human_bytes(h.memory_budget_bytes as f64))
        .unwrap_or_default();
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

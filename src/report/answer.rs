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
use crate::remote::redis_bloom;
use crate::results::{CellRecord, Results};
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

/// One row of the answer: what to use at n, and what it costs.
struct Pick {
    n: u64,
    regime: Regime,
    bytes_per_key: f64,
    bytes_source: &'static str,
    /// (insert ns, lookup ns, where measured) per key.
    speed: Option<(f64, f64, String)>,
    rate: f64,
    /// The 95% interval of a measured rate.
    interval: Option<(f64, f64)>,
    rate_source: &'static str,
}

fn cell<'a>(r: &'a Results, id: &str, n: u64) -> Option<&'a CellRecord> {
    r.cells.iter().find(|c| c.structure == id && c.n == n)
}

/// The measured cell of `id` nearest to n from below (the largest measured n ≤ n), else its smallest.
fn nearest_cell<'a>(r: &'a Results, id: &str, n: u64) -> Option<&'a CellRecord> {
    let mine = || r.cells.iter().filter(move |c| c.structure == id);
    mine()
        .filter(|c| c.n <= n)
        .max_by_key(|c| c.n)
        .or_else(|| mine().min_by_key(|c| c.n))
}

fn pick(r: &Results, sizing: &Sizing, workload: &Workload, n: u64) -> Pick {
    let regime = regime_at(sizing, workload, n, NODE_MEMORY_BYTES);
    let p = sizing.fpr;
    match regime {
        Regime::InProcess(id) => {
            let (kind, advisor) = advised_kinds()
                .find(|(k, _)| k.id() == id)
                .expect("regime_at picks advised kinds only");
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
                    c.insert_ns_per_key.median,
                    c.member_query_ns_per_key.median,
                    if c.n == n {
                        "measured".to_string()
                    } else {
                        format!("measured at n = {}", human_count(c.n as f64))
                    },
                )
            });
            let (rate, interval, rate_source) = match at_n {
                Some(c) => (
                    c.observed_fpr,
                    Some((c.observed_fpr_wilson95.low, c.observed_fpr_wilson95.high)),
                    "observed",
                ),
                None => (
                    kind.predicted_fpr(&advice_config(kind, n, p)),
                    None,
                    "theory",
                ),
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
            }
        }
        Regime::SharedServer | Regime::Cluster => {
            let sizing = BloomSizing::for_rate(n, p);
            let shared = crate::analysis::sweep::point(r, redis_bloom::ID, SHARED_BATCH_KEYS)
                .filter(|_| regime == Regime::SharedServer);
            Pick {
                n,
                regime,
                bytes_per_key: sizing.bytes() as f64 / n as f64,
                bytes_source: "model (on the server)",
                speed: shared.map(|s| {
                    (
                        1e9 / s.insert_keys_per_s,
                        1e9 / s.member_query_keys_per_s,
                        format!(
                            "measured on one loopback server at n = {}, {SHARED_BATCH_KEYS} keys per round trip",
                            human_count(s.n as f64)
                        ),
                    )
                }),
                rate: sizing.fpr(n),
                interval: None,
                rate_source: "theory",
            }
        }
    }
}

/// The answer section, first on the page.
pub fn section(s: &mut String, r: &Results) {
    let Some(h) = &r.header else {
        return;
    };
    let budget = h.memory_budget_bytes as f64;
    let workload = Workload {
        n_low: 1,
        n_high: 1,
        fpr: h.fpr,
        memory_bytes: h.memory_budget_bytes.max(1),
        deletes: false,
        growth_unknown: false,
        shared: false,
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
        let _ = writeln!(s, "<ol id=\"ladder\" class=\"ladder\">");
        for rung in &ladder {
            let range = match rung.to_n {
                Some(to) if rung.from_n <= 1.0 => format!("n ≤ {}", human_count(to)),
                Some(to) => format!("{} – {}", human_count(rung.from_n), human_count(to)),
                None => format!("n > {}", human_count(rung.from_n)),
            };
            let name = match find(&rung.id) {
                Ok(k) => format!("<b>{}</b> — {}", esc(k.id()), esc(k.summary())),
                Err(_) => format!(
                    "<b>past the budget</b>: a filter on a shared server (redis-bloom) while it fits one {} node, then a sharded cluster",
                    human_bytes(NODE_MEMORY_BYTES as f64)
                ),
            };
            let _ = writeln!(s, "<li><span class=\"range\">{range}</span> {name}</li>");
        }
        let _ = writeln!(s, "</ol>");
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
        "<table class=\"answer\"><tr><th>n</th><th>use</th><th>bytes per key</th><th>insert / lookup, ns per key</th><th>false-positive rate</th><th>in a crawl of n new URLs</th></tr>"
    );
    for n in scales {
        let p = pick(r, &sizing, &workload, n);
        let speed = match &p.speed {
            Some((insert, lookup, source)) => {
                format!(
                    "{insert:.1} / {lookup:.1}<br><small>{}</small>",
                    esc(source)
                )
            }
            None => "<small>not measured in this run</small>".into(),
        };
        let exact = matches!(p.regime, Regime::InProcess(id) if find(id).is_ok_and(|k| k.exact()));
        let interval = p
            .interval
            .map(|(low, high)| format!(" [{}, {}]", pct(low), pct(high)))
            .unwrap_or_default();
        let (rate, interval) = if exact && p.rate == 0.0 {
            ("0 (exact)".to_string(), String::new())
        } else {
            (pct(p.rate), interval)
        };
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{:.1}<br><small>{}</small></td><td>{}</td><td>{}{}<br><small>{}; {}</small></td><td>{}</td></tr>",
            human_count(p.n as f64),
            esc(&p.regime.label()),
            p.bytes_per_key,
            p.bytes_source,
            speed,
            rate,
            interval,
            p.rate_source,
            esc(&per_million(p.rate)),
            esc(&lost_in_crawl(p.rate, p.n))
        );
    }
    let _ = writeln!(s, "</table>");
    missed_targets(s, r);
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

/// The targets the run missed, in one short line, with every figure behind a fold.
fn missed_targets(s: &mut String, r: &Results) {
    let speed: Vec<crate::analysis::Ratio> = crate::analysis::ratios(r)
        .into_iter()
        .filter(|x| x.met == Some(false))
        .collect();
    let rates = crate::analysis::missed_targets(r);
    if speed.is_empty() && rates.is_empty() {
        let _ = writeln!(s, "<p id=\"missed\">Targets missed in this run: none.</p>");
        return;
    }
    let short: Vec<String> = speed
        .iter()
        .map(|x| {
            let name = x.what.split(',').next().unwrap_or(&x.what);
            format!("{name} {:.2} ({})", x.value, x.target)
        })
        .collect();
    let mut rate_structures: Vec<&str> = Vec::new();
    for m in &rates {
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
        "<p id=\"missed\">Targets missed in this run: {}.</p><details><summary>Every missed target</summary><ul>",
        esc(&parts.join(". "))
    );
    for x in &speed {
        let _ = writeln!(
            s,
            "<li>{} = {:.2} (target {})</li>",
            esc(&x.what),
            x.value,
            esc(&x.target)
        );
    }
    for m in &rates {
        let _ = writeln!(s, "<li>{}</li>", esc(m));
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
        "For a {budget} budget, with the exact sets' bytes per key measured in this run and the filters' from the sizing formulas: {}.",
        steps.join("; then ")
    )
}

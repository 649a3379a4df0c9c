//! `advise`'s tables as text: the price of each rate with the pick and its reasons, and the fleet.

use dedupbench::advise::fleet::{FleetPlan, BATCH_URLS};
use dedupbench::advise::rates::{Loss, PickReason, RateAsk, RatePrices, OVERSHOOT};
use dedupbench::units::{human_bytes, human_count, human_rate};
use dedupbench::workload::Workload;

use super::table::aligned;

fn lost_count(x: f64) -> String {
    if x >= 1.0 {
        human_count(x.round())
    } else if x > 0.0 {
        format!("{x:.2}")
    } else {
        "0".into()
    }
}

/// Why the rate is the one picked, in words.
pub fn pick_words(reason: &PickReason, budget_bytes: u64) -> String {
    match reason {
        PickReason::Asked => "as asked (--fpr)".to_string(),
        PickReason::CostOptimum { id, fp_cost_ns } => format!(
            "the cost model's optimum: {id} at the size that minimises lookup time + rate × {} (--fp-cost)",
            human_ns(*fp_cost_ns)
        ),
        PickReason::Headroom { id, bytes, budget_bytes } => format!(
            "the lowest rate of the table at which a filter still fits the budget ({id}, {}, in {}): memory the budget leaves over buys a lower rate",
            human_bytes(*bytes as f64),
            human_bytes(*budget_bytes as f64)
        ),
        PickReason::ExactFits { id, bytes } => format!(
            "for the filters below; but the exact {id} ({}) fits the budget and errs only on a fingerprint collision, if at all, so it comes first",
            human_bytes(*bytes as f64)
        ),
        PickReason::NothingFits => format!(
            "nothing fits the {} budget even at the table's highest rate; the advice below says what fails",
            human_bytes(budget_bytes as f64)
        ),
    }
}

/// The rate the advice uses, in one line, and the rate table.
pub fn print_rates(p: &RatePrices, budget_bytes: u64) {
    let n = human_count(p.n as f64);
    let over = human_count((p.n as f64 * OVERSHOOT).round());
    let why = pick_words(&p.reason, budget_bytes);
    println!("Rate: p = {} — {why}.", human_rate(p.picked_fpr));
    match p.ask {
        RateAsk::Default => println!(
            "  (no --fpr given: the default is to spend the budget's headroom on the lowest rate from 1% down to 1 per million; --fpr P fixes it, --fpr LOW..HIGH bounds it)"
        ),
        RateAsk::Range { low, high } => println!(
            "  (--fpr {}..{}: the headroom is spent within that range)",
            human_rate(low),
            human_rate(high)
        ),
        RateAsk::Fixed { .. } => {}
    }
    println!();
    let loss_heads: Vec<String> = match p.workload {
        Workload::Crawl | Workload::Window => vec![
            format!("never crawled in {n} URLs"),
            format!("in {over} (1.5× n)"),
        ],
        Workload::Blocklist => vec!["legitimate entries blocked per million checks".into()],
        Workload::CacheGuard => vec!["needless backend reads per million absent keys".into()],
        Workload::Shipped => vec!["wrong answers per million absent keys".into()],
    };
    println!(
        "The price of each rate ({}, {n} keys, {}; {}):",
        p.workload,
        human_bytes(budget_bytes as f64),
        p.lookup_source
    );
    let mut rows = vec![[
        vec![
            "rate".to_string(),
            "structure".into(),
            "memory".into(),
            "bits/key".into(),
            "lookup".into(),
        ],
        loss_heads,
    ]
    .concat()];
    let mut bounded = false;
    for rate in &p.rates {
        for (i, r) in rate.rows.iter().enumerate() {
            let lookup = match r.lookup_ns {
                Some(ns) => format!("{ns:.0} ns{}", if r.lookup_projected { "*" } else { "" }),
                None => "-".into(),
            };
            let losses = match r.loss {
                Loss::Crawl {
                    pages_lost_at_n,
                    pages_lost_at_overshoot,
                    bound,
                } => {
                    bounded |= bound;
                    vec![
                        format!(
                            "{}{}",
                            if bound { "≤ " } else { "" },
                            lost_count(pages_lost_at_n)
                        ),
                        pages_lost_at_overshoot
                            .map(lost_count)
                            .unwrap_or_else(|| "no model past n".into()),
                    ]
                }
                Loss::PerMillionChecks { wrong_per_million } => {
                    vec![format!("{wrong_per_million:.3}")]
                }
            };
            rows.push(
                [
                    vec![
                        if i == 0 {
                            human_rate(rate.fpr)
                        } else {
                            String::new()
                        },
                        r.label.clone(),
                        format!(
                            "{}{}",
                            human_bytes(r.bytes as f64),
                            if r.fits { "" } else { " (over)" }
                        ),
                        format!("{:.1}", r.bits_per_key),
                        lookup,
                    ],
                    losses,
                ]
                .concat(),
            );
        }
    }
    let right: Vec<usize> = (2..rows[0].len()).collect();
    for line in aligned(&rows, &right, "  ") {
        println!("{line}");
    }
    if bounded {
        println!("  ≤: no model of its rate while it fills; its rate at n charged throughout (an upper bound)");
    }
    if matches!(p.workload, Workload::Crawl | Workload::Window) {
        println!(
            "  (a filter sized for n and filling from empty: each new URL is lost with the rate at that fill; past n the rate climbs)"
        );
    }
}

/// The fleet's designs, best first.
pub fn print_fleet(f: &FleetPlan) {
    let partition = f.fleet.partition.words();
    println!(
        "The fleet: {} machines of {} each, {partition}, {} URLs at p = {}.",
        f.fleet.machines,
        human_bytes(f.fleet.machine_memory_bytes as f64),
        human_count(f.n as f64),
        human_rate(f.fpr)
    );
    println!(
        "  Rate: p = {} — {}.",
        human_rate(f.fpr),
        pick_words(&f.rate_reason, f.fleet.machine_memory_bytes)
    );
    println!(
        "  Skew: the fullest machine sees {:.2}× n/M ({}).",
        f.skew.fullest_over_mean, f.skew.source
    );
    let mut rows = vec![vec![
        String::new(),
        "design".to_string(),
        "keys each".into(),
        "per machine".into(),
        "per Redis node".into(),
        "round trips/URL".into(),
        "never crawled".into(),
    ]];
    for (i, o) in f.options.iter().enumerate() {
        rows.push(vec![
            if o.usable() {
                format!("{}.", i + 1)
            } else {
                "-".into()
            },
            o.design(),
            human_count(o.keys as f64),
            if o.bytes_per_machine > 0 {
                human_bytes(o.bytes_per_machine as f64)
            } else {
                "0".into()
            },
            if o.bytes_per_node > 0 {
                human_bytes(o.bytes_per_node as f64)
            } else {
                "-".into()
            },
            if o.round_trips_per_batch() > 0 {
                format!("{}/{BATCH_URLS}", o.round_trips_per_batch())
            } else {
                "0".into()
            },
            if o.deduplicates_across_machines {
                format!(
                    "{}{}",
                    if o.pages_lost_bound { "≤ " } else { "" },
                    lost_count(o.pages_lost)
                )
            } else {
                "every repeat across machines".into()
            },
        ]);
    }
    for (i, line) in aligned(&rows, &[2, 3, 4, 5, 6], "  ").iter().enumerate() {
        println!("{line}");
        if let Some(o) = i.checked_sub(1).and_then(|i| f.options.get(i)) {
            println!("        {}", o.note);
        }
    }
    if let Some(o) = f.options.iter().find(|o| o.node_inserts_per_sec.is_some()) {
        println!(
            "  One Redis node takes {} inserts/s ({}): the {} machines together, on one node.",
            human_count(o.node_inserts_per_sec.unwrap_or_default()),
            o.node_rate_source.as_deref().unwrap_or_default(),
            f.fleet.machines
        );
    }
}

/// A duration in nanoseconds with the unit that keeps it readable.
pub fn human_ns(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.2} ns")
    }
}

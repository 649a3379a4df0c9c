//! `dedupbench advise`: a ranked recommendation, the thresholds and the regime ladder for a workload,
//! from theory and the model or from a bench run's measurements (`--results DIR`).

use anyhow::Result;
use clap::{Args, ValueEnum};
use dedupbench::advise::fleet::{Fleet, Partition};
use dedupbench::advise::rates::RateAsk;
use dedupbench::advise::{answer, Advice, Request};
use dedupbench::units::{
    duration_ns_arg, human_bytes, human_count, human_rate, size_arg, KeyRange, WindowArg,
};
use dedupbench::workload::Workload;
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Growth {
    Bounded,
    Unknown,
}

#[derive(Args, Debug)]
pub struct AdviseArgs {
    /// Expected distinct keys, or a range low..high (e.g. 50M, 10M..2G).
    #[arg(long, required_unless_present = "window", value_parser = KeyRange::from_arg)]
    n: Option<KeyRange>,
    /// Expiry: a URL becomes eligible again after this window, counted in admissions (URLs let through,
    /// new ones and re-crawls alike: 70M), or a duration (7d, 12h, 30m, 90s) with --admissions-per-sec,
    /// or with --n (every live URL is then admitted once per window). Advises between a windowed
    /// filter, a counting filter with a delete log and an exact map; windows are per process.
    #[arg(long, value_parser = WindowArg::from_arg)]
    window: Option<WindowArg>,
    /// URLs let through per second, re-crawls included, turning a --window duration into admissions.
    #[arg(long, requires = "window", value_parser = dedupbench::units::rate_arg)]
    admissions_per_sec: Option<f64>,
    /// The workload: crawl (insert-if-new over a stream), blocklist (built once, then queried),
    /// cache-guard (inserts and deletes), window (keys expire; with --window), shipped (built here,
    /// loaded elsewhere). Every structure, ours and the peer crates', that supports what it needs is
    /// weighed.
    #[arg(long, default_value = "crawl", value_parser = Workload::from_text)]
    workload: Workload,
    /// What one false positive costs (e.g. 2ms for a database read, 100us for an exact check on disk):
    /// the size, and so the rate, of every structure is then chosen to minimise lookup time + rate ×
    /// this cost per non-member lookup, within the memory budget (lookup times from --results).
    #[arg(long, value_parser = duration_ns_arg)]
    fp_cost: Option<f64>,
    /// The false-positive rate: one (0.001, 1e-3, 0.1%), or a range LOW..HIGH the rate table spans and
    /// the pick stays within. Without it the table spans 1% down to 1 per million and the pick spends
    /// the budget's headroom on the lowest rate that fits.
    #[arg(long, value_parser = RateAsk::parse)]
    fpr: Option<RateAsk>,
    /// Memory budget for the dedup structure (default: memory available now; with --shared, the Redis
    /// node's share for data, 75% of --node-memory).
    #[arg(long, value_parser = size_arg)]
    memory: Option<u64>,
    /// Keys must become eligible again (deletions).
    #[arg(long)]
    deletes: bool,
    /// Whether the final number of keys is known.
    #[arg(long, value_enum, default_value = "bounded")]
    growth: Growth,
    /// Many processes or machines share the set.
    #[arg(long)]
    shared: bool,
    /// A bench results folder to take measured bytes per key and throughput from.
    #[arg(long)]
    results: Option<PathBuf>,
    /// The tool you use now (a structure id, e.g. py-set or guava): its measured cost (from --results)
    /// beside the recommendation.
    #[arg(long, requires = "results")]
    current: Option<String>,
    /// Also draw the regime map for this workload's rate, deletes and growth (n against memory budget,
    /// each region coloured by the pick) into FILE (.svg or .png).
    #[arg(long, value_name = "FILE")]
    map: Option<PathBuf>,
    /// Memory of one Redis node: a shared filter that fits it lives on one node, past it on a cluster of
    /// N masters (also the map's shared-server region).
    #[arg(long = "node-memory", value_parser = size_arg, default_value = "64GiB")]
    node_memory_bytes: u64,
    /// Inserts per second the shared filter must take: with --results from `bench --suite redis`, the
    /// cluster is also sized by the measured per-node insert rate.
    #[arg(long, value_parser = dedupbench::units::rate_arg)]
    inserts_per_sec: Option<f64>,
    /// Machines that crawl (with --machine-memory): prices exact fingerprints or a filter on each machine,
    /// the URLs partitioned between them, against one filter shared on Redis.
    #[arg(long, requires = "machine_memory", value_parser = dedupbench::units::count_arg)]
    machines: Option<u64>,
    /// Memory of each crawling machine that the dedup structure may take (e.g. 16GiB).
    #[arg(long, requires = "machines", value_parser = size_arg)]
    machine_memory: Option<u64>,
    /// How URLs are split between the machines: host (each host to one machine, as a polite crawler
    /// does), url (by URL hash), none (any machine may meet any URL).
    #[arg(long, value_enum, default_value = "host", requires = "machines")]
    partition: Partition,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
}

fn print_window(a: &dedupbench::expiry::WindowAdvice) {
    use dedupbench::units::human_seconds;
    let time = a
        .timing
        .as_ref()
        .map(|t| {
            format!(
                " = {} at {:.2} admissions/s",
                human_seconds(t.window_seconds),
                t.admissions_per_sec
            )
        })
        .unwrap_or_default();
    println!(
        "Expiry window: {} admissions (URLs let through, re-crawls included){time}, at p = {}, memory {}; windows are per process",
        human_count(a.window_keys as f64),
        human_rate(a.fpr),
        human_bytes(a.budget_bytes)
    );
    for note in &a.notes {
        println!("Note: {note}");
    }
    for o in &a.options {
        println!(
            "  {:<32} {:>10} ({:.2} bytes per window URL){}; holds a window of up to {} admissions in the budget; errors: {}",
            o.contender.name(),
            human_bytes(o.bytes),
            o.bytes_per_window_key,
            if o.fits { "" } else { ", over the budget" },
            human_count(o.max_window_keys),
            o.errors
        );
    }
    match &a.timing {
        Some(t) => println!(
            "  Lateness: the windowed filter lets a due re-crawl through up to {} ({} admissions) after its window ends.",
            human_seconds(t.lag_seconds),
            human_count(a.lag_admissions as f64)
        ),
        None => println!(
            "  Lateness: the windowed filter lets a due re-crawl through up to {} admissions after its window ends (give --admissions-per-sec for a time).",
            human_count(a.lag_admissions as f64)
        ),
    }
    for m in &a.measured {
        println!(
            "  Measured by the run ({} at a window of {} admissions, p = {}{}, on its synthetic stream: half the arrivals re-crawls 1 to 3 windows after their first crawl): {} of new arrivals wrongly skipped, of which {} were URLs held past their window.",
            m.contender.name(),
            human_count(m.window_keys as f64),
            human_rate(m.target_fpr),
            if (m.target_fpr / a.fpr - 1.0).abs() > 1e-6 { ", not this advice's rate" } else { "" },
            human_rate(m.skipped_share),
            human_rate(m.skipped_expired_share)
        );
    }
    match a.pick {
        Some(c) => println!("Pick: {}.", c.name()),
        None => println!("Pick: none fits; shorten the window, raise the rate, or partition the URLs between machines."),
    }
}

pub fn run(args: AdviseArgs) -> Result<i32> {
    let request = Request {
        n: args.n,
        window: args.window.clone(),
        admissions_per_sec: args.admissions_per_sec,
        rate: args.fpr.unwrap_or(RateAsk::Default),
        workload: args.workload,
        fp_cost_ns: args.fp_cost,
        // Shared, the structure lives on a Redis node: its budget is the node's share for data.
        memory_bytes: match (args.memory, args.shared) {
            (Some(bytes), _) => bytes,
            (None, true) => {
                (args.node_memory_bytes as f64 * dedupbench::analysis::nodes::USABLE_SHARE) as u64
            }
            (None, false) => dedupbench::measure::machine::available_memory_bytes(),
        },
        deletes: args.deletes,
        growth_unknown: matches!(args.growth, Growth::Unknown),
        shared: args.shared,
        results: args.results.clone(),
        current: args.current.clone(),
        node_memory_bytes: args.node_memory_bytes,
        inserts_per_sec: args.inserts_per_sec,
        fleet: args
            .machines
            .zip(args.machine_memory)
            .map(|(machines, memory)| Fleet {
                machines,
                machine_memory_bytes: memory,
                partition: args.partition,
            }),
        map: args.map.is_some(),
    };
    let answer = answer(&request)?;
    if let (Some(path), Some(workload)) = (&args.map, &answer.workload) {
        let run = answer.run.as_ref().map(|(r, label)| (r, label.as_str()));
        let measured_up_to_n = run
            .map(|(r, _)| dedupbench::report::regime_map::measured_reach(r, workload.fpr))
            .unwrap_or_default();
        let spec = dedupbench::report::regime_map::MapSpec {
            workload: workload.clone(),
            run,
            node_memory_bytes: args.node_memory_bytes,
            measured: Vec::new(),
            measured_up_to_n,
            point: Some(dedupbench::report::regime_map::MapPoint::of(
                workload,
                "your workload",
            )),
        };
        dedupbench::report::regime_map::write_map(path, &spec)?;
        eprintln!("map: {}", path.display());
    }
    if args.json {
        let text = match (&answer.window, &answer.advice) {
            (Some(window), None) => serde_json::to_string_pretty(window)?,
            (None, Some(advice)) => serde_json::to_string_pretty(advice)?,
            _ => serde_json::to_string_pretty(
                &serde_json::json!({ "window": answer.window, "advice": answer.advice }),
            )?,
        };
        println!("{text}");
        return Ok(0);
    }
    if let Some(window) = &answer.window {
        print_window(window);
    }
    if let Some(advice) = &answer.advice {
        if answer.window.is_some() {
            println!();
        }
        print_human(advice);
    }
    Ok(0)
}

/// The cost model's answer: the best contender first, the next ones with what each costs more.
fn print_cost(cost: &dedupbench::advise::CostAnswer, n: u64) {
    let duration = |ns: f64| super::advise_tables::human_ns(ns);
    println!();
    println!(
        "Cost per non-member lookup = lookup time + rate × {} (the false positive's cost), at the size that minimises it within the budget:",
        duration(cost.fp_cost_ns)
    );
    println!("  ({})", cost.lookup_source);
    let Some(best) = cost.ranked.first() else {
        println!(
            "  No contender fits the budget at any rate for {} keys.",
            human_count(n as f64)
        );
        return;
    };
    for (i, c) in cost.ranked.iter().take(6).enumerate() {
        let lookup = c
            .lookup_ns
            .map(|ns| {
                let held = if c.lookup_beyond_measured { "*" } else { "" };
                format!("lookup {ns:.1} ns{held} + ")
            })
            .unwrap_or_default();
        let versus = if i == 0 {
            String::new()
        } else {
            format!(
                ", {} more than the best",
                duration(c.cost_ns - best.cost_ns)
            )
        };
        println!(
            "  {}. {:<42} {:>6.1} bits per key, rate {}: {} per lookup ({lookup}rate term {}){versus}",
            i + 1,
            c.label,
            c.bits_per_key,
            human_rate(c.fpr),
            duration(c.cost_ns),
            duration(c.fpr * cost.fp_cost_ns),
        );
    }
    if !cost.unmeasured.is_empty() {
        let ids: Vec<&str> = cost.unmeasured.iter().map(|c| c.id).collect();
        println!(
            "  Not ranked: {} (the run did not measure them, so their lookup time is unknown; `bench --structures` measures them).",
            ids.join(", ")
        );
    }
    if cost.ranked.iter().take(6).any(|c| c.lookup_beyond_measured) {
        println!("  * outside the sizes the run measured: the lookup time of the nearest measured size, a projection (a larger array is slower)");
    }
}

fn print_human(a: &Advice) {
    let w = &a.workload;
    let n = if w.n_low == w.n_high {
        human_count(w.n_high as f64)
    } else {
        format!(
            "{}..{} (sized for the upper end)",
            human_count(w.n_low as f64),
            human_count(w.n_high as f64)
        )
    };
    println!(
        "Workload {}: n = {n}, p = {}, memory {}, deletes {}, growth {}, shared {}",
        w.workload,
        human_rate(w.fpr),
        human_bytes(w.memory_bytes as f64),
        if w.deletes { "yes" } else { "no" },
        if w.growth_unknown {
            "unknown"
        } else {
            "bounded"
        },
        if w.shared { "yes" } else { "no" }
    );
    if let Some(rates) = &a.rates {
        println!();
        super::advise_tables::print_rates(rates, w.memory_bytes);
    }
    println!();
    for note in &a.notes {
        println!("Note: {note}");
    }
    if let Some(cost) = &a.cost {
        print_cost(cost, w.n_high);
    }
    println!();
    if a.recommended.is_empty() {
        println!("Recommended: none meets every constraint.");
    } else {
        println!("Recommended, best first:");
    }
    let cells = |mark: String, c: &dedupbench::advise::Candidate| {
        let geometry = match (c.bits, c.hashes) {
            (Some(m), Some(k)) => format!("m = {m} bits, k = {k}"),
            _ => String::from("-"),
        };
        let speed = match (c.insert_ns_per_key, c.query_ns_per_key, c.measured_at_n) {
            (Some(i), Some(q), Some(at)) => format!(
                "measured at n = {}: insert {i:.1} ns, query {q:.1} ns per key",
                human_count(at as f64)
            ),
            _ => String::new(),
        };
        vec![
            mark,
            c.label.clone(),
            human_bytes(c.bytes),
            format!("{:.1} bits per key", c.bytes * 8.0 / w.n_high as f64),
            format!("rate {}", human_rate(c.expected_fpr)),
            geometry,
            speed,
        ]
    };
    let ranked: Vec<(String, &dedupbench::advise::Candidate)> = a
        .recommended
        .iter()
        .enumerate()
        .map(|(i, c)| (format!("{}.", i + 1), c))
        .chain(a.rejected.iter().map(|c| ("-".to_string(), c)))
        .collect();
    let rows: Vec<Vec<String>> = ranked.iter().map(|(m, c)| cells(m.clone(), c)).collect();
    let lines = super::table::aligned(&rows, &[2, 3], "  ");
    for (i, (line, (_, c))) in lines.iter().zip(&ranked).enumerate() {
        if i == a.recommended.len() {
            println!("Rejected:");
        }
        println!("{line}");
        println!("        {}", c.reason);
    }
    if a.rejected.is_empty() {
        println!("Rejected: none.");
    }
    if !a.speed_ratios.is_empty() {
        println!();
        println!(
            "Measured against the peers in interleaved rounds (peer time over ours, median [95% interval]; above 1: ours is faster):"
        );
        for q in &a.speed_ratios {
            println!("  {:<100} {} {}", q.label(), q.figure(), q.verdict.words());
        }
    }
    if let Some(c) = &a.current {
        println!();
        let first = a.recommended.first();
        println!(
            "Your current tool, {}: measured at n = {}: {:.1} bytes per key, insert {:.1} ns, query {:.1} ns per key, rate {} (95% {}–{}).",
            c.id,
            human_count(c.measured_at_n as f64),
            c.bytes_per_key,
            c.insert_ns_per_key,
            c.query_ns_per_key,
            human_rate(c.observed_fpr),
            human_rate(c.observed_fpr_wilson95.low),
            human_rate(c.observed_fpr_wilson95.high)
        );
        if let Some(p) = c.measured_at_fpr {
            println!(
                "  (measured with filters built for p = {}; this advice is for p = {}: its rate and a filter's bytes differ)",
                human_rate(p),
                human_rate(w.fpr)
            );
        }
        println!(
            "  At n = {} it would hold ≈ {} ({}; a projection), {} the {} budget{}.",
            human_count(w.n_high as f64),
            human_bytes(c.bytes_at_n),
            c.bytes_source,
            if c.fits_budget { "within" } else { "over" },
            human_bytes(w.memory_bytes as f64),
            first
                .map(|r| format!(
                    "; the first recommendation, {}, needs {} ({:.1}× less)",
                    r.id,
                    human_bytes(r.bytes),
                    c.bytes_at_n / r.bytes.max(1.0)
                ))
                .unwrap_or_default()
        );
    }
    println!();
    println!(
        "Thresholds for {} at p = {} (largest n that fits):",
        human_bytes(w.memory_bytes as f64),
        human_rate(w.fpr)
    );
    let rows: Vec<Vec<String>> = a
        .thresholds
        .iter()
        .map(|t| vec![t.id.to_string(), format!("{} keys", human_count(t.max_n))])
        .collect();
    for line in super::table::aligned(&rows, &[1], "  ") {
        println!("{line}");
    }
    println!(
        "Smallest rate reachable at n = {} in {}: {} (Bloom filter of the whole budget, k = {}).",
        human_count(w.n_high as f64),
        human_bytes(w.memory_bytes as f64),
        human_rate(a.best_fpr_in_budget),
        a.best_hashes_in_budget
    );
    let needs: Vec<String> = a
        .recommended
        .iter()
        .chain(&a.rejected)
        .filter(|c| c.expected_fpr > 0.0)
        .map(|c| format!("{} {}", c.id, human_bytes(c.bytes)))
        .collect();
    println!(
        "Memory at n = {}: {}.",
        human_count(w.n_high as f64),
        needs.join(", ")
    );
    if let Some(o) = &a.overshoot {
        let rates: Vec<String> = o
            .rates
            .iter()
            .map(|(f, r)| format!("{f}× n: {} of new URLs skipped", human_rate(*r)))
            .collect();
        println!(
            "Overshoot: {} sized for n = {}, if n turns out larger (theory): {}.",
            o.id,
            human_count(o.planned_n as f64),
            rates.join("; ")
        );
    }
    println!();
    println!("Regime ladder for this budget:");
    for r in &a.ladder {
        let to = r.to_n.map(human_count).unwrap_or_else(|| "∞".into());
        println!(
            "  {:>8} – {:<8} {:<32} {}",
            human_count(r.from_n),
            to,
            r.id,
            r.why
        );
    }
    if let Some(f) = &a.fleet {
        println!();
        super::advise_tables::print_fleet(f);
    }
    if let Some(p) = &a.nodes {
        println!();
        let place = if p.nodes == 1 {
            "one shared Redis node".to_string()
        } else {
            format!(
                "a Redis Cluster of {} masters (--redis-cluster, {} shards)",
                p.nodes, p.shards
            )
        };
        println!(
            "Past one process (a model): a shared filter for n = {} at p = {} holds {}; on nodes of {} ({:.0}% of it for data) that is {place}.",
            human_count(p.n as f64),
            human_rate(p.fpr),
            human_bytes(p.filter_bytes),
            human_bytes(p.node_memory_bytes as f64),
            100.0 * dedupbench::analysis::nodes::USABLE_SHARE,
        );
        println!(
            "  memory needs {} node(s){}",
            p.nodes_for_memory,
            match (p.inserts_per_sec, p.node_inserts_per_sec, p.nodes_for_throughput) {
                (Some(want), Some(per), Some(nodes)) => format!(
                    "; {} inserts/s need {nodes} at the {} inserts/s one node took ({})",
                    human_count(want),
                    human_count(per),
                    p.node_throughput_source.as_deref().unwrap_or_default()
                ),
                (Some(_), None, _) => "; --inserts-per-sec needs --results of a `bench --suite redis` run to be turned into nodes".to_string(),
                _ => String::new(),
            }
        );
        if p.nodes > 1 {
            println!(
                "  with replicas: Redis replicates asynchronously, so a failover can lose the last inserts a master acknowledged (URLs crawled twice); `dedup --wait-replicas 1` acknowledges a URL only once a replica holds it, at a cost in inserts/s (docs/shared-filters.md)"
            );
        }
    }
}

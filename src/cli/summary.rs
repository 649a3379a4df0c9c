//! The table `bench` prints when a run ends: every cell, every skip, every sweep point, then the speed
//! verdicts and the targets the run missed (from its `analysis.json`).

use dedupbench::analysis::{Analysis, TargetStatus};
use dedupbench::units::{human_bytes, human_count};

/// Prints the summary of `results`, which took `wall_s` seconds.
pub fn print(results: &dedupbench::results::Results, analysis: &Analysis, wall_s: f64) {
    // The first column is as wide as the longest id or skipped subject (redis-bloom-scaling is 19).
    let w = results
        .cells
        .iter()
        .map(|c| c.structure.chars().count())
        .chain(
            results
                .skipped
                .iter()
                .map(|s| s.subject.to_string().chars().count()),
        )
        .fold(12, usize::max);
    println!(
        "{:<w$} {:>6} {:>10} {:>10} {:>10} {:>10} {:>24} {:>10}",
        "structure",
        "n",
        "bytes",
        "bits/key",
        "insert ns",
        "query ns",
        "observed fpr [95%]",
        "theory"
    );
    for c in &results.cells {
        println!(
            "{:<w$} {:>6} {:>10} {:>10.2} {:>10.1} {:>10.1} {:>8.2e} [{:.1e},{:.1e}] {:>10.2e}{}",
            c.structure,
            human_count(c.n as f64),
            human_bytes(c.heap_footprint_bytes as f64),
            c.bits_per_key,
            c.insert_ns_per_key.median,
            c.member_query_ns_per_key.median,
            c.observed_fpr,
            c.observed_fpr_wilson95.low,
            c.observed_fpr_wilson95.high,
            c.expected_fpr,
            if c.false_negatives > 0 {
                "  FALSE NEGATIVES"
            } else {
                ""
            }
        );
    }
    for s in &results.skipped {
        println!(
            "{:<w$} {:>6} skipped: {}",
            s.subject,
            human_count(s.n as f64),
            s.reason
        );
    }
    for p in &results.sweep {
        println!(
            "{:<24} batch {:>5}: insert {:>10.0} keys/s, lookups {:>10.0} keys/s, {:.2} bytes/key, rate {:.2e} (theory {:.2e}){}",
            p.series,
            p.batch_keys,
            p.insert_keys_per_s,
            p.non_member_query_keys_per_s,
            p.bytes_per_key,
            p.observed_fpr,
            p.expected_fpr,
            p.raw_insert_keys_per_s
                .map(|raw| format!(", raw pipeline {raw:.0} keys/s"))
                .unwrap_or_default()
        );
    }
    for s in &results.sweep_skipped {
        println!("{}: not measured: {}", s.subject, s.reason);
    }
    // The speed ratios that carry a target, at the headline size: the interval says which way, if any.
    // The rest are in the report and analysis.json.
    let mut shown = 0;
    for q in analysis.headline() {
        shown += 1;
        println!(
            "speed: {:<84} {:<20} {}{}",
            q.label(),
            q.figure(),
            q.verdict.words(),
            match q.target {
                Some(TargetStatus::Missed) => "; TARGET MISSED".to_string(),
                Some(t) => format!("; target {}", t.words()),
                None => String::new(),
            }
        );
    }
    if analysis.speed_ratios.len() > shown {
        println!(
            "speed: {} more paired ratios (other ops, paths and sizes) in analysis.json and the report",
            analysis.speed_ratios.len() - shown
        );
    }
    for q in analysis.missed_other_ratios() {
        println!(
            "target missed: {} = {:.2} (target {}; measured once)",
            q.what, q.value, q.target
        );
    }
    for l in &analysis.left_out {
        println!(
            "speed group at n = {}: {} not timed with the others: {}",
            human_count(l.n as f64),
            l.structure,
            l.reason
        );
    }
    for missed in &analysis.missed_rates {
        println!("rate missed: {missed}");
    }
    for t in analysis.dedup_cli.iter().flat_map(|d| &d.targets) {
        println!("dedup-cli: {}", t.words());
    }
    println!("wall time {wall_s:.1} s");
}

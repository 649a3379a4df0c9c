//! One plain-language verdict per chart, computed from the results (never hand-written numbers).

use crate::analysis::exact_crossover;
use crate::results::{CellRecord, Results};
use crate::structures::{bitmap, blocked, bloom, fingerprint, hashset, scalable};
use crate::units::{human_bytes, human_count};

fn largest<'a>(r: &'a Results, id: &str) -> Option<&'a CellRecord> {
    r.cells
        .iter()
        .filter(|c| c.structure == id)
        .max_by_key(|c| c.n)
}

fn pct(x: f64) -> String {
    if x >= 0.001 {
        format!("{:.2}%", x * 100.0)
    } else {
        format!("{x:.2e}")
    }
}

/// The verdict for the figure with image stem `stem`.
pub fn verdict(stem: &str, r: &Results) -> String {
    match stem {
        "bytes_vs_n" => memory(r),
        "bits_per_key" => bits(r),
        "insert_throughput" => speed(r, true),
        "query_throughput" => speed(r, false),
        "fpr_vs_n" => rates(r),
        "saturation" => saturation(r),
        "deletion" => deletion(r),
        "growth" => growth(r),
        "bitmap_claim" => bitmap(r),
        "regimes" => regimes(r),
        _ => String::new(),
    }
}

fn memory(r: &Results) -> String {
    let budget = r
        .header
        .as_ref()
        .map(|h| h.memory_budget_bytes as f64)
        .unwrap_or(0.0);
    let mut out = Vec::new();
    if let (Some(h), Some(b)) = (largest(r, hashset::ID), largest(r, bloom::ID)) {
        let n = h.n.min(b.n);
        let hb = r
            .cells
            .iter()
            .find(|c| c.structure == hashset::ID && c.n == n);
        let bb = r
            .cells
            .iter()
            .find(|c| c.structure == bloom::ID && c.n == n);
        if let (Some(hb), Some(bb)) = (hb, bb) {
            out.push(format!(
                "At n = {}, the exact set holds {} ({:.0} bits per key) against {} for the Bloom filter at p = {} ({:.1} bits per key): {:.0}× less memory for the filter.",
                human_count(n as f64),
                human_bytes(hb.heap_footprint_bytes as f64),
                hb.bits_per_key,
                human_bytes(bb.heap_footprint_bytes as f64),
                r.header.as_ref().map(|h| h.fpr).unwrap_or(0.0),
                bb.bits_per_key,
                hb.heap_footprint_bytes as f64 / bb.heap_footprint_bytes.max(1) as f64
            ));
        }
    }
    for (id, name) in [
        (hashset::ID, "exact set of URLs"),
        (fingerprint::ID, "64-bit fingerprint set"),
    ] {
        let ram = r
            .header
            .as_ref()
            .map(|h| h.machine.total_memory_bytes as f64)
            .unwrap_or(0.0);
        if let Some(fit) = crate::analysis::fit_bytes(r, id) {
            out.push(format!(
                "Fitted to its {} measured cells of ≥ 10⁵ keys, the {name} takes {:.1} bytes per key (+ {}); it outgrows the {} budget at n ≈ {} and this machine's {} of RAM at n ≈ {} (projections from this run's measurements; the table grows in doubling steps, so the real edge can come earlier).",
                fit.points,
                fit.bytes_per_key,
                human_bytes(fit.intercept_bytes.max(0.0)),
                human_bytes(budget),
                human_count(fit.keys_at(budget)),
                human_bytes(ram),
                human_count(fit.keys_at(ram))
            ));
        } else if let Some((n, bytes_per_key)) = exact_crossover(r, id, budget) {
            out.push(format!(
                "With the measured {:.1} bytes per key, the {name} outgrows the {} budget at n ≈ {} (a projection from the largest measured cell).",
                bytes_per_key,
                human_bytes(budget),
                human_count(n)
            ));
        }
    }
    let skipped: Vec<String> = super::figures::structure_skips(r)
        .map(|s| format!("{} at n = {}", s.structure, human_count(s.n as f64)))
        .collect();
    if !skipped.is_empty() {
        out.push(format!(
            "Not run (over budget, drawn as projections): {}.",
            skipped.join(", ")
        ));
    }
    let registry = crate::registry::ids();
    let others: Vec<String> = r
        .skipped
        .iter()
        .filter(|s| !registry.contains(&s.structure.as_str()))
        .map(|s| {
            format!(
                "the {} at n = {} ({})",
                s.structure,
                human_count(s.n as f64),
                s.reason
            )
        })
        .collect();
    if !others.is_empty() {
        out.push(format!(
            "Not run (over the memory limit): {}.",
            others.join("; ")
        ));
    }
    if out.is_empty() {
        "Not enough cells to compare structures.".into()
    } else {
        out.join(" ")
    }
}

fn bits(r: &Results) -> String {
    let mut rows: Vec<(f64, &str)> = Vec::new();
    let top = r.cells.iter().map(|c| c.n).max().unwrap_or(0);
    for c in r.cells.iter().filter(|c| c.n == top) {
        rows.push((c.bits_per_key, &c.structure));
    }
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    if rows.is_empty() {
        return "No measured cells.".into();
    }
    let list: Vec<String> = rows.iter().map(|(b, id)| format!("{id} {b:.1}")).collect();
    format!(
        "Bits per key at n = {}, smallest first: {}. The filters' cost per key is flat in n; the exact sets' grows in steps as hashbrown doubles its table.",
        human_count(top as f64),
        list.join(", ")
    )
}

fn speed(r: &Results, insert: bool) -> String {
    let top = r.cells.iter().map(|c| c.n).max().unwrap_or(0);
    let mut rows: Vec<(&CellRecord, f64)> = r
        .cells
        .iter()
        .filter(|c| c.n == top)
        .map(|c| {
            (
                c,
                if insert {
                    c.insert_ns_per_key.median
                } else {
                    c.member_query_ns_per_key.median
                },
            )
        })
        .collect();
    rows.sort_by(|a, b| a.1.total_cmp(&b.1));
    let Some((fastest, ns)) = rows.first() else {
        return "No measured cells.".into();
    };
    let slowest = rows.last().map(|r| r.1).unwrap_or(*ns);
    format!(
        "At n = {}, {} is fastest to {} at {:.1} ns per key ({} keys/s; hashing alone {:.1} ns), {:.1}× the slowest ({:.1} ns). Timings are medians inside one process; compare ratios, not absolute values, across machines.",
        human_count(top as f64),
        fastest.structure,
        if insert { "insert" } else { "query" },
        ns,
        human_count(1e9 / ns),
        fastest.hash_ns_per_key.median,
        slowest / ns,
        slowest
    )
}

fn rates(r: &Results) -> String {
    let filters: Vec<&CellRecord> = r.cells.iter().filter(|c| !c.exact).collect();
    let inside = filters.iter().filter(|c| c.theory_in_interval).count();
    let outside: Vec<String> = filters
        .iter()
        .filter(|c| !c.theory_in_interval)
        .map(|c| {
            format!(
                "{} at n = {} (observed {}, theory {})",
                c.structure,
                human_count(c.n as f64),
                pct(c.observed_fpr),
                pct(c.expected_fpr)
            )
        })
        .collect();
    let negatives: u64 = r.cells.iter().map(|c| c.false_negatives).sum();
    let mut text = format!(
        "Theory lies inside the observed 95% interval in {inside} of {} filter cells. The interval covers the sampling error of the one filter that was built; theory is the mean over all filters, so small arrays (a few thousand bits), whose fill varies from filter to filter, fall outside more often than 1 in 20.",
        filters.len()
    );
    if !outside.is_empty() {
        text.push_str(&format!(" Outside: {}.", outside.join("; ")));
    }
    let with_fill: Vec<&&CellRecord> = filters
        .iter()
        .filter(|c| c.fill_fpr_in_interval.is_some())
        .collect();
    if !with_fill.is_empty() {
        text.push_str(&format!(
            " Against the rate implied by each filter's actual fill (bitmap, bloom), the interval holds it in {} of {} cells.",
            with_fill.iter().filter(|c| c.fill_fpr_in_interval == Some(true)).count(),
            with_fill.len()
        ));
    }
    let missed = crate::analysis::missed_targets(r);
    if !missed.is_empty() {
        text.push_str(&format!(" Missing their target: {}.", missed.join("; ")));
    }
    text.push_str(&if negatives == 0 {
        " False negatives: 0 in every cell.".to_string()
    } else {
        format!(" FALSE NEGATIVES: {negatives} — a bug.")
    });
    text
}

fn saturation(r: &Results) -> String {
    let at = |id: &str, ratio: f64| {
        r.saturation
            .iter()
            .filter(|p| p.structure == id)
            .find(|p| (p.n_inserted as f64 / p.design_n as f64 - ratio).abs() < 1e-9)
    };
    match (at(bloom::ID, 1.0), at(bloom::ID, 2.0), at(bloom::ID, 4.0)) {
        (Some(one), Some(two), Some(four)) => {
            let mut text = format!(
                "A Bloom filter sized for {} keys at p = {} shows {} at its design fill, {} at 2× and {} at 4×: it does not fail at capacity, its rate climbs steadily past it (theory inside the interval at {} of {} points).",
                human_count(one.design_n as f64),
                one.target_fpr,
                pct(one.observed_fpr),
                pct(two.observed_fpr),
                pct(four.observed_fpr),
                r.saturation.iter().filter(|p| p.structure == bloom::ID && p.theory_in_interval).count(),
                r.saturation.iter().filter(|p| p.structure == bloom::ID).count()
            );
            if let Some(s) = at(scalable::ID, 4.0) {
                text.push_str(&format!(
                    " The scalable filter at 4× stays at {} using {} (the fixed filter: {}).",
                    pct(s.observed_fpr),
                    human_bytes(s.bytes as f64),
                    human_bytes(four.bytes as f64)
                ));
            }
            text
        }
        _ => "The saturation experiment did not run.".into(),
    }
}

fn deletion(r: &Results) -> String {
    let Some(d) = r.deletion.first() else {
        return "The deletion experiment did not run.".into();
    };
    format!(
        "The counting filter held {} keys at {} ({:.1}× the Bloom filter's {} for the same p); removing {} of them brought the rate from {} to {} (theory {} → {}), with {} false negatives among the keys left and {} removed keys still answered present, as non-members would be.",
        human_count(d.n_inserted as f64),
        human_bytes(d.counting_bytes as f64),
        d.counting_bytes as f64 / d.bloom_bytes.max(1) as f64,
        human_bytes(d.bloom_bytes as f64),
        human_count(d.n_removed as f64),
        pct(d.false_positives_before as f64 / d.n_queries.max(1) as f64),
        pct(d.false_positives_after as f64 / d.n_queries.max(1) as f64),
        pct(d.expected_fpr_before),
        pct(d.expected_fpr_after),
        d.false_negatives_remaining,
        d.removed_still_present
    )
}

fn growth(r: &Results) -> String {
    let last = |id: &str| {
        r.growth
            .iter()
            .filter(|p| p.structure == id)
            .max_by_key(|p| p.n_inserted)
    };
    match (last(bloom::ID), last(scalable::ID)) {
        (Some(b), Some(s)) => format!(
            "Fed {}× its design size, the fixed Bloom filter answers 'seen' for {} of new keys (target {}); the scalable filter stays at {} with {} against the fixed filter's {}. When the final size is unknown, the fixed filter fails silently and the scalable one pays in memory.",
            b.n_inserted / b.design_n.max(1),
            pct(b.observed_fpr),
            b.target_fpr,
            pct(s.observed_fpr),
            human_bytes(s.bytes as f64),
            human_bytes(b.bytes as f64)
        ),
        _ => "The growth experiment did not run.".into(),
    }
}

fn bitmap(r: &Results) -> String {
    let one = r
        .bitmap_claim
        .iter()
        .find(|p| p.structure == bitmap::ID && p.bits == p.n_inserted);
    let Some(one) = one else {
        return "The bitmap experiment did not run.".into();
    };
    let target = one.target_fpr;
    // Measured: the fewest bits per key tried whose observed rate is at or below the target.
    let reach = |id: &str| {
        r.bitmap_claim
            .iter()
            .filter(|p| p.structure == id && p.observed_fpr <= target)
            .map(|p| p.bits / p.n_inserted.max(1))
            .min()
            .map(|b| format!("{b}"))
            .unwrap_or_else(|| "more than the largest size tried".into())
    };
    let bitmap_formula = -1.0 / (-target).ln_1p();
    let bloom_formula = -target.ln() / std::f64::consts::LN_2.powi(2);
    format!(
        "At one bit per key (the article's 6·10⁹ bits for 6·10⁹ URLs) the bitmap reports {} of new keys as already seen (theory {}): it does not 'automatically deduplicate', it silently drops that share of new URLs. Reaching p = {target} takes the bitmap {bitmap_formula:.1} bits per key by its formula (on the tried grid 1, 2, 4 … 100: {} measured) and a Bloom filter {bloom_formula:.2} (grid: {}).",
        pct(one.observed_fpr),
        pct(one.expected_fpr),
        reach(bitmap::ID),
        reach(bloom::ID)
    )
}

fn regimes(r: &Results) -> String {
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

/// The scenario's findings in plain words.
pub fn scenario(x: &crate::results::ScenarioRecord) -> String {
    let get = |id: &str| x.structures.iter().find(|s| s.structure == id);
    let (Some(bitmap), Some(bloom), Some(blocked)) =
        (get(bitmap::ID), get(bloom::ID), get(blocked::ID))
    else {
        return "Incomplete scenario record.".into();
    };
    format!(
        "{} distinct URLs. The {} budget buys: the raw bitmap ({}) that reports {} of new URLs as already seen (theory {}), or the best Bloom filter of the budget ({}, k = {}) at {} (theory {}): neither deduplicates, both silently drop a large share of new URLs. A rate of {} takes {} in a cache-blocked filter, observed {} (theory {}). The whole run took {:.0} s.",
        human_count(x.n as f64),
        human_bytes(x.budget_bytes as f64),
        human_bytes(bitmap.bytes as f64),
        pct(bitmap.observed_fpr),
        pct(bitmap.expected_fpr),
        human_bytes(bloom.bytes as f64),
        bloom.hashes,
        pct(bloom.observed_fpr),
        pct(bloom.expected_fpr),
        pct(blocked.expected_fpr.max(0.0)).replace("1.00%", "1%"),
        human_bytes(blocked.bytes as f64),
        pct(blocked.observed_fpr),
        pct(blocked.expected_fpr),
        x.wall_s
    )
}

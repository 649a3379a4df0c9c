//! `index.html`: the machine, the parameters, every figure with its verdict, and tables of every number
//! with its uncertainty. Deterministic: the same results give the same bytes.

use super::figures::Drawn;
use super::markup::{esc, sci};
use super::verdicts::verdict;
use crate::results::Results;
use crate::units::{human_bytes, human_count};
use std::fmt::Write;

/// The whole page.
pub fn page(r: &Results, figures: &[Drawn]) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>dedupbench report</title>\n<style>\
body{{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}}\
table{{border-collapse:collapse;font-size:13px;margin:1em 0}}td,th{{border:1px solid #ccc;padding:3px 6px;text-align:right}}\
th{{background:#f3f3f3}}td:first-child,th:first-child{{text-align:left}}.bad{{color:#fff;background:#c00;font-weight:bold}}\
.warn{{color:#a00}}figure{{margin:1.5em 0}}img{{max-width:100%;border:1px solid #ddd}}.verdict{{background:#f6f8fa;padding:.6em;border-left:4px solid #1f77b4}}\
</style></head><body>\n<h1>dedupbench report</h1>\n"
    );
    if let Some(h) = &r.header {
        let _ = write!(
            s,
            "<p>Suite <b>{}</b>, scales {}, structures {}, target rate p = {}, memory budget {}, seed {}, {} repetitions, profile {}{}.</p>\n\
<p>Machine: {} ({} cores), {} RAM, {}; {}; dedupbench {} at commit {}; transparent huge pages: {}. Run started at Unix time {}.</p>\n",
            esc(&h.suite),
            h.scales.iter().map(|n| human_count(*n as f64)).collect::<Vec<_>>().join(", "),
            esc(&h.structures.join(", ")),
            h.fpr,
            human_bytes(h.memory_budget_bytes as f64),
            h.seed,
            h.reps,
            esc(&h.profile),
            h.input.as_ref().map(|i| format!(", members from {}", esc(i))).unwrap_or_default(),
            esc(&h.machine.cpu_model),
            h.machine.cores,
            human_bytes(h.machine.total_memory_bytes as f64),
            esc(&h.machine.os),
            esc(&h.machine.rustc),
            esc(&h.dedupbench_version),
            esc(&h.machine.git_commit),
            esc(&h.machine.transparent_hugepages),
            h.started_unix_s
        );
        let _ = writeln!(
            s,
            "<p>Keys: mean {:.1} bytes (glibc chunk {:.1} bytes). Raw data: <a href=\"results.jsonl\">results.jsonl</a>, <a href=\"results.csv\">results.csv</a>.</p>",
            h.key_lengths.mean_bytes, h.key_lengths.mean_chunk_bytes
        );
    }
    for w in &r.warnings {
        let _ = writeln!(s, "<p class=\"warn\">Warning: {}</p>", esc(w));
    }
    let negatives: u64 = r.cells.iter().map(|c| c.false_negatives).sum::<u64>()
        + r.deletion
            .iter()
            .map(|d| d.false_negatives_remaining)
            .sum::<u64>()
        + r.saturation
            .iter()
            .chain(&r.growth)
            .chain(&r.bitmap_claim)
            .map(|p| p.false_negatives)
            .sum::<u64>();
    if negatives > 0 {
        let _ = writeln!(s, "<p class=\"bad\">FALSE NEGATIVES FOUND: {negatives}. A structure lost inserted keys: this is a bug.</p>");
    }
    let _ = writeln!(s, "<h2>Verdicts</h2><ul>");
    for f in figures {
        let _ = writeln!(
            s,
            "<li><a href=\"#{}\">{}</a>: {}</li>",
            f.stem,
            esc(f.title),
            esc(&verdict(f.stem, r))
        );
    }
    if !r.shared.is_empty() {
        let _ = writeln!(
            s,
            "<li><a href=\"#shared\">Shared filter</a>: {}</li>",
            esc(&super::shared::verdict(r))
        );
    }
    let _ = writeln!(s, "</ul>");
    for f in figures {
        let _ = writeln!(
            s,
            "<figure id=\"{0}\"><h2>{1}</h2><img src=\"{0}.png\" alt=\"{1}\"><figcaption><a href=\"{0}.svg\">SVG</a></figcaption>\
<p class=\"verdict\">{2}</p></figure>",
            f.stem,
            esc(f.title),
            esc(&verdict(f.stem, r))
        );
        if f.stem == "bytes_vs_n" {
            memory_table(&mut s, r);
        }
        if f.stem == "query_throughput" {
            speed_table(&mut s, r);
            probe_table(&mut s, r);
        }
        if f.stem == "fpr_vs_n" {
            rate_table(&mut s, r);
        }
        if matches!(f.stem, "saturation" | "growth" | "bitmap_claim") {
            let points = match f.stem {
                "saturation" => &r.saturation,
                "growth" => &r.growth,
                _ => &r.bitmap_claim,
            };
            point_table(&mut s, points);
        }
    }
    scenario_section(&mut s, r);
    {
        use super::chart::Figure;
        let f = super::shared::SharedThroughput;
        let figure = format!(
            "<figure id=\"{0}\"><img src=\"{0}.png\" alt=\"{1}\"><figcaption><a href=\"{0}.svg\">SVG</a></figcaption></figure>",
            f.stem(),
            esc(f.title())
        );
        super::shared::section(&mut s, r, &figure);
    }
    let _ = writeln!(s, "</body></html>");
    s
}

fn memory_table(s: &mut String, r: &Results) {
    let _ = writeln!(
        s,
        "<table><tr><th>structure</th><th>n</th><th>bits</th><th>k</th><th>bytes held</th><th>heap requested</th><th>heap footprint</th><th>model footprint</th><th>model / measured</th><th>bits per key</th><th>RSS after build</th><th>peak RSS</th></tr>"
    );
    for c in &r.cells {
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.4}</td><td>{:.2}</td><td>{}</td><td>{}</td></tr>",
            esc(&c.structure),
            human_count(c.n as f64),
            c.geometry.bits.map(|b| b.to_string()).unwrap_or_else(|| "–".into()),
            c.geometry.hashes.map(|k| k.to_string()).unwrap_or_else(|| "–".into()),
            c.bytes_held,
            c.heap_requested_bytes,
            c.heap_footprint_bytes,
            c.model_footprint_bytes.round(),
            c.model_footprint_bytes / (c.heap_footprint_bytes.max(1) as f64),
            c.bits_per_key,
            human_bytes(c.rss_after_bytes as f64),
            human_bytes(c.rss_peak_bytes as f64)
        );
    }
    for k in super::figures::structure_skips(r) {
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td colspan=\"5\">skipped: {}</td><td>{} (projection)</td><td></td><td>{:.2}</td><td></td><td></td></tr>",
            esc(&k.structure),
            human_count(k.n as f64),
            esc(&k.reason),
            k.projected_bytes.round(),
            k.projected_bytes * 8.0 / k.n.max(1) as f64
        );
    }
    let _ = writeln!(s, "</table>");
}

fn speed_table(s: &mut String, r: &Results) {
    let _ = writeln!(
        s,
        "<h3 id=\"speed\">Speed</h3><p>Nanoseconds per key: median [min, max] over repetitions. Hashing is timed alone on the same keys; probe = the structure's own cost.</p>\
<table><tr><th>structure</th><th>n</th><th>insert ns</th><th>hash ns</th><th>probe (insert) ns</th><th>member query ns</th><th>non-member query ns</th><th>insert keys/s</th><th>query keys/s</th></tr>"
    );
    let span = |x: crate::stats::Summary| format!("{:.1} [{:.1}, {:.1}]", x.median, x.min, x.max);
    for c in &r.cells {
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&c.structure),
            human_count(c.n as f64),
            span(c.insert_ns_per_key),
            span(c.hash_ns_per_key),
            span(c.probe_insert_ns_per_key),
            span(c.member_query_ns_per_key),
            span(c.non_member_query_ns_per_key),
            human_count(c.insert_keys_per_s()),
            human_count(c.query_keys_per_s())
        );
    }
    let _ = writeln!(s, "</table>");
    let ratios = crate::analysis::ratios(r);
    if !ratios.is_empty() {
        let _ = writeln!(s, "<h3>Ratios measured in this run</h3><table><tr><th>ratio</th><th>value</th><th>target</th><th>met</th></tr>");
        for q in &ratios {
            let met = match q.met {
                Some(true) => "<td>yes</td>".to_string(),
                Some(false) => "<td class=\"warn\">no</td>".to_string(),
                None => "<td>–</td>".to_string(),
            };
            let _ = writeln!(
                s,
                "<tr><td>{}</td><td>{:.2}</td><td>{}</td>{met}</tr>",
                esc(&q.what),
                q.value,
                esc(&q.target)
            );
        }
        let _ = writeln!(s, "</table>");
    }
    let missed = crate::analysis::missed_targets(r);
    if !missed.is_empty() {
        let _ = writeln!(
            s,
            "<p class=\"warn\">Filters that miss the rate they were built for: {}.</p>",
            esc(&missed.join("; "))
        );
    }
}

/// Random-read costs of this machine by page size and access pattern, beside the reference.
fn probe_table(s: &mut String, r: &Results) {
    for p in &r.memory_probe {
        let _ = writeln!(
            s,
            "<h3>Memory access on this machine ({} array, {} reads)</h3>\
<table><tr><th>pages</th><th>dependent reads, ns</th><th>independent reads, ns</th><th>reference (issue, this kind of machine)</th></tr>\
<tr><td>4 KiB (MADV_NOHUGEPAGE)</td><td>{:.1}</td><td>{:.1}</td><td>≈ 250 dependent, ≈ 70 independent</td></tr>\
<tr><td>huge pages asked for (MADV_HUGEPAGE; {} granted)</td><td>{:.1}</td><td>{:.1}</td><td>≈ 25 independent</td></tr></table>\
<p>Huge pages cut the independent read from {:.1} to {:.1} ns ({:.2}×). The structures ask for huge pages on arrays of 4 MiB or more; each cell records how many bytes the kernel granted.</p>",
            human_bytes(p.array_bytes as f64),
            p.reads,
            p.dependent_ns,
            p.independent_ns,
            human_bytes(p.huge_page_bytes as f64),
            p.dependent_huge_ns,
            p.independent_huge_ns,
            p.independent_ns,
            p.independent_huge_ns,
            p.independent_ns / p.independent_huge_ns.max(1e-9)
        );
    }
}

fn rate_table(s: &mut String, r: &Results) {
    let _ = writeln!(
        s,
        "<table><tr><th>structure</th><th>n</th><th>member queries</th><th>false negatives</th><th>non-member queries</th><th>false positives</th><th>observed rate</th><th>95% Wilson interval</th><th>theory</th><th>theory inside</th><th>rate from this filter's fill</th><th>fill rate inside</th></tr>"
    );
    for c in &r.cells {
        let fn_cell = if c.false_negatives > 0 {
            format!("<td class=\"bad\">{}</td>", c.false_negatives)
        } else {
            "<td>0</td>".into()
        };
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td>{}<td>{}</td><td>{}</td><td>{}</td><td>[{}, {}]</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&c.structure),
            human_count(c.n as f64),
            c.n_member_queries,
            fn_cell,
            c.n_non_member_queries,
            c.n_false_positives,
            sci(c.observed_fpr),
            sci(c.observed_fpr_wilson95.low),
            sci(c.observed_fpr_wilson95.high),
            sci(c.expected_fpr),
            if c.theory_in_interval { "yes" } else { "no" },
            c.fill_fpr.map(sci).unwrap_or_else(|| "–".into()),
            match c.fill_fpr_in_interval {
                Some(true) => "yes",
                Some(false) => "no",
                None => "–",
            }
        );
    }
    let _ = writeln!(s, "</table>");
}

fn point_table(s: &mut String, points: &[crate::results::RatePoint]) {
    if points.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "<table><tr><th>structure</th><th>design n</th><th>inserted</th><th>bits</th><th>k</th><th>bytes</th><th>queries</th><th>false positives</th><th>observed</th><th>95% interval</th><th>theory</th><th>inside</th><th>false negatives</th></tr>"
    );
    for p in points {
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>[{}, {}]</td><td>{}</td><td>{}</td>{}</tr>",
            esc(&p.structure),
            human_count(p.design_n as f64),
            human_count(p.n_inserted as f64),
            p.bits,
            p.hashes,
            human_bytes(p.bytes as f64),
            p.n_queries,
            p.n_false_positives,
            sci(p.observed_fpr),
            sci(p.observed_fpr_wilson95.low),
            sci(p.observed_fpr_wilson95.high),
            sci(p.expected_fpr),
            if p.theory_in_interval { "yes" } else { "no" },
            if p.false_negatives > 0 { format!("<td class=\"bad\">{}</td>", p.false_negatives) } else { "<td>0</td>".into() }
        );
    }
    let _ = writeln!(s, "</table>");
}

fn scenario_section(s: &mut String, r: &Results) {
    for x in &r.scenario {
        let _ = writeln!(
            s,
            "<h2 id=\"scenario\">The 6-billion-URL scenario at n = {}</h2><p class=\"verdict\">{}</p>",
            human_count(x.n as f64),
            esc(&super::verdicts::scenario(x))
        );
        let target = if x.n == crate::results::ARTICLE_N {
            let minutes = x.wall_s / 60.0;
            format!(
                " Target: the whole scenario in ≤ 15 minutes of wall time: {} ({minutes:.1} min).",
                if minutes <= 15.0 { "met" } else { "not met" }
            )
        } else {
            " (The 15-minute target is set for 6·10⁹ URLs.)".to_string()
        };
        let _ = writeln!(
            s,
            "<p>Wall time {:.0} s (build {:.0} s, queries {:.0} s) on {} threads; key generation {:.1} ns and hashing {:.1} ns per key (summed over threads); peak RSS {}.{}</p>\
<p>The build is owner-writes: each thread generates its own index range, and every key goes to the thread that owns the part of the array holding its bits, which sets them with plain stores (no locked instructions; the arrays equal a one-thread build bit for bit, tested). Insert ns per key is each structure's wall time over n: the slowest thread's time routing and setting bits.</p>",
            x.wall_s,
            x.build_wall_s,
            x.query_wall_s,
            x.threads,
            x.generate_ns_per_key,
            x.hash_ns_per_key,
            human_bytes(x.peak_rss_bytes as f64),
            target
        );
        let _ = writeln!(
            s,
            "<table><tr><th>structure</th><th>role</th><th>bits</th><th>k</th><th>bytes</th><th>insert ns/key (all threads)</th><th>query ns/key</th><th>queries</th><th>false positives</th><th>observed</th><th>95% interval</th><th>theory</th><th>inside</th><th>false negatives (sample)</th></tr>"
        );
        for t in &x.structures {
            let _ = writeln!(
                s,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{}</td><td>[{}, {}]</td><td>{}</td><td>{}</td>{}</tr>",
                esc(&t.structure),
                esc(&t.role),
                t.bits,
                t.hashes,
                human_bytes(t.bytes as f64),
                t.insert_ns_per_key,
                t.query_ns_per_key,
                t.n_queries,
                t.n_false_positives,
                sci(t.observed_fpr),
                sci(t.observed_fpr_wilson95.low),
                sci(t.observed_fpr_wilson95.high),
                sci(t.expected_fpr),
                if t.theory_in_interval { "yes" } else { "no" },
                if t.false_negatives > 0 {
                    format!("<td class=\"bad\">{} of {}</td>", t.false_negatives, t.n_members_checked)
                } else {
                    format!("<td>0 of {}</td>", t.n_members_checked)
                }
            );
        }
        let _ = writeln!(s, "</table>");
    }
}

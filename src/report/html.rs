//! `index.html`: the machine, the parameters, every figure with its verdict, and tables of every number
//! with its uncertainty. Deterministic: the same results give the same bytes.

use super::figures::Drawn;
use super::markup::{esc, pct, sci};
use crate::kind::Role;
use crate::registry::role_id;
use crate::results::Results;
use crate::units::{human_bytes, human_count};
use std::fmt::Write;

/// The whole page.
pub fn page(r: &Results, analysis: &crate::analysis::Analysis, figures: &[Drawn]) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>dedupbench report</title>\n<style>\
body{{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}}\
table{{border-collapse:collapse;font-size:13px;margin:1em 0}}td,th{{border:1px solid #ccc;padding:3px 6px;text-align:right}}\
th{{background:#f3f3f3}}td:first-child,th:first-child{{text-align:left}}.bad{{color:#fff;background:#c00;font-weight:bold}}\
.warn{{color:#a00}}figure{{margin:1.5em 0}}img{{max-width:100%;border:1px solid #ddd}}.verdict{{background:#f6f8fa;padding:.6em;border-left:4px solid #1f77b4}}\
#answer{{border:2px solid #1f77b4;padding:0 1em 1em}}.ladder li{{margin:.2em 0}}.ladder .range{{display:inline-block;min-width:8em;font-weight:bold}}\
table.answer td{{vertical-align:top}}table.answer td:nth-child(2){{text-align:left}}details{{margin:.5em 0 1.5em}}summary{{cursor:pointer;color:#1f77b4}}\
</style></head><body>\n<h1>dedupbench report</h1>\n"
    );
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
    super::answer::section(&mut s, r, analysis);
    let _ = writeln!(s, "<h2 id=\"run\">This run</h2>");
    run_header(&mut s, r);
    let _ = writeln!(s, "<h2>Verdicts</h2><ul>");
    if r.header.is_some() {
        let _ = writeln!(
            s,
            "<li><a href=\"#{}\">Regime map</a>: {}</li>",
            super::answer::MAP_STEM,
            esc(&super::answer::verdict(r))
        );
    }
    for f in figures {
        let _ = writeln!(
            s,
            "<li><a href=\"#{}\">{}</a>: {}</li>",
            f.stem,
            esc(f.title),
            esc(&f.verdict)
        );
    }
    if r.cells.iter().any(|c| c.external.is_some()) {
        let _ = writeln!(
            s,
            "<li><a href=\"#languages\">The articles' own tools</a>: {}</li>",
            esc(&super::external::verdict(r))
        );
    }
    if !r.hash_speed.is_empty() || !r.hash_quality.is_empty() {
        let _ = writeln!(
            s,
            "<li><a href=\"#hashes\">Where a lookup's time goes</a>: {}</li>",
            esc(&super::hashes::verdict(r))
        );
    }
    if !r.sweep.is_empty() {
        let _ = writeln!(
            s,
            "<li><a href=\"#shared\">Shared filter</a>: {}</li>",
            esc(&super::sweep::verdict(r))
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
            esc(&f.verdict)
        );
        if !f.tables.is_empty() {
            let _ = writeln!(
                s,
                "<details><summary>The numbers behind this figure</summary>{}</details>",
                f.tables
            );
        }
    }
    super::hashes::section(&mut s, r);
    super::external::section(&mut s, r);
    scenario_section(&mut s, r);
    {
        use super::chart::Figure;
        let f = super::sweep::SharedThroughput;
        let figure = format!(
            "<figure id=\"{0}\"><img src=\"{0}.png\" alt=\"{1}\"><figcaption><a href=\"{0}.svg\">SVG</a></figcaption></figure>",
            f.stem(),
            esc(f.title())
        );
        super::sweep::section(&mut s, r, &figure);
    }
    let _ = writeln!(s, "</body></html>");
    s
}

/// The run's parameters, machine, inputs and warnings.
fn run_header(s: &mut String, r: &Results) {
    if let Some(h) = &r.header {
        let _ = write!(
            s,
            "<p>Suite <b>{}</b>, scales {}, structures {}, target rate p = {}, memory budget {}, seed {}, {} repetitions, profile {}{}.</p>\n\
<p>Machine: {} ({} cores), {} RAM, {}; {}; dedupbench {} at commit {}; transparent huge pages: {}. Run started at Unix time {}.</p>\n",
            esc(h.suite.name()),
            h.scales.iter().map(|n| human_count(*n as f64)).collect::<Vec<_>>().join(", "),
            esc(&h.structures.join(", ")),
            h.fpr,
            human_bytes(h.memory_budget_bytes as f64),
            h.seed,
            h.reps,
            esc(&h.profile),
            h.input
                .as_ref()
                .map(|i| {
                    let stray = match h.input_non_utf8_lines {
                        Some(lines) if lines > 0 => format!(" ({lines} lines not UTF-8, kept as their bytes)"),
                        _ => String::new(),
                    };
                    format!(", members from {}{stray}", esc(i))
                })
                .unwrap_or_default()
                + &h.non_members
                    .as_ref()
                    .map(|f| format!(
                        ", non-members from {} ({} keys; {} repeats and {} members dropped after checking it against the first {} members; {} queried at most{})",
                        esc(&f.path),
                        f.keys,
                        f.repeats_dropped,
                        f.members_dropped,
                        f.members_checked,
                        f.kept,
                        if f.non_utf8_lines > 0 {
                            format!("; {} lines not UTF-8, kept as their bytes", f.non_utf8_lines)
                        } else {
                            String::new()
                        }
                    ))
                    .unwrap_or_default(),
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
}

fn scenario_section(s: &mut String, r: &Results) {
    for x in &r.scenario {
        let _ = writeln!(
            s,
            "<h2 id=\"scenario\">The 6-billion-URL scenario at n = {}</h2><p class=\"verdict\">{}</p>",
            human_count(x.n as f64),
            esc(&scenario_verdict(x))
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

/// The scenario's findings in plain words.
fn scenario_verdict(x: &crate::results::ScenarioRecord) -> String {
    let get = |id: &str| x.structures.iter().find(|s| s.structure == id);
    let (Some(bitmap), Some(bloom), Some(blocked)) = (
        get(role_id(Role::RawBitmap)),
        get(role_id(Role::ReferenceBloom)),
        get(role_id(Role::BlockedBloom)),
    ) else {
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

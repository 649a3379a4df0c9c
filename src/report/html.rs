//! `index.html`: the machine, the parameters, every figure with its verdict, and tables of every number
//! with its uncertainty. Deterministic: the same results give the same bytes.

use super::figures::Drawn;
use super::template::{css, markup, render};
use crate::kind::Role;
use crate::registry::role_id;
use crate::results::{NonMemberFile, Results, ScenarioRecord};
use crate::units::{human_bytes, human_count, human_rate};
use crate::Result;
use minijinja::Value;
use serde::Serialize;

/// The page's units, said once: sizes are IEC, rates [`crate::units::human_rate`]'s.
const UNITS: &str = "Sizes in IEC units: 1 KiB = 2¹⁰ bytes, 1 MiB = 2²⁰, 1 GiB = 2³⁰ bytes. Rates: a percentage from 0.1%, per million below.";

/// What `templates/page.html` shows; numbers are formatted here, markup and escaping are the template's.
#[derive(Serialize)]
struct Page<'a> {
    css: Value,
    /// What the page's units mean, said once (in the answer's small print, or under the title).
    units: &'static str,
    /// False negatives over every cell and experiment (0: none, no banner).
    negatives: u64,
    answer: Option<super::answer::Answer>,
    /// The run's own targets it missed, after the answer and the run.
    targets: super::targets::Missed,
    run: Option<Run<'a>>,
    warnings: &'a [String],
    verdicts: Vec<Verdict>,
    figures: Vec<Figure>,
    hashes: Option<super::hashes::Hashes>,
    external: Option<super::external::External>,
    dedup_cli: Option<super::dedup_cli::DedupCli>,
    scenarios: Vec<Scenario<'a>>,
    shared: Option<super::sweep::Shared>,
}

/// The run's parameters, machine and inputs.
#[derive(Serialize)]
struct Run<'a> {
    suite: &'a str,
    scales: String,
    structures: String,
    fpr: String,
    budget: String,
    seed: u64,
    reps: u32,
    profile: &'a str,
    input: Option<&'a str>,
    /// Lines of the members' file that are not UTF-8 (0 or none: not said).
    input_non_utf8_lines: u64,
    non_members: Option<&'a NonMemberFile>,
    cpu_model: &'a str,
    cores: usize,
    memory: String,
    os: &'a str,
    rustc: &'a str,
    version: &'a str,
    git_commit: &'a str,
    transparent_hugepages: &'a str,
    /// When the run started, ISO 8601 in UTC (`2026-12-07T10:15:00Z`).
    started: String,
    mean_key_bytes: String,
    mean_chunk_bytes: String,
}

/// One line of the verdict list: a link to a section and its verdict.
#[derive(Serialize)]
struct Verdict {
    anchor: &'static str,
    title: &'static str,
    verdict: String,
}

/// A figure with its verdict and the tables of its numbers.
#[derive(Serialize)]
struct Figure {
    stem: &'static str,
    title: &'static str,
    verdict: String,
    /// Rendered tables (empty: none).
    tables: Value,
}

#[derive(Serialize)]
struct Scenario<'a> {
    n: String,
    verdict: String,
    wall_s: String,
    build_wall_s: String,
    query_wall_s: String,
    threads: u32,
    generate_ns_per_key: String,
    hash_ns_per_key: String,
    peak_rss: String,
    /// The 15-minute target's sentence.
    target: String,
    structures: Vec<ScenarioRow<'a>>,
}

#[derive(Serialize)]
struct ScenarioRow<'a> {
    structure: &'a str,
    role: &'a str,
    bits: u64,
    hashes: u32,
    bytes: String,
    insert_ns_per_key: String,
    query_ns_per_key: String,
    n_queries: u64,
    n_false_positives: u64,
    observed: String,
    low: String,
    high: String,
    theory: String,
    inside: &'static str,
    false_negatives: u64,
    n_members_checked: u64,
}

/// The whole page.
pub fn page(
    r: &Results,
    analysis: &crate::analysis::Analysis,
    figures: &[Drawn],
    question: &super::Question,
) -> Result<String> {
    let negatives: u64 = r.cells.iter().map(|c| c.false_negatives).sum::<u64>()
        + r.deletion
            .iter()
            .map(|d| d.false_negatives_remaining)
            .sum::<u64>()
        + r.churn.iter().map(|c| c.point.false_negatives).sum::<u64>()
        + r.saturation
            .iter()
            .chain(&r.growth)
            .chain(&r.bitmap_claim)
            .map(|p| p.false_negatives)
            .sum::<u64>();
    let mut verdicts = Vec::new();
    if r.header.is_some() {
        verdicts.push(Verdict {
            anchor: super::answer::MAP_STEM,
            title: "Regime map",
            verdict: super::answer::verdict(r, question),
        });
    }
    for f in figures {
        verdicts.push(Verdict {
            anchor: f.stem,
            title: f.title,
            verdict: f.verdict.clone(),
        });
    }
    if r.cells.iter().any(|c| c.external.is_some()) {
        verdicts.push(Verdict {
            anchor: "languages",
            title: "The articles' own tools",
            verdict: super::external::verdict(r),
        });
    }
    if !r.hash_speed.is_empty() || !r.hash_quality.is_empty() {
        verdicts.push(Verdict {
            anchor: "hashes",
            title: "Where a lookup's time goes",
            verdict: super::hashes::verdict(r),
        });
    }
    if let Some(a) = &analysis.dedup_cli {
        verdicts.push(Verdict {
            anchor: "dedup-cli",
            title: "dedup among the Unix tools",
            verdict: super::dedup_cli::verdict(a),
        });
    }
    if !r.sweep.is_empty() {
        verdicts.push(Verdict {
            anchor: "shared",
            title: "Shared filter",
            verdict: super::sweep::verdict(r),
        });
    }
    render(
        "page.html",
        &Page {
            css: css(),
            units: UNITS,
            negatives,
            answer: super::answer::view(r, question),
            targets: super::targets::missed_targets(analysis),
            run: run(r),
            warnings: &r.warnings,
            verdicts,
            figures: figures
                .iter()
                .map(|f| Figure {
                    stem: f.stem,
                    title: f.title,
                    verdict: f.verdict.clone(),
                    tables: markup(f.tables.clone()),
                })
                .collect(),
            hashes: super::hashes::view(r),
            external: super::external::view(r),
            dedup_cli: super::dedup_cli::view(analysis),
            scenarios: r.scenario.iter().map(scenario).collect(),
            shared: super::sweep::view(r),
        },
    )
}

/// The run's parameters, machine and inputs, when the results have a header.
fn run(r: &Results) -> Option<Run<'_>> {
    let h = r.header.as_ref()?;
    Some(Run {
        suite: h.suite.name(),
        scales: h
            .scales
            .iter()
            .map(|n| human_count(*n as f64))
            .collect::<Vec<_>>()
            .join(", "),
        structures: h.structures.join(", "),
        fpr: human_rate(h.fpr),
        budget: human_bytes(h.memory_budget_bytes as f64),
        seed: h.seed,
        reps: h.reps,
        profile: &h.profile,
        input: h.input.as_deref(),
        input_non_utf8_lines: h.input_non_utf8_lines.unwrap_or(0),
        non_members: h.non_members.as_ref(),
        cpu_model: &h.machine.cpu_model,
        cores: h.machine.cores,
        memory: human_bytes(h.machine.total_memory_bytes as f64),
        os: &h.machine.os,
        rustc: &h.machine.rustc,
        version: &h.dedupbench_version,
        git_commit: &h.machine.git_commit,
        transparent_hugepages: &h.machine.transparent_hugepages,
        started: iso8601_utc(h.started_unix_s),
        mean_key_bytes: format!("{:.1}", h.key_lengths.mean_bytes),
        mean_chunk_bytes: format!("{:.1}", h.key_lengths.mean_chunk_bytes),
    })
}

/// Seconds since the Unix epoch as an ISO 8601 instant in UTC, to the second.
fn iso8601_utc(unix_s: u64) -> String {
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(unix_s);
    humantime::format_rfc3339_seconds(at).to_string()
}

/// The 6·10⁹ scenario's section.
fn scenario(x: &ScenarioRecord) -> Scenario<'_> {
    let target = if x.n == crate::results::ARTICLE_N {
        let minutes = x.wall_s / 60.0;
        format!(
            " Target: the whole scenario in ≤ 15 minutes of wall time: {} ({minutes:.1} min).",
            if minutes <= 15.0 { "met" } else { "not met" }
        )
    } else {
        " (The 15-minute target is set for 6·10⁹ URLs.)".to_string()
    };
    Scenario {
        n: human_count(x.n as f64),
        verdict: scenario_verdict(x),
        wall_s: format!("{:.0}", x.wall_s),
        build_wall_s: format!("{:.0}", x.build_wall_s),
        query_wall_s: format!("{:.0}", x.query_wall_s),
        threads: x.threads,
        generate_ns_per_key: format!("{:.1}", x.generate_ns_per_key),
        hash_ns_per_key: format!("{:.1}", x.hash_ns_per_key),
        peak_rss: human_bytes(x.peak_rss_bytes as f64),
        target,
        structures: x
            .structures
            .iter()
            .map(|t| ScenarioRow {
                structure: &t.structure,
                role: &t.role,
                bits: t.bits,
                hashes: t.hashes,
                bytes: human_bytes(t.bytes as f64),
                insert_ns_per_key: format!("{:.1}", t.insert_ns_per_key),
                query_ns_per_key: format!("{:.1}", t.query_ns_per_key),
                n_queries: t.n_queries,
                n_false_positives: t.n_false_positives,
                observed: human_rate(t.observed_fpr),
                low: human_rate(t.observed_fpr_wilson95.low),
                high: human_rate(t.observed_fpr_wilson95.high),
                theory: human_rate(t.expected_fpr),
                inside: if t.theory_in_interval { "yes" } else { "no" },
                false_negatives: t.false_negatives,
                n_members_checked: t.n_members_checked,
            })
            .collect(),
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
        human_rate(bitmap.observed_fpr),
        human_rate(bitmap.expected_fpr),
        human_bytes(bloom.bytes as f64),
        bloom.hashes,
        human_rate(bloom.observed_fpr),
        human_rate(bloom.expected_fpr),
        human_rate(blocked.expected_fpr.max(0.0)).replace("1.00%", "1%"),
        human_bytes(blocked.bytes as f64),
        human_rate(blocked.observed_fpr),
        human_rate(blocked.expected_fpr),
        x.wall_s
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_start_reads_as_an_iso_8601_instant() {
        assert_eq!(super::iso8601_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::iso8601_utc(1_796_612_097), "2026-12-07T02:54:57Z");
    }
}

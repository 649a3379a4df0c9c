//! The articles' own tools: what a Python or Java user's default costs next to ours, on the same keys,
//! and the first article's claim about a Python set tested on a real one. From results only.

use crate::kind::Language;
use crate::kind::Role;
use crate::registry::role_id;
use crate::results::{CellRecord, Results};
use crate::units::{human_bytes, human_count, human_rate};
use serde::Serialize;
use std::fmt::Write;

/// The first article's figure: a Python set of ~80-byte URLs costs "100+ bytes per entry", "north of
/// 5GB" (5·10⁹ bytes; the page says it in GiB, as every size) at 50 million URLs.
const ARTICLE_BYTES_PER_ENTRY: f64 = 100.0;
const ARTICLE_N: f64 = 50e6;
const ARTICLE_BYTES_AT_N: f64 = 5e9;

fn external_cells(r: &Results) -> impl Iterator<Item = &CellRecord> {
    r.cells.iter().filter(|c| c.external.is_some())
}

/// External rows' skipped cells (not set up, capped, unavailable, failed, over memory).
fn external_skips(r: &Results) -> impl Iterator<Item = &crate::results::SkippedCell> {
    r.skipped.iter().filter(|k| {
        k.subject
            .cell()
            .and_then(|id| crate::registry::find(id).ok())
            .is_some_and(|kind| kind.external().is_some())
    })
}

/// Whether the run asked for any external row (measured or not): the section is drawn then.
pub fn has_external_rows(r: &Results) -> bool {
    external_cells(r).next().is_some() || external_skips(r).next().is_some()
}

/// The one-line verdict: the article's claim against a real Python set, and who misses its rate.
pub fn verdict(r: &Results) -> String {
    let mut out = Vec::new();
    let mut sets: Vec<&CellRecord> = r
        .cells
        .iter()
        .filter(|c| c.structure == role_id(Role::ExternalExactSet))
        .collect();
    sets.sort_by_key(|c| c.n);
    if !sets.is_empty() {
        let per_entry: Vec<String> = sets
            .iter()
            .map(|c| {
                format!(
                    "{:.0} B at n = {}",
                    c.heap_footprint_bytes as f64 / c.n_distinct.max(1) as f64,
                    human_count(c.n as f64)
                )
            })
            .collect();
        let least = sets
            .iter()
            .map(|c| c.heap_footprint_bytes as f64 / c.n_distinct.max(1) as f64)
            .fold(f64::INFINITY, f64::min);
        let mean_key = r
            .header
            .as_ref()
            .map(|h| h.key_lengths.mean_bytes)
            .unwrap_or(f64::NAN);
        let mut claim = format!(
            "The first article says a Python set of ~80-byte URLs costs 100+ bytes per entry, north of 5·10⁹ bytes ({}) at 50M. A real CPython set of this run's {mean_key:.0}-byte URLs (tracemalloc: the set and its str objects) measured {}: the \"100+ bytes\" {}",
            human_bytes(ARTICLE_BYTES_AT_N),
            per_entry.join(", "),
            if least >= ARTICLE_BYTES_PER_ENTRY { "holds at every n measured" } else { "does not hold at every n" }
        );
        let model = r.header.as_ref().and_then(|h| {
            let kind = crate::registry::find(role_id(Role::ExternalExactSet)).ok()?;
            let mut config = crate::kind::BuildConfig::new(ARTICLE_N as u64, h.fpr, 0);
            config.key_lengths = h.key_lengths;
            Some(kind.predicted_memory(&config).footprint_bytes)
        });
        let judged = |bytes: f64| {
            if bytes >= ARTICLE_BYTES_AT_N {
                "holds"
            } else {
                "does not hold"
            }
        };
        match (
            crate::analysis::fit_bytes(r, role_id(Role::ExternalExactSet)),
            model,
        ) {
            (Some(fit), model) => {
                let at = fit.at(ARTICLE_N);
                let _ = write!(
                    claim,
                    "; at 50M the line fitted to its {} cells of ≥ 10⁵ keys projects {} ({:.0} B per entry; a projection), so the article's {} {}.",
                    fit.points,
                    human_bytes(at),
                    at / ARTICLE_N,
                    human_bytes(ARTICLE_BYTES_AT_N),
                    judged(at)
                );
                if let Some(model) = model.filter(|m| *m > at * 1.01) {
                    let _ = write!(
                        claim,
                        " The size model (CPython 3.11's 49-byte str header + the URL, and the set's power-of-two table grown as CPython grows it) gives more, {} at 50M ({:.0} B per entry; the article's {} {} there too): a line fitted below the table's next doubling cannot see it.",
                        human_bytes(model),
                        model / ARTICLE_N,
                        human_bytes(ARTICLE_BYTES_AT_N),
                        judged(model)
                    );
                }
            }
            (None, Some(model)) => {
                let _ = write!(
                    claim,
                    "; too few cells of ≥ 10⁵ keys to fit a line, and the size model gives {} at 50M, so the article's {} {} by the model alone.",
                    human_bytes(model),
                    human_bytes(ARTICLE_BYTES_AT_N),
                    judged(model)
                );
            }
            (None, None) => claim.push_str("; too few cells of ≥ 10⁵ keys to project 50M."),
        }
        out.push(claim);
    }
    let target = r.header.as_ref().map(|h| h.fpr).unwrap_or(0.0);
    let missed: Vec<String> = external_cells(r)
        .filter(|c| !c.exact && c.observed_fpr_wilson95.low > target * 1.02)
        .map(|c| {
            format!(
                "{} at n = {} measured {} (its own theory {})",
                c.structure,
                human_count(c.n as f64),
                human_rate(c.observed_fpr),
                human_rate(c.expected_fpr)
            )
        })
        .collect();
    if !missed.is_empty() {
        out.push(format!(
            "Asked for {}, these tools miss it: {}.",
            human_rate(target),
            missed.join("; ")
        ));
    }
    if external_cells(r).next().is_none() {
        out.push(format!(
            "No external row was measured in this run ({} cells not run; the list below says why).",
            external_skips(r).count()
        ));
        return out.join(" ");
    }
    let negatives: u64 = external_cells(r).map(|c| c.false_negatives).sum();
    out.push(if negatives == 0 {
        "No external tool returned a false negative.".to_string()
    } else {
        format!("External tools returned {negatives} false negatives: a bug in the tool or its program.")
    });
    out.join(" ")
}

/// What `templates/external.html` shows.
#[derive(Serialize)]
pub struct External {
    verdict: String,
    languages: Vec<LanguageTable>,
    /// The external cells not run, described.
    not_run: Vec<String>,
}

/// One language's rows at their largest n, then ours at those n.
#[derive(Serialize)]
struct LanguageTable {
    name: &'static str,
    rows: Vec<Row>,
}

#[derive(Serialize)]
struct Row {
    structure: String,
    n: String,
    bytes_per_key: String,
    /// How the bytes were counted.
    method: String,
    insert_ns: String,
    member_query_ns: String,
    non_member_query_ns: String,
    observed: String,
    low: String,
    high: String,
    theory: String,
    rss_peak: String,
    /// Runtime and library.
    who: String,
}

/// The section: the verdict, then per language what its tools cost beside ours at the same n (none
/// when the run asked for no external row).
pub fn view(r: &Results) -> Option<External> {
    if !has_external_rows(r) {
        return None;
    }
    let mut languages = Vec::new();
    for language in [Language::Python, Language::Java] {
        // Each of the language's rows at its largest measured n (the pure-Python filters stop earlier than
        // the set), then ours at each of those n.
        let mut listed: Vec<&CellRecord> = Vec::new();
        for c in external_cells(r)
            .filter(|c| c.external.as_ref().is_some_and(|e| e.language == language))
        {
            match listed.iter_mut().find(|x| x.structure == c.structure) {
                Some(x) if x.n < c.n => *x = c,
                Some(_) => {}
                None => listed.push(c),
            }
        }
        if listed.is_empty() {
            continue;
        }
        let mut sizes: Vec<u64> = listed.iter().map(|c| c.n).collect();
        sizes.sort_unstable();
        sizes.dedup();
        listed.extend(r.cells.iter().filter(|c| {
            sizes.contains(&c.n)
                && (c.structure == role_id(Role::ReferenceBloom)
                    || c.structure == role_id(Role::BlockedBloom))
        }));
        let rows = listed
            .into_iter()
            .map(|c| {
                let (method, who) = match &c.external {
                    Some(e) => (
                        e.bytes_method.clone()
                            + &e.heap_delta_bytes
                                .map(|d| {
                                    format!(
                                        "; heap allocated creating one: {}",
                                        human_bytes(d as f64)
                                    )
                                })
                                .unwrap_or_default(),
                        format!("{}, {}", e.runtime, e.library),
                    ),
                    None => ("counting allocator".into(), "ours (Rust)".into()),
                };
                Row {
                    structure: c.structure.clone(),
                    n: human_count(c.n as f64),
                    bytes_per_key: format!(
                        "{:.2}",
                        c.heap_footprint_bytes as f64 / c.n_distinct.max(1) as f64
                    ),
                    method,
                    insert_ns: format!("{:.1}", c.insert_ns_per_key.median),
                    member_query_ns: format!("{:.1}", c.member_query_ns_per_key.median),
                    non_member_query_ns: format!("{:.1}", c.non_member_query_ns_per_key.median),
                    observed: human_rate(c.observed_fpr),
                    low: human_rate(c.observed_fpr_wilson95.low),
                    high: human_rate(c.observed_fpr_wilson95.high),
                    theory: human_rate(c.expected_fpr),
                    rss_peak: human_bytes(c.rss_peak_bytes as f64),
                    who,
                }
            })
            .collect();
        languages.push(LanguageTable {
            name: language.name(),
            rows,
        });
    }
    Some(External {
        verdict: verdict(r),
        languages,
        not_run: external_skips(r).map(|k| k.describe()).collect(),
    })
}

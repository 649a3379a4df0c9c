//! The speed verdicts, as `analysis.json` holds them: each compared pair's median per-round ratio with
//! its 95% interval and verdict, the targets judged on those intervals, and the ratios measured once.
//! Nothing is computed here beyond choosing rows and formatting them.

use super::markup::esc;
use crate::analysis::{Analysis, SpeedRatio, TargetStatus};
use crate::membership::CallPath;
use crate::units::human_count;
use std::fmt::Write;

/// "met", "missed" or "undecided" against "≥ 1.0", or "–".
fn target_cell(q: &SpeedRatio) -> String {
    match (q.target, q.target_min_ratio) {
        (Some(TargetStatus::Met), Some(t)) => format!("<td>≥ {t:.1}: met</td>"),
        (Some(TargetStatus::Missed), Some(t)) => {
            format!("<td class=\"warn\">≥ {t:.1}: missed</td>")
        }
        (Some(TargetStatus::Undecided), Some(t)) => format!("<td>≥ {t:.1}: undecided</td>"),
        (None, Some(t)) => format!("<td>≥ {t:.1} (judged at 10⁷)</td>"),
        _ => "<td>–</td>".into(),
    }
}

/// One table of the ratios at one n.
fn table(s: &mut String, ratios: &[&SpeedRatio]) {
    let _ = writeln!(
        s,
        "<table><tr><th>pair</th><th>op</th><th>path (ours vs peer)</th><th>ns per key: ours / peer</th><th>ratio [95%]</th><th>verdict</th><th>target</th></tr>"
    );
    for q in ratios {
        let path = match (q.path, q.peer_path) {
            (CallPath::PerKey, _) => "per key vs per key",
            (CallPath::Batched, CallPath::Batched) => "batched vs its batched",
            (CallPath::Batched, CallPath::PerKey) => "batched vs its per key",
        };
        let _ = writeln!(
            s,
            "<tr><td>{} / {}</td><td>{}</td><td>{path}</td><td>{:.1} / {:.1}</td><td>{}</td><td>{}</td>{}</tr>",
            esc(&q.ours),
            esc(&q.peer),
            q.op.words(),
            q.ours_ns_median,
            q.peer_ns_median,
            q.figure(),
            q.verdict.words(),
            target_cell(q)
        );
        if let Some(note) = &q.note {
            let _ = writeln!(
                s,
                "<tr><td colspan=\"7\"><small>{}</small></td></tr>",
                esc(note)
            );
        }
    }
    let _ = writeln!(s, "</table>");
}

/// The section under the lookup figure: the target size's group in full, the others folded.
pub fn section(s: &mut String, a: &Analysis) {
    let _ = writeln!(
        s,
        "<h3 id=\"speed-ratios\">Speed ratios, timed in interleaved rounds</h3>"
    );
    if a.speed_ratios.is_empty() {
        let _ = writeln!(
            s,
            "<p>No speed group in this run: it holds no pair of a structure and the peer it has a target against (bloom or blocked with fastbloom or sbbf), or it was recorded before the interleaved rounds. A ratio of two cells timed apart is not shown: these machines drift too much between them.</p>"
        );
    } else {
        let _ = writeln!(
            s,
            "<p>Each ratio is the peer's time per key over ours (above 1: ours is faster), paired round by round: in each round every structure ran the same keys on each path, in a shuffled order, so drift between rounds moves both sides alike; where the keys allow, each round has a fresh build, because where a build's arrays land in memory changes from build to build. The figure is the median per-round ratio with a distribution-free interval of at least 95% (order statistics; its coverage at each size below); <em>faster</em> or <em>slower</em> only when the interval excludes 1. A target is met or missed only when its interval lies wholly above or below it. Lookups at 25%, 50% and 75% members mix members and non-members in a seeded random order. Times include hashing; a build's first 1/64 of the inserts go in untimed, since they fault its pages in (ours ask the kernel for huge pages, the peers do not) at a cost that follows the kernel's state of the moment; the structures evict each other from the caches between slices, so the times are not the cells' times above.</p>"
        );
        let mut sizes: Vec<u64> = a.speed_ratios.iter().map(|q| q.n).collect();
        sizes.sort_unstable();
        sizes.dedup();
        let main = a.headline_n.unwrap_or(sizes[sizes.len() - 1]);
        let at = |s: &mut String, n: u64| {
            let ratios: Vec<&SpeedRatio> = a.speed_ratios.iter().filter(|q| q.n == n).collect();
            let (rounds, builds) = (ratios[0].rounds, ratios[0].builds);
            let _ = writeln!(
                s,
                "<p>At n = {}: {rounds} rounds, {}; intervals of {:.1}% coverage.</p>",
                human_count(n as f64),
                if builds == rounds {
                    "each on a fresh build".to_string()
                } else {
                    format!("sharing {builds} build(s), so the interval leaves out how much where the arrays landed moves a ratio")
                },
                ratios[0].coverage * 100.0
            );
            table(s, &ratios);
        };
        at(s, main);
        let others: Vec<u64> = sizes.into_iter().filter(|n| *n != main).collect();
        if !others.is_empty() {
            let _ = writeln!(
                s,
                "<details><summary>The same at n = {}</summary>",
                others
                    .iter()
                    .map(|n| human_count(*n as f64))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            for n in others {
                at(s, n);
            }
            let _ = writeln!(s, "</details>");
        }
    }
    for l in &a.left_out {
        let _ = writeln!(
            s,
            "<p class=\"warn\">Speed group at n = {}: {} was not timed with the others: {}.</p>",
            human_count(l.n as f64),
            esc(&l.structure),
            esc(&l.reason)
        );
    }
    if !a.other_ratios.is_empty() {
        let _ = writeln!(s, "<h3>Ratios measured once</h3><p>Each from one measurement of each side (the memory floor, the bits, the parallel build), so no interval: read them as indications.</p><table><tr><th>ratio</th><th>value</th><th>target</th><th>met</th></tr>");
        for q in &a.other_ratios {
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
    if !a.missed_rates.is_empty() {
        let _ = writeln!(
            s,
            "<p class=\"warn\">Filters that miss the rate they were built for: {}.</p>",
            esc(&a.missed_rates.join("; "))
        );
    }
}

/// "bloom / fastbloom insert 0.93 [0.90, 0.97]", short enough for the first screen.
pub fn short(q: &SpeedRatio) -> String {
    let path = match q.path {
        CallPath::PerKey => "per key",
        CallPath::Batched => "batched",
    };
    format!(
        "{} / {} {} ({path}) {} against ≥ {:.1}",
        q.ours,
        q.peer,
        q.op.words(),
        q.figure(),
        q.target_min_ratio.unwrap_or(f64::NAN)
    )
}

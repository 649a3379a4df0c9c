//! The "Shared filter" part of the report: keys/s against batch size for every Redis backend next to the
//! in-process `bloom`, the server's bytes per key, observed vs theoretical rates, and the two
//! targets (`redis-bitmap` ≥ 25% of `redis-bloom`'s inserts at the same batch; `redis-bloom` through our
//! client ≥ 90% of a raw pipeline of the same commands), computed from the records alone.

use super::chart::{axis_label, colour, empty, log_range, Figure};
use super::panels::{draw_keys, Key};
use crate::analysis::sweep::{best_bitmap, point, shared_bloom, target_ratios};
use crate::kind::Role;
use crate::registry::role_id;
use crate::results::{Results, SweepRecord, SweepSeries};
use crate::units::human_bytes;
use crate::units::human_rate;
use plotters::coord::Shift;
use plotters::prelude::*;
use serde::Serialize;

type DrawResult = std::result::Result<(), Box<dyn std::error::Error>>;

/// The in-process reference of the server filters, or of their growing one.
fn in_process(role: Role) -> SweepSeries {
    SweepSeries::in_process(role_id(role))
}

/// A series' colour: a registered backend's own; the bitmap modes take distinct shades in turn.
fn series_colour(name: &SweepSeries, index: usize) -> RGBColor {
    const MODES: [RGBColor; 4] = [
        RGBColor(120, 60, 0),
        RGBColor(230, 120, 0),
        RGBColor(90, 0, 150),
        RGBColor(0, 150, 100),
    ];
    if name.mode.is_some() {
        MODES[index % MODES.len()]
    } else {
        colour(&name.to_string())
    }
}

/// Series in the order they were measured.
fn series(r: &Results) -> Vec<SweepSeries> {
    let mut names: Vec<SweepSeries> = Vec::new();
    for p in r.sweep.iter().filter(|p| p.batch_keys > 0) {
        if !names.contains(&p.series) {
            names.push(p.series.clone());
        }
    }
    names
}

/// The batch sizes measured, ascending.
fn batches(r: &Results) -> Vec<u64> {
    let mut b: Vec<u64> = r
        .sweep
        .iter()
        .filter(|p| p.batch_keys > 0)
        .map(|p| p.batch_keys)
        .collect();
    b.sort_unstable();
    b.dedup();
    b
}

/// Keys/s against batch size (inserts left, non-member lookups right).
pub struct SharedThroughput;

impl Figure for SharedThroughput {
    fn stem(&self) -> &'static str {
        "shared_throughput"
    }
    fn title(&self) -> &'static str {
        "Shared filter: keys/s vs keys per round trip (Redis backends; dashed: in-process bloom and scalable)"
    }
    fn verdict(&self, r: &Results) -> String {
        verdict(r)
    }
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, r: &Results) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        if r.sweep.iter().all(|p| p.batch_keys == 0) {
            return empty(area, self.title(), "no Redis backend was measured");
        }
        // Two rows, so no chart carries more than eight series: RedisBloom and the exact sets, then the
        // bitmap backend's modes; inserts left, non-member lookups right, the legend in a strip.
        let (bitmap, others): (Vec<SweepSeries>, Vec<SweepSeries>) =
            series(r).into_iter().partition(|s| s.mode.is_some());
        let rows: Vec<(&str, Vec<SweepSeries>)> = [
            ("RedisBloom and exact sets", others),
            ("the bitmap backend's modes", bitmap),
        ]
        .into_iter()
        .filter(|(_, names)| !names.is_empty())
        .collect();
        let body = area.titled(self.title(), ("sans-serif", 18))?;
        for (row, (what, names)) in body.split_evenly((rows.len(), 1)).iter().zip(&rows) {
            let (w, _) = row.dim_in_pixel();
            let (plots, strip) = row.split_horizontally(w.saturating_sub(230));
            let (left, right) = plots.split_horizontally(plots.dim_in_pixel().0 / 2);
            let mut keys = Vec::new();
            panel(
                &left,
                r,
                &format!("{what}: inserts"),
                |p| p.insert_keys_per_s,
                true,
                names,
                &mut keys,
            )?;
            panel(
                &right,
                r,
                &format!("{what}: non-member lookups"),
                |p| p.non_member_query_keys_per_s,
                false,
                names,
                &mut Vec::new(),
            )?;
            draw_keys(&strip, &keys)?;
        }
        Ok(())
    }
    fn size(&self, r: &Results) -> (u32, u32) {
        let rows = 1 + usize::from(
            series(r).iter().any(|s| s.mode.is_some())
                && series(r).iter().any(|s| s.mode.is_none()),
        );
        (1100, 40 + 420 * rows as u32)
    }
}

fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    r: &Results,
    title: &str,
    value: fn(&SweepRecord) -> f64,
    with_raw: bool,
    names: &[SweepSeries],
    keys: &mut Vec<Key>,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let bs = batches(r);
    let x = log_range(
        bs.iter()
            .map(|b| *b as f64)
            .chain([0.7, bs.last().copied().unwrap_or(1) as f64 * 1.4]),
    );
    let y = log_range(
        r.sweep
            .iter()
            .map(value)
            .chain(r.sweep.iter().filter_map(|p| p.raw_insert_keys_per_s))
            .flat_map(|v| [v * 0.7, v * 1.5]),
    );
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 15))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x.clone().log_scale(), y.log_scale())?;
    chart
        .configure_mesh()
        .x_desc("keys per round trip")
        .y_desc("keys per second (1/s)")
        .x_label_formatter(&|v| axis_label(*v))
        .y_label_formatter(&|v| axis_label(*v))
        .label_style(("sans-serif", 13))
        .draw()?;
    for role in [Role::ReferenceBloom, Role::GrowingFilter] {
        let id = role_id(role);
        if let Some(reference) = point(r, &in_process(role), 0) {
            let v = value(reference);
            let c = colour(id);
            chart.draw_series(DashedLineSeries::new(
                vec![(x.start, v), (x.end, v)],
                8,
                6,
                c.stroke_width(2),
            ))?;
            keys.push(Key::dashed(
                format!("in-process {id} (inserts {})", axis_label(v)),
                c,
            ));
        }
    }
    for (index, name) in names.iter().enumerate() {
        let c = series_colour(name, index);
        let line: Vec<(f64, f64)> = bs
            .iter()
            .filter_map(|b| point(r, name, *b).map(|p| (*b as f64, value(p))))
            .collect();
        chart.draw_series(LineSeries::new(line.clone(), c.stroke_width(2)))?;
        keys.push(Key::solid(name.to_string(), c));
        chart.draw_series(line.iter().map(|p| Circle::new(*p, 4, c.filled())))?;
        if with_raw && *name == shared_bloom() {
            let raw: Vec<(f64, f64)> = bs
                .iter()
                .filter_map(|b| {
                    point(r, name, *b).and_then(|p| p.raw_insert_keys_per_s.map(|k| (*b as f64, k)))
                })
                .collect();
            chart.draw_series(DashedLineSeries::new(raw, 4, 4, c.stroke_width(2)))?;
            keys.push(Key::dashed(format!("{name}, raw pipeline"), c));
        }
    }
    Ok(())
}

/// The section's verdict, in plain words.
pub fn verdict(r: &Results) -> String {
    let Some(&top) = batches(r).last() else {
        return "No Redis backend was measured (run with --redis URL, or `just bench-redis`)."
            .into();
    };
    let mut parts = Vec::new();
    if let Some(reference) = point(r, &in_process(Role::ReferenceBloom), 0) {
        if let Some(bloom) = point(r, &shared_bloom(), top) {
            parts.push(format!(
                "At {top} keys per round trip, {} inserts {} keys/s and the in-process {} {} keys/s ({:.0}× faster) at {:.2} vs {:.2} bytes per key",
                role_id(Role::SharedBloom),
                axis_label(bloom.insert_keys_per_s),
                role_id(Role::ReferenceBloom),
                axis_label(reference.insert_keys_per_s),
                reference.insert_keys_per_s / bloom.insert_keys_per_s,
                bloom.bytes_per_key,
                reference.bytes_per_key
            ));
        }
    }
    if let (Some(ours), Some(theirs)) = (
        point(r, &in_process(Role::GrowingFilter), 0),
        point(
            r,
            &SweepSeries::remote(role_id(Role::SharedGrowingFilter), None, false),
            top,
        ),
    ) {
        parts.push(format!(
            "grown from n/64 through {} links, {} holds {:.2} bytes per key at rate {} against our {}'s {:.2} bytes per key and {} in {} slices",
            theirs.geometry.slices.unwrap_or(1),
            role_id(Role::SharedGrowingFilter),
            theirs.bytes_per_key,
            human_rate(theirs.observed_fpr),
            role_id(Role::GrowingFilter),
            ours.bytes_per_key,
            human_rate(ours.observed_fpr),
            ours.geometry.slices.unwrap_or(1)
        ));
    }
    if let Some(text) = super::sweep_cluster::verdict(r, top) {
        parts.push(text);
    }
    let (bitmap, client) = target_ratios(r, top);
    if let (Some(ratio), Some(best)) = (bitmap, best_bitmap(r, top)) {
        parts.push(format!(
            "{}'s fastest mode ({}) reaches {:.0}% of {}'s inserts (target ≥ 25%: {}): it sends k = {} bit operations per key where BF.MADD sends the key once",
            role_id(Role::SharedBitmap),
            best.series.mode.map(|m| m.name()).unwrap_or("–"),
            100.0 * ratio,
            role_id(Role::SharedBloom),
            if ratio >= 0.25 { "met" } else { "NOT met" },
            best.geometry.hashes.unwrap_or(0)
        ));
    }
    if let Some(ratio) = client {
        parts.push(format!(
            "our client drives {} at {:.0}% of a raw pipeline of the same commands (target ≥ 90%: {})",
            role_id(Role::SharedBloom),
            100.0 * ratio,
            if ratio >= 0.9 { "met" } else { "NOT met" }
        ));
    }
    // 99.9%, not 95%: with dozens of points, a few would fall outside a 95% interval by chance alone.
    let outside: Vec<String> = r
        .sweep
        .iter()
        .filter(|p| {
            !crate::stats::wilson(p.n_false_positives, p.n_non_member_queries, 0.999)
                .contains(p.expected_fpr)
        })
        .map(|p| format!("{} at batch {}", p.series, p.batch_keys))
        .collect();
    parts.push(if outside.is_empty() {
        format!(
            "every point's observed rate lies in the 99.9% interval of its theory ({} points)",
            r.sweep.len()
        )
    } else {
        format!(
            "observed rate outside the 99.9% interval of theory: {}",
            outside.join(", ")
        )
    });
    let negatives: u64 = r.sweep.iter().map(|p| p.false_negatives).sum();
    parts.push(format!("false negatives: {negatives}"));
    let mut text = parts.join("; ");
    text.push('.');
    text
}

/// What `templates/shared.html` shows.
#[derive(Serialize)]
pub struct Shared {
    stem: &'static str,
    title: &'static str,
    verdict: String,
    targets: Vec<TargetRow>,
    points: Vec<PointRow>,
    /// The points on a cluster (empty: none measured).
    cluster: Vec<super::sweep_cluster::ClusterRow>,
    not_measured: Vec<NotMeasured>,
}

/// The two targets at one batch size.
#[derive(Serialize)]
struct TargetRow {
    batch: u64,
    bitmap: TargetCell,
    client: TargetCell,
}

/// A ratio against its target, as percentages.
#[derive(Serialize)]
struct TargetCell {
    /// None: not measured.
    ratio: Option<String>,
    met: bool,
    target: String,
}

#[derive(Serialize)]
struct PointRow {
    series: String,
    batch: String,
    n: u64,
    insert: String,
    raw_insert: String,
    member_query: String,
    non_member_query: String,
    server_bytes: String,
    used_memory_delta: String,
    bytes_per_key: String,
    bits: String,
    hashes: String,
    n_non_member_queries: u64,
    n_false_positives: u64,
    observed: String,
    low: String,
    high: String,
    theory: String,
    inside: &'static str,
    false_negatives: u64,
}

#[derive(Serialize)]
struct NotMeasured {
    structure: String,
    reason: String,
}

/// The section: figure, verdict, targets per batch size, and every point's numbers (none without a
/// sweep).
pub fn view(r: &Results) -> Option<Shared> {
    if r.sweep.is_empty() && r.sweep_skipped.is_empty() {
        return None;
    }
    let cell = |v: Option<f64>, target: f64| TargetCell {
        ratio: v.map(|v| format!("{:.0}", 100.0 * v)),
        met: v.is_some_and(|v| v >= target),
        target: format!("{:.0}", 100.0 * target),
    };
    let targets = batches(r)
        .into_iter()
        .map(|b| {
            let (bitmap, client) = target_ratios(r, b);
            TargetRow {
                batch: b,
                bitmap: cell(bitmap, 0.25),
                client: cell(client, 0.9),
            }
        })
        .collect();
    let points = r
        .sweep
        .iter()
        .map(|p| PointRow {
            series: p.series.to_string(),
            batch: if p.batch_keys == 0 {
                "–".to_string()
            } else {
                p.batch_keys.to_string()
            },
            n: p.n,
            insert: format!("{:.0}", p.insert_keys_per_s),
            raw_insert: p
                .raw_insert_keys_per_s
                .map(|k| format!("{k:.0}"))
                .unwrap_or_else(|| "–".into()),
            member_query: format!("{:.0}", p.member_query_keys_per_s),
            non_member_query: format!("{:.0}", p.non_member_query_keys_per_s),
            server_bytes: human_bytes(p.server_bytes as f64),
            used_memory_delta: if p.used_memory_delta_bytes < 0 {
                format!("−{}", human_bytes(-p.used_memory_delta_bytes as f64))
            } else {
                human_bytes(p.used_memory_delta_bytes as f64)
            },
            bytes_per_key: format!("{:.2}", p.bytes_per_key),
            bits: p
                .geometry
                .bits
                .map(|b| b.to_string())
                .unwrap_or_else(|| "–".into()),
            hashes: p
                .geometry
                .hashes
                .map(|k| k.to_string())
                .unwrap_or_else(|| "–".into()),
            n_non_member_queries: p.n_non_member_queries,
            n_false_positives: p.n_false_positives,
            observed: human_rate(p.observed_fpr),
            low: human_rate(p.observed_fpr_wilson95.low),
            high: human_rate(p.observed_fpr_wilson95.high),
            theory: human_rate(p.expected_fpr),
            inside: if p.theory_in_interval { "yes" } else { "no" },
            false_negatives: p.false_negatives,
        })
        .collect();
    Some(Shared {
        stem: SharedThroughput.stem(),
        title: SharedThroughput.title(),
        verdict: verdict(r),
        targets,
        points,
        cluster: super::sweep_cluster::rows(r),
        not_measured: r
            .sweep_skipped
            .iter()
            .map(|k| NotMeasured {
                structure: k.subject.to_string(),
                reason: k.reason.clone(),
            })
            .collect(),
    })
}

//! The report's figures, one file each: how it is drawn, the verdict under it and the tables of its
//! numbers, all from results only. [`render_all`] lists them in page order.

mod bitmap_claim;
mod bits;
mod churn;
mod deletion;
mod expiry;
mod growth;
mod memory;
mod rates;
mod saturation;
mod shipping;
mod throughput;

use bitmap_claim::BitmapClaim;
use bits::BitsPerKey;
use churn::Churn;
use deletion::Deletion;
use expiry::Expiry;
use growth::Growth;
use memory::BytesVsN;
use rates::RateVsN;
use saturation::Saturation;
use shipping::Shipping;
use throughput::Throughput;

use super::chart::{
    axis_label, bytes_unit, colour, empty, log_range, rate_label, render, trim_number, DrawResult,
    Figure, YAxis,
};
use super::panels::{self, draw_panels, Key, Panel};
use super::template;
use crate::analysis::exact_crossover;
use crate::results::{CellRecord, RatePoint, Results};
use crate::units::{human_bytes, human_count, human_rate};
use crate::Result;
use plotters::coord::combinators::LogCoord;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// A figure that was drawn: its image stem and title.
#[derive(Clone, Debug)]
pub struct Drawn {
    pub stem: &'static str,
    pub title: &'static str,
    /// The plain-language verdict under it.
    pub verdict: String,
    /// Tables of its numbers (HTML), possibly empty.
    pub tables: String,
}

/// Draws every figure into `dir`.
pub fn render_all(
    dir: &Path,
    results: &Results,
    analysis: &crate::analysis::Analysis,
) -> Result<Vec<Drawn>> {
    let mut drawn = Vec::new();
    macro_rules! figure {
        ($f:expr) => {{
            let f = $f;
            render(dir, &f, results)?;
            let tables = f.tables(results)?;
            drawn.push(Drawn {
                stem: f.stem(),
                title: f.title(),
                verdict: f.verdict(results),
                tables,
            });
        }};
    }
    figure!(BytesVsN);
    figure!(BitsPerKey);
    figure!(Throughput {
        insert: true,
        analysis
    });
    figure!(Throughput {
        insert: false,
        analysis
    });
    figure!(RateVsN {
        missed_rates: &analysis.missed_rates
    });
    figure!(Saturation);
    figure!(Deletion);
    // The workloads' own experiments are drawn only when they ran (a crawl's report has neither).
    if !results.churn.is_empty() {
        figure!(Churn);
    }
    figure!(Growth);
    figure!(BitmapClaim);
    figure!(Expiry);
    if !results.shipping.is_empty() {
        figure!(Shipping);
    }
    Ok(drawn)
}

/// Structures in registry order, then any others, as they appear in the cells.
/// Grid cells of registered structures skipped for memory (not skipped experiments or scenarios, nor rows
/// skipped for another cause): the cells drawn as projections.
pub fn structure_skips(r: &Results) -> impl Iterator<Item = &crate::results::SkippedCell> {
    let registry = crate::registry::ids();
    r.skipped.iter().filter(move |s| {
        s.subject.cell().is_some_and(|id| registry.contains(&id))
            && s.cause == crate::results::SkipCause::Memory
    })
}

/// One panel of the given structures (a chart of a fixed few), without a panel title.
fn one_panel(ids: &[&str]) -> Vec<Panel> {
    vec![Panel {
        title: String::new(),
        ids: ids.iter().map(|id| id.to_string()).collect(),
    }]
}

/// The structures of the grid's cells that `keep` accepts, in report order.
fn cell_structures(r: &Results, keep: impl Fn(&CellRecord) -> bool) -> Vec<String> {
    structure_order(r)
        .into_iter()
        .filter(|id| r.cells.iter().any(|c| c.structure == *id && keep(c)))
        .collect()
}

fn structure_order(results: &Results) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for c in &results.cells {
        if !ids.contains(&c.structure) {
            ids.push(c.structure.clone());
        }
    }
    // Skipped experiments and scenarios are not structures: they get no projection line.
    for id in structure_skips(results).filter_map(|s| s.subject.cell()) {
        if !ids.iter().any(|i| i == id) {
            ids.push(id.to_string());
        }
    }
    let registry = crate::registry::ids();
    ids.sort_by_key(|id| registry.iter().position(|r| r == id).unwrap_or(usize::MAX));
    ids
}

/// Width of a y axis labelled with rates ("100 per million" is wider than "1e-4").
const RATE_LABEL_AREA_PX: u32 = 130;

/// A chart context with log axes on both sides.
type LogLogChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<LogCoord<f64>, LogCoord<f64>>>;

/// A chart with log axes on both sides, its caption, axis descriptions and tick labels.
fn log_log_chart<'a, DB: DrawingBackend + 'a>(
    area: &'a DrawingArea<DB, Shift>,
    title: &str,
    (x, x_desc): (std::ops::Range<f64>, &str),
    (y, y_desc): (std::ops::Range<f64>, &str),
    y_axis: YAxis,
) -> std::result::Result<LogLogChart<'a, DB>, Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    let mut builder = ChartBuilder::on(area);
    if !title.is_empty() {
        builder.caption(title, ("sans-serif", 17));
    }
    let mut chart = builder
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(match y_axis {
            YAxis::Rate => RATE_LABEL_AREA_PX,
            YAxis::Plain | YAxis::Bytes => 85,
        })
        .build_cartesian_2d(x.log_scale(), y.log_scale().base(y_axis.log_base()))?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(&|v| axis_label(*v))
        .y_label_formatter(&|v| y_axis.label(*v))
        .label_style(("sans-serif", 14))
        .draw()?;
    Ok(chart)
}

/// Whether theory differs visibly from the observed rate at any point: it lies outside the point's 95%
/// interval (not sampling noise) and a tenth or more away from the observed (visible on the chart). Only
/// then is its dashed line drawn.
fn theory_differs(points: &[(f64, f64, f64, f64, f64)], floor: f64) -> bool {
    points.iter().any(|p| {
        let (observed, low, high, theory) = (p.1, p.2, p.3, p.4);
        let outside = theory < low || theory > high;
        let apart = (observed.max(floor) / theory.max(floor)).ln().abs() > 1.1f64.ln();
        outside && apart
    })
}

/// The legend entry of theory lines.
fn theory_key() -> Key {
    Key::dashed("theory, where it is off (dashed)", RGBColor(90, 90, 90))
}

/// Draws observed rates with 95% bars, and theory as a dashed line where it differs visibly, for one
/// structure's points; pushes the legend entries.
fn rate_series<
    'a,
    DB: DrawingBackend + 'a,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    label: &str,
    c: RGBColor,
    points: &[(f64, f64, f64, f64, f64)],
    floor: f64,
    keys: &mut Vec<Key>,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let clamp = |v: f64| v.max(floor);
    let observed: Vec<(f64, f64)> = points.iter().map(|p| (p.0, clamp(p.1))).collect();
    let theory: Vec<(f64, f64)> = points.iter().map(|p| (p.0, clamp(p.4))).collect();
    chart.draw_series(LineSeries::new(observed, c.stroke_width(2)))?;
    keys.push(Key::solid(label, c));
    chart.draw_series(
        points.iter().map(|p| {
            ErrorBar::new_vertical(p.0, clamp(p.2), clamp(p.1), clamp(p.3), c.filled(), 8)
        }),
    )?;
    if theory_differs(points, floor) {
        chart.draw_series(DashedLineSeries::new(theory, 5, 4, c.stroke_width(1)))?;
        if !keys.iter().any(|k| k.label == theory_key().label) {
            keys.push(theory_key());
        }
    }
    Ok(())
}

fn target_line<
    'a,
    DB: DrawingBackend + 'a,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    x: std::ops::Range<f64>,
    target: f64,
    keys: &mut Vec<Key>,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    chart.draw_series(DashedLineSeries::new(
        vec![(x.start, target), (x.end, target)],
        10,
        6,
        BLACK.stroke_width(1),
    ))?;
    keys.push(Key::dashed(format!("target {}", human_rate(target)), BLACK));
    Ok(())
}

/// (x, observed, low, high, expected) of rate points.
fn rate_tuples(
    points: &[&RatePoint],
    x: &impl Fn(&RatePoint) -> f64,
) -> Vec<(f64, f64, f64, f64, f64)> {
    points
        .iter()
        .map(|p| {
            (
                x(p),
                p.observed_fpr,
                p.observed_fpr_wilson95.low,
                p.observed_fpr_wilson95.high,
                p.expected_fpr,
            )
        })
        .collect()
}

/// Draws the rate points of each structure in `ids` (observed with 95% bars, theory dashed).
fn rate_point_series<
    'a,
    DB: DrawingBackend + 'a,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    points: &[RatePoint],
    ids: &[String],
    x_of: impl Fn(&RatePoint) -> f64,
    floor: f64,
    keys: &mut Vec<Key>,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    for id in ids {
        let mine: Vec<&RatePoint> = points.iter().filter(|p| p.structure == *id).collect();
        if !mine.is_empty() {
            rate_series(
                chart,
                id,
                colour(id),
                &rate_tuples(&mine, &x_of),
                floor,
                keys,
            )?;
        }
    }
    Ok(())
}

/// A log y range covering the rate points' upper interval bounds and theory, never below `floor`.
fn rate_y_range(points: &[RatePoint], floor: f64) -> std::ops::Range<f64> {
    log_range(points.iter().flat_map(|p| {
        [
            p.observed_fpr_wilson95.high.max(floor),
            p.expected_fpr.max(floor),
            floor,
        ]
    }))
}

fn largest<'a>(r: &'a Results, id: &str) -> Option<&'a CellRecord> {
    r.cells
        .iter()
        .filter(|c| c.structure == id)
        .max_by_key(|c| c.n)
}

/// One row of an experiment's table of rate points (`templates/figures/points.html`).
#[derive(serde::Serialize)]
struct PointRow<'a> {
    structure: &'a str,
    design_n: String,
    inserted: String,
    bits: u64,
    hashes: u32,
    bytes: String,
    n_queries: u64,
    n_false_positives: u64,
    observed: String,
    low: String,
    high: String,
    theory: String,
    inside: &'static str,
    false_negatives: u64,
}

/// The rows of an experiment's table of rate points.
fn point_rows(points: &[RatePoint]) -> Vec<PointRow<'_>> {
    points
        .iter()
        .map(|p| PointRow {
            structure: &p.structure,
            design_n: human_count(p.design_n as f64),
            inserted: human_count(p.n_inserted as f64),
            bits: p.bits,
            hashes: p.hashes,
            bytes: human_bytes(p.bytes as f64),
            n_queries: p.n_queries,
            n_false_positives: p.n_false_positives,
            observed: human_rate(p.observed_fpr),
            low: human_rate(p.observed_fpr_wilson95.low),
            high: human_rate(p.observed_fpr_wilson95.high),
            theory: human_rate(p.expected_fpr),
            inside: if p.theory_in_interval { "yes" } else { "no" },
            false_negatives: p.false_negatives,
        })
        .collect()
}

/// An experiment's table of rate points (empty without points).
fn point_table(points: &[RatePoint]) -> Result<String> {
    #[derive(serde::Serialize)]
    struct Points<'a> {
        points: Vec<PointRow<'a>>,
    }
    template::render(
        "figures/points.html",
        &Points {
            points: point_rows(points),
        },
    )
}

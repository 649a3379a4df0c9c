//! The report's figures, one struct each, drawn from results only.

use super::chart::{axis_label, bytes_label, colour, empty, log_range, render, DrawResult, Figure};
use crate::results::{RatePoint, Results};
use crate::structures::{bitmap, bloom, counting, fingerprint, hashset, scalable};
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
}

/// Draws every figure into `dir`.
pub fn render_all(dir: &Path, results: &Results) -> Result<Vec<Drawn>> {
    let mut drawn = Vec::new();
    macro_rules! figure {
        ($f:expr) => {{
            let f = $f;
            render(dir, &f, results)?;
            drawn.push(Drawn {
                stem: f.stem(),
                title: f.title(),
            });
        }};
    }
    figure!(BytesVsN);
    figure!(BitsPerKey);
    figure!(Throughput { insert: true });
    figure!(Throughput { insert: false });
    figure!(RateVsN);
    figure!(Saturation);
    figure!(Deletion);
    figure!(Growth);
    figure!(BitmapClaim);
    figure!(Regimes);
    Ok(drawn)
}

/// Structures in registry order, then any others, as they appear in the cells.
/// Skipped grid cells of registered structures (not skipped experiments or scenarios).
pub fn structure_skips(r: &Results) -> impl Iterator<Item = &crate::results::SkippedCell> {
    let registry = crate::registry::ids();
    r.skipped
        .iter()
        .filter(move |s| registry.contains(&s.structure.as_str()))
}

fn structure_order(results: &Results) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for c in &results.cells {
        if !ids.contains(&c.structure) {
            ids.push(c.structure.clone());
        }
    }
    // Skipped experiments and scenarios are not structures: they get no projection line.
    for s in structure_skips(results) {
        if !ids.contains(&s.structure) {
            ids.push(s.structure.clone());
        }
    }
    let registry = crate::registry::ids();
    ids.sort_by_key(|id| registry.iter().position(|r| r == id).unwrap_or(usize::MAX));
    ids
}

fn legend<'a, DB: DrawingBackend + 'a, X: Ranged, Y: Ranged>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    position: SeriesLabelPosition,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .label_font(("sans-serif", 15))
        .draw()?;
    Ok(())
}

/// A chart context with log axes on both sides.
type LogLogChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<LogCoord<f64>, LogCoord<f64>>>;

/// A chart with log axes on both sides, its caption, axis descriptions and tick labels.
fn log_log_chart<'a, DB: DrawingBackend + 'a>(
    area: &'a DrawingArea<DB, Shift>,
    title: &str,
    (x, x_desc): (std::ops::Range<f64>, &str),
    (y, y_desc): (std::ops::Range<f64>, &str),
    y_label: fn(f64) -> String,
) -> std::result::Result<LogLogChart<'a, DB>, Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(85)
        .build_cartesian_2d(x.log_scale(), y.log_scale())?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(&|v| axis_label(*v))
        .y_label_formatter(&|v| y_label(*v))
        .label_style(("sans-serif", 14))
        .draw()?;
    Ok(chart)
}

pub struct BytesVsN;

impl Figure for BytesVsN {
    fn stem(&self) -> &'static str {
        "bytes_vs_n"
    }
    fn title(&self) -> &'static str {
        "Memory held vs keys (measured; hollow = projected from the model)"
    }
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, r: &Results) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        if r.cells.is_empty() && r.skipped.is_empty() {
            return empty(area, self.title(), "no cells in these results");
        }
        let header = r.header.as_ref();
        let budget = header.map(|h| h.memory_budget_bytes as f64).unwrap_or(0.0);
        let ram = header
            .map(|h| h.machine.total_memory_bytes as f64)
            .unwrap_or(0.0);
        // Projections: the exact sets at their largest measured bytes per key, up to the budget.
        let crossovers: Vec<(&str, f64, f64)> = [hashset::ID, fingerprint::ID]
            .iter()
            .filter_map(|id| {
                crate::analysis::exact_crossover(r, id, budget).map(|(n, _)| (*id, n, budget))
            })
            .filter(|(_, n, _)| *n > 0.0 && n.is_finite())
            .collect();
        let ns = r
            .cells
            .iter()
            .map(|c| c.n as f64)
            .chain(structure_skips(r).map(|s| s.n as f64))
            .chain(crossovers.iter().map(|c| c.1 * 1.5));
        let x = log_range(ns);
        let ys = r
            .cells
            .iter()
            .map(|c| c.heap_footprint_bytes as f64)
            .chain(structure_skips(r).map(|s| {
                crate::analysis::fit_bytes(r, &s.structure)
                    .map(|f| f.at(s.n as f64))
                    .unwrap_or(s.projected_bytes)
            }))
            .chain([budget, ram]);
        let y = log_range(ys);
        let mut chart = log_log_chart(
            area,
            self.title(),
            (x.clone(), "keys inserted (n)"),
            (y.clone(), "bytes"),
            bytes_label,
        )?;
        for (value, name, style) in [(budget, "memory budget", RED), (ram, "machine RAM", BLACK)] {
            if value > 0.0 {
                chart
                    .draw_series(DashedLineSeries::new(
                        vec![(x.start, value), (x.end, value)],
                        8,
                        6,
                        style.stroke_width(1),
                    ))?
                    .label(format!("{name} {}", bytes_label(value)))
                    .legend(move |(a, b)| PathElement::new(vec![(a, b), (a + 20, b)], style));
            }
        }
        for id in structure_order(r) {
            let c = colour(&id);
            let mut measured: Vec<(f64, f64)> = r
                .cells
                .iter()
                .filter(|cell| cell.structure == id)
                .map(|cell| (cell.n as f64, cell.heap_footprint_bytes as f64))
                .collect();
            measured.sort_by(|a, b| a.0.total_cmp(&b.0));
            // Projections from the line fitted to this run's measured cells; the size model otherwise.
            let fit = crate::analysis::fit_bytes(r, &id);
            let mut projected: Vec<(f64, f64)> = r
                .skipped
                .iter()
                .filter(|s| s.structure == id)
                .map(|s| {
                    let n = s.n as f64;
                    (n, fit.map(|f| f.at(n)).unwrap_or(s.projected_bytes))
                })
                .collect();
            projected.sort_by(|a, b| a.0.total_cmp(&b.0));
            chart
                .draw_series(LineSeries::new(measured.clone(), c.stroke_width(2)))?
                .label(id.clone())
                .legend(move |(a, b)| {
                    PathElement::new(vec![(a, b), (a + 20, b)], c.stroke_width(2))
                });
            chart.draw_series(measured.iter().map(|p| Circle::new(*p, 4, c.filled())))?;
            if !projected.is_empty() {
                let mut line = measured.last().copied().into_iter().collect::<Vec<_>>();
                line.extend(projected.iter().copied());
                chart.draw_series(DashedLineSeries::new(line, 6, 5, c.stroke_width(1)))?;
                chart.draw_series(
                    projected
                        .iter()
                        .map(|p| Circle::new(*p, 5, c.stroke_width(2))),
                )?;
            }
        }
        for (id, n_cross, bytes) in &crossovers {
            if let Some(last) = r
                .cells
                .iter()
                .filter(|c| c.structure == *id)
                .max_by_key(|c| c.n)
            {
                let c = colour(id);
                let line = vec![
                    (last.n as f64, last.heap_footprint_bytes as f64),
                    (*n_cross, *bytes),
                ];
                chart.draw_series(DashedLineSeries::new(line, 3, 5, c.stroke_width(1)))?;
                chart.draw_series(std::iter::once(Circle::new(
                    (*n_cross, *bytes),
                    5,
                    c.stroke_width(2),
                )))?;
            }
        }
        if let Some((n_cross, _)) = crate::analysis::exact_crossover(r, hashset::ID, budget) {
            if n_cross > x.start && n_cross < x.end {
                let red = RGBColor(200, 0, 0);
                chart.draw_series(DashedLineSeries::new(
                    vec![(n_cross, y.start), (n_cross, y.end)],
                    4,
                    4,
                    red.stroke_width(1),
                ))?;
                chart.draw_series(std::iter::once(Text::new(
                    format!("exact set exceeds budget at n ≈ {}", axis_label(n_cross)),
                    (n_cross, y.start * 4.0),
                    ("sans-serif", 14).into_font().color(&red),
                )))?;
            }
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft)
    }
}

pub struct BitsPerKey;

impl Figure for BitsPerKey {
    fn stem(&self) -> &'static str {
        "bits_per_key"
    }
    fn title(&self) -> &'static str {
        "Bits per key vs keys (measured heap footprint)"
    }
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, r: &Results) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        if r.cells.is_empty() {
            return empty(area, self.title(), "no measured cells in these results");
        }
        let x = log_range(r.cells.iter().map(|c| c.n as f64));
        let y = log_range(r.cells.iter().map(|c| c.bits_per_key));
        let mut chart = log_log_chart(
            area,
            self.title(),
            (x, "keys inserted (n)"),
            (y, "bits per key"),
            axis_label,
        )?;
        for id in structure_order(r) {
            let c = colour(&id);
            let mut points: Vec<(f64, f64)> = r
                .cells
                .iter()
                .filter(|cell| cell.structure == id)
                .map(|cell| (cell.n as f64, cell.bits_per_key))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            chart
                .draw_series(LineSeries::new(points.clone(), c.stroke_width(2)))?
                .label(id.clone())
                .legend(move |(a, b)| {
                    PathElement::new(vec![(a, b), (a + 20, b)], c.stroke_width(2))
                });
            chart.draw_series(points.iter().map(|p| Circle::new(*p, 4, c.filled())))?;
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)
    }
}

pub struct Throughput {
    pub insert: bool,
}

impl Figure for Throughput {
    fn stem(&self) -> &'static str {
        if self.insert {
            "insert_throughput"
        } else {
            "query_throughput"
        }
    }
    fn title(&self) -> &'static str {
        if self.insert {
            "Insert throughput vs keys (hash + probe; median, bars min–max over reps)"
        } else {
            "Member query throughput vs keys (hash + probe; median, bars min–max)"
        }
    }
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, r: &Results) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        if r.cells.is_empty() {
            return empty(area, self.title(), "no measured cells in these results");
        }
        let pick = |c: &crate::results::CellRecord| {
            if self.insert {
                c.insert_ns_per_key
            } else {
                c.member_query_ns_per_key
            }
        };
        let x = log_range(r.cells.iter().map(|c| c.n as f64));
        let y = log_range(
            r.cells
                .iter()
                .flat_map(|c| [1e9 / pick(c).min, 1e9 / pick(c).max]),
        );
        let mut chart = log_log_chart(
            area,
            self.title(),
            (x, "keys inserted (n)"),
            (y, "keys per second"),
            axis_label,
        )?;
        for id in structure_order(r) {
            let c = colour(&id);
            let mut cells: Vec<_> = r.cells.iter().filter(|cell| cell.structure == id).collect();
            cells.sort_by_key(|cell| cell.n);
            let points: Vec<(f64, f64)> = cells
                .iter()
                .map(|cell| (cell.n as f64, 1e9 / pick(cell).median))
                .collect();
            chart
                .draw_series(LineSeries::new(points.clone(), c.stroke_width(2)))?
                .label(id.clone())
                .legend(move |(a, b)| {
                    PathElement::new(vec![(a, b), (a + 20, b)], c.stroke_width(2))
                });
            chart.draw_series(cells.iter().map(|cell| {
                let s = pick(cell);
                ErrorBar::new_vertical(
                    cell.n as f64,
                    1e9 / s.max,
                    1e9 / s.median,
                    1e9 / s.min,
                    c.filled(),
                    8,
                )
            }))?;
        }
        legend(&mut chart, SeriesLabelPosition::LowerLeft)
    }
}

/// Draws observed rates with 95% bars and theory as a dashed line, for one structure's points.
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
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let clamp = |v: f64| v.max(floor);
    let observed: Vec<(f64, f64)> = points.iter().map(|p| (p.0, clamp(p.1))).collect();
    let theory: Vec<(f64, f64)> = points.iter().map(|p| (p.0, clamp(p.4))).collect();
    chart
        .draw_series(LineSeries::new(observed.clone(), c.stroke_width(2)))?
        .label(format!("{label} observed"))
        .legend(move |(a, b)| PathElement::new(vec![(a, b), (a + 20, b)], c.stroke_width(2)));
    chart.draw_series(
        points.iter().map(|p| {
            ErrorBar::new_vertical(p.0, clamp(p.2), clamp(p.1), clamp(p.3), c.filled(), 8)
        }),
    )?;
    chart
        .draw_series(DashedLineSeries::new(theory, 5, 4, c.stroke_width(1)))?
        .label(format!("{label} theory"))
        .legend(move |(a, b)| {
            PathElement::new(vec![(a, b), (a + 6, b), (a + 10, b), (a + 16, b)], c)
        });
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
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    chart
        .draw_series(DashedLineSeries::new(
            vec![(x.start, target), (x.end, target)],
            10,
            6,
            BLACK.stroke_width(1),
        ))?
        .label(format!("target p = {target}"))
        .legend(|(a, b)| PathElement::new(vec![(a, b), (a + 20, b)], BLACK));
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
    ids: &[&str],
    x_of: impl Fn(&RatePoint) -> f64,
    floor: f64,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    for id in ids {
        let mine: Vec<&RatePoint> = points.iter().filter(|p| p.structure == *id).collect();
        if !mine.is_empty() {
            rate_series(chart, id, colour(id), &rate_tuples(&mine, &x_of), floor)?;
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

pub struct RateVsN;

impl Figure for RateVsN {
    fn stem(&self) -> &'static str {
        "fpr_vs_n"
    }
    fn title(&self) -> &'static str {
        "False-positive rate vs keys: observed (95% Wilson bars) and theory (dashed)"
    }
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, r: &Results) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let cells: Vec<_> = r.cells.iter().filter(|c| !c.exact).collect();
        if cells.is_empty() {
            return empty(
                area,
                self.title(),
                "no approximate structures in these results",
            );
        }
        let x = log_range(cells.iter().map(|c| c.n as f64));
        let floor = 1e-6;
        let y = log_range(cells.iter().flat_map(|c| {
            [
                c.observed_fpr_wilson95.high.max(floor),
                c.expected_fpr.max(floor),
                floor,
            ]
        }));
        let mut chart = log_log_chart(
            area,
            self.title(),
            (x.clone(), "keys inserted (n)"),
            (y, "false-positive rate"),
            axis_label,
        )?;
        if let Some(h) = &r.header {
            target_line(&mut chart, x, h.fpr)?;
        }
        for id in structure_order(r) {
            let mut mine: Vec<_> = cells.iter().filter(|c| c.structure == id).collect();
            if mine.is_empty() {
                continue;
            }
            mine.sort_by_key(|c| c.n);
            let points: Vec<_> = mine
                .iter()
                .map(|c| {
                    (
                        c.n as f64,
                        c.observed_fpr,
                        c.observed_fpr_wilson95.low,
                        c.observed_fpr_wilson95.high,
                        c.expected_fpr,
                    )
                })
                .collect();
            rate_series(&mut chart, &id, colour(&id), &points, floor)?;
        }
        legend(&mut chart, SeriesLabelPosition::LowerRight)
    }
}

pub struct Saturation;

impl Figure for Saturation {
    fn stem(&self) -> &'static str {
        "saturation"
    }
    fn title(&self) -> &'static str {
        "Saturation: filters sized for n, filled past it (observed, 95% bars; theory dashed)"
    }
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, r: &Results) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        if r.saturation.is_empty() {
            return empty(area, self.title(), "the saturation experiment did not run");
        }
        let ratio = |p: &RatePoint| p.n_inserted as f64 / p.design_n.max(1) as f64;
        let max_ratio = r.saturation.iter().map(ratio).fold(1.0, f64::max);
        let floor = 1e-7;
        let y = log_range(r.saturation.iter().flat_map(|p| {
            [
                p.observed_fpr_wilson95.high,
                p.expected_fpr.max(floor),
                floor,
            ]
        }));
        let mut chart = ChartBuilder::on(area)
            .caption(self.title(), ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..max_ratio * 1.05, y.log_scale())?;
        chart
            .configure_mesh()
            .x_desc("fill ratio (keys inserted / design capacity)")
            .y_desc("false-positive rate")
            .y_label_formatter(&|v| axis_label(*v))
            .label_style(("sans-serif", 14))
            .draw()?;
        target_line(
            &mut chart,
            0.0..max_ratio * 1.05,
            r.saturation[0].target_fpr,
        )?;
        rate_point_series(
            &mut chart,
            &r.saturation,
            &[bloom::ID, scalable::ID],
            ratio,
            floor,
        )?;
        legend(&mut chart, SeriesLabelPosition::LowerRight)
    }
}

pub struct Growth;

impl Figure for Growth {
    fn stem(&self) -> &'static str {
        "growth"
    }
    fn title(&self) -> &'static str {
        "Unknown growth: bloom sized for n0 vs scalable from n0, fed 64 x n0"
    }
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, r: &Results) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        if r.growth.is_empty() {
            return empty(area, self.title(), "the growth experiment did not run");
        }
        let x = log_range(r.growth.iter().map(|p| p.n_inserted as f64));
        let floor = 1e-6;
        let y = rate_y_range(&r.growth, floor);
        let mut chart = log_log_chart(
            area,
            self.title(),
            (x.clone(), "keys inserted"),
            (y, "false-positive rate"),
            axis_label,
        )?;
        target_line(&mut chart, x, r.growth[0].target_fpr)?;
        rate_point_series(
            &mut chart,
            &r.growth,
            &[bloom::ID, scalable::ID],
            |p| p.n_inserted as f64,
            floor,
        )?;
        legend(&mut chart, SeriesLabelPosition::LowerRight)
    }
}

pub struct BitmapClaim;

impl Figure for BitmapClaim {
    fn stem(&self) -> &'static str {
        "bitmap_claim"
    }
    fn title(&self) -> &'static str {
        "The bitmap claim: one hash, m bits for n keys, vs a Bloom filter of the same size"
    }
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, r: &Results) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        if r.bitmap_claim.is_empty() {
            return empty(area, self.title(), "the bitmap experiment did not run");
        }
        let bpk = |p: &RatePoint| p.bits as f64 / p.n_inserted.max(1) as f64;
        let x = log_range(r.bitmap_claim.iter().map(bpk));
        let floor = 1e-7;
        let y = log_range(
            r.bitmap_claim
                .iter()
                .flat_map(|p| [p.observed_fpr_wilson95.high, p.expected_fpr.max(floor), 1.0]),
        );
        let mut chart = log_log_chart(
            area,
            self.title(),
            (x.clone(), "bits per key (m / n)"),
            (y, "share of new keys reported as seen"),
            axis_label,
        )?;
        target_line(&mut chart, x, r.bitmap_claim[0].target_fpr)?;
        rate_point_series(
            &mut chart,
            &r.bitmap_claim,
            &[bitmap::ID, bloom::ID],
            bpk,
            floor,
        )?;
        if let Some(p) = r
            .bitmap_claim
            .iter()
            .find(|p| p.structure == bitmap::ID && p.bits == p.n_inserted)
        {
            chart.draw_series(std::iter::once(Text::new(
                format!("m = n: {:.1}% of new keys dropped", p.observed_fpr * 100.0),
                (1.15, p.observed_fpr * 0.8),
                ("sans-serif", 15).into_font(),
            )))?;
        }
        legend(&mut chart, SeriesLabelPosition::LowerLeft)
    }
}

pub struct Deletion;

impl Figure for Deletion {
    fn stem(&self) -> &'static str {
        "deletion"
    }
    fn title(&self) -> &'static str {
        "Deletion: counting filter filled, half removed (rates with 95% bars; memory vs bloom)"
    }
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, r: &Results) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let Some(d) = r.deletion.first() else {
            return empty(area, self.title(), "the deletion experiment did not run");
        };
        let (left, right) = area.split_horizontally(area.dim_in_pixel().0 * 3 / 5);
        let before = crate::stats::wilson(d.false_positives_before, d.n_queries, 0.95);
        let after = crate::stats::wilson(d.false_positives_after, d.n_queries, 0.95);
        let rates = [
            (
                "before",
                d.false_positives_before as f64 / d.n_queries.max(1) as f64,
                before,
                d.expected_fpr_before,
            ),
            (
                "after removing half",
                d.false_positives_after as f64 / d.n_queries.max(1) as f64,
                after,
                d.expected_fpr_after,
            ),
        ];
        let top = rates
            .iter()
            .map(|r| r.2.high.max(r.3))
            .fold(d.target_fpr, f64::max)
            * 1.25;
        let mut chart = ChartBuilder::on(&left)
            .caption("false-positive rate", ("sans-serif", 18))
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..2.0, 0.0..top)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_label_formatter(&|v| format!("{:.2}%", v * 100.0))
            .label_style(("sans-serif", 14))
            .draw()?;
        let c = colour(counting::ID);
        for (i, (label, observed, interval, expected)) in rates.iter().enumerate() {
            let x0 = i as f64 + 0.2;
            chart.draw_series(std::iter::once(Rectangle::new(
                [(x0, 0.0), (x0 + 0.6, *observed)],
                c.mix(0.7).filled(),
            )))?;
            chart.draw_series(std::iter::once(ErrorBar::new_vertical(
                x0 + 0.3,
                interval.low,
                *observed,
                interval.high,
                BLACK.filled(),
                10,
            )))?;
            chart.draw_series(std::iter::once(Cross::new(
                (x0 + 0.3, *expected),
                7,
                RED.stroke_width(2),
            )))?;
            chart.draw_series(std::iter::once(Text::new(
                label.to_string(),
                (x0, -top * 0.04),
                ("sans-serif", 14).into_font(),
            )))?;
        }
        chart.draw_series(std::iter::once(Text::new(
            format!(
                "red x: theory; false negatives among the rest: {}",
                d.false_negatives_remaining
            ),
            (0.05, top * 0.95),
            ("sans-serif", 14).into_font(),
        )))?;
        let bytes_top = d.counting_bytes.max(d.bloom_bytes) as f64 * 1.2;
        let mut mem = ChartBuilder::on(&right)
            .caption("bytes at the same p", ("sans-serif", 18))
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(0.0..2.0, 0.0..bytes_top.max(1.0))?;
        mem.configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_label_formatter(&|v| bytes_label(*v))
            .label_style(("sans-serif", 14))
            .draw()?;
        for (i, (id, bytes)) in [(counting::ID, d.counting_bytes), (bloom::ID, d.bloom_bytes)]
            .iter()
            .enumerate()
        {
            let x0 = i as f64 + 0.2;
            mem.draw_series(std::iter::once(Rectangle::new(
                [(x0, 0.0), (x0 + 0.6, *bytes as f64)],
                colour(id).filled(),
            )))?;
            mem.draw_series(std::iter::once(Text::new(
                id.to_string(),
                (x0 + 0.1, -bytes_top * 0.04),
                ("sans-serif", 14).into_font(),
            )))?;
        }
        Ok(())
    }
}

pub struct Regimes;

impl Figure for Regimes {
    fn stem(&self) -> &'static str {
        "regimes"
    }
    fn title(&self) -> &'static str {
        "Regimes: the recommended structure by number of keys, for this run's budget and rate"
    }
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, r: &Results) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let Some(ladder) = crate::analysis::run_ladder(r) else {
            return empty(area, self.title(), "no run header in these results");
        };
        let last_from = ladder.last().map(|l| l.from_n).unwrap_or(1.0);
        let x = log_range([1e3, last_from * 100.0]);
        let mut chart = ChartBuilder::on(area)
            .caption(self.title(), ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(20)
            .build_cartesian_2d(x.clone().log_scale(), 0.0..1.0)?;
        chart
            .configure_mesh()
            .x_desc("distinct keys (n)")
            .disable_y_mesh()
            .y_labels(0)
            .x_label_formatter(&|v| axis_label(*v))
            .label_style(("sans-serif", 14))
            .draw()?;
        for (i, rung) in ladder.iter().enumerate() {
            let from = rung.from_n.max(x.start);
            let to = rung.to_n.unwrap_or(x.end).min(x.end);
            if to <= from {
                continue;
            }
            let c = if rung.to_n.is_none() {
                RGBColor(200, 200, 200)
            } else {
                colour(&rung.id)
            };
            chart.draw_series(std::iter::once(Rectangle::new(
                [(from, 0.15), (to, 0.85)],
                c.mix(0.55).filled(),
            )))?;
            let y = if i % 2 == 0 { 0.55 } else { 0.4 };
            chart.draw_series(std::iter::once(Text::new(
                rung.id.clone(),
                (from * 1.15, y),
                ("sans-serif", 17).into_font(),
            )))?;
            if let Some(to_n) = rung.to_n {
                chart.draw_series(std::iter::once(Text::new(
                    format!("{} keys", axis_label(to_n)),
                    (to_n * 0.8, 0.9),
                    ("sans-serif", 14).into_font(),
                )))?;
            }
        }
        Ok(())
    }
}

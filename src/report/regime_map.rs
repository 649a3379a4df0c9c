//! The regime map: keys n (10⁴–10¹¹, log) against the memory budget (1 MiB–1 TiB, log), each region
//! coloured by what the advisor picks there ([`crate::analysis::regimes::regime_at`]: the exact set,
//! fingerprints, a filter, a shared server, a sharded cluster), with the line where each advised structure
//! stops fitting. Regions up to the largest n a run measured are drawn in full colour, projected ones
//! paler; the run's measured cells are marked at its budget, and the reader's own point (the keys and the
//! budget asked, a segment for a range of n) with a cross in a ring. The report draws it for the question
//! it answers; `advise --map FILE` for the advice's workload.

use super::chart::{axis_label, colour, DrawResult, YAxis};
use super::panels::{draw_keys, Key};
use crate::analysis::regimes::{advised_kinds, bytes_at, regime_of, Demand, Regime, Sizing};
use crate::kind::Role;
use crate::registry::role_id;
use crate::results::Results;
use crate::units::human_bytes;
use crate::{Error, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// Pixel size of the map.
pub const SIZE: (u32, u32) = (1100, 620);
/// The n axis: 10⁴ to 10¹¹ keys.
const N_RANGE: (f64, f64) = (1e4, 1e11);
/// The budget axis: 1 MiB to 1 TiB.
const BUDGET_RANGE: (f64, f64) = (1048576.0, 1099511627776.0);
/// Grid cells per decade of n and per doubling of the budget.
const N_STEPS_PER_DECADE: usize = 12;
const BUDGET_STEPS_PER_DOUBLING: usize = 3;
/// Width of the legend strip.
const KEY_WIDTH: u32 = 330;

/// What the map is drawn for.
pub struct MapSpec<'a> {
    /// The rate, deletes and growth of the workload (its n and budget are the axes).
    pub workload: Demand,
    /// A run whose measured bytes replace key-dependent models, with its label.
    pub run: Option<(&'a Results, &'a str)>,
    pub node_memory_bytes: u64,
    /// Measured points (n, budget) to mark.
    pub measured: Vec<(f64, f64)>,
    /// Per structure id, the largest n the run measured it at for this rate: a region is drawn in full
    /// colour only where its structure was measured at that n or beyond; all else is projected.
    pub measured_up_to_n: Vec<(String, f64)>,
    /// The reader's point: the question asked or the advice's workload.
    pub point: Option<MapPoint>,
}

/// The reader's own point on the map: the keys they plan for (a range of n is a segment) at their
/// memory budget, and the legend's name for it.
#[derive(Clone, Debug, PartialEq)]
pub struct MapPoint {
    pub n_low: f64,
    pub n_high: f64,
    pub memory_bytes: f64,
    /// What the point is ("your question", "the advice's workload").
    pub label: String,
}

impl MapPoint {
    /// The point of a demand's keys and budget.
    pub fn of(demand: &Demand, label: impl Into<String>) -> MapPoint {
        MapPoint {
            n_low: demand.n_low as f64,
            n_high: demand.n_high as f64,
            memory_bytes: demand.memory_bytes as f64,
            label: label.into(),
        }
    }

    /// Whether the map's axes hold it.
    fn on_map(&self) -> bool {
        let inside = |v: f64, (low, high): (f64, f64)| v >= low && v <= high;
        inside(self.n_low, N_RANGE)
            && inside(self.n_high, N_RANGE)
            && inside(self.memory_bytes, BUDGET_RANGE)
    }

    /// The legend's words: what it is, its n (or range) and budget, and whether the map shows it.
    fn legend(&self) -> String {
        let n = if self.n_low < self.n_high {
            format!("{}..{}", axis_label(self.n_low), axis_label(self.n_high))
        } else {
            axis_label(self.n_high)
        };
        format!(
            "× {}: n = {n}, {}{}",
            self.label,
            human_bytes(self.memory_bytes),
            if self.on_map() { "" } else { " (off the map)" }
        )
    }
}

/// How far `r` measured each structure (grid cells, and `redis-bloom` in the shared-filter sweep), when
/// it was run at rate `fpr`; nothing otherwise.
pub fn measured_reach(r: &Results, fpr: f64) -> Vec<(String, f64)> {
    let same_rate = r
        .header
        .as_ref()
        .is_some_and(|h| (h.fpr - fpr).abs() <= fpr * 1e-9);
    if !same_rate {
        return Vec::new();
    }
    let mut reach: Vec<(String, f64)> = Vec::new();
    let cells = r.cells.iter().map(|c| (c.structure.as_str(), c.n as f64));
    let sweep = r
        .sweep
        .iter()
        .filter(|p| p.structure == role_id(Role::SharedBloom) && p.batch_keys > 0)
        .map(|p| (role_id(Role::SharedBloom), p.n as f64));
    for (id, n) in cells.chain(sweep) {
        match reach.iter_mut().find(|(i, _)| i == id) {
            Some(entry) => entry.1 = entry.1.max(n),
            None => reach.push((id.to_string(), n)),
        }
    }
    reach
}

/// The structure whose measurements a region rests on.
fn measured_id(regime: Regime) -> Option<&'static str> {
    match regime {
        Regime::InProcess(id) => Some(id),
        Regime::SharedServer => Some(role_id(Role::SharedBloom)),
        Regime::Cluster | Regime::NothingDeletes => None,
    }
}

impl<'a> MapSpec<'a> {
    /// The map of a bench run for `question`: its rate (the run's unless re-asked), the run's measured
    /// scales at the run's budget, and the question's n and budget marked.
    pub fn of_question(r: &'a Results, question: &super::Question) -> Option<MapSpec<'a>> {
        let h = r.header.as_ref()?;
        let demand = question.demand_of(r)?;
        let budget = h.memory_budget_bytes as f64;
        let measured: Vec<(f64, f64)> = h
            .scales
            .iter()
            .filter(|n| r.cells.iter().any(|c| c.n == **n))
            .map(|n| (*n as f64, budget))
            .collect();
        Some(MapSpec {
            run: Some((r, "this run")),
            node_memory_bytes: crate::analysis::regimes::NODE_MEMORY_BYTES,
            measured_up_to_n: measured_reach(r, demand.fpr),
            measured,
            point: Some(MapPoint::of(
                &demand,
                if question.is_own() {
                    "this run's question"
                } else {
                    "your question"
                },
            )),
            workload: demand,
        })
    }
}

fn region_colour(regime: Regime) -> RGBColor {
    match regime {
        Regime::InProcess(id) => colour(id),
        Regime::SharedServer => colour(role_id(Role::SharedBloom)),
        Regime::Cluster => RGBColor(60, 60, 60),
        Regime::NothingDeletes => RGBColor(200, 200, 200),
    }
}

/// `c` mixed with white: `share` of the colour remains.
fn tint(c: RGBColor, share: f64) -> RGBColor {
    let mix = |v: u8| (255.0 - (255.0 - v as f64) * share).round() as u8;
    RGBColor(mix(c.0), mix(c.1), mix(c.2))
}

/// Draws the map with `title` on `area`.
pub fn draw_map<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    spec: &MapSpec,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let body = area.titled(title, ("sans-serif", 18))?;
    let (w, _) = body.dim_in_pixel();
    let (plot, strip) = body.split_horizontally(w.saturating_sub(KEY_WIDTH));
    let mut chart = ChartBuilder::on(&plot)
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(80)
        .build_cartesian_2d(
            (N_RANGE.0..N_RANGE.1).log_scale(),
            (BUDGET_RANGE.0..BUDGET_RANGE.1)
                .log_scale()
                .base(YAxis::Bytes.log_base()),
        )?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc("distinct keys n (log)")
        .y_desc("memory budget per process (log)")
        .x_label_formatter(&|v| axis_label(*v))
        .y_label_formatter(&|v| YAxis::Bytes.label(*v))
        .label_style(("sans-serif", 14))
        .draw()?;
    let n_steps = (N_RANGE.1 / N_RANGE.0).log10().round() as usize * N_STEPS_PER_DECADE;
    let b_steps =
        (BUDGET_RANGE.1 / BUDGET_RANGE.0).log2().round() as usize * BUDGET_STEPS_PER_DOUBLING;
    let n_at = |i: usize| N_RANGE.0 * 10f64.powf(i as f64 / N_STEPS_PER_DECADE as f64);
    let b_at = |j: usize| BUDGET_RANGE.0 * 2f64.powf(j as f64 / BUDGET_STEPS_PER_DOUBLING as f64);
    let mut seen: Vec<Regime> = Vec::new();
    let mut projected_any = false;
    // Bytes depend on n only: one column's figures serve every budget.
    let sizing = Sizing {
        run: spec.run,
        fpr: spec.workload.fpr,
        budget_bytes: BUDGET_RANGE.1,
    };
    let columns: Vec<(f64, f64, Vec<_>)> = (0..n_steps)
        .map(|i| {
            let (n0, n1) = (n_at(i), n_at(i + 1));
            (n0, n1, bytes_at(&sizing, (n0 * n1).sqrt() as u64))
        })
        .collect();
    for j in 0..b_steps {
        let (b0, b1) = (b_at(j), b_at(j + 1));
        let budget = (b0 * b1).sqrt();
        let mut cells = Vec::with_capacity(n_steps);
        for (n0, n1, bytes) in &columns {
            let n = (n0 * n1).sqrt();
            let regime = regime_of(
                bytes,
                budget,
                &spec.workload,
                n as u64,
                spec.node_memory_bytes,
            );
            if !seen.contains(&regime) {
                seen.push(regime);
            }
            let measured = measured_id(regime).is_some_and(|id| {
                spec.measured_up_to_n
                    .iter()
                    .any(|(m, up_to)| m == id && n <= up_to * 1.000_001)
            });
            projected_any |= !measured;
            let fill = tint(region_colour(regime), if measured { 0.7 } else { 0.35 });
            cells.push(Rectangle::new([(*n0, b0), (*n1, b1)], fill.filled()));
        }
        chart.draw_series(cells)?;
    }
    let mut keys: Vec<Key> = Vec::new();
    let order = |r: &Regime| match r {
        Regime::InProcess(id) => crate::registry::ids()
            .iter()
            .position(|i| i == id)
            .unwrap_or(0),
        Regime::SharedServer => usize::MAX - 2,
        Regime::Cluster => usize::MAX - 1,
        Regime::NothingDeletes => usize::MAX,
    };
    seen.sort_by_key(order);
    for regime in &seen {
        keys.push(Key::area(regime.label(), tint(region_colour(*regime), 0.7)));
    }
    if projected_any {
        keys.push(Key::area(
            "pale: projected (not measured at that n)",
            tint(colour(role_id(Role::ReferenceBloom)), 0.35),
        ));
    }
    // Where each advised structure stops fitting: its bytes at n.
    for (index, (kind, _)) in advised_kinds().enumerate() {
        let line: Vec<(f64, f64)> = columns
            .iter()
            .map(|(n0, n1, bytes)| ((n0 * n1).sqrt(), bytes[index].1))
            .filter(|(_, b)| *b >= BUDGET_RANGE.0 && *b <= BUDGET_RANGE.1)
            .collect();
        // Only the structures the map picks somewhere: their lines are its borders.
        if line.len() > 1 && seen.contains(&Regime::InProcess(kind.id())) {
            let c = colour(kind.id());
            chart.draw_series(LineSeries::new(line, c.stroke_width(2)))?;
            keys.push(Key::solid(format!("{} needs (bytes at n)", kind.id()), c));
        }
    }
    let node_n = crate::analysis::regimes::largest_n(spec.node_memory_bytes as f64, |n| {
        crate::theory::BloomSizing::for_rate(n, spec.workload.fpr).bytes() as f64
    });
    if node_n > N_RANGE.0 && node_n < N_RANGE.1 {
        chart.draw_series(DashedLineSeries::new(
            vec![(node_n, BUDGET_RANGE.0), (node_n, BUDGET_RANGE.1)],
            6,
            5,
            BLACK.stroke_width(1),
        ))?;
        keys.push(Key::dashed(
            format!(
                "one {} node's filter: n ≤ {}",
                human_bytes(spec.node_memory_bytes as f64),
                axis_label(node_n)
            ),
            BLACK,
        ));
    }
    if !spec.measured.is_empty() {
        chart.draw_series(
            spec.measured
                .iter()
                .map(|p| Circle::new(*p, 5, BLACK.filled())),
        )?;
        keys.push(Key::solid("● measured cells (at the run's budget)", BLACK));
    }
    if let Some(point) = &spec.point {
        if point.on_map() {
            let at = (point.n_high, point.memory_bytes);
            if point.n_low < point.n_high {
                chart.draw_series(LineSeries::new(
                    vec![(point.n_low, point.memory_bytes), at],
                    BLACK.stroke_width(3),
                ))?;
            }
            // A ring filled white with a cross: visible on every region's colour and over a dot.
            chart.draw_series(std::iter::once(Circle::new(at, 10, WHITE.filled())))?;
            chart.draw_series(std::iter::once(Circle::new(at, 10, BLACK.stroke_width(2))))?;
            chart.draw_series(std::iter::once(Cross::new(at, 6, BLACK.stroke_width(3))))?;
        }
        keys.push(Key::solid(point.legend(), BLACK));
    }
    draw_keys(&strip, &keys)
}

/// The map's title for a workload's rate, deletes and growth.
pub fn title(workload: &Demand) -> String {
    let mut needs = Vec::new();
    if workload.deletes {
        needs.push("deletes");
    }
    if workload.growth_unknown {
        needs.push("unknown growth");
    }
    let needs = if needs.is_empty() {
        String::new()
    } else {
        format!(", {}", needs.join(", "))
    };
    format!(
        "Regime map at p = {}{needs}: what to use for n keys within a memory budget",
        crate::units::human_rate(workload.fpr)
    )
}

/// Writes the map to `path` (`.svg` or `.png`), through a file beside it renamed into place, so a failed
/// drawing leaves nothing half-written.
pub fn write_map(path: &Path, spec: &MapSpec) -> Result<()> {
    super::register_font()?;
    let chart_error = |e: Box<dyn std::error::Error>| Error::Chart {
        chart: "regime map".into(),
        message: e.to_string(),
    };
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    if !matches!(extension, "svg" | "png") {
        return Err(Error::invalid(
            "map file",
            format!("'{}' must end in .svg or .png", path.display()),
        ));
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let partial = path.with_file_name(format!(".{name}.partial.{extension}"));
    let title = title(&spec.workload);
    let drawn = (|| -> std::result::Result<(), Box<dyn std::error::Error>> {
        if extension == "svg" {
            let area = SVGBackend::new(&partial, SIZE).into_drawing_area();
            area.fill(&WHITE)?;
            draw_map(&area, &title, spec)?;
            area.present()?;
        } else {
            let area = BitMapBackend::new(&partial, SIZE).into_drawing_area();
            area.fill(&WHITE)?;
            draw_map(&area, &title, spec)?;
            area.present()?;
        }
        Ok(())
    })();
    if let Err(e) = drawn {
        let _ = std::fs::remove_file(&partial);
        return Err(chart_error(e));
    }
    std::fs::rename(&partial, path).map_err(|e| {
        let _ = std::fs::remove_file(&partial);
        Error::Io {
            path: path.to_path_buf(),
            source: e,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> MapSpec<'static> {
        MapSpec {
            workload: Demand {
                n_low: 1,
                n_high: 1,
                fpr: 0.01,
                memory_bytes: 1,
                deletes: false,
                growth_unknown: false,
                shared: false,
                workload: Default::default(),
            },
            run: None,
            node_memory_bytes: crate::analysis::regimes::NODE_MEMORY_BYTES,
            measured: Vec::new(),
            measured_up_to_n: Vec::new(),
            point: None,
        }
    }

    #[test]
    fn a_map_is_written_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let svg = dir.path().join("map.svg");
        write_map(&svg, &spec()).unwrap();
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(
            text.contains("Regime map at p = 1.00%") && text.contains("shared server"),
            "{:.300}",
            text
        );
        let bad = dir.path().join("map.txt");
        let e = write_map(&bad, &spec()).unwrap_err().to_string();
        assert!(e.contains(".svg or .png"), "{e}");
        // Nothing else in the folder: no partial file, no file under the bad name.
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["map.svg".to_string()]);
    }

    #[test]
    fn the_readers_point_is_marked_or_said_to_be_off_the_map() {
        let dir = tempfile::tempdir().unwrap();
        let svg = dir.path().join("map.svg");
        let ring = |text: &str| text.matches(r#"r="10""#).count();
        write_map(&svg, &spec()).unwrap();
        let bare = std::fs::read_to_string(&svg).unwrap();
        assert_eq!(ring(&bare), 0);
        assert!(!bare.contains("× "), "no point, no legend entry");
        let asked = |n_low: f64, n_high: f64, memory_bytes: f64| MapSpec {
            point: Some(MapPoint {
                n_low,
                n_high,
                memory_bytes,
                label: "your question".into(),
            }),
            ..spec()
        };
        write_map(&svg, &asked(2e9, 2e9, (16u64 << 30) as f64)).unwrap();
        let text = std::fs::read_to_string(&svg).unwrap();
        // The white fill and the black ring.
        assert_eq!(ring(&text), 2, "{:.300}", text);
        assert!(text.contains("× your question: n = 2G, 16.0 GiB"));
        write_map(&svg, &asked(1e7, 2e9, (1u64 << 30) as f64)).unwrap();
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(text.contains("× your question: n = 10M..2G, 1.00 GiB"));
        write_map(&svg, &asked(1e12, 1e12, (16u64 << 30) as f64)).unwrap();
        let text = std::fs::read_to_string(&svg).unwrap();
        assert_eq!(ring(&text), 0);
        assert!(text.contains("n = 1T, 16.0 GiB (off the map)"));
    }
}

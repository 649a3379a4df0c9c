//! The saturation experiment: filters filled past the n they were sized for.

use super::*;
use crate::kind::Role;
use crate::registry::role_id;

pub struct Saturation;

/// The structures of the experiment, in report order.
fn saturation_ids(r: &Results) -> Vec<String> {
    let registry = crate::registry::ids();
    let mut ids: Vec<String> = Vec::new();
    for p in &r.saturation {
        if !ids.contains(&p.structure) {
            ids.push(p.structure.clone());
        }
    }
    ids.sort_by_key(|id| registry.iter().position(|r| r == id).unwrap_or(usize::MAX));
    ids
}

/// The point of `id` filled to `ratio` × its design n.
fn at<'a>(r: &'a Results, id: &str, ratio: f64) -> Option<&'a RatePoint> {
    r.saturation
        .iter()
        .filter(|p| p.structure == id)
        .find(|p| (p.n_inserted as f64 - ratio * p.design_n as f64).abs() <= 0.5 + 1e-9)
}

impl Figure for Saturation {
    fn stem(&self) -> &'static str {
        "saturation"
    }
    fn title(&self) -> &'static str {
        "Overshoot: filters sized for n, filled past it (observed, 95% bars; theory dashed where it differs)"
    }
    fn size(&self, r: &Results) -> (u32, u32) {
        panels::size_for(r, saturation_ids)
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
        let x = 0.0..max_ratio * 1.05;
        let panels = panels::panels(&saturation_ids(r));
        draw_panels(area, self.title(), &panels, |plot, panel, keys| {
            let mut builder = ChartBuilder::on(plot);
            if !panel.title.is_empty() {
                builder.caption(&panel.title, ("sans-serif", 17));
            }
            let mut chart = builder
                .margin(15)
                .x_label_area_size(45)
                .y_label_area_size(RATE_LABEL_AREA_PX)
                .build_cartesian_2d(x.clone(), y.clone().log_scale())?;
            chart
                .configure_mesh()
                .x_desc("fill (keys inserted / planned n)")
                .y_desc("false-positive rate")
                .y_label_formatter(&|v| rate_label(*v))
                .label_style(("sans-serif", 14))
                .draw()?;
            target_line(&mut chart, x.clone(), r.saturation[0].target_fpr, keys)?;
            rate_point_series(&mut chart, &r.saturation, &panel.ids, ratio, floor, keys)
        })
    }
    fn verdict(&self, r: &Results) -> String {
        saturation(r)
    }
    fn tables(&self, r: &Results) -> Result<String> {
        overshoot_table(r)
    }
}

/// `templates/figures/saturation.html`: the overshoot panel, then every point.
#[derive(serde::Serialize)]
struct SaturationTables<'a> {
    /// The fills past n, as multiples of it.
    factors: Vec<String>,
    overshoot: Vec<OvershootRow>,
    points: Vec<PointRow<'a>>,
}

/// One filter's rate at its planned n and at each overshoot factor.
#[derive(serde::Serialize)]
struct OvershootRow {
    structure: String,
    /// Each fill's rate (none: not measured there).
    fills: Vec<Option<OvershootCell>>,
    bytes_at_5: String,
}

#[derive(serde::Serialize)]
struct OvershootCell {
    observed: String,
    low: String,
    high: String,
}

/// The overshoot panel: every filter's rate at its planned n and at 1.25×, 2× and 5× it, in crawler
/// terms; then the table of every point.
fn overshoot_table(r: &Results) -> Result<String> {
    let overshoot = if r.saturation.is_empty() {
        Vec::new()
    } else {
        saturation_ids(r)
            .into_iter()
            .map(|id| OvershootRow {
                fills: std::iter::once(1.0)
                    .chain(crate::advise::OVERSHOOT_FACTORS)
                    .map(|fill| {
                        at(r, &id, fill).map(|p| OvershootCell {
                            observed: human_rate(p.observed_fpr),
                            low: human_rate(p.observed_fpr_wilson95.low),
                            high: human_rate(p.observed_fpr_wilson95.high),
                        })
                    })
                    .collect(),
                bytes_at_5: at(r, &id, 5.0)
                    .map(|p| human_bytes(p.bytes as f64))
                    .unwrap_or_else(|| "–".into()),
                structure: id,
            })
            .collect()
    };
    template::render(
        "figures/saturation.html",
        &SaturationTables {
            factors: crate::advise::OVERSHOOT_FACTORS
                .iter()
                .map(|f| f.to_string())
                .collect(),
            overshoot,
            points: point_rows(&r.saturation),
        },
    )
}

/// One sentence per overshoot: how much the worst and the best fixed filter rise at 2× and 5×.
fn overshoot_summary(r: &Results) -> String {
    let fixed: Vec<String> = saturation_ids(r)
        .into_iter()
        .filter(|id| !crate::registry::find(id).is_ok_and(|k| k.growable()))
        .collect();
    let rises: Vec<String> = fixed
        .iter()
        .filter_map(|id| {
            let (one, two, five) = (at(r, id, 1.0)?, at(r, id, 2.0)?, at(r, id, 5.0)?);
            Some(format!(
                "{id} {} → {} → {}",
                human_rate(one.observed_fpr),
                human_rate(two.observed_fpr),
                human_rate(five.observed_fpr)
            ))
        })
        .collect();
    if rises.is_empty() {
        return String::new();
    }
    format!(
        " Every fixed-size filter at its planned n, 2× and 5× it: {}.",
        rises.join("; ")
    )
}

fn saturation(r: &Results) -> String {
    let at = |id: &str, ratio: f64| at(r, id, ratio);
    let text = match (
        at(role_id(Role::ReferenceBloom), 1.0),
        at(role_id(Role::ReferenceBloom), 2.0),
        at(role_id(Role::ReferenceBloom), 4.0),
    ) {
        (Some(one), Some(two), Some(four)) => {
            let mut text = format!(
                "A Bloom filter sized for {} keys at p = {} shows {} at its design fill, {} at 2× and {} at 4×: {} (theory inside the interval at {} of {} points).",
                human_count(one.design_n as f64),
                human_rate(one.target_fpr),
                human_rate(one.observed_fpr),
                human_rate(two.observed_fpr),
                human_rate(four.observed_fpr),
                if one.observed_fpr < two.observed_fpr && two.observed_fpr < four.observed_fpr {
                    "past capacity it keeps answering, its rate rising with every step of fill"
                } else {
                    "its rate did not rise at every step of fill"
                },
                r.saturation.iter().filter(|p| p.structure == role_id(Role::ReferenceBloom) && p.theory_in_interval).count(),
                r.saturation.iter().filter(|p| p.structure == role_id(Role::ReferenceBloom)).count()
            );
            if let Some(s) = at(role_id(Role::GrowingFilter), 4.0) {
                text.push_str(&format!(
                    " The scalable filter at 4× measures {} using {} (the fixed filter: {}).",
                    human_rate(s.observed_fpr),
                    human_bytes(s.bytes as f64),
                    human_bytes(four.bytes as f64)
                ));
            }
            text
        }
        _ => return "The saturation experiment did not run.".into(),
    };
    text + &overshoot_summary(r)
}

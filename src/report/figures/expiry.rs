//! The expiry experiment: a windowed filter, a counting filter with its delete log and an exact map, each
//! forgetting URLs after a window of W admissions ([`crate::expiry`]): bytes per key of the window and
//! new URLs wrongly skipped, against W.

use super::*;
use crate::expiry::{Contender, ExpiryRecord};
use crate::kind::Role;
use crate::registry::role_id;

pub struct Expiry;

fn contender_colour(c: Contender) -> RGBColor {
    match c {
        Contender::Windowed => colour(role_id(Role::ExpiringFilter)),
        Contender::CountingWithLog => colour(role_id(Role::DeletingFilter)),
        Contender::ExactMap => colour(role_id(Role::ExactFingerprints)),
    }
}

fn skipped_rate(e: &ExpiryRecord) -> f64 {
    e.wrongly_skipped as f64 / e.truly_new.max(1) as f64
}

fn series(r: &Results, c: Contender) -> Vec<&ExpiryRecord> {
    let mut mine: Vec<&ExpiryRecord> = r.expiry.iter().filter(|e| e.contender == c).collect();
    mine.sort_by_key(|e| e.window_keys);
    mine
}

impl Figure for Expiry {
    fn stem(&self) -> &'static str {
        "expiry"
    }
    fn title(&self) -> &'static str {
        "Expiry: forgetting URLs after a window of W admissions (bytes, and new URLs wrongly skipped)"
    }
    fn size(&self, _: &Results) -> (u32, u32) {
        panels::size(1)
    }
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, r: &Results) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        if r.expiry.is_empty() {
            return empty(area, self.title(), "the expiry experiment did not run");
        }
        let x = log_range(r.expiry.iter().map(|e| e.window_keys as f64));
        let bytes = log_range(r.expiry.iter().map(|e| e.bytes_per_window_key));
        let floor = 1e-6;
        let rates = log_range(
            r.expiry
                .iter()
                .map(|e| skipped_rate(e).max(floor))
                .chain([floor, 0.1]),
        );
        let body = area.titled(self.title(), ("sans-serif", 18))?;
        let (w, _) = body.dim_in_pixel();
        let (plots, strip) = body.split_horizontally(w.saturating_sub(240));
        let (left, right) = plots.split_horizontally(plots.dim_in_pixel().0 / 2);
        let mut keys = Vec::new();
        let mut chart = log_log_chart(
            &left,
            "bytes per key of the window",
            (x.clone(), "window W (admitted URLs)"),
            (bytes, "bytes per window key (B)"),
            YAxis::Plain,
        )?;
        for c in Contender::ALL {
            let points: Vec<(f64, f64)> = series(r, c)
                .iter()
                .map(|e| (e.window_keys as f64, e.bytes_per_window_key))
                .collect();
            let colour = contender_colour(c);
            chart.draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))?;
            chart.draw_series(points.iter().map(|p| Circle::new(*p, 4, colour.filled())))?;
            keys.push(Key::solid(c.name(), colour));
        }
        let mut chart = log_log_chart(
            &right,
            &format!("wrongly skipped (95% bars; 0 at {})", rate_label(floor)),
            (x, "window W (admitted URLs)"),
            (rates, "share of new URLs called seen"),
            YAxis::Rate,
        )?;
        for c in Contender::ALL {
            let colour = contender_colour(c);
            let mine = series(r, c);
            let points: Vec<(f64, f64)> = mine
                .iter()
                .map(|e| (e.window_keys as f64, skipped_rate(e).max(floor)))
                .collect();
            chart.draw_series(LineSeries::new(points, colour.stroke_width(2)))?;
            chart.draw_series(mine.iter().map(|e| {
                let i = crate::stats::wilson(e.wrongly_skipped, e.truly_new, 0.95);
                ErrorBar::new_vertical(
                    e.window_keys as f64,
                    i.low.max(floor),
                    skipped_rate(e).max(floor),
                    i.high.max(floor),
                    colour.filled(),
                    8,
                )
            }))?;
        }
        panels::draw_keys(&strip, &keys)
    }
    fn verdict(&self, r: &Results) -> String {
        verdict(r)
    }
    fn tables(&self, r: &Results) -> Result<String> {
        table(r)
    }
}

fn verdict(r: &Results) -> String {
    let Some(largest) = r.expiry.iter().map(|e| e.window_keys).max() else {
        return "The expiry experiment did not run.".into();
    };
    let at = |c: Contender| {
        r.expiry
            .iter()
            .find(|e| e.contender == c && e.window_keys == largest)
    };
    let (Some(w), Some(c), Some(m)) = (
        at(Contender::Windowed),
        at(Contender::CountingWithLog),
        at(Contender::ExactMap),
    ) else {
        return "The expiry experiment is incomplete.".into();
    };
    let readmitted: u64 = r.expiry.iter().map(|e| e.wrongly_readmitted).sum();
    format!(
        "At a window of {} URLs (p = {}): the windowed filter holds {:.2} bytes per key of the window and skips {} of new URLs ({} of URLs never seen, {} of URLs it still holds up to a generation past the window); the counting filter needs {:.1} bytes per key, most of it the delete log, and skips {}; the exact fingerprint table needs {:.1} bytes per key and skips {}. URLs re-admitted inside their window: {readmitted} over every window and contender.",
        human_count(largest as f64),
        human_rate(w.target_fpr),
        w.bytes_per_window_key,
        human_rate(skipped_rate(w)),
        human_rate(w.skipped_never_admitted as f64 / w.truly_new.max(1) as f64),
        human_rate(w.skipped_expired as f64 / w.truly_new.max(1) as f64),
        c.bytes_per_window_key,
        human_rate(skipped_rate(c)),
        m.bytes_per_window_key,
        human_rate(skipped_rate(m))
    )
}

/// `templates/figures/expiry.html`: every contender at every window.
#[derive(serde::Serialize)]
struct ExpiryTable {
    rows: Vec<ExpiryRow>,
}

#[derive(serde::Serialize)]
struct ExpiryRow {
    contender: &'static str,
    window: String,
    arrivals: u64,
    bytes: String,
    bytes_per_window_key: String,
    ns_per_arrival: String,
    truly_new: u64,
    wrongly_skipped: u64,
    low: String,
    high: String,
    skipped_never_admitted: u64,
    skipped_expired: u64,
    skipped_rate: String,
    inside_window: u64,
    wrongly_readmitted: u64,
}

fn table(r: &Results) -> Result<String> {
    let mut rows = Vec::new();
    for c in Contender::ALL {
        for e in series(r, c) {
            let i = crate::stats::wilson(e.wrongly_skipped, e.truly_new, 0.95);
            rows.push(ExpiryRow {
                contender: c.name(),
                window: human_count(e.window_keys as f64),
                arrivals: e.arrivals,
                bytes: human_bytes(e.bytes as f64),
                bytes_per_window_key: format!("{:.2}", e.bytes_per_window_key),
                ns_per_arrival: format!("{:.0}", e.ns_per_arrival),
                truly_new: e.truly_new,
                wrongly_skipped: e.wrongly_skipped,
                low: human_rate(i.low),
                high: human_rate(i.high),
                skipped_never_admitted: e.skipped_never_admitted,
                skipped_expired: e.skipped_expired,
                skipped_rate: human_rate(skipped_rate(e)),
                inside_window: e.inside_window,
                wrongly_readmitted: e.wrongly_readmitted,
            });
        }
    }
    template::render("figures/expiry.html", &ExpiryTable { rows })
}

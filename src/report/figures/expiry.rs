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
            axis_label,
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
            "new URLs wrongly skipped (95% bars; 0 drawn at 1e-6)",
            (x, "window W (admitted URLs)"),
            (rates, "share of new URLs called seen"),
            axis_label,
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
    fn tables(&self, out: &mut String, r: &Results) {
        table(out, r);
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
        w.target_fpr,
        w.bytes_per_window_key,
        pct(skipped_rate(w)),
        pct(w.skipped_never_admitted as f64 / w.truly_new.max(1) as f64),
        pct(w.skipped_expired as f64 / w.truly_new.max(1) as f64),
        c.bytes_per_window_key,
        pct(skipped_rate(c)),
        m.bytes_per_window_key,
        pct(skipped_rate(m))
    )
}

fn table(s: &mut String, r: &Results) {
    if r.expiry.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "<table><tr><th>contender</th><th>window W</th><th>arrivals</th><th>bytes</th><th>bytes per window key</th><th>ns per arrival</th><th>new arrivals</th><th>wrongly skipped</th><th>95% interval</th><th>of them never seen</th><th>of them past the window</th><th>new URLs skipped</th><th>inside the window</th><th>re-admitted inside</th></tr>"
    );
    for c in Contender::ALL {
        for e in series(r, c) {
            let i = crate::stats::wilson(e.wrongly_skipped, e.truly_new, 0.95);
            let _ = writeln!(
                s,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td><td>{:.0}</td><td>{}</td><td>{}</td><td>[{}, {}]</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>{}</tr>",
                esc(c.name()),
                human_count(e.window_keys as f64),
                e.arrivals,
                human_bytes(e.bytes as f64),
                e.bytes_per_window_key,
                e.ns_per_arrival,
                e.truly_new,
                e.wrongly_skipped,
                pct(i.low),
                pct(i.high),
                e.skipped_never_admitted,
                e.skipped_expired,
                esc(&per_million(skipped_rate(e))),
                e.inside_window,
                if e.wrongly_readmitted > 0 {
                    format!("<td class=\"bad\">{}</td>", e.wrongly_readmitted)
                } else {
                    "<td>0</td>".into()
                }
            );
        }
    }
    let _ = writeln!(
        s,
        "</table><p>The stream: half the arrivals re-crawl a URL first seen 1 to 3 windows of distinct URLs earlier (the window counts admissions, so under a third of re-crawls fall inside it), the other half are new URLs. All three admit a URL once and do not refresh it when it recurs inside the window. Each contender's answers are judged by an exact shadow of its own admissions. Bytes: the filters' arrays; the log (16-byte hashes) and queue (8-byte fingerprints) allocated for W + 1 entries; the fingerprint table's hashbrown layout.</p>"
    );
}

//! The report: reads a results file, never reruns anything. Every chart is drawn by one function generic
//! over the plotters backend and written as PNG and SVG; `index.html` is self-contained (relative links to
//! the images beside it), readable without JavaScript, and holds the machine, the parameters, a table of
//! every figure with its uncertainty and a verdict per chart derived from the data. Its first screen and
//! regime map answer a [`Question`]: the run's own, or one re-asked of the same results.
//! Text renders with the bundled DejaVu Sans (assets/fonts, Bitstream Vera licence), no system fonts.

mod answer;
mod chart;
mod dedup_cli;
mod external;
mod figures;
mod fleet;
mod hashes;
mod html;
mod markup;
mod panels;
mod question;
pub mod regime_map;
pub mod screenshot;
mod speed;
mod sweep;
mod sweep_cluster;
mod targets;
mod template;

pub use question::Question;

use crate::analysis::Analysis;
use crate::atomic_file::write_atomic;
use crate::results::Results;
use crate::{Error, Result};
use std::path::Path;
use std::sync::Once;

/// The bundled font.
static FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

pub(crate) fn register_font() -> Result<()> {
    static ONCE: Once = Once::new();
    let mut failed = false;
    ONCE.call_once(|| {
        failed =
            plotters::style::register_font("sans-serif", plotters::style::FontStyle::Normal, FONT)
                .is_err();
    });
    if failed {
        return Err(Error::Chart {
            chart: "font".into(),
            message: "the bundled font did not load".into(),
        });
    }
    Ok(())
}

/// Draws every chart (PNG and SVG) and writes `index.html` into `dir`, with the verdicts of `analysis`
/// (the run's `analysis.json`), answering the run's own question.
pub fn write_report(dir: &Path, results: &Results, analysis: &Analysis) -> Result<()> {
    write_report_for(dir, results, analysis, &Question::default())
}

/// [`write_report`], with the first screen and the regime map answering `question` instead.
pub fn write_report_for(
    dir: &Path,
    results: &Results,
    analysis: &Analysis,
    question: &Question,
) -> Result<()> {
    register_font()?;
    let figures = figures::render_all(dir, results, analysis)?;
    if let Some(spec) = regime_map::MapSpec::of_question(results, question) {
        regime_map::write_map(&dir.join(format!("{}.png", answer::MAP_STEM)), &spec)?;
        regime_map::write_map(&dir.join(format!("{}.svg", answer::MAP_STEM)), &spec)?;
    }
    if !results.sweep.is_empty() {
        chart::render(dir, &sweep::SharedThroughput, results)?;
    }
    let page = html::page(results, analysis, &figures, question)?;
    write_atomic(&dir.join("index.html"), page.as_bytes())
}

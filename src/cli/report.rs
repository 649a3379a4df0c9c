//! `dedupbench report DIR`: writes `analysis.json` and redraws the charts, `results.csv` and `index.html`
//! from `DIR/results.jsonl` alone; nothing is rerun.

use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A results folder written by `bench` (holding results.jsonl).
    dir: PathBuf,
}

pub fn run(args: ReportArgs) -> Result<i32> {
    if !args.dir.is_dir() {
        anyhow::bail!(dedupbench::Error::invalid(
            "DIR",
            format!(
                "{} is not a directory written by `bench`",
                args.dir.display()
            )
        ));
    }
    let results = dedupbench::results::read_results(&args.dir)?;
    for warning in &results.warnings {
        eprintln!("warning: {warning}");
    }
    dedupbench::results::write_csv(&args.dir, &results)?;
    let analysis = dedupbench::analysis::Analysis::write_for(&args.dir, &results)?;
    dedupbench::report::write_report(&args.dir, &results, &analysis)
        .context("cannot write the report")?;
    eprintln!("report: {}", args.dir.join("index.html").display());
    write_summary_picture(&args.dir);
    Ok(0)
}

/// Writes the run folder's `summary.png` (the report's first screen) with headless Chromium, or says why
/// not; the report itself is complete either way.
pub fn write_summary_picture(dir: &std::path::Path) {
    use dedupbench::report::screenshot;
    match screenshot::chromium() {
        Some(browser) => match screenshot::write_summary(dir, &browser) {
            Ok(path) => eprintln!("first screen: {}", path.display()),
            Err(e) => eprintln!("warning: {} not written: {e}", screenshot::FILE),
        },
        None => eprintln!(
            "note: {} not written: no Chromium on PATH (apt-get install chromium, or set {})",
            screenshot::FILE,
            screenshot::CHROMIUM_VAR
        ),
    }
}

//! `dedupbench report DIR`: redraws the charts, `results.csv` and `index.html` from `DIR/results.jsonl`
//! alone; nothing is rerun.

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
    dedupbench::report::write_report(&args.dir, &results).context("cannot write the report")?;
    eprintln!("report: {}", args.dir.join("index.html").display());
    Ok(0)
}

//! `dedupbench report DIR [--n N] [--memory SIZE] [--fpr P] [--machines M …]`: writes `analysis.json` and redraws the
//! charts, `results.csv` and `index.html` from `DIR/results.jsonl` alone; nothing is rerun. The first
//! screen and the regime map answer the run's own question (its largest scale, rate and budget), or the
//! one the flags re-ask ([`dedupbench::report::Question`]).

use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A results folder written by `bench` (holding results.jsonl).
    dir: PathBuf,
    /// Answer for N distinct keys (50M, 2G, 6e9; default: the run's largest scale).
    #[arg(long, value_name = "N", value_parser = dedupbench::units::expected_arg)]
    n: Option<u64>,
    /// Answer for a memory budget per process of SIZE (16GiB, 512MB; default: the run's budget).
    #[arg(long, value_name = "SIZE", value_parser = dedupbench::units::size_arg)]
    memory: Option<u64>,
    /// Answer for a target false-positive rate P (0.001; default: the run's).
    #[arg(long, value_name = "P", value_parser = dedupbench::units::fpr_arg)]
    fpr: Option<f64>,
    /// Answer for M machines crawling the n URLs together: prices exact fingerprints or a filter on each
    /// machine against one structure shared on Redis (a crawl's run only).
    #[arg(long, value_name = "M", value_parser = dedupbench::units::count_arg)]
    machines: Option<u64>,
    /// Memory of each machine that the structure may take (default: the budget, --memory or the run's).
    #[arg(long, value_name = "SIZE", requires = "machines", value_parser = dedupbench::units::size_arg)]
    machine_memory: Option<u64>,
    /// How URLs are split between the machines: host (default), url (by URL hash), none.
    #[arg(long, value_enum, requires = "machines")]
    partition: Option<dedupbench::advise::fleet::Partition>,
}

impl ReportArgs {
    /// The question the flags ask (empty: the run's own).
    fn question(&self) -> dedupbench::report::Question {
        dedupbench::report::Question {
            n: self.n,
            memory_bytes: self.memory,
            fpr: self.fpr,
            machines: self.machines,
            machine_memory_bytes: self.machine_memory,
            partition: self.partition,
        }
    }
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
    let question = args.question();
    if !question.is_own() {
        // Checked before anything is written: a question the run cannot answer leaves DIR as it was.
        let demand = question.demand_of(&results).ok_or_else(|| {
            dedupbench::Error::invalid(
                "DIR",
                format!(
                    "{} holds no run header, so there is no answer to re-ask with {}",
                    args.dir.display(),
                    question.flags()
                ),
            )
        })?;
        demand.validate()?;
        question.fleet_plan(&results)?;
    }
    dedupbench::results::write_csv(&args.dir, &results)?;
    let analysis = dedupbench::analysis::Analysis::write_for(&args.dir, &results)?;
    dedupbench::report::write_report_for(&args.dir, &results, &analysis, &question)
        .context("cannot write the report")?;
    if question.is_own() {
        eprintln!("report: {}", args.dir.join("index.html").display());
    } else {
        eprintln!(
            "report: {} (re-asked with {})",
            args.dir.join("index.html").display(),
            question.flags()
        );
    }
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

//! `dedupbench bench`: plan a run from the options, run it with progress bars, write `results.jsonl`,
//! `results.csv` and the report, and print a summary. Ctrl-C abandons the current cell and still writes
//! the report of what completed.

use super::{progress::Bars, RunFailed};
use anyhow::{bail, Context, Result};
use clap::Args;
use dedupbench::keys::file::UrlFile;
use dedupbench::keys::{Profile, UrlGenerator};
use dedupbench::measure::machine::{self, MachineInfo};
use dedupbench::results::{Record, ResultsWriter, RunHeader};
use dedupbench::run::keys::{KeySource, Members};
use dedupbench::run::{RunPlan, Runner, Suite};
use dedupbench::structures::{parse_list, REGISTRY};
use dedupbench::units::{count_arg, fpr_arg, human_bytes, human_count, size_arg};
use dedupbench::Error;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Suite: quick (≤ 3 min, 10⁴…10⁷ keys), standard (to 10⁸), full (to 10⁹).
    #[arg(long, default_value = "quick")]
    suite: String,
    /// Comma-separated key counts, overriding the suite's (e.g. 1e4,1e5,1M).
    #[arg(long, value_delimiter = ',', value_parser = count_arg)]
    scales: Option<Vec<u64>>,
    /// Comma-separated structure ids (default: all registered).
    #[arg(long, default_value = "all")]
    structures: String,
    /// Target false-positive rate for the filters.
    #[arg(long, default_value = "0.01", value_parser = fpr_arg)]
    fpr: f64,
    /// Memory budget for one structure (default: memory available now).
    #[arg(long, value_parser = size_arg)]
    memory_budget: Option<u64>,
    /// Seed of the keys and of every structure's hash.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Repetitions per cell (medians reported; default: the suite's).
    #[arg(long)]
    reps: Option<u32>,
    /// Key profile (built-in name or file).
    #[arg(long, default_value = dedupbench::keys::profile::DEFAULT_PROFILE)]
    profile: String,
    /// Real URLs, one per line (plain or .gz), as the member set; non-members are generated.
    #[arg(long)]
    input: Option<PathBuf>,
    /// Output folder (default reports/<UTC timestamp>; reports/latest then points at it).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Skip the experiments beyond the grid (saturation, deletion, growth, bitmap claim).
    #[arg(long)]
    no_experiments: bool,
    /// No progress bars.
    #[arg(long)]
    quiet: bool,
}

pub fn run(args: BenchArgs) -> Result<i32> {
    // Validate everything before doing any work.
    let suite = Suite::parse(&args.suite)?;
    let kinds = parse_list(&args.structures)?;
    if args.reps == Some(0) || args.reps.is_some_and(|r| r > 100) {
        bail!(Error::invalid("--reps", "must be between 1 and 100"));
    }
    let profile = Profile::load(&args.profile)?;
    let available = machine::available_memory_bytes();
    let budget = args.memory_budget.unwrap_or(available);
    let mut plan = RunPlan::for_suite(suite, kinds, args.fpr, budget, args.seed);
    if let Some(reps) = args.reps {
        plan.reps = reps;
    }
    if args.no_experiments {
        plan.experiments = None;
    }
    let generator = UrlGenerator::new(profile.clone(), args.seed);
    let members = match &args.input {
        None => Members::Generated,
        Some(path) => {
            let (lines, distinct) = count_input(path)?;
            Members::File {
                path: path.clone(),
                lines,
                distinct,
            }
        }
    };
    plan.scales = match (&args.scales, &members) {
        (Some(scales), Members::File { lines, .. }) => {
            if let Some(bad) = scales.iter().find(|s| **s > *lines) {
                bail!(Error::invalid(
                    "--scales",
                    format!("{bad} exceeds the {lines} URLs of --input")
                ));
            }
            scales.clone()
        }
        (None, Members::File { lines, .. }) => vec![*lines],
        (Some(scales), Members::Generated) => scales.clone(),
        (None, Members::Generated) => plan.scales.clone(),
    };
    if let Some(bad) = plan
        .scales
        .iter()
        .find(|s| **s == 0 || **s >= dedupbench::keys::NON_MEMBER_BASE)
    {
        bail!(Error::invalid(
            "--scales",
            format!("{bad} is outside [1, 2^47)")
        ));
    }
    plan.fit_experiments_to_scales();
    let out = prepare_out_dir(args.out.as_deref())?;

    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        // A second Ctrl-C while the report is written falls through to the default handler.
        let _ = ctrlc::set_handler(move || {
            if stop.swap(true, Ordering::SeqCst) {
                std::process::exit(130);
            }
        });
    }
    let bars = Bars::new(args.quiet, (plan.scales.len() * plan.kinds.len()) as u64);
    let source = KeySource { generator, members };
    let mut writer = ResultsWriter::open(&out)?;
    let key_lengths = source.key_lengths()?;
    writer.write(Record::Run(RunHeader {
        suite: suite.name().to_string(),
        scales: plan.scales.clone(),
        structures: plan.kinds.iter().map(|k| k.id().to_string()).collect(),
        fpr: plan.fpr,
        memory_budget_bytes: plan.memory_budget_bytes,
        seed: plan.seed,
        reps: plan.reps,
        profile: profile.name.clone(),
        input: args.input.as_ref().map(|p| p.display().to_string()),
        started_unix_s: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        key_lengths,
        machine: MachineInfo::detect(),
        dedupbench_version: env!("CARGO_PKG_VERSION").to_string(),
    }))?;

    let started = std::time::Instant::now();
    let mut runner = Runner::new(plan, source, writer, &bars, &stop)?;
    let outcome = run_all(&mut runner, &bars);
    bars.done();
    let interrupted = runner.stopped();
    match outcome {
        Ok(()) => {}
        Err(_) if interrupted => {
            eprintln!("interrupted: the current cell was abandoned; completed results are kept")
        }
        Err(e) => {
            return Err(e).context(format!(
                "run into {} failed; completed cells are kept",
                out.display()
            ))
        }
    }
    let results = dedupbench::results::read_results(&out)?;
    dedupbench::results::write_csv(&out, &results)?;
    dedupbench::report::write_report(&out, &results).context("cannot write the report")?;
    print_summary(&results, started.elapsed().as_secs_f64());
    eprintln!("report: {}", out.join("index.html").display());
    if interrupted {
        return Ok(130);
    }
    if !runner.failures.is_empty() {
        return Err(RunFailed(format!(
            "false negatives found: {}",
            runner.failures.join("; ")
        ))
        .into());
    }
    Ok(0)
}

fn run_all(runner: &mut Runner, bars: &Bars) -> dedupbench::Result<()> {
    let scales = runner.plan.scales.clone();
    let kinds = runner.plan.kinds.clone();
    for &n in &scales {
        for kind in &kinds {
            runner.run_cell(*kind, n)?;
            bars.cell_done();
        }
    }
    runner.run_experiments()
}

/// Lines and distinct lines of an input file (validated line by line).
fn count_input(path: &Path) -> Result<(u64, u64)> {
    let lines = UrlFile::count(path)?;
    let mut file = UrlFile::open(path)?;
    let mut seen = hashbrown::HashSet::with_capacity(lines as usize);
    let mut batch = dedupbench::keys::KeyBatch::with_capacity(4096, 80);
    loop {
        batch.clear();
        if file.read_batch(&mut batch, 4096)? == 0 {
            break;
        }
        batch.hash_all(0);
        seen.extend(batch.hashes().iter().map(|h| h.h1));
    }
    Ok((lines, seen.len() as u64))
}

/// Creates the output folder (refusing one that already holds results) and points reports/latest at it.
fn prepare_out_dir(out: Option<&Path>) -> Result<PathBuf> {
    let dir = match out {
        Some(dir) => dir.to_path_buf(),
        None => PathBuf::from("reports").join(utc_timestamp()),
    };
    if dir.exists() && !dir.is_dir() {
        bail!(Error::invalid(
            "--out",
            format!("{} exists and is not a directory", dir.display())
        ));
    }
    if dir.join("results.jsonl").exists() {
        bail!(Error::invalid(
            "--out",
            format!(
                "{} already holds results.jsonl; choose another folder",
                dir.display()
            )
        ));
    }
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::io(&dir, e))
        .context("--out: cannot create the output folder")?;
    let probe = dir.join(".write-test");
    std::fs::write(&probe, b"")
        .map_err(|e| Error::io(&dir, e))
        .context("--out: the output folder is not writable")?;
    let _ = std::fs::remove_file(probe);
    if out.is_none() {
        let latest = PathBuf::from("reports/latest");
        let tmp = PathBuf::from("reports/.latest.tmp");
        let _ = std::fs::remove_file(&tmp);
        #[cfg(unix)]
        if std::os::unix::fs::symlink(dir.file_name().unwrap_or_default(), &tmp).is_ok() {
            let _ = std::fs::rename(&tmp, &latest);
        }
    }
    Ok(dir)
}

/// `YYYYMMDD-HHMMSS` in UTC.
fn utc_timestamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + if month <= 2 { 1 } else { 0 };
    format!(
        "{year:04}{month:02}{day:02}-{:02}{:02}{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn print_summary(results: &dedupbench::results::Results, wall_s: f64) {
    println!(
        "{:<12} {:>6} {:>10} {:>10} {:>10} {:>10} {:>24} {:>10}",
        "structure",
        "n",
        "bytes",
        "bits/key",
        "insert ns",
        "query ns",
        "observed fpr [95%]",
        "theory"
    );
    for c in &results.cells {
        println!(
            "{:<12} {:>6} {:>10} {:>10.2} {:>10.1} {:>10.1} {:>8.2e} [{:.1e},{:.1e}] {:>10.2e}{}",
            c.structure,
            human_count(c.n as f64),
            human_bytes(c.heap_footprint_bytes as f64),
            c.bits_per_key,
            c.insert_ns_per_key.median,
            c.member_query_ns_per_key.median,
            c.observed_fpr,
            c.observed_fpr_wilson95.low,
            c.observed_fpr_wilson95.high,
            c.expected_fpr,
            if c.false_negatives > 0 {
                "  FALSE NEGATIVES"
            } else {
                ""
            }
        );
    }
    for s in &results.skipped {
        println!(
            "{:<12} {:>6} skipped: {}",
            s.structure,
            human_count(s.n as f64),
            s.reason
        );
    }
    let _ = REGISTRY;
    println!("wall time {wall_s:.1} s");
}

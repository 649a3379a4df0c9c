//! `dedupbench bench`: plan a run from the options, run it with progress bars, write `results.jsonl`,
//! `results.csv` and the report, and print a summary. Ctrl-C abandons the current cell and still writes
//! the report of what completed.

use super::{progress::Bars, RunFailed};
use anyhow::{Context, Result};
use clap::Args;
use dedupbench::registry::Selection;
use dedupbench::run::{RunOptions, RunSpec, Session, Suite};
use dedupbench::units::{count_arg, count_arg_as, fpr_arg, size_arg};
use dedupbench::workload::Workload;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Suite: quick (10⁴…10⁷ keys), standard (to 10⁸), full (to 10⁹), article-6e9 (the second article's
    /// 6·10⁹-URL scenario; --scales N runs it at N keys with the same ratios), redis (the shared-filter
    /// sweep), dedup-cli (dedup beside awk, sort -u, huniq and runiq on 5·10⁶ lines; --scales N lines).
    #[arg(long, default_value = "quick", value_parser = Suite::from_text)]
    suite: Suite,
    /// Comma-separated key counts, overriding the suite's (e.g. 1e4,1e5,1M).
    #[arg(long, value_delimiter = ',', value_parser = count_arg)]
    scales: Option<Vec<u64>>,
    /// Comma-separated structure ids (default: all registered).
    #[arg(long, default_value = "all", value_parser = Selection::from_arg)]
    structures: Selection,
    /// The workload: crawl (every structure, the experiments written for it), blocklist (the kinds that
    /// can be built once, static filters among them: build time, non-member lookups), cache-guard (the
    /// kinds that delete, with the deletion and churn experiments), window (the expiry experiment),
    /// shipped (the kinds that save).
    #[arg(long, default_value = "crawl", value_parser = Workload::from_text)]
    workload: Workload,
    /// Target false-positive rate for the filters: 0.01, 1e-3 or a percentage (0.1%).
    #[arg(long, default_value = "0.01", value_parser = fpr_arg)]
    fpr: f64,
    /// Memory budget for one structure, e.g. 1GiB or 512MB (default: memory available now); as
    /// `advise --memory`.
    #[arg(long = "memory", value_name = "MEMORY", value_parser = size_arg)]
    memory_bytes: Option<u64>,
    /// Seed of the keys and of every structure's hash.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Repetitions per cell (medians reported; default: the suite's).
    #[arg(long, value_parser = count_arg_as::<u32>)]
    reps: Option<u32>,
    /// Interleaved rounds of the speed groups, where the compared structures are timed side by side
    /// (default 15; more rounds narrow the ratios' intervals).
    #[arg(long, value_parser = count_arg_as::<u32>)]
    rounds: Option<u32>,
    /// Key profile: a built-in name (crawl-frontier, short-keys, email, ipv4, ipv6) or a profile file
    /// (datasets/README.md).
    #[arg(long, default_value = dedupbench::keys::profile::DEFAULT_PROFILE)]
    profile: String,
    /// Real keys, one per line (plain or .gz): URLs, e-mail or IP addresses, any text; the member set.
    /// Non-members are generated (by --profile) unless --non-members gives them.
    #[arg(long)]
    input: Option<PathBuf>,
    /// Real non-members, one key per line (plain or .gz): the grid's non-member queries, after dropping
    /// (and counting) repeats and members of the run.
    #[arg(long)]
    non_members: Option<PathBuf>,
    /// Output folder (default reports/<UTC timestamp>; reports/latest then points at it).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Skip the experiments beyond the grid (saturation, deletion, growth, bitmap claim).
    #[arg(long)]
    no_experiments: bool,
    /// No progress bars.
    #[arg(long)]
    quiet: bool,
    /// A Redis server for the shared-filter sweep (redis://host:port[/db]); its backends run next to an
    /// in-process `bloom` at every --redis-batches size.
    #[arg(long)]
    redis: Option<String>,
    /// A Redis Cluster for the shared-filter sweep (redis://host:port[,redis://host:port…]): the same
    /// backends, each split over the cluster's masters (`scripts/redis-cluster.sh up` starts one).
    #[arg(long)]
    redis_cluster: Option<String>,
    /// Keys per point of the shared-filter sweep.
    #[arg(long, value_parser = count_arg)]
    redis_keys: Option<u64>,
    /// Keys per round trip the sweep tries (comma-separated, e.g. 1,64,1k).
    #[arg(long, value_delimiter = ',', value_parser = count_arg_as::<usize>)]
    redis_batches: Option<Vec<usize>>,
    /// Seconds a sweep round trip is retried (on a fresh connection) while a server is away; past it the
    /// point fails and the run exits 1. Also with --resume: it is not one of the run's parameters.
    #[arg(long)]
    redis_retry_secs: Option<u64>,
    /// Continue an interrupted run in DIR with its own parameters: completed cells are kept, the rest run.
    #[arg(long, conflicts_with_all = ["suite", "scales", "structures", "fpr", "memory_bytes", "seed", "reps", "rounds", "profile", "input", "non_members", "out", "no_experiments", "workload", "redis", "redis_cluster", "redis_keys", "redis_batches"])]
    resume: Option<PathBuf>,
}

impl BenchArgs {
    /// The options as the library takes them.
    fn options(&self) -> RunOptions {
        RunOptions {
            suite: self.suite,
            scales: self.scales.clone(),
            structures: self.structures.clone(),
            fpr: self.fpr,
            memory_budget: self.memory_bytes,
            seed: self.seed,
            reps: self.reps,
            rounds: self.rounds,
            profile: self.profile.clone(),
            input: self.input.clone(),
            non_members: self.non_members.clone(),
            experiments: !self.no_experiments,
            workload: self.workload,
            redis: self.redis.clone(),
            redis_cluster: self.redis_cluster.clone(),
            redis_keys: self.redis_keys,
            redis_batches: self.redis_batches.clone(),
            redis_retry_secs: self.redis_retry_secs,
        }
    }
}

pub fn run(args: BenchArgs) -> Result<i32> {
    // Everything is validated before the folder is touched.
    let session = match &args.resume {
        Some(dir) => Session::resume(dir, args.redis_retry_secs)?,
        None => Session::new(RunSpec::from_options(&args.options())?, args.out.as_deref())?,
    };
    if args.resume.is_some() {
        let done = &session.completed;
        if done.dropped_records > 0 {
            eprintln!(
                "resume: dropped {} records of unfinished work (a torn line, a partial experiment, or a point or row to run again)",
                done.dropped_records
            );
        }
        eprintln!(
            "resume: {} cells and {} experiments already complete",
            done.work_count(),
            done.experiment_count()
        );
    }
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        // A second Ctrl-C while the report is written falls through to an immediate exit.
        let _ = ctrlc::set_handler(move || {
            if stop.swap(true, Ordering::SeqCst) {
                std::process::exit(130);
            }
        });
    }
    let out = session.out.clone();
    let bars = Bars::new(args.quiet, session.cell_count());
    let started = std::time::Instant::now();
    let outcome = session.run(&bars, &stop)?;
    bars.done();
    match outcome.error {
        None => {}
        Some(_) if outcome.interrupted => {
            eprintln!("interrupted: the current cell was abandoned; completed results are kept")
        }
        Some(e) => {
            return Err(e).context(format!(
                "run into {} failed; completed cells are kept",
                out.display()
            ))
        }
    }
    let results = dedupbench::results::read_results(&out)?;
    dedupbench::results::write_csv(&out, &results)?;
    let analysis = dedupbench::analysis::Analysis::write_for(&out, &results)?;
    dedupbench::report::write_report(&out, &results, &analysis)
        .context("cannot write the report")?;
    super::summary::print(&results, &analysis, started.elapsed().as_secs_f64());
    eprintln!("report: {}", out.join("index.html").display());
    // Interrupted, the user wants out: the browser's picture of the first screen (seconds) waits for
    // `report DIR` or the resumed run.
    if outcome.interrupted {
        eprintln!(
            "note: summary.png not redrawn after the interrupt; `dedupbench report {}` draws it",
            out.display()
        );
    } else {
        super::report::write_summary_picture(&out);
    }
    if outcome.interrupted {
        eprintln!("resume with: dedupbench bench --resume {}", out.display());
        return Ok(130);
    }
    let negatives: u64 = results.cells.iter().map(|c| c.false_negatives).sum();
    if !outcome.failures.is_empty() || negatives > 0 {
        return Err(RunFailed(format!(
            "the run found failures (false negatives or a lost server): {}",
            outcome.failures.join("; ")
        ))
        .into());
    }
    Ok(0)
}

//! `dedupbench bench`: plan a run from the options, run it with progress bars, write `results.jsonl`,
//! `results.csv` and the report, and print a summary. Ctrl-C abandons the current cell and still writes
//! the report of what completed.

use super::{progress::Bars, RunFailed};
use anyhow::{bail, Context, Result};
use clap::Args;
use dedupbench::keys::file::UrlFile;
use dedupbench::keys::{Profile, UrlGenerator};
use dedupbench::measure::machine::{self, MachineInfo};
use dedupbench::redis::{Client, RedisUrl};
use dedupbench::registry::{parse_list, remote_kinds, REGISTRY};
use dedupbench::results::{Record, ResultsWriter, RunHeader};
use dedupbench::run::experiments::{expected_records, experiment_of, EXPERIMENTS};
use dedupbench::run::keys::{KeySource, Members};
use dedupbench::run::{RunPlan, Runner, SharedPlan, Suite};
use dedupbench::units::{count_arg, fpr_arg, human_bytes, human_count, size_arg};
use dedupbench::Error;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Suite: quick (≤ 3 min, 10⁴…10⁷ keys), standard (to 10⁸), full (to 10⁹), seed-6e9 (the second
    /// article's 6·10⁹-URL scenario; --scales N runs it at N keys with the same ratios).
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
    /// A Redis server for the shared-filter sweep (redis://host:port[/db]); its backends run next to an
    /// in-process `bloom` at every --redis-batches size.
    #[arg(long)]
    redis: Option<String>,
    /// Keys per point of the shared-filter sweep.
    #[arg(long, value_parser = count_arg)]
    redis_keys: Option<u64>,
    /// Keys per round trip the sweep tries (comma-separated).
    #[arg(long, value_delimiter = ',')]
    redis_batches: Option<Vec<usize>>,
    /// Continue an interrupted run in DIR with its own parameters: completed cells are kept, the rest run.
    #[arg(long, conflicts_with_all = ["suite", "scales", "structures", "fpr", "memory_budget", "seed", "reps", "profile", "input", "out", "no_experiments", "redis", "redis_keys", "redis_batches"])]
    resume: Option<PathBuf>,
}

/// What a run is asked to do: from the command line, or from a results header when resuming.
struct Spec {
    suite: Suite,
    kinds: Vec<&'static dyn dedupbench::structures::Kind>,
    fpr: f64,
    budget: u64,
    seed: u64,
    reps: Option<u32>,
    reps_explicit: bool,
    profile: String,
    input: Option<PathBuf>,
    scales: Option<Vec<u64>>,
    experiments: bool,
    redis: Option<RedisUrl>,
    remote_kinds: Vec<&'static dyn dedupbench::structures::Kind>,
    redis_keys: u64,
    redis_batches: Vec<usize>,
}

/// A list of registered kinds.
type Kinds = Vec<&'static dyn dedupbench::structures::Kind>;

/// Splits the structures into the grid's (in-process) and the sweep's (Redis), checking that a Redis
/// backend comes with a server and a `redis` suite with one.
fn split_kinds(
    suite: Suite,
    kinds: Kinds,
    listed_all: bool,
    redis: Option<&RedisUrl>,
) -> Result<(Kinds, Kinds)> {
    let (remote, mut local): (Vec<_>, Vec<_>) = kinds.into_iter().partition(|k| k.remote());
    let remote = if listed_all {
        remote_kinds().collect()
    } else {
        remote
    };
    if redis.is_none() {
        if suite == Suite::Redis {
            bail!(Error::invalid(
                "--suite",
                "redis needs a server: give --redis redis://host:port"
            ));
        }
        if let Some(k) = remote.first().filter(|_| !listed_all) {
            bail!(Error::invalid(
                "--structures",
                format!(
                    "{} lives on a Redis server; give one with --redis redis://host:port",
                    k.id()
                )
            ));
        }
        return Ok((local, Vec::new()));
    }
    if remote.is_empty() {
        bail!(Error::invalid(
            "--structures",
            format!(
                "--redis is given but none of the structures lives on Redis; add some of: {}",
                remote_kinds()
                    .map(|k| k.id())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        ));
    }
    if suite == Suite::Redis {
        local.clear();
    }
    Ok((local, remote))
}

fn check_batches(batches: &[usize]) -> Result<()> {
    if batches.is_empty() || batches.iter().any(|b| *b == 0 || *b > 100_000) {
        bail!(Error::invalid(
            "--redis-batches",
            "each must be between 1 and 100000 keys"
        ));
    }
    Ok(())
}

impl Spec {
    fn from_args(args: &BenchArgs) -> Result<Spec> {
        if args.reps == Some(0) || args.reps.is_some_and(|r| r > 100) {
            bail!(Error::invalid("--reps", "must be between 1 and 100"));
        }
        let suite = Suite::parse(&args.suite)?;
        let redis = args.redis.as_deref().map(RedisUrl::parse).transpose()?;
        if redis.is_none() && (args.redis_keys.is_some() || args.redis_batches.is_some()) {
            bail!(Error::invalid(
                "--redis-keys/--redis-batches",
                "need --redis redis://host:port"
            ));
        }
        let listed_all = args.structures.trim() == "all";
        let (kinds, remote_kinds) = split_kinds(
            suite,
            parse_list(&args.structures)?,
            listed_all,
            redis.as_ref(),
        )?;
        let redis_keys = args.redis_keys.unwrap_or(SharedPlan::DEFAULT_KEYS);
        if redis_keys == 0 || redis_keys >= dedupbench::keys::NON_MEMBER_BASE {
            bail!(Error::invalid("--redis-keys", "must be in [1, 2^47)"));
        }
        let redis_batches = args
            .redis_batches
            .clone()
            .unwrap_or_else(|| SharedPlan::DEFAULT_BATCHES.to_vec());
        check_batches(&redis_batches)?;
        Ok(Spec {
            suite,
            kinds,
            redis,
            remote_kinds,
            redis_keys,
            redis_batches,
            fpr: args.fpr,
            budget: args
                .memory_budget
                .unwrap_or_else(machine::available_memory_bytes),
            seed: args.seed,
            reps: args.reps,
            reps_explicit: args.reps.is_some(),
            profile: args.profile.clone(),
            input: args.input.clone(),
            scales: args.scales.clone(),
            experiments: !args.no_experiments,
        })
    }

    fn from_header(h: &RunHeader) -> Result<Spec> {
        let suite = Suite::parse(&h.suite)?;
        let redis = h.redis.as_deref().map(RedisUrl::parse).transpose()?;
        let all: Vec<_> = h
            .structures
            .iter()
            .chain(&h.redis_structures)
            .cloned()
            .collect();
        let kinds = if all.is_empty() {
            Vec::new()
        } else {
            parse_list(&all.join(","))?
        };
        let (kinds, remote_kinds) = split_kinds(suite, kinds, false, redis.as_ref())?;
        Ok(Spec {
            suite,
            kinds,
            redis,
            remote_kinds,
            redis_keys: h.redis_keys.unwrap_or(SharedPlan::DEFAULT_KEYS),
            redis_batches: h
                .redis_batches
                .clone()
                .unwrap_or_else(|| SharedPlan::DEFAULT_BATCHES.to_vec()),
            fpr: h.fpr,
            budget: h.memory_budget_bytes,
            seed: h.seed,
            reps: Some(h.reps),
            reps_explicit: h.reps_explicit,
            profile: h.profile.clone(),
            input: h.input.as_ref().map(PathBuf::from),
            scales: Some(h.scales.clone()),
            experiments: h.experiments,
        })
    }
}

pub fn run(args: BenchArgs) -> Result<i32> {
    // Validate everything before doing any work.
    let (spec, resume) = match &args.resume {
        Some(dir) => {
            if !dir.join("results.jsonl").is_file() {
                bail!(Error::invalid(
                    "--resume",
                    format!("{} holds no results.jsonl to resume", dir.display())
                ));
            }
            let results = dedupbench::results::read_results(dir)?;
            let header = results
                .header
                .as_ref()
                .expect("read_results requires a header");
            (Spec::from_header(header)?, Some(dir.clone()))
        }
        None => (Spec::from_args(&args)?, None),
    };
    let profile = Profile::load(&spec.profile)?;
    let mut plan = RunPlan::for_suite(
        spec.suite,
        spec.kinds.clone(),
        spec.fpr,
        spec.budget,
        spec.seed,
    );
    if let Some(reps) = spec.reps {
        plan.reps = reps;
        plan.reps_explicit = spec.reps_explicit;
    }
    if !spec.experiments || matches!(spec.suite, Suite::Seed6e9 | Suite::Redis) {
        plan.experiments = None;
    }
    if let Some(url) = &spec.redis {
        // A wrong address fails here, before anything is written.
        let mut client = Client::connect(url)?;
        client.call(&[b"PING"])?;
        plan.shared = Some(SharedPlan {
            url: url.clone(),
            kinds: spec.remote_kinds.clone(),
            keys: spec.redis_keys,
            batches: spec.redis_batches.clone(),
        });
    }
    let generator = UrlGenerator::new(profile.clone(), spec.seed);
    let members = match &spec.input {
        None => Members::Generated,
        Some(path) => {
            let (lines, distinct_at) = count_input(path, spec.scales.as_deref().unwrap_or(&[]))?;
            Members::File {
                path: path.clone(),
                lines,
                distinct_at,
            }
        }
    };
    plan.scales = match (&spec.scales, &members) {
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
    let out = match &resume {
        Some(dir) => dir.clone(),
        None => prepare_out_dir(args.out.as_deref())?,
    };

    // Resuming: drop a torn last line and any experiment that did not finish, then skip what is done.
    let mut done_experiments: Vec<&'static str> = Vec::new();
    let mut done_cells: Vec<(String, u64)> = Vec::new();
    if resume.is_some() {
        let before = dedupbench::results::read_results(&out)?;
        let count = |name: &str| {
            [
                before.saturation.len(),
                before.deletion.len(),
                before.growth.len(),
                before.bitmap_claim.len(),
            ][EXPERIMENTS.iter().position(|e| *e == name).unwrap_or(0)]
        };
        let incomplete: Vec<&'static str> = EXPERIMENTS
            .iter()
            .copied()
            .filter(|e| count(e) > 0 && count(e) < expected_records(e))
            .collect();
        // Unmeasured sweep points run again (the server may be back, or have its module now).
        let dropped = dedupbench::results::rewrite_without(&out, |r| {
            experiment_of(r).is_some_and(|e| incomplete.contains(&e))
                || matches!(r, Record::SharedSkipped(_))
        })?;
        if dropped > 0 {
            eprintln!("resume: dropped {dropped} records of unfinished work (a torn line or a partial experiment)");
        }
        done_experiments = EXPERIMENTS
            .iter()
            .copied()
            .filter(|e| count(e) == expected_records(e))
            .collect();
        done_cells = before
            .cells
            .iter()
            .map(|c| (c.structure.clone(), c.n))
            .chain(before.skipped.iter().map(|s| (s.structure.clone(), s.n)))
            .chain(
                before
                    .scenario
                    .iter()
                    .map(|s| ("seed-6e9 scenario".to_string(), s.n)),
            )
            .chain(before.shared.iter().map(|s| (s.cell_id(), s.n)))
            .chain(
                before
                    .memory_probe
                    .iter()
                    .map(|_| ("memory probe".to_string(), 0)),
            )
            .collect();
        eprintln!(
            "resume: {} cells and {} experiments already complete",
            done_cells.len(),
            done_experiments.len()
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
    let bars = Bars::new(args.quiet, (plan.scales.len() * plan.kinds.len()) as u64);
    let source = KeySource { generator, members };
    let mut writer = ResultsWriter::open(&out)?;
    if resume.is_none() {
        writer.write(Record::Run(RunHeader {
            suite: spec.suite.name().to_string(),
            scales: plan.scales.clone(),
            structures: plan.kinds.iter().map(|k| k.id().to_string()).collect(),
            fpr: plan.fpr,
            memory_budget_bytes: plan.memory_budget_bytes,
            seed: plan.seed,
            reps: plan.reps,
            reps_explicit: plan.reps_explicit,
            profile: profile.name.clone(),
            input: spec.input.as_ref().map(|p| p.display().to_string()),
            experiments: plan.experiments.is_some(),
            redis: spec.redis.as_ref().map(|u| u.to_string()),
            redis_structures: spec
                .remote_kinds
                .iter()
                .map(|k| k.id().to_string())
                .collect(),
            redis_keys: plan.shared.as_ref().map(|s| s.keys),
            redis_batches: plan.shared.as_ref().map(|s| s.batches.clone()),
            started_unix_s: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            key_lengths: source.key_lengths()?,
            machine: MachineInfo::detect(),
            dedupbench_version: env!("CARGO_PKG_VERSION").to_string(),
        }))?;
    }

    let started = std::time::Instant::now();
    let mut runner = Runner::new(plan, source, writer, &bars, &stop)?;
    let outcome = run_all(&mut runner, &bars, &done_cells, &done_experiments);
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
        eprintln!("resume with: dedupbench bench --resume {}", out.display());
        return Ok(130);
    }
    let negatives: u64 = results.cells.iter().map(|c| c.false_negatives).sum();
    if !runner.failures.is_empty() || negatives > 0 {
        return Err(RunFailed(format!(
            "the run found failures (false negatives or a lost server): {}",
            runner.failures.join("; ")
        ))
        .into());
    }
    Ok(0)
}

fn run_all(
    runner: &mut Runner,
    bars: &Bars,
    done: &[(String, u64)],
    done_experiments: &[&str],
) -> dedupbench::Result<()> {
    let scales = runner.plan.scales.clone();
    // The page-size probe matters where structures outgrow the caches (runs reaching 10⁷ keys).
    let probe_wanted = runner.plan.suite != Suite::Redis && scales.iter().any(|n| *n >= 10_000_000);
    if probe_wanted && !done.iter().any(|(id, _)| id == "memory probe") {
        runner.run_memory_probe()?;
    }
    if runner.plan.suite == Suite::Seed6e9 {
        for &n in &scales {
            if !done
                .iter()
                .any(|(id, m)| id == "seed-6e9 scenario" && *m == n)
            {
                runner.run_seed_scenario(n)?;
            }
            bars.cell_done();
        }
        return Ok(());
    }
    let kinds = runner.plan.kinds.clone();
    for &n in &scales {
        for kind in &kinds {
            if !done.iter().any(|(id, m)| id == kind.id() && *m == n) {
                runner.run_cell(*kind, n)?;
            }
            bars.cell_done();
        }
    }
    runner.run_experiments(done_experiments)?;
    runner.run_shared(done)
}

/// Lines of an input file (validated line by line) and the distinct keys in each prefix of `scales`
/// lines and in the whole file, counted in one pass by 64-bit fingerprints.
fn count_input(path: &Path, scales: &[u64]) -> Result<(u64, Vec<(u64, u64)>)> {
    let lines = UrlFile::count(path)?;
    let mut file = UrlFile::open(path)?;
    let mut seen = hashbrown::HashSet::with_capacity(lines as usize);
    let mut batch = dedupbench::keys::KeyBatch::with_capacity(4096, 80);
    let mut marks: Vec<u64> = scales.iter().copied().filter(|s| *s < lines).collect();
    marks.push(lines);
    marks.sort_unstable();
    marks.dedup();
    let mut distinct_at = Vec::new();
    let mut read = 0u64;
    for mark in marks {
        while read < mark {
            batch.clear();
            let want = (mark - read).min(4096) as usize;
            let got = file.read_batch(&mut batch, want)?;
            if got == 0 {
                break;
            }
            batch.hash_all(0);
            seen.extend(batch.hashes().iter().map(|h| h.h1));
            read += got as u64;
        }
        distinct_at.push((mark, seen.len() as u64));
    }
    Ok((lines, distinct_at))
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
    for p in &results.shared {
        println!(
            "{:<24} batch {:>5}: insert {:>10.0} keys/s, lookups {:>10.0} keys/s, {:.2} bytes/key, rate {:.2e} (theory {:.2e}){}",
            p.series,
            p.batch_keys,
            p.insert_keys_per_s,
            p.non_member_query_keys_per_s,
            p.bytes_per_key,
            p.observed_fpr,
            p.expected_fpr,
            p.raw_insert_keys_per_s
                .map(|raw| format!(", raw pipeline {raw:.0} keys/s"))
                .unwrap_or_default()
        );
    }
    for s in &results.shared_skipped {
        println!("{}: not measured: {}", s.structure, s.reason);
    }
    let _ = REGISTRY;
    println!("wall time {wall_s:.1} s");
}

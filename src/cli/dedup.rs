//! `dedupbench dedup`: passes through only the lines not seen before, by the chosen structure, with
//! bounded memory; the filter can be loaded from and saved to a file so a crawler keeps it across restarts.

use super::redis_target::RedisTarget;
use anyhow::{Context, Result};
use clap::Args;
use dedupbench::dedup::{self, DedupOptions};
use dedupbench::hash::HashFn;
use dedupbench::keys::bad_lines::{BadLines, SkippedLines};
use dedupbench::keys::file::UrlFile;
use dedupbench::registry;
use dedupbench::units::{count_arg_as, expected_arg, fpr_arg, hash_arg, WindowArg};
use dedupbench::Error;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(Args, Debug)]
pub struct DedupArgs {
    /// Structure id (with --load: must match the file's, or be left out).
    #[arg(long)]
    structure: Option<String>,
    /// Distinct keys to size the structure for.
    #[arg(long, value_parser = expected_arg)]
    expected: Option<u64>,
    /// Target false-positive rate: 0.01, 1e-3 or a percentage (0.1%).
    #[arg(long, default_value = "0.01", value_parser = fpr_arg)]
    fpr: f64,
    /// Hash seed (default: random, so an adversary cannot precompute colliding URLs).
    #[arg(long)]
    seed: Option<u64>,
    /// Hash function of a new filter (default: xxh3-64; a loaded filter keeps its file's). Workers sharing
    /// a filter must give the same; one created before xxh3-64 became the default hashes with xxh3-128.
    #[arg(long, value_parser = hash_arg)]
    hash: Option<HashFn>,
    /// Start from a saved filter.
    #[arg(long)]
    load: Option<PathBuf>,
    /// Save the filter when the input ends (atomically).
    #[arg(long)]
    save: Option<PathBuf>,
    /// Forget URLs after this many admissions (URLs let through, re-crawls included: 70M is a week at
    /// 10M a day), or a duration (7d, 12h) with --admissions-per-sec: a URL seen again inside the window
    /// is skipped, and passes again once the window has moved past it (the `windowed` filter, in this
    /// process: windows are per process).
    #[arg(long, value_parser = WindowArg::from_arg, conflicts_with = "load")]
    window: Option<WindowArg>,
    /// URLs let through per second, re-crawls included, turning a --window duration into admissions.
    #[arg(long, requires = "window", value_parser = dedupbench::units::rate_arg)]
    admissions_per_sec: Option<f64>,
    /// A filter shared with other workers through Redis: the server or cluster.
    #[command(flatten)]
    target: RedisTarget,
    /// The shared filter's Redis key (prefix); workers with the same name share one filter.
    #[arg(long)]
    name: Option<String>,
    /// A line that cannot be a URL (longer than 64 KiB, or holding a NUL byte): `skip` leaves it out
    /// (neither inserted nor written), counts it and reads on; `fail` stops at it with exit 2.
    #[arg(long, default_value = "skip", value_parser = bad_lines_arg)]
    bad_lines: BadLines,
    /// Lines per round trip to the shared filter.
    #[arg(long, default_value_t = 1024, value_parser = count_arg_as::<usize>)]
    batch: usize,
}

fn bad_lines_arg(text: &str) -> std::result::Result<BadLines, String> {
    BadLines::from_arg(text).map_err(|e| e.to_string())
}

pub fn run(args: DedupArgs) -> Result<i32> {
    let remote = match (&args.name, args.target.endpoint()?.is_some()) {
        (Some(name), true) => {
            let mut remote = args.target.remote(name)?;
            if let Some(r) = remote.as_mut() {
                if args.batch == 0 || args.batch > 100_000 {
                    return Err(
                        Error::invalid("--batch", "must be between 1 and 100000 lines").into(),
                    );
                }
                r.batch_keys = args.batch;
            }
            remote
        }
        (None, true) => return Err(Error::invalid(
            "--name",
            "is required with --redis/--redis-cluster: workers with the same name share one filter",
        )
        .into()),
        (Some(_), false) => {
            return Err(Error::invalid(
                "--name",
                "names a shared filter; give its server with --redis or --redis-cluster",
            )
            .into())
        }
        (None, false) => None,
    };
    // Workers sharing a filter must hash alike: without --seed they derive it from the name.
    let seed = match (args.seed, &args.name, &remote) {
        (Some(seed), _, _) => seed,
        // Whatever the filter's hash: a name gives the seed it gave before the hash was a choice.
        (None, Some(name), Some(_)) => HashFn::FORMER_DEFAULT.hash(0, name.as_bytes()).h1,
        _ => rand::random(),
    };
    let options = DedupOptions {
        structure: args.structure.clone(),
        expected: args.expected,
        fpr: args.fpr,
        seed,
        hash: args.hash,
        load: args.load.clone(),
        save: args.save.clone(),
        window: args
            .window
            .as_ref()
            .map(|w| w.urls(args.admissions_per_sec))
            .transpose()?,
        remote,
    };
    // A file that cannot be read or decoded is named with the flag that gave it.
    let mut structure = match (dedup::open(&options), &args.load) {
        (Ok(s), _) => s,
        (Err(e @ Error::Invalid { .. }), _) | (Err(e), None) => return Err(e.into()),
        // The error names the file; the flag says where it came from.
        (Err(e), Some(_)) => return Err(e).context("--load"),
    };
    let mut input = UrlFile::from_reader(
        "<stdin>",
        Box::new(std::io::BufReader::with_capacity(1 << 16, std::io::stdin())),
    );
    let skipped = Arc::new(SkippedLines::new(|first| {
        eprintln!("dedup: skipping a line that cannot be a URL (<stdin> {first}); --bad-lines fail would stop here; the closing line counts them");
    }));
    if args.bad_lines == BadLines::Skip {
        input = input.skipping_bad_lines(skipped.clone());
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    // SIGINT, SIGTERM or SIGHUP: stop reading after the batch in flight, then save as at the input's end
    // (every line written out is in the filter). A second signal ends the process at once (a blocked
    // output or a server's retries can keep the stream from seeing the first), except during the save,
    // which it would cut short; SIGKILL still can, and leaves the old file whole.
    let stop = Arc::new(AtomicBool::new(false));
    let saving = Arc::new(AtomicBool::new(false));
    {
        let (stop, saving) = (stop.clone(), saving.clone());
        let _ = ctrlc::set_handler(move || {
            if stop.swap(true, Ordering::SeqCst) {
                if saving.load(Ordering::SeqCst) {
                    eprintln!("dedup: saving the filter first; SIGKILL abandons the save (the old file stays whole)");
                } else {
                    std::process::exit(130);
                }
            }
        });
    }
    let started = std::time::Instant::now();
    // A loaded file does not record the keys it was planned for, and a window forgets by design.
    let planned_keys = args
        .expected
        .filter(|_| args.load.is_none() && args.window.is_none());
    let means = registry::find(structure.id())
        .map(|k| dedup::past_plan_means(k, args.fpr))
        .unwrap_or_default();
    let mut warn = |seen: dedup::Overfill| {
        eprintln!(
            "dedup: warning: the filter holds {} keys{}, past the {} it was planned for (--expected), after {} URLs of this stream: {}",
            seen.keys_held,
            if seen.counted_by_server { " (every worker's, as its server counts them)" } else { "" },
            seen.planned_keys,
            seen.read,
            means
        );
    };
    let mut watch = dedup::Watch {
        planned_keys,
        on_overfill: &mut warn,
    };
    let passed =
        dedup::pass_new_lines_until(structure.as_mut(), input, &mut out, &stop, &mut watch);
    let elapsed_s = started.elapsed().as_secs_f64();
    // Every line passed is in the filter, so it is saved whatever stopped the stream; an input error
    // follows the save.
    if let Some(path) = &args.save {
        saving.store(true, Ordering::SeqCst);
        registry::save(structure.as_ref(), path)
            .with_context(|| format!("--save {}", path.display()))?;
    }
    let counts = passed?;
    let resent = structure.resent_round_trips();
    let bad = match counts.bad_lines {
        0 => String::new(),
        n => format!(
            ", {n} bad line{} skipped (the first: {})",
            if n == 1 { "" } else { "s" },
            skipped.first().unwrap_or_default()
        ),
    };
    if counts.server_lost {
        return Err(super::RunFailed(format!(
            "dedup stopped after the first {} URLs of the input ({} written out, each of them in the filter{bad}); none after them was written out, though the round trip that failed may have inserted some: {}",
            counts.read,
            counts.passed,
            structure.failure().unwrap_or_default()
        ))
        .into());
    }
    let g = structure.geometry();
    let now = dedup::RateNow::of(structure.as_ref());
    if resent > 0 {
        let kept = dedupbench::registry::find(structure.id())
            .ok()
            .and_then(|k| k.server())
            .is_some_and(|s| s.answers_kept_for_resend);
        eprintln!(
            "dedup: {resent} round trips were sent again after a server was lost{}",
            if kept {
                " (their first answers were kept on the server and given again: no line was dropped for it)".to_string()
            } else {
                format!(
                    " ({} keeps no answers for a resend: up to --batch lines of each may have been dropped as seen)",
                    structure.id()
                )
            }
        );
    }
    eprintln!(
        "dedup{}: {} lines read in {elapsed_s:.2} s ({:.2}M lines/s), {} passed, {} dropped as seen{bad} ({}{}; {} inserted in all, a new line is now dropped with rate {:.3e}{})",
        match (counts.interrupted, &args.save) {
            (true, Some(_)) => " (interrupted: stopped reading; the filter is saved)",
            (true, None) => " (interrupted: stopped reading)",
            (false, _) => "",
        },
        counts.read,
        counts.read as f64 / elapsed_s.max(1e-9) / 1e6,
        counts.passed,
        counts.read - counts.passed,
        structure.id(),
        match (g.bits, g.hashes) {
            (Some(m), Some(k)) => format!(", m = {m}, k = {k}, hash {}", structure.hasher().func().id()),
            _ => format!(", hash {}", structure.hasher().func().id()),
        },
        structure.n_inserted(),
        now.rate,
        match now.basis {
            dedup::RateBasis::Fill => " (from the filter's fill)",
            dedup::RateBasis::ServerCount => " (theory at the keys its server counts, every worker's)",
            dedup::RateBasis::KeysReportedNew => {
                " or more (theory at the keys reported new, fewer than the distinct ones)"
            }
        }
    );
    let t = counts.times;
    let s = |ns: u64| ns as f64 / 1e9;
    eprintln!(
        "dedup: time: reading and splitting lines {:.2} s, hashing them {:.2} s (a second thread); the structure with the writes of the lines it passed {:.2} s, waiting for lines {:.2} s",
        s(t.read_ns),
        s(t.hash_ns),
        s(t.structure_ns),
        s(t.wait_ns)
    );
    Ok(if counts.interrupted { 130 } else { 0 })
}

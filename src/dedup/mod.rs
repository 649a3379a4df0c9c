//! The crawler's tool: pass through only the lines not seen before, by one structure, with bounded memory.
//! The structure comes from a saved file or is built for an expected count; it is saved by the caller
//! after the stream, so a crawler keeps it across restarts.
//!
//! Invariant: every line written out has been inserted, so a filter saved after any stop (end of input,
//! a closed output, a bad line, a signal) holds every line passed; a line seen before is never passed (no false
//! negatives), a new line is dropped with the structure's false-positive rate.

use crate::hash::HashFn;
use crate::keys::file::UrlFile;
use crate::keys::{KeyBatch, KeyPipeline};
use crate::kind::BuildConfig;
use crate::kind::Role;
use crate::membership::Membership;
use crate::registry::role_id;
use crate::registry::{self, find};
use crate::units::human_bytes;
use crate::{Error, Result};

mod watch;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::{self, Relaxed};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::time::Instant;
pub use watch::{past_plan_means, Overfill, Watch};

/// Lines per batch read from the input.
const BATCH_LINES: usize = 4096;

/// Where the structure of a dedup comes from.
#[derive(Clone, Debug)]
pub struct DedupOptions {
    /// Structure id (with `load`: must match the file's, or be `None`).
    pub structure: Option<String>,
    /// Distinct keys to size a new structure for.
    pub expected: Option<u64>,
    pub fpr: f64,
    /// Hash seed of a new structure.
    pub seed: u64,
    /// Hash function of a new structure ([`HashFn::DEFAULT`] when `None`); with `load`, must match the
    /// file's, or be `None`.
    pub hash: Option<HashFn>,
    /// A saved filter to start from.
    pub load: Option<PathBuf>,
    /// Where the filter will be saved (checked now, written by [`registry::save`] after the stream).
    pub save: Option<PathBuf>,
    /// Forget URLs after this many admitted URLs: the windowed filter, which a line seen again inside
    /// the window skips, and passes again once the window has moved past it.
    pub window: Option<u64>,
    /// A filter shared through Redis (one server or a cluster): every worker with the same name,
    /// structure, size, rate and seed joins one filter, the first one creating it.
    pub remote: Option<crate::redis::RemoteConfig>,
}

/// The structure a dedup will use, built or loaded, after every check that can be made before reading.
pub fn open(options: &DedupOptions) -> Result<Box<dyn Membership>> {
    if let Some(save) = &options.save {
        check_save_path(save)?;
    }
    if options.remote.is_some() && (options.load.is_some() || options.save.is_some()) {
        return Err(Error::invalid(
            "--load/--save",
            "apply to a filter in this process; a shared filter stays on its server",
        ));
    }
    let structure = match &options.load {
        Some(path) => {
            let loaded = registry::load(path)?;
            if let Some(id) = options.structure.as_deref().filter(|id| *id != loaded.id()) {
                return Err(Error::invalid(
                    "--structure",
                    format!(
                        "'{id}' does not match the loaded filter's '{}'",
                        loaded.id()
                    ),
                ));
            }
            let file_hash = loaded.hasher().func();
            if let Some(hash) = options.hash.filter(|h| *h != file_hash) {
                return Err(Error::invalid(
                    "--hash",
                    format!(
                        "'{}' does not match the loaded filter's '{}'",
                        hash.id(),
                        file_hash.id()
                    ),
                ));
            }
            loaded
        }
        None => build(options)?,
    };
    if options.save.is_some() && !registry::savable_ids().contains(&structure.id()) {
        return Err(Error::invalid(
            "--save",
            format!(
                "'{}' cannot be saved; savable: {}",
                structure.id(),
                registry::savable_ids().join(", ")
            ),
        ));
    }
    Ok(structure)
}

fn check_save_path(save: &Path) -> Result<()> {
    let parent = save
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !parent.is_dir() {
        return Err(Error::invalid(
            "--save",
            format!("{} is not a directory", parent.display()),
        ));
    }
    if save.is_dir() {
        return Err(Error::invalid(
            "--save",
            format!("{} is a directory, expected a file path", save.display()),
        ));
    }
    // Before any input is read: a folder that takes no new file (read-only, full, not ours) would
    // otherwise be found only after every new line had been written out.
    crate::atomic_file::check_writable(save).map_err(|e| {
        Error::invalid(
            "--save",
            format!(
                "cannot create a file in {}: {}",
                parent.display(),
                io_cause(&e)
            ),
        )
    })
}

/// The cause of an I/O error without any path it carries (the caller names the path once).
fn io_cause(e: &Error) -> String {
    match e {
        Error::Io { source, .. } => match source.raw_os_error() {
            Some(code) => std::io::Error::from_raw_os_error(code).to_string(),
            None => source.kind().to_string(),
        },
        other => other.to_string(),
    }
}

fn build(options: &DedupOptions) -> Result<Box<dyn Membership>> {
    let windowed = role_id(Role::ExpiringFilter);
    if options.window.is_some() && options.remote.is_some() {
        return Err(Error::invalid(
            "--window",
            "windows are per process: this worker's windowed filter forgets on its own count of admissions, and no filter shared on Redis forgets (partition the URLs between workers, one window each, or share without a window)",
        ));
    }
    if let (Some(_), Some(id)) = (options.window, options.structure.as_deref()) {
        if id != windowed {
            return Err(Error::invalid(
                "--window",
                format!("forgets URLs with the '{windowed}' structure; '{id}' keeps them for ever"),
            ));
        }
    }
    let default_id = if options.window.is_some() {
        windowed
    } else {
        registry::default_id()
    };
    let id = options
        .structure
        .as_deref()
        .unwrap_or(match options.remote {
            Some(_) => role_id(Role::SharedBloom),
            None => default_id,
        });
    let kind = find(id)?;
    match (&options.remote, kind.remote()) {
        (Some(_), false) => {
            return Err(Error::invalid(
                "--structure",
                format!(
                    "'{id}' lives in this process; a shared filter is one of {}",
                    registry::remote_kinds()
                        .map(|k| k.id())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ))
        }
        (None, true) => {
            return Err(Error::invalid(
                "--structure",
                format!("'{id}' lives on Redis; give --redis or --redis-cluster, and --name"),
            ))
        }
        _ => {}
    }
    if !kind.dynamic() {
        return Err(Error::invalid(
            "--structure",
            format!("'{id}' is a static filter (built once from all keys); dedup needs one that takes keys as they come"),
        ));
    }
    let expected = options
        .expected
        .or(options.window)
        .ok_or_else(|| Error::invalid("--expected", "is required without --load"))?;
    crate::units::check_expected(expected)?;
    if options.window == Some(0) {
        return Err(Error::invalid("--window", "must hold at least one URL"));
    }
    let mut config = BuildConfig::new(expected, options.fpr, options.seed);
    config.hash = options.hash.unwrap_or(HashFn::DEFAULT);
    config.window_keys = options.window;
    if let Some(remote) = &options.remote {
        // Every worker joins the one filter; the first creates it, the others check its parameters.
        let mut remote = remote.clone();
        remote.join_existing = true;
        remote.create = true;
        config.remote = Some(remote);
        return kind.build(&config);
    }
    // A windowed filter fed more than its window holds all its generations.
    let predicted = kind.predicted_peak_bytes(&config);
    let available = crate::measure::machine::memory_limit_bytes(u64::MAX) as f64;
    if predicted > available {
        return Err(Error::invalid(
            "--expected",
            format!(
                "{id} for {expected} keys needs ≈ {}; only {} is available",
                human_bytes(predicted),
                human_bytes(available)
            ),
        ));
    }
    kind.build(&config)
}

/// What one stream did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DedupCounts {
    /// Lines read.
    pub read: u64,
    /// Lines written out (new to the structure).
    pub passed: u64,
    /// Whether the output was closed before the input ended (a pipe's reader left).
    pub output_closed: bool,
    /// Whether a shared filter's server was lost (after its retries): the stream stopped at the batch it
    /// failed on, and [`Membership::failure`] says why.
    pub server_lost: bool,
    /// Whether a stop was asked for (a signal) before the input ended.
    pub interrupted: bool,
    /// Where the stream's time went.
    pub times: StageTimes,
    /// When the filter was first seen past the keys it was planned for.
    pub overfill: Option<Overfill>,
    /// Bad lines skipped ([`crate::keys::bad_lines::BadLines::Skip`]) up to the last batch handled.
    pub bad_lines: u64,
}

/// Where a stream's time went, in nanoseconds: the reading thread's reading and splitting of lines and its
/// hashing of them (timed apart), beside this thread's calls into the structure (its inserts, with the
/// writes of the lines it passed, which happen inside them so that every line written is inserted) and
/// its waits for the next batch of lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageTimes {
    pub read_ns: u64,
    pub hash_ns: u64,
    pub structure_ns: u64,
    pub wait_ns: u64,
}

/// Reads `input` to its end, writing each line new to `structure` to `out` (one per line) and inserting
/// it. A closed output ends the stream normally; a bad input line or another write error is returned
/// after the lines before it were passed and inserted.
pub fn pass_new_lines(
    structure: &mut dyn Membership,
    input: UrlFile,
    out: &mut dyn Write,
) -> Result<DedupCounts> {
    let mut ignore = |_| {};
    let mut watch = Watch {
        planned_keys: None,
        on_overfill: &mut ignore,
    };
    pass_new_lines_until(structure, input, out, &AtomicBool::new(false), &mut watch)
}

/// [`pass_new_lines`], stopping early once `stop` is set: the batch in flight and the batches already
/// read are finished (every line written out is inserted), no further line is read, and the counts say
/// `interrupted`. Lines are read and hashed by a second thread, so a stop is seen within [`STOP_POLL`]
/// even while the input is silent; that thread is left blocked on such an input and ends with the
/// process. Lines it had begun a batch with when the stop came are neither written out nor inserted.
pub fn pass_new_lines_until(
    structure: &mut dyn Membership,
    input: UrlFile,
    out: &mut dyn Write,
    stop: &AtomicBool,
    watch: &mut Watch,
) -> Result<DedupCounts> {
    use std::sync::mpsc::{channel, sync_channel, RecvTimeoutError};
    let mut counts = DedupCounts::default();
    let hasher = structure.hasher();
    // `None` marks the input's end, so a reader that vanished without it (a panic) is an error.
    // Each message carries the bad lines skipped since the last, so they count once their batch is
    // handled (the reader runs batches ahead).
    let (full_tx, full_rx) = sync_channel::<(Option<Result<KeyBatch>>, u64)>(2);
    let skipped = input.skipped_lines();
    let (empty_tx, empty_rx) = channel::<KeyBatch>();
    for _ in 0..3 {
        let _ = empty_tx.send(KeyBatch::with_capacity(BATCH_LINES, 96));
    }
    // The reading thread's time, read once it has sent the input's end (or an error).
    let read_ns = Arc::new(AtomicU64::new(0));
    let hash_ns = Arc::new(AtomicU64::new(0));
    let (reader_read_ns, reader_hash_ns) = (read_ns.clone(), hash_ns.clone());
    // Not scoped: a reader blocked on a silent input must not keep a stopped stream from ending.
    std::thread::spawn(move || {
        let mut lines = KeyPipeline::file(input, u64::MAX).with_batch_keys(BATCH_LINES);
        let mut bad_sent = 0;
        let mut bad_since = || {
            let total = skipped.as_ref().map_or(0, |log| log.count());
            total - std::mem::replace(&mut bad_sent, total)
        };
        while let Ok(mut batch) = empty_rx.recv() {
            let started = Instant::now();
            let made = lines.make(&mut batch);
            reader_read_ns.fetch_add(started.elapsed().as_nanos() as u64, Relaxed);
            match made {
                Ok(0) => {
                    let _ = full_tx.send((None, bad_since()));
                    return;
                }
                Ok(_) => {
                    let started = Instant::now();
                    batch.hash_all(hasher);
                    reader_hash_ns.fetch_add(started.elapsed().as_nanos() as u64, Relaxed);
                    if full_tx.send((Some(Ok(batch)), bad_since())).is_err() {
                        return;
                    }
                }
                Err(e) => {
                    let _ = full_tx.send((Some(Err(e)), bad_since()));
                    return;
                }
            }
        }
    });
    // Whether the load is the server's to count (a shared filter), from the registry: no round trip.
    let shared = crate::registry::find(structure.id()).is_ok_and(|k| k.remote())
        && watch.planned_keys.is_some();
    let mut last_load = watch::LastAsk::now();
    let written = (|| -> Result<()> {
        let mut waited = Instant::now();
        loop {
            let stopping = stop.load(Ordering::SeqCst);
            let next = if stopping {
                // Stop reading; what the reader already handed over is finished first.
                match full_rx.try_recv() {
                    Ok(next) => next,
                    Err(_) => {
                        counts.interrupted = true;
                        return Ok(());
                    }
                }
            } else {
                match full_rx.recv_timeout(STOP_POLL) {
                    Ok(next) => next,
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => {
                        return Err(Error::invalid(
                            "<stdin>",
                            "the thread reading the input stopped before its end",
                        ))
                    }
                }
            };
            let (next, bad) = next;
            counts.bad_lines += bad;
            let Some(batch) = next else {
                counts.interrupted = stopping;
                return Ok(());
            };
            counts.times.wait_ns += waited.elapsed().as_nanos() as u64;
            let batch = batch?;
            let started = Instant::now();
            // Through the structure's batch path, each new line written right after its insert: every
            // line written has been inserted, and a failed write stops the batch at its line (in process
            // the only line inserted but not written, as key by key; on a shared filter the rest of that
            // round trip too, at most --batch lines).
            // The counts are the callback's, line by line: a shared filter that fails after some round
            // trips of the batch returns nothing for it, while the lines of those round trips were written.
            let mut failed = None;
            // In this process every key called new is one more held: the plan is passed exactly at
            // the key that makes it planned + 1.
            let held_before = structure.n_inserted();
            let room = watch.room(held_before, counts.overfill.is_some() || shared);
            let (mut read, mut passed, mut new, mut crossed) = (0u64, 0u64, 0u64, None);
            structure.insert_batch_if_new(&batch, &mut |i, was_new| {
                read += 1;
                if was_new {
                    new += 1;
                    if new > room && crossed.is_none() {
                        crossed = Some(read);
                    }
                    if let Err(e) = write_line(out, batch.key(i)) {
                        failed = Some(e);
                        return false;
                    }
                    passed += 1;
                }
                true
            });
            counts.passed += passed;
            match crossed {
                Some(at) => {
                    let read_then = counts.read + at;
                    watch.tell(&mut counts, held_before + room + 1, false, read_then)
                }
                None if shared => watch.poll(structure, &mut counts, &mut last_load, false, read),
                None => {}
            }
            counts.read += read;
            counts.times.structure_ns += started.elapsed().as_nanos() as u64;
            waited = Instant::now();
            let _ = empty_tx.send(batch);
            if let Some(e) = failed {
                return Err(e);
            }
            if structure.failure().is_some() {
                counts.server_lost = true;
                return Ok(());
            }
        }
    })();
    // A shared filter's load once more at the end, however recently it was asked.
    if shared && structure.failure().is_none() {
        watch.poll(structure, &mut counts, &mut last_load, true, 0);
        counts.server_lost = structure.failure().is_some();
    }
    let flushed = out.flush().map_err(output_error);
    counts.times.read_ns = read_ns.load(Relaxed);
    counts.times.hash_ns = hash_ns.load(Relaxed);
    match written.and(flushed) {
        Err(Error::Io { source, .. }) if source.kind() == ErrorKind::BrokenPipe => {
            counts.output_closed = true;
            Ok(counts)
        }
        Err(e) => Err(e),
        Ok(()) => Ok(counts),
    }
}

/// How often a stream waiting for input looks at its stop flag.
pub const STOP_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// The rate at which the structure now drops a new line, and what it was computed from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateNow {
    pub rate: f64,
    pub basis: RateBasis,
}

/// What a [`RateNow`] was computed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateBasis {
    /// The filter's own fill (exact for this filter; see [`Membership::fill_fpr`]).
    Fill,
    /// The theory at the keys a shared filter's server counts in it, every worker's
    /// ([`Membership::keys_held_by_all`]).
    ServerCount,
    /// The theory at the keys the structure reported new: a lower bound on the distinct keys it holds
    /// (a key dropped as a false positive is not counted), so the rate is a lower bound too.
    KeysReportedNew,
}

impl RateNow {
    /// The rate of `structure` after a stream. Its count of inserted keys counts the keys it reported new,
    /// not the distinct keys offered (those it took for seen are missing), so the theory at that count
    /// under-states the rate (a bitmap at m = n: 46.9% where it is 63.2%); the fill has no such bias.
    pub fn of(structure: &dyn Membership) -> Self {
        match structure.fill_fpr() {
            Some(rate) => RateNow {
                rate,
                basis: RateBasis::Fill,
            },
            None => match structure.keys_held_by_all() {
                Some(held) => RateNow {
                    rate: structure.expected_fpr(held),
                    basis: RateBasis::ServerCount,
                },
                None => RateNow {
                    rate: structure.expected_fpr(structure.n_inserted()),
                    basis: RateBasis::KeysReportedNew,
                },
            },
        }
    }
}

fn write_line(out: &mut dyn Write, key: &[u8]) -> Result<()> {
    out.write_all(key).map_err(output_error)?;
    out.write_all(b"\n").map_err(output_error)
}

fn output_error(e: std::io::Error) -> Error {
    Error::io("<stdout>", e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::KeyHasher;

    fn input(text: &str) -> UrlFile {
        UrlFile::from_reader(
            "<test>",
            Box::new(std::io::Cursor::new(text.as_bytes().to_vec())),
        )
    }

    fn options(structure: &str, expected: u64) -> DedupOptions {
        DedupOptions {
            structure: Some(structure.to_string()),
            expected: Some(expected),
            fpr: 0.01,
            seed: 7,
            hash: None,
            load: None,
            save: None,
            window: None,
            remote: None,
        }
    }

    #[test]
    fn an_exact_set_passes_each_first_occurrence_in_order() {
        let mut s = open(&options("hashset", 10)).unwrap();
        let mut out = Vec::new();
        let text = "https://a.example/1\nhttps://b.example/2\nhttps://a.example/1\nhttps://c.example/3\nhttps://b.example/2\n";
        let counts = pass_new_lines(s.as_mut(), input(text), &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "https://a.example/1\nhttps://b.example/2\nhttps://c.example/3\n"
        );
        assert_eq!(
            counts,
            DedupCounts {
                read: 5,
                passed: 3,
                output_closed: false,
                server_lost: false,
                interrupted: false,
                times: counts.times,
                overfill: None,
                bad_lines: 0,
            }
        );
    }

    #[test]
    fn a_filter_never_passes_a_line_twice() {
        let mut s = open(&options("bloom", 5000)).unwrap();
        let lines: Vec<String> = (0..5000)
            .map(|i| format!("https://host{}.example/p/{i}", i % 97))
            .collect();
        let text = format!("{}\n{}\n", lines.join("\n"), lines.join("\n"));
        let mut out = Vec::new();
        let counts = pass_new_lines(s.as_mut(), input(&text), &mut out).unwrap();
        let passed: Vec<&str> = std::str::from_utf8(&out).unwrap().lines().collect();
        let distinct: std::collections::HashSet<&str> = passed.iter().copied().collect();
        assert_eq!(distinct.len(), passed.len(), "a line passed twice");
        assert_eq!(counts.read, 10_000);
        // New lines dropped as false positives: at 1% of 5000, far fewer than 150 (binomial, p < 10⁻⁹).
        assert!(counts.passed > 4850 && counts.passed <= 5000, "{counts:?}");
    }

    /// An output whose reader has gone.
    struct ClosedPipe;

    impl Write for ClosedPipe {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_output_ends_the_stream_without_error_and_keeps_the_line_inserted() {
        let mut s = open(&options("hashset", 10)).unwrap();
        let counts =
            pass_new_lines(s.as_mut(), input("https://a.example/\n"), &mut ClosedPipe).unwrap();
        assert!(counts.output_closed);
        assert_eq!(s.n_inserted(), 1);
    }

    #[test]
    fn a_static_filter_or_a_missing_count_is_refused() {
        let fixed = registry::REGISTRY.iter().find(|k| !k.dynamic()).unwrap();
        let e = open(&options(fixed.id(), 10)).err().unwrap();
        assert!(e.to_string().contains("static"), "{e}");
        let mut no_count = options("bloom", 10);
        no_count.expected = None;
        assert!(open(&no_count).is_err());
    }

    fn distinct_lines(n: u64) -> String {
        (0..n)
            .map(|i| format!("https://h{}.example/p/{i}\n", i % 101))
            .collect()
    }

    /// A bitmap of m = n bits after n distinct lines drops a new one with rate ≈ 63.2%: the fill says so
    /// (inside the 99.9% normal interval of the occupancy), where the theory at the keys reported new
    /// would say ≈ 46.9%.
    #[test]
    fn the_closing_rate_is_the_fill_not_the_theory_at_keys_reported_new() {
        let n = 20_000u64;
        let mut s = open(&options("bitmap", n)).unwrap();
        pass_new_lines(s.as_mut(), input(&distinct_lines(n)), &mut Vec::new()).unwrap();
        let now = RateNow::of(s.as_ref());
        assert_eq!(now.basis, RateBasis::Fill);
        let m = n as f64;
        let q1 = (1.0 - 1.0 / m).powf(n as f64);
        let q2 = (1.0 - 2.0 / m).powf(n as f64);
        let mean_unset = m * q1;
        let var_unset = m * (m - 1.0) * q2 + m * q1 - mean_unset * mean_unset;
        let half = 3.29 * var_unset.sqrt() / m;
        let expected = 1.0 - q1;
        assert!(
            (now.rate - expected).abs() <= half,
            "{} not within {expected} ± {half}",
            now.rate
        );
        let at_reported_new = s.expected_fpr(s.n_inserted());
        assert!(at_reported_new < expected - 0.1, "{at_reported_new}");
    }

    /// Past its plan an in-process filter is reported once, exactly at the URL whose insert makes it hold
    /// planned + 1 keys (repeats before it do not count).
    #[test]
    fn passing_the_plan_is_told_once_at_the_exact_url() {
        let mut s = open(&options("hashset", 1000)).unwrap();
        // Every third line repeats the one before: the 1001st distinct URL is line 1001 + 500 = 1501.
        let mut text = String::new();
        for i in 0..1500u64 {
            text.push_str(&format!("https://h.example/{i}\n"));
            if i % 2 == 1 {
                text.push_str(&format!("https://h.example/{i}\n"));
            }
        }
        let mut heard = Vec::new();
        let mut hear = |o: Overfill| heard.push(o);
        let mut watch = Watch {
            planned_keys: Some(1000),
            on_overfill: &mut hear,
        };
        let counts = pass_new_lines_until(
            s.as_mut(),
            input(&text),
            &mut Vec::new(),
            &AtomicBool::new(false),
            &mut watch,
        )
        .unwrap();
        let seen = Overfill {
            planned_keys: 1000,
            keys_held: 1001,
            counted_by_server: false,
            read: 1501,
        };
        assert_eq!(heard, vec![seen]);
        assert_eq!(counts.overfill, Some(seen));
        assert_eq!((counts.read, counts.passed), (2250, 1500));
    }

    /// A counting filter fed each line 20 times counts it once: no counter reaches the sticky 15, and every
    /// distinct line not dropped as a false positive is passed once.
    #[test]
    fn a_counting_filter_counts_a_repeated_line_once() {
        use crate::membership::Removable;
        use crate::structures::counting::CountingBloom;
        let n = 5_000u64;
        let once = distinct_lines(n);
        let text = once.repeat(20);
        let mut filter = CountingBloom::new(
            crate::theory::BloomSizing::for_rate(n, 0.01),
            KeyHasher::default_with_seed(7),
        );
        let counts = pass_new_lines(&mut filter, input(&text), &mut Vec::new()).unwrap();
        assert_eq!(counts.read, 20 * n);
        assert!(
            counts.passed <= n && counts.passed > n - 150,
            "{}",
            counts.passed
        );
        assert_eq!(Removable::saturated_counters(&filter), Some(0));
        let max = (0..filter.geometry().bits.unwrap())
            .map(|p| filter.counter(p))
            .max()
            .unwrap();
        assert!(
            max < 8,
            "a counter reached {max} with each line counted once"
        );
    }

    /// The batch path answers "was it new?" exactly as one `insert_if_new` per key in order does, for
    /// every structure `dedup` can build, on a stream that repeats keys right after themselves and 5 keys
    /// later (inside one batch, closer than the prefetch distance) and across batches, filled past the
    /// keys they were sized for. The peers that refuse or drop inserts when full are sized for every line:
    /// past capacity, evictions drawn from the thread's generator (cuckoofilter's) make two builds differ.
    #[test]
    fn the_batch_path_answers_as_key_by_key_inserts() {
        let n = 20_000usize;
        let mut lines: Vec<String> = Vec::with_capacity(n);
        for i in 0..n {
            let line = match i {
                _ if i % 3 == 2 => lines[i - 1].clone(),
                _ if i % 7 == 6 => lines[i - 5].clone(),
                _ => {
                    let j = (i * 7919) % (n / 2);
                    format!("https://h{}.example/p/{j}", j % 37)
                }
            };
            lines.push(line);
        }
        let mut batch = KeyBatch::with_capacity(1000, 64);
        for kind in registry::local_kinds().filter(|k| k.dynamic()) {
            let keys = if kind.peer() && !kind.stores_past_capacity() {
                n
            } else {
                n / 4
            };
            let config = BuildConfig::new(keys as u64, 0.05, 3);
            let mut batched = kind.build(&config).unwrap();
            let mut by_key = kind.build(&config).unwrap();
            let (mut answers, mut expected) = (Vec::new(), Vec::new());
            for chunk in lines.chunks(1000) {
                batch.clear();
                for line in chunk {
                    batch.push(line.as_bytes());
                }
                batch.hash_all(KeyHasher::default_with_seed(3));
                let count = batched.insert_batch_if_new(&batch, &mut |i, was_new| {
                    assert_eq!(i, answers.len() % 1000);
                    answers.push(was_new);
                    true
                });
                let before = expected.len();
                for (key, hash) in batch.iter() {
                    expected.push(by_key.insert_if_new(key, hash));
                }
                let by_key_count = expected[before..].iter().filter(|b| **b).count() as u64;
                assert_eq!(count, by_key_count, "{}", kind.id());
            }
            let first_difference = answers.iter().zip(&expected).position(|(a, b)| a != b);
            assert_eq!(
                first_difference,
                None,
                "{}: first different answer",
                kind.id()
            );
            assert_eq!(answers.len(), expected.len(), "{}", kind.id());
            assert!(
                !answers[2] && !answers[6],
                "{}: repeats within a batch",
                kind.id()
            );
        }
    }

    /// `each` returning false stops the batch after that key: the keys after it are not inserted.
    #[test]
    fn the_batch_path_stops_where_it_is_told() {
        let mut batch = KeyBatch::with_capacity(100, 64);
        for i in 0..100 {
            batch.push(format!("https://a.example/{i}").as_bytes());
        }
        batch.hash_all(KeyHasher::default_with_seed(3));
        for kind in registry::local_kinds().filter(|k| k.dynamic()) {
            let mut s = kind.build(&BuildConfig::new(1000, 0.001, 3)).unwrap();
            let mut told = 0;
            let new = s.insert_batch_if_new(&batch, &mut |i, _| {
                told += 1;
                i < 10
            });
            assert_eq!((told, new), (11, 11), "{}", kind.id());
            // Keys 11.. were never inserted: it answers every key exactly as a structure that was given
            // keys 0..=10 alone (its false positives included).
            let mut reference = kind.build(&BuildConfig::new(1000, 0.001, 3)).unwrap();
            for (key, hash) in batch.iter().take(11) {
                reference.insert_if_new(key, hash);
            }
            for (i, (key, hash)) in batch.iter().enumerate() {
                assert_eq!(
                    s.contains_hashed(key, hash),
                    reference.contains_hashed(key, hash),
                    "{}: key {i}",
                    kind.id()
                );
            }
        }
    }

    /// An output that fails (not a closed pipe) after `left` bytes.
    struct FailingOutput {
        left: usize,
    }

    impl Write for FailingOutput {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.left < buf.len() {
                return Err(std::io::Error::other("disk full"));
            }
            self.left -= buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// A write that fails mid-batch stops the stream at that line: it and the lines before are inserted,
    /// none after (so a filter saved afterwards holds only what was passed, plus the line that failed).
    #[test]
    fn a_failed_write_stops_the_batch_at_its_line() {
        let text: String = (0..100)
            .map(|i| format!("https://a.example/{i:03}\n"))
            .collect();
        let line_bytes = "https://a.example/000\n".len();
        for id in ["bloom", "blocked", "hashset"] {
            let mut s = open(&options(id, 1000)).unwrap();
            let mut out = FailingOutput {
                left: 10 * line_bytes,
            };
            let error = pass_new_lines(s.as_mut(), input(&text), &mut out).unwrap_err();
            assert!(error.to_string().contains("disk full"), "{error}");
            assert_eq!(s.n_inserted(), 11, "{id}");
        }
    }

    /// A line that is not UTF-8 is a key as its bytes: passed through unchanged, once.
    #[test]
    fn lines_that_are_not_utf8_pass_as_their_bytes() {
        let mut s = open(&options("hashset", 10)).unwrap();
        let text: &[u8] =
            b"https://a.example/caf\xe9\nhttps://a.example/caf\xe9\nhttps://b.example/\n";
        let mut out = Vec::new();
        let file = UrlFile::from_reader("<test>", Box::new(std::io::Cursor::new(text.to_vec())));
        let counts = pass_new_lines(s.as_mut(), file, &mut out).unwrap();
        assert_eq!((counts.read, counts.passed), (3, 2));
        assert_eq!(out, b"https://a.example/caf\xe9\nhttps://b.example/\n");
    }
}

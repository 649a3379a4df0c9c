//! The benchmark harness: suites → cells → records, each record appended and flushed as soon as it exists.
//!
//! For every (structure, n) cell, on identical keys for every structure: build by inserting the n members
//! (hashing and probing timed apart), query every member (false negatives counted; any is an error), query
//! enough non-members for ≥ 1000 expected false positives (capped by count and time), and measure memory with
//! the counting allocator, RSS and the model. A cell whose predicted bytes exceed the budget or the memory
//! available now is recorded as skipped with its projection, before anything is allocated. The harness never
//! holds the key set: keys are made (or read) a batch at a time.

pub mod experiments;
pub mod keys;
pub mod out_dir;
pub mod plan;
pub mod resume;
pub mod scenario;
pub mod session;
pub mod shared;
pub mod spec;

use crate::keys::KeyBatch;
use crate::measure::{heap_snapshot, machine};
use crate::results::{CellRecord, Record, ResultsWriter, SkippedCell};
use crate::stats::{summarize, wilson};
use crate::structures::{BuildConfig, KeyLengths, Kind, Membership};
use crate::{Error, Result};
use keys::KeySource;
pub use plan::{RunPlan, SharedPlan, Suite};
pub use session::{Outcome, Session};
pub use spec::{RunOptions, RunSpec};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Keys per batch in every timed loop.
pub const BATCH_KEYS: usize = 4096;
/// Memory the harness itself may use beyond the structures (batches, allocator slack, the process).
pub const HARNESS_OVERHEAD_BYTES: u64 = 256 << 20;

/// Where the harness reports what it is doing (the CLI draws progress bars; tests stay silent).
pub trait Progress {
    /// A new phase with `total` steps.
    fn start(&self, label: &str, total: u64);
    /// `steps` more steps done.
    fn advance(&self, steps: u64);
    /// The phase ended.
    fn finish(&self);
    /// One cell of the run's loop is done (measured, skipped or already complete).
    fn cell_done(&self) {}
}

/// Progress that shows nothing.
pub struct Silent;

impl Progress for Silent {
    fn start(&self, _: &str, _: u64) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
}

/// Raised when the run is interrupted; the current cell is abandoned, not recorded.
pub fn interrupted_error() -> Error {
    Error::invalid("run", "interrupted")
}

/// What one pass over keys measured.
#[derive(Clone, Copy, Debug, Default)]
struct PassTiming {
    keys: u64,
    hash_ns: u64,
    probe_ns: u64,
    hits: u64,
}

impl PassTiming {
    fn hash_per_key(&self) -> f64 {
        self.hash_ns as f64 / self.keys.max(1) as f64
    }
    fn probe_per_key(&self) -> f64 {
        self.probe_ns as f64 / self.keys.max(1) as f64
    }
    fn total_per_key(&self) -> f64 {
        (self.hash_ns + self.probe_ns) as f64 / self.keys.max(1) as f64
    }
}

/// Which keys a pass touches.
enum Keys {
    Members(u64),
    /// `count` of the first n members, spread evenly (the false-negative check of very large cells).
    MemberSample {
        n: u64,
        count: u64,
    },
    NonMembers {
        count: u64,
        deadline: Option<Instant>,
    },
}

/// Above this many keys, the first repetition checks an evenly spread sample of this many members for
/// false negatives instead of all of them (a pass over 10⁹ members costs minutes of key generation).
pub const MEMBER_CHECK_CAP: u64 = 20_000_000;

/// Makes the batches of one pass: members from a cursor, or non-members `[0, total)`.
struct KeyProducer<'a> {
    source: &'a KeySource,
    cursor: Option<keys::MemberCursor>,
    next_non_member: u64,
    total: u64,
}

impl KeyProducer<'_> {
    /// Fills `batch` with the next keys; returns how many (0: the pass is done).
    fn fill(&mut self, batch: &mut KeyBatch) -> Result<usize> {
        match self.cursor.as_mut() {
            Some(cursor) => self.source.fill_members(cursor, batch, BATCH_KEYS),
            None => {
                let to = (self.next_non_member + BATCH_KEYS as u64).min(self.total);
                self.source
                    .fill_non_members(self.next_non_member, to, batch);
                let added = (to - self.next_non_member) as usize;
                self.next_non_member = to;
                Ok(added)
            }
        }
    }
}

/// The harness.
pub struct Runner<'a> {
    pub plan: RunPlan,
    pub source: KeySource,
    pub key_lengths: KeyLengths,
    writer: ResultsWriter,
    progress: &'a dyn Progress,
    stop: &'a AtomicBool,
    batch: KeyBatch,
    /// Cells that found false negatives.
    pub failures: Vec<String>,
    /// Whether a second thread makes the keys during passes (off in the shared-filter sweep, where the
    /// Redis server needs that core).
    generate_alongside: bool,
}

impl<'a> Runner<'a> {
    /// A runner writing to `writer`.
    pub fn new(
        plan: RunPlan,
        source: KeySource,
        writer: ResultsWriter,
        progress: &'a dyn Progress,
        stop: &'a AtomicBool,
    ) -> Result<Self> {
        let key_lengths = source.key_lengths()?;
        Ok(Runner {
            plan,
            source,
            key_lengths,
            writer,
            progress,
            stop,
            batch: KeyBatch::with_capacity(BATCH_KEYS, 96),
            failures: Vec::new(),
            generate_alongside: true,
        })
    }

    /// Writes a record now.
    pub fn record(&mut self, record: Record) -> Result<()> {
        self.writer.write(record)
    }

    /// The build configuration of a cell.
    pub fn config(&self, n: u64) -> BuildConfig {
        let mut config = BuildConfig::new(n, self.plan.fpr, self.plan.seed);
        config.key_lengths = self.key_lengths;
        config
    }

    /// The bytes a cell may use: the budget, and what is available now less the harness's own overhead.
    pub fn memory_limit(&self) -> u64 {
        let available = machine::available_memory_bytes().saturating_sub(HARNESS_OVERHEAD_BYTES);
        self.plan.memory_budget_bytes.min(available)
    }

    /// Runs one grid cell and records it (measured or skipped). `done` says which cells to skip (resume).
    pub fn run_cell(&mut self, kind: &dyn Kind, n: u64) -> Result<()> {
        // Structures are sized for the distinct keys they will hold (a file's lines may repeat).
        let config = self.config(self.source.distinct_members(n));
        // What earlier cells freed must not count against this one.
        machine::release_free_heap();
        let model = kind.predicted_memory(&config);
        // The peak while building (hashbrown holds its old table as it grows), plus 5% for allocator slack.
        let peak = kind.predicted_peak_bytes(&config) * 1.05;
        let limit = self.memory_limit();
        if peak > limit as f64 {
            let reason = if limit < self.plan.memory_budget_bytes {
                format!(
                    "needs ≈ {} at peak; only {} available now",
                    crate::units::human_bytes(peak),
                    crate::units::human_bytes(limit as f64)
                )
            } else {
                format!(
                    "needs ≈ {} at peak; budget {}",
                    crate::units::human_bytes(peak),
                    crate::units::human_bytes(limit as f64)
                )
            };
            return self.record(Record::Skipped(SkippedCell {
                structure: kind.id().to_string(),
                n,
                projected_bytes: model.footprint_bytes,
                budget_bytes: self.plan.memory_budget_bytes,
                reason,
            }));
        }
        let record = self.measure_cell(kind, n, &config)?;
        if record.false_negatives > 0 {
            self.failures.push(format!(
                "{} at n = {}: {} false negatives",
                record.structure, n, record.false_negatives
            ));
        }
        self.record(Record::Cell(record))
    }

    fn measure_cell(
        &mut self,
        kind: &dyn Kind,
        n: u64,
        config: &BuildConfig,
    ) -> Result<CellRecord> {
        let started = Instant::now();
        let reps = self.plan.reps_for(n);
        let n_distinct = self.source.distinct_members(n);
        let predicted_fpr = kind.predicted_fpr(config);
        let queries = self.plan.non_member_queries(predicted_fpr);
        let timing_queries = queries.min(self.plan.timing_queries_cap);
        let mut insert = Vec::new();
        let mut hash = Vec::new();
        let mut probe = Vec::new();
        let mut member_query = Vec::new();
        let mut non_member_query = Vec::new();
        let mut parallel = Vec::new();
        let mut floor = None;
        let mut huge_pages = 0;
        let mut fill_fpr = None;
        let mut outcome = None;
        machine::release_free_heap();
        machine::reset_peak_rss();
        let (rss_before, _) = machine::rss_bytes();
        for rep in 0..reps {
            let label = format!(
                "{} n={} rep {}/{}",
                kind.id(),
                crate::units::human_count(n as f64),
                rep + 1,
                reps
            );
            let heap_before = heap_snapshot();
            // Construction (allocation, and zeroing where a structure does it eagerly) is part of the build.
            let constructed = Instant::now();
            let mut structure = kind.build(config)?;
            let construct_ns = constructed.elapsed().as_nanos() as u64;
            let mut build = self.pass(
                &label,
                "insert",
                Some(structure.as_mut()),
                None,
                Keys::Members(n),
            )?;
            build.probe_ns += construct_ns;
            let heap = heap_snapshot().since(&heap_before);
            // The first repetition checks every member (an even sample above MEMBER_CHECK_CAP); later ones
            // time a prefix.
            let member_keys = if rep == 0 {
                Keys::MemberSample {
                    n,
                    count: n.min(MEMBER_CHECK_CAP),
                }
            } else {
                Keys::Members(n.min(self.plan.timing_queries_cap * 5))
            };
            let members = self.pass(
                &label,
                "query members",
                None,
                Some(structure.as_ref()),
                member_keys,
            )?;
            // The first repetition counts every non-member; later ones time a prefix of them.
            let count = if rep == 0 { queries } else { timing_queries };
            let deadline = Some(
                Instant::now() + std::time::Duration::from_secs_f64(self.plan.query_time_cap_s),
            );
            let non_members = self.pass(
                &label,
                "query non-members",
                None,
                Some(structure.as_ref()),
                Keys::NonMembers { count, deadline },
            )?;
            insert.push(build.total_per_key());
            hash.push(build.hash_per_key());
            probe.push(build.probe_per_key());
            member_query.push(members.total_per_key());
            non_member_query.push(non_members.total_per_key());
            if rep == 0 {
                fill_fpr = structure.fill_fpr();
                huge_pages = crate::structures::mem::anon_huge_page_bytes();
                if n >= 1_000_000 {
                    floor = self.memory_floor(structure.as_ref(), timing_queries.min(n))?;
                }
                let (rss_after, rss_peak) = machine::rss_bytes();
                outcome = Some((
                    build.hits,
                    members,
                    non_members,
                    heap,
                    structure.bytes_held(),
                    structure.expected_fpr(n_distinct),
                    structure.geometry(),
                    rss_after,
                    rss_peak,
                ));
            }
            drop(structure);
            machine::release_free_heap();
            if self.plan.threads > 1 && rep == 0 {
                if let Some(ns) = self.parallel_build(kind, config, n)? {
                    parallel.push(ns);
                }
            }
        }
        let (
            reported_new,
            members,
            non_members,
            heap,
            bytes_held,
            expected_fpr,
            geometry,
            rss_after,
            rss_peak,
        ) = outcome.expect("at least one repetition");
        let interval = wilson(non_members.hits, non_members.keys, 0.95);
        let model = kind.predicted_memory(config);
        Ok(CellRecord {
            structure: kind.id().to_string(),
            peer: kind.peer(),
            exact: kind.exact(),
            n,
            n_distinct,
            n_reported_new: reported_new,
            reps,
            geometry,
            insert_ns_per_key: summarize(&insert),
            hash_ns_per_key: summarize(&hash),
            probe_insert_ns_per_key: summarize(&probe),
            member_query_ns_per_key: summarize(&member_query),
            non_member_query_ns_per_key: summarize(&non_member_query),
            n_member_queries: members.keys,
            false_negatives: members.keys - members.hits,
            n_non_member_queries: non_members.keys,
            n_false_positives: non_members.hits,
            observed_fpr: non_members.hits as f64 / non_members.keys.max(1) as f64,
            observed_fpr_wilson95: interval,
            expected_fpr,
            theory_in_interval: interval.contains(expected_fpr),
            fill_fpr,
            fill_fpr_in_interval: fill_fpr.map(|f| interval.contains(f)),
            bytes_held,
            heap_requested_bytes: heap.requested_bytes,
            heap_footprint_bytes: heap.footprint_bytes,
            model_heap_bytes: model.heap_bytes,
            model_footprint_bytes: model.footprint_bytes,
            rss_before_bytes: rss_before,
            rss_after_bytes: rss_after,
            rss_peak_bytes: rss_peak,
            bits_per_key: heap.footprint_bytes as f64 * 8.0 / n_distinct.max(1) as f64,
            wall_s: started.elapsed().as_secs_f64(),
            threads: if parallel.is_empty() {
                1
            } else {
                self.plan.threads
            },
            parallel_insert_ns_per_key: (!parallel.is_empty()).then(|| summarize(&parallel)),
            batched_query_ns_per_key: None,
            memory_floor_ns_per_key: floor,
            anon_huge_pages_bytes: huge_pages,
        })
    }

    /// Builds a fresh structure with [`RunPlan::threads`] threads through its shared inserter (for kinds that
    /// have one); returns the slowest thread's timed hash + insert nanoseconds per key.
    fn parallel_build(
        &mut self,
        kind: &dyn Kind,
        config: &BuildConfig,
        n: u64,
    ) -> Result<Option<f64>> {
        if !matches!(self.source.members, keys::Members::Generated) {
            return Ok(None);
        }
        let mut structure = kind.build(config)?;
        let seed = structure.seed();
        let threads = self.plan.threads as u64;
        let stop = self.stop;
        let generator = &self.source.generator;
        let Some(inserter) = structure.shared_inserter() else {
            return Ok(None);
        };
        let (slowest_ns, new) = std::thread::scope(|scope| {
            let inserter = &inserter;
            let workers: Vec<_> = (0..threads)
                .map(|t| {
                    scope.spawn(move || {
                        let mut batch = KeyBatch::with_capacity(BATCH_KEYS, 96);
                        let (mut timed_ns, mut new) = (0u64, 0u64);
                        let (from, to) = (t * n / threads, (t + 1) * n / threads);
                        let mut i = from;
                        while i < to && !stop.load(Ordering::Relaxed) {
                            batch.clear();
                            let end = (i + BATCH_KEYS as u64).min(to);
                            generator.fill_members(i..end, &mut batch);
                            let t0 = Instant::now();
                            batch.hash_all(seed);
                            new += inserter.insert_batch(&batch);
                            timed_ns += t0.elapsed().as_nanos() as u64;
                            i = end;
                        }
                        (timed_ns, new)
                    })
                })
                .collect();
            workers
                .into_iter()
                .fold((0u64, 0u64), |(slowest, total), w| {
                    let (ns, new) = w
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                    (slowest.max(ns), total + new)
                })
        });
        drop(inserter);
        structure.add_inserted(new);
        if self.stopped() {
            return Err(interrupted_error());
        }
        Ok(Some(slowest_ns as f64 / n.max(1) as f64))
    }

    /// The memory floor: one random cache-line read per key in the structure's own array (independent,
    /// prefetched reads, as the batched lookups issue them), for structures whose state is one word array.
    fn memory_floor(&mut self, s: &dyn Membership, keys: u64) -> Result<Option<f64>> {
        // Only structures whose whole state is one word array (a chain of slices has no single size).
        let Some(words) = s.word_array() else {
            return Ok(None);
        };
        let lines = (words.len() / 8).max(1) as u64;
        let mut total_ns = 0u64;
        let mut sum = 0u64;
        let mut done = 0u64;
        while done < keys {
            self.batch.clear();
            let to = (done + BATCH_KEYS as u64).min(keys);
            self.source.fill_non_members(done, to, &mut self.batch);
            self.batch.hash_all(s.seed() ^ 0xF100);
            let t0 = Instant::now();
            sum = sum.wrapping_add(crate::measure::floor::read_lines(
                words,
                lines,
                self.batch.hashes(),
            ));
            total_ns += t0.elapsed().as_nanos() as u64;
            done = to;
        }
        std::hint::black_box(sum);
        Ok(Some(total_ns as f64 / keys.max(1) as f64))
    }

    /// One timed pass: keys are made untimed, then hashed (timed) and inserted or queried (timed).
    ///
    /// Measured here: hashing a 77-byte URL costs ≈ 6 ns when its bytes are in this core's cache and
    /// ≈ 16 ns when they must first come from the core that made them, hence the untimed `touch`.
    ///
    /// With more than one core, a second thread makes the keys while this one hashes and probes (batches
    /// go back and forth over two channels), so a pass costs max(generation, work) of wall time instead of
    /// their sum. Generation is never inside the timed region either way.
    fn pass(
        &mut self,
        label: &str,
        phase: &str,
        mut insert_into: Option<&mut dyn Membership>,
        query: Option<&dyn Membership>,
        keys: Keys,
    ) -> Result<PassTiming> {
        let seed = insert_into
            .as_ref()
            .map(|s| s.seed())
            .or(query.map(|s| s.seed()))
            .unwrap_or(0);
        let (total, deadline) = match &keys {
            Keys::Members(n) => (*n, None),
            Keys::MemberSample { count, .. } => (*count, None),
            Keys::NonMembers { count, deadline } => (*count, *deadline),
        };
        self.progress.start(&format!("{label}: {phase}"), total);
        let cursor = match keys {
            Keys::Members(n) => Some(self.source.member_cursor(n)?),
            Keys::MemberSample { n, count } => Some(self.source.member_sample_cursor(n, count)?),
            Keys::NonMembers { .. } => None,
        };
        let mut timing = PassTiming::default();
        let stop = self.stop;
        let source = &self.source;
        let progress = self.progress;
        let mut work = |batch: &mut KeyBatch, timing: &mut PassTiming| -> bool {
            // A batch made by the other thread is still in that core's cache: pull it over untimed, so
            // hashing costs what it costs on a key the caller just produced (as with one thread).
            std::hint::black_box(batch.touch());
            let t0 = Instant::now();
            batch.hash_all(seed);
            let t1 = Instant::now();
            let hits = match (insert_into.as_deref_mut(), query) {
                (Some(s), _) => s.insert_batch(batch),
                (None, Some(s)) => s.contains_batch(batch),
                (None, None) => 0,
            };
            let t2 = Instant::now();
            // A structure on a server that went away: stop the pass, the caller reports the failure.
            let failed = match (insert_into.as_deref(), query) {
                (Some(s), _) | (None, Some(s)) => s.failure().is_some(),
                (None, None) => false,
            };
            timing.keys += batch.len() as u64;
            timing.hits += hits;
            timing.hash_ns += (t1 - t0).as_nanos() as u64;
            timing.probe_ns += (t2 - t1).as_nanos() as u64;
            progress.advance(batch.len() as u64);
            !failed && deadline.is_none_or(|d| t2 <= d) && !stop.load(Ordering::Relaxed)
        };
        let mut producer = KeyProducer {
            source,
            cursor,
            next_non_member: 0,
            total,
        };
        let made: Result<()> = if self.plan.threads > 1 && self.generate_alongside {
            use std::sync::mpsc::{channel, sync_channel};
            std::thread::scope(|scope| {
                let (full_tx, full_rx) = sync_channel::<Result<KeyBatch>>(2);
                let (empty_tx, empty_rx) = channel::<KeyBatch>();
                for _ in 0..3 {
                    let _ = empty_tx.send(KeyBatch::with_capacity(BATCH_KEYS, 96));
                }
                scope.spawn(move || {
                    while let Ok(mut batch) = empty_rx.recv() {
                        if stop.load(Ordering::Relaxed) {
                            return;
                        }
                        batch.clear();
                        match producer.fill(&mut batch) {
                            Ok(0) => return,
                            Ok(_) => {
                                if full_tx.send(Ok(batch)).is_err() {
                                    return;
                                }
                            }
                            Err(e) => {
                                let _ = full_tx.send(Err(e));
                                return;
                            }
                        }
                    }
                });
                for batch in full_rx.iter() {
                    let mut batch = batch?;
                    if !work(&mut batch, &mut timing) {
                        break;
                    }
                    let _ = empty_tx.send(batch);
                }
                Ok(())
            })
        } else {
            let mut batch = KeyBatch::with_capacity(BATCH_KEYS, 96);
            loop {
                batch.clear();
                if producer.fill(&mut batch)? == 0 || !work(&mut batch, &mut timing) {
                    break;
                }
            }
            Ok(())
        };
        made?;
        if self.stop.load(Ordering::Relaxed) {
            self.progress.finish();
            return Err(interrupted_error());
        }
        if let Some(s) = insert_into {
            // Static filters build themselves once all keys are in: part of the insert cost.
            let t0 = Instant::now();
            s.finish_build();
            timing.probe_ns += t0.elapsed().as_nanos() as u64;
        }
        self.progress.finish();
        Ok(timing)
    }

    /// Counts non-members `[0, count)` reported present (for experiments), with a deadline.
    pub fn count_false_positives(
        &mut self,
        s: &dyn Membership,
        count: u64,
        label: &str,
    ) -> Result<(u64, u64)> {
        let deadline =
            Some(Instant::now() + std::time::Duration::from_secs_f64(self.plan.query_time_cap_s));
        let t = self.pass(
            label,
            "query non-members",
            None,
            Some(s),
            Keys::NonMembers { count, deadline },
        )?;
        Ok((t.hits, t.keys))
    }

    /// Runs `op` over generated members `[from, to)` a hashed batch at a time (for experiments); returns
    /// the sum of what `op` returns. Stops with an error when interrupted.
    fn over_members(
        &mut self,
        seed: u64,
        from: u64,
        to: u64,
        mut op: impl FnMut(&KeyBatch) -> u64,
    ) -> Result<u64> {
        let mut total = 0;
        let mut i = from;
        while i < to {
            if self.stop.load(Ordering::Relaxed) {
                return Err(interrupted_error());
            }
            self.batch.clear();
            let end = (i + BATCH_KEYS as u64).min(to);
            self.source.generator.fill_members(i..end, &mut self.batch);
            self.batch.hash_all(seed);
            total += op(&self.batch);
            i = end;
        }
        Ok(total)
    }

    /// Inserts generated members `[from, to)` (for experiments); returns how many were new.
    pub fn insert_members(&mut self, s: &mut dyn Membership, from: u64, to: u64) -> Result<u64> {
        let new = self.over_members(s.seed(), from, to, |batch| s.insert_batch(batch))?;
        s.finish_build();
        Ok(new)
    }

    /// Counts generated members `[from, to)` found (for experiments).
    pub fn count_members_found(&mut self, s: &dyn Membership, from: u64, to: u64) -> Result<u64> {
        self.over_members(s.seed(), from, to, |batch| s.contains_batch(batch))
    }

    /// Removes generated members `[from, to)` (for experiments); returns how many were removed.
    pub fn remove_members(&mut self, s: &mut dyn Membership, from: u64, to: u64) -> Result<u64> {
        let seed = s.seed();
        let removable = s
            .as_removable()
            .ok_or_else(|| Error::invalid("structure", "does not support removal"))?;
        self.over_members(seed, from, to, |batch| removable.remove_batch(batch))
    }

    /// Measures random-read costs over 1 GiB arrays (4 KiB vs huge pages, dependent vs independent) and
    /// records them; skipped when less than 3 GiB is available.
    pub fn run_memory_probe(&mut self) -> Result<()> {
        const PROBE_BYTES: u64 = 1 << 30;
        if self.memory_limit() < 3 * PROBE_BYTES {
            return Ok(());
        }
        self.progress
            .start("memory probe: 1 GiB, 4 KiB vs huge pages", 1);
        let probe = crate::measure::floor::probe_pages(PROBE_BYTES as usize, 4_000_000);
        self.progress.advance(1);
        self.progress.finish();
        machine::release_free_heap();
        self.record(Record::MemoryProbe(probe))
    }

    /// Whether a stop was requested.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

//! The benchmark harness: suites → cells → records, each record appended and flushed as soon as it exists.
//!
//! For every (structure, n) cell, on identical keys for every structure: build by inserting the n members
//! (hashing and probing timed apart), query every member (false negatives counted; any is an error), query
//! enough non-members for ≥ 1000 expected false positives (capped by count and time), and measure memory with
//! the counting allocator, RSS and the model. A cell whose predicted bytes exceed the budget or the memory
//! available now is recorded as skipped with its projection, before anything is allocated. The harness never
//! holds the key set: keys are made (or read) a batch at a time.

mod cell;
pub mod experiments;
mod external;
pub mod out_dir;
mod owners;
mod pass;
pub mod plan;
pub mod resume;
pub mod scenario;
pub mod session;
pub mod source;
pub mod spec;
pub mod speed_group;
pub mod sweep;

use crate::keys::KeyBatch;
use crate::kind::{BuildConfig, KeyLengths, Kind};
use crate::measure::{heap_snapshot, machine};
use crate::membership::Membership;
use crate::results::{CellRecord, Record, ResultsWriter, SkippedCell};
use crate::stats::{summarize, wilson};
use crate::{Error, Result};
pub use external::REQUIRE_EXTERNAL_VAR;
pub use pass::MEMBER_CHECK_CAP;
use pass::{PassKeys, PassTiming};
pub use plan::{RunPlan, Suite, SweepPlan};
pub use session::{Outcome, Session};
use source::KeySource;
pub use spec::{RunOptions, RunSpec};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Keys per batch in every timed loop but the 6·10⁹ scenario's bulk build (`scenario::BUILD_BATCH_KEYS`).
pub const BATCH_KEYS: usize = 4096;

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

/// What a guarded piece of work would hold, and how to record it when it does not fit.
pub struct Need {
    /// What the skipped record is about.
    pub subject: crate::results::SkipSubject,
    pub n: u64,
    /// Bytes at the peak (allocator slack included), compared with the limit.
    pub peak_bytes: f64,
    /// Bytes the record projects (the model's footprint).
    pub projected_bytes: f64,
    /// What needs the memory, in words ("needs at peak").
    pub what: &'static str,
}

/// The harness.
pub struct Runner<'a> {
    pub plan: RunPlan,
    pub source: KeySource,
    pub key_lengths: KeyLengths,
    writer: ResultsWriter,
    pub(crate) progress: &'a dyn Progress,
    stop: &'a AtomicBool,
    batch: KeyBatch,
    /// Cells that found false negatives.
    pub failures: Vec<String>,
    /// Whether a second thread makes the keys during passes (off in the shared-filter sweep, where the
    /// Redis server needs that core).
    generate_alongside: bool,
    /// The memory floor measured at each n so far (one array per n, shared by its cells).
    floors: Vec<(u64, cell::MemoryFloor)>,
    /// The run's parameters, copied onto every measured cell.
    pub run_params: Option<crate::results::RunParams>,
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
            floors: Vec::new(),
            run_params: None,
        })
    }

    /// The run's folder.
    pub fn out_dir(&self) -> &std::path::Path {
        self.writer.dir()
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
        machine::memory_limit_bytes(self.plan.memory_budget_bytes)
    }

    /// The one memory guard: whether `need` fits the budget and the memory available now (after what
    /// earlier work freed is returned). When it does not, it is recorded as skipped with its projection,
    /// before anything is allocated.
    pub fn fits(&mut self, need: Need) -> Result<bool> {
        machine::release_free_heap();
        let limit = self.memory_limit();
        if need.peak_bytes <= limit as f64 {
            return Ok(true);
        }
        let human = crate::units::human_bytes;
        let against = if limit < self.plan.memory_budget_bytes {
            format!("only {} available now", human(limit as f64))
        } else {
            format!("budget {}", human(limit as f64))
        };
        self.record(Record::Skipped(SkippedCell {
            subject: need.subject,
            n: need.n,
            projected_bytes: need.projected_bytes,
            budget_bytes: self.plan.memory_budget_bytes,
            reason: format!("{} ≈ {}; {against}", need.what, human(need.peak_bytes)),
            cause: crate::results::SkipCause::Memory,
        }))?;
        Ok(false)
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

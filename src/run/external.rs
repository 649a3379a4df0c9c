//! One cell of an external row (a Python or Java tool run as its own process, `crate::external`):
//! recorded as skipped, with its cause, when the tool cannot run here, is not set up (a failure instead
//! when [`REQUIRE_EXTERNAL_VAR`] is 1, as in CI), is capped below n, or would not fit memory; otherwise
//! run once on the cell's own keys and recorded like any cell. One repetition: the tool times its own
//! calls, hashing included.

use super::*;
use crate::external::process::{self, Request};
use crate::kind::External;
use crate::results::SkipSubject;
use crate::results::{ExternalCell, SkipCause};

/// Set to 1 (CI does) to make a missing set-up of the external rows a failure instead of a skipped row.
pub const REQUIRE_EXTERNAL_VAR: &str = "DEDUPBENCH_REQUIRE_EXTERNAL";

/// How long one external cell may run before its process is killed and the cell recorded as failed: far
/// above the slowest cell's time (docs/notes.md).
const CELL_TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(15 * 60);

/// Non-member queries an external cell asks for at most: enough for 1000 false positives down to a rate
/// of 10⁻³ (a pure-Python filter answers in microseconds).
const MAX_QUERIES: u64 = 1_000_000;

impl Runner<'_> {
    /// Runs (or skips, saying why) the cell of external row `kind` at n.
    pub(super) fn run_external_cell(
        &mut self,
        kind: &dyn Kind,
        external: External,
        n: u64,
    ) -> Result<()> {
        let id = kind.id();
        let config = self.config(self.source.distinct_members(n));
        let model_bytes = kind.predicted_memory(&config).footprint_bytes;
        let budget_bytes = self.plan.memory_budget_bytes;
        let skip = move |cause: SkipCause, reason: String| {
            Record::Skipped(SkippedCell {
                subject: SkipSubject::Cell(id.to_string()),
                n,
                projected_bytes: model_bytes,
                budget_bytes,
                reason,
                cause,
            })
        };
        if let Some(reason) = external.unavailable {
            return self.record(skip(SkipCause::Unavailable, reason.to_string()));
        }
        let human = |n: u64| crate::units::human_count(n as f64);
        if n > external.max_keys {
            let reason = format!(
                "capped: {id} runs up to n = {} ({} calls cost up to microseconds per key, and the process holds every key as an object)",
                human(external.max_keys),
                external.language.name()
            );
            return self.record(skip(SkipCause::Capped, reason));
        }
        if let Some(cap) = self.plan.external_max_keys.filter(|cap| n > *cap) {
            let reason = format!(
                "capped in the default quick suite at n = {} to keep it within 3 minutes; `--structures {id}` runs it up to n = {}",
                human(cap),
                human(external.max_keys)
            );
            return self.record(skip(SkipCause::Capped, reason));
        }
        if let Some(missing) = process::missing(external.language) {
            if std::env::var(REQUIRE_EXTERNAL_VAR).is_ok_and(|v| v == "1") {
                return Err(Error::External {
                    id: id.to_string(),
                    message: format!("{missing}; {REQUIRE_EXTERNAL_VAR}=1 makes this a failure"),
                });
            }
            return self.record(skip(SkipCause::NotSetUp, format!("not set up: {missing}")));
        }
        let peak_bytes = kind.predicted_peak_bytes(&config) * 1.05;
        let need = Need {
            subject: SkipSubject::Cell(id.to_string()),
            n,
            peak_bytes,
            projected_bytes: model_bytes,
            what: "its process needs at peak",
        };
        if !self.fits(need)? {
            return Ok(());
        }
        let queries = self.source.non_member_count(
            self.plan
                .non_member_queries(kind.predicted_fpr(&config))
                .min(MAX_QUERIES),
        );
        let label = format!(
            "{id} n={} (own process)",
            crate::units::human_count(n as f64)
        );
        self.progress.start(&label, 1);
        let request = Request {
            id,
            language: external.language,
            n,
            queries,
            fpr: self.plan.fpr,
            seed: self.plan.seed,
            heap_limit_bytes: peak_bytes as u64,
        };
        let outcome = process::run(
            &request,
            self.source.members(n)?,
            self.source.non_members(queries)?,
            self.stop,
            CELL_TIME_LIMIT,
        );
        self.progress.advance(1);
        self.progress.finish();
        if self.stopped() {
            return Err(interrupted_error());
        }
        let outcome = match outcome {
            Ok(outcome) => outcome,
            // The tool failed (an exception, the JVM out of memory, killed past the time limit): recorded
            // with what it said, the run goes on, and exits 1 at the end; resuming runs the cell again.
            Err(e @ Error::External { .. }) => {
                self.failures.push(e.to_string());
                return self.record(skip(SkipCause::Failed, e.to_string()));
            }
            Err(e) => return Err(e),
        };
        let r = outcome.report;
        let peak_rss = r.peak_rss_bytes.unwrap_or(0).max(0) as u64;
        if r.false_negatives > 0 {
            self.failures.push(format!(
                "{id} at n = {n}: {} false negatives",
                r.false_negatives
            ));
        }
        let once = |x: f64| crate::stats::Summary {
            median: x,
            min: x,
            max: x,
        };
        let interval = wilson(r.n_false_positives, r.n_non_member_queries, 0.95);
        let record = CellRecord {
            run: self.run_params.clone(),
            structure: id.to_string(),
            peer: true,
            exact: kind.exact(),
            n,
            n_distinct: r.n_distinct,
            n_reported_new: r.n_reported_new,
            reps: 1,
            geometry: crate::membership::Geometry {
                bits: r.bits,
                hashes: r.hashes,
                slices: None,
            },
            insert_ns_per_key: once(r.insert_ns_per_key),
            hash_ns_per_key: once(0.0),
            // Not separable from the insert: the tool hashes inside its own calls.
            probe_insert_ns_per_key: once(r.insert_ns_per_key),
            member_query_ns_per_key: once(r.member_query_ns_per_key),
            non_member_query_ns_per_key: once(r.non_member_query_ns_per_key),
            n_member_queries: r.n_member_queries,
            false_negatives: r.false_negatives,
            n_non_member_queries: r.n_non_member_queries,
            n_false_positives: r.n_false_positives,
            observed_fpr: r.n_false_positives as f64 / r.n_non_member_queries.max(1) as f64,
            observed_fpr_wilson95: interval,
            expected_fpr: r.expected_fpr,
            theory_in_interval: interval.contains(r.expected_fpr),
            fill_fpr: None,
            fill_fpr_in_interval: None,
            bytes_held: r.bytes,
            heap_requested_bytes: r.bytes as i64,
            heap_footprint_bytes: r.bytes as i64,
            model_heap_bytes: model_bytes,
            model_footprint_bytes: model_bytes,
            rss_before_bytes: 0,
            rss_after_bytes: peak_rss,
            rss_peak_bytes: peak_rss,
            bits_per_key: r.bytes as f64 * 8.0 / r.n_distinct.max(1) as f64,
            wall_s: outcome.wall_s,
            threads: 1,
            parallel_insert_ns_per_key: None,
            parallel_owner_writes: false,
            timed_per_key: true,
            batched_insert_ns_per_key: None,
            batched_member_query_ns_per_key: None,
            batched_non_member_query_ns_per_key: None,
            memory_floor_ns_per_key: None,
            memory_floor_array_bytes: None,
            memory_floor_reads_ns_per_key: None,
            anon_huge_pages_bytes: 0,
            external: Some(ExternalCell {
                language: external.language,
                runtime: r.runtime,
                library: r.library,
                bytes_method: r.bytes_method,
                heap_delta_bytes: r.heap_delta_bytes,
                timing: r.timing,
            }),
        };
        self.record(Record::Cell(record))
    }
}

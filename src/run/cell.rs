//! One grid cell: sized and checked against the memory limit before anything is allocated, then built,
//! queried and measured over its repetitions (hashing and probing timed apart, the parallel build and
//! the memory floor beside them), and recorded.

use super::pass::PassKeys;
use super::*;
use crate::hash::KeyHasher;
use crate::membership::CallPath;
use crate::results::SkipCause;
use crate::results::SkipSubject;
use crate::stats::Summary;

impl Runner<'_> {
    /// Runs one grid cell and records it (measured, or skipped when it does not fit memory or lies past the
    /// default full suite's cap).
    pub fn run_cell(&mut self, kind: &dyn Kind, n: u64) -> Result<()> {
        if let Some(external) = kind.external() {
            return self.run_external_cell(kind, external, n);
        }
        // Structures are sized for the distinct keys they will hold (a file's lines may repeat).
        let config = self.config(self.source.distinct_members(n));
        let model = kind.predicted_memory(&config);
        // The peak while building (hashbrown holds its old table as it grows), plus 5% for allocator slack.
        let need = Need {
            subject: SkipSubject::Cell(kind.id().to_string()),
            n,
            peak_bytes: kind.predicted_peak_bytes(&config) * 1.05,
            projected_bytes: model.footprint_bytes,
            what: "needs at peak",
        };
        if !self.fits(need)? {
            return Ok(());
        }
        // After the memory check: a cell that could not run here anyway is recorded as over budget.
        if let Some(cap) = self
            .plan
            .full_suite_max_keys
            .filter(|cap| n > *cap && !kind.descriptor().at_full_suite_top)
        {
            let id = kind.id();
            return self.record(Record::Skipped(SkippedCell {
                subject: SkipSubject::Cell(id.to_string()),
                n,
                projected_bytes: model.footprint_bytes,
                budget_bytes: self.plan.memory_budget_bytes,
                reason: format!(
                    "capped in the default full suite at n = {} to keep it within 45 minutes; `bench --suite full --structures {id} --scales {n}` runs it",
                    crate::units::human_count(cap as f64),
                ),
                cause: SkipCause::Capped,
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
        let (mut batched_insert, mut batched_member, mut batched_non_member) =
            (Vec::new(), Vec::new(), Vec::new());
        let mut parallel = Vec::new();
        let mut parallel_owner_writes = false;
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
                PassKeys::Members(n),
                CallPath::PerKey,
            )?;
            build.probe_ns += construct_ns;
            let heap = heap_snapshot().since(&heap_before);
            // The first repetition checks every member (an even sample above MEMBER_CHECK_CAP); later ones
            // time a prefix.
            let member_keys = if rep == 0 {
                PassKeys::MemberSample {
                    n,
                    count: n.min(MEMBER_CHECK_CAP),
                }
            } else {
                PassKeys::Members(n.min(self.plan.timing_queries_cap * 5))
            };
            let members = self.pass(
                &label,
                "query members",
                None,
                Some(structure.as_ref()),
                member_keys,
                CallPath::PerKey,
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
                PassKeys::NonMembers { count, deadline },
                CallPath::PerKey,
            )?;
            insert.push(build.total_per_key());
            hash.push(build.hash_per_key());
            probe.push(build.probe_per_key());
            member_query.push(members.total_per_key());
            non_member_query.push(non_members.total_per_key());
            if rep == 0 {
                fill_fpr = structure.fill_fpr();
                huge_pages = crate::mem::anon_huge_page_bytes();
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
            let batch_path = structure.batch_path();
            let word_array = structure.word_array().is_some();
            drop(structure);
            machine::release_free_heap();
            // After the structure is gone, so its array and the floor's are never held together.
            if rep == 0 && word_array && n >= 1_000_000 {
                floor = self.memory_floor(config)?;
            }
            if batch_path {
                let batched = self.batched_timings(kind, config, n, timing_queries, &label)?;
                if batched.reported_new != build.hits {
                    self.failures.push(format!(
                        "{} at n = {n}: the batched build called {} keys new, the per-key build {}",
                        kind.id(),
                        batched.reported_new,
                        build.hits
                    ));
                }
                batched_insert.push(batched.insert_ns);
                batched_member.push(batched.member_query_ns);
                batched_non_member.push(batched.non_member_query_ns);
            }
            if self.plan.threads > 1 && rep == 0 {
                if let Some((ns, with_parts)) = self.parallel_build(kind, config, n)? {
                    parallel.push(ns);
                    parallel_owner_writes = with_parts;
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
            run: self.run_params.clone(),
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
            parallel_owner_writes,
            timed_per_key: true,
            batched_insert_ns_per_key: (!batched_insert.is_empty())
                .then(|| summarize(&batched_insert)),
            batched_member_query_ns_per_key: (!batched_member.is_empty())
                .then(|| summarize(&batched_member)),
            batched_non_member_query_ns_per_key: (!batched_non_member.is_empty())
                .then(|| summarize(&batched_non_member)),
            memory_floor_ns_per_key: floor.map(|f| f.reads.median),
            memory_floor_reads_ns_per_key: floor.map(|f| f.reads),
            memory_floor_array_bytes: floor.map(|f| f.array_bytes),
            anon_huge_pages_bytes: huge_pages,
            external: None,
        })
    }

    /// Times the batch API on a fresh build of the same keys (construction included, as for the per-key
    /// build), then on members and non-members (a prefix of `queries` of each, as later repetitions do).
    fn batched_timings(
        &mut self,
        kind: &dyn Kind,
        config: &BuildConfig,
        n: u64,
        queries: u64,
        label: &str,
    ) -> Result<BatchedTimings> {
        let constructed = Instant::now();
        let mut structure = kind.build(config)?;
        let construct_ns = constructed.elapsed().as_nanos() as u64;
        let mut build = self.pass(
            label,
            "insert (batched)",
            Some(structure.as_mut()),
            None,
            PassKeys::Members(n),
            CallPath::Batched,
        )?;
        build.probe_ns += construct_ns;
        let members = self.pass(
            label,
            "query members (batched)",
            None,
            Some(structure.as_ref()),
            PassKeys::Members(n.min(self.plan.timing_queries_cap * 5)),
            CallPath::Batched,
        )?;
        let deadline =
            Some(Instant::now() + std::time::Duration::from_secs_f64(self.plan.query_time_cap_s));
        let non_members = self.pass(
            label,
            "query non-members (batched)",
            None,
            Some(structure.as_ref()),
            PassKeys::NonMembers {
                count: queries,
                deadline,
            },
            CallPath::Batched,
        )?;
        drop(structure);
        machine::release_free_heap();
        Ok(BatchedTimings {
            reported_new: build.hits,
            insert_ns: build.total_per_key(),
            member_query_ns: members.total_per_key(),
            non_member_query_ns: non_members.total_per_key(),
        })
    }

    /// Builds a fresh structure with [`RunPlan::threads`] threads through its concurrent inserter (for
    /// kinds that have one) with owner-writes (`run/owners.rs`: each thread hashes its own keys and writes
    /// the part of the array it owns with plain stores; a key whose bits span parts goes in with atomic
    /// ors); returns the slowest thread's timed hash + insert + routing nanoseconds per key (generation and
    /// waits for room in another thread's inbox excluded), and whether the structure has parts (owner-writes
    /// proper; `bloom` with k > 1 has none and went in with atomic ors).
    /// Atomic ors per key do not scale for `blocked`: eight locked ors per key on one cache line made two
    /// threads 1.17× one at 10⁹ keys.
    fn parallel_build(
        &mut self,
        kind: &dyn Kind,
        config: &BuildConfig,
        n: u64,
    ) -> Result<Option<(f64, bool)>> {
        if !matches!(self.source.members, source::Members::Generated) {
            return Ok(None);
        }
        let mut structure = kind.build(config)?;
        let hasher = structure.hasher();
        let threads = self.plan.threads as u64;
        let Some(inserter) = structure.concurrent_inserter() else {
            return Ok(None);
        };
        let with_parts = inserter
            .part_of(Default::default(), threads as usize)
            .is_some();
        let inserters = [inserter];
        // The batch size of the one-thread build it is compared with.
        let per_thread = self.owned_build(n, threads, BATCH_KEYS, hasher, &inserters, None);
        drop(inserters);
        let per_thread = per_thread?;
        structure.add_inserted(per_thread.iter().map(|t| t.hits[0]).sum());
        let slowest_ns = per_thread
            .iter()
            .map(|t| t.hash_ns + t.probe_ns[0])
            .max()
            .unwrap_or(0);
        Ok(Some((slowest_ns as f64 / n.max(1) as f64, with_parts)))
    }

    /// The memory floor at `config`'s n: one random line read per key for up to [`FLOOR_KEYS`] keys (hashed
    /// once, untimed), read [`FLOOR_REPEATS`] times in one array the size of a `blocked` filter for n and
    /// the run's rate (huge pages asked for, every page touched); the median and spread of the repeats.
    /// Measured once per n and shared by every cell at n, so the structures compared against it are
    /// compared against the same figure. The first repeat also warms the page tables. `None` when the
    /// array would not fit the memory limit (no floor is recorded then).
    fn memory_floor(&mut self, config: &BuildConfig) -> Result<Option<MemoryFloor>> {
        let n = config.expected_keys;
        if let Some((_, floor)) = self.floors.iter().find(|(at, _)| *at == n) {
            return Ok(Some(*floor));
        }
        let bits = crate::registry::role(crate::kind::Role::BlockedBloom)
            .planned_geometry(config)
            .bits
            .unwrap_or(n * 10);
        let array_bytes = bits.div_ceil(512) * 64;
        let keys_bytes = n.min(FLOOR_KEYS) * std::mem::size_of::<crate::hash::KeyHash>() as u64;
        if (array_bytes + keys_bytes) as f64 * 1.05 > self.memory_limit() as f64 {
            return Ok(None);
        }
        let words = crate::measure::floor::line_array(array_bytes);
        let lines = (words.len() / 8).max(1) as u64;
        // Hashed with another seed than the structures', so the reads land apart from their probes.
        let hasher = KeyHasher::default_with_seed(self.plan.seed ^ 0xF100);
        let mut keys = self
            .source
            .generated_non_members(0..n.min(FLOOR_KEYS))
            .with_batch_keys(BATCH_KEYS);
        let mut hashes = Vec::new();
        while keys.next_hashed(&mut self.batch, hasher)? > 0 {
            hashes.extend_from_slice(self.batch.hashes());
        }
        let mut per_read = Vec::new();
        let mut sum = 0u64;
        for _ in 0..FLOOR_REPEATS {
            let t0 = Instant::now();
            sum = sum.wrapping_add(crate::measure::floor::read_lines(&words, lines, &hashes));
            per_read.push(t0.elapsed().as_nanos() as f64 / hashes.len().max(1) as f64);
        }
        std::hint::black_box(sum);
        drop(words);
        machine::release_free_heap();
        let floor = MemoryFloor {
            array_bytes: lines * 64,
            reads: summarize(&per_read),
        };
        self.floors.push((n, floor));
        Ok(Some(floor))
    }
}

/// The memory floor at one n.
#[derive(Clone, Copy, Debug)]
pub(super) struct MemoryFloor {
    array_bytes: u64,
    reads: Summary,
}

/// Keys of the memory floor (hashed once: 16 bytes each).
const FLOOR_KEYS: u64 = 2_000_000;
/// Times the floor reads its keys.
const FLOOR_REPEATS: usize = 5;

/// What the batch API measured in one repetition.
struct BatchedTimings {
    reported_new: u64,
    insert_ns: f64,
    member_query_ns: f64,
    non_member_query_ns: f64,
}

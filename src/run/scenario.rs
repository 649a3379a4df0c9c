//! The second article's scenario ("deduplicating 6 billion URLs with a 1 GB bitmap"): n distinct generated
//! URLs go, in one streaming pass on every core, into
//! 1. the raw bitmap of one bit per URL (6·10⁹ bits = 715 MiB),
//! 2. the best Bloom filter a 1 GiB budget allows (k chosen optimally for that m and n: k = 1 at 6·10⁹), and
//! 3. a cache-blocked filter sized for the target rate (1%: ≈ 7.6 GB),
//!
//! then every structure answers the same non-members (10⁸ at full size) and its observed rate is set against
//! its theory. The ratios of the article are kept at any n (bits per key 1, 1 GiB per 6·10⁹ keys, p), so a
//! small n tests the same code quickly. Keys are never held: each thread generates its index range.
//!
//! The build is owner-writes: every array is cut into one part per thread, and each key's hash goes to the
//! thread that owns the part holding its bits (one word for the bitmap and a k = 1 filter, one block for
//! `blocked`), which sets them with plain loads and stores. No locked instruction is needed (locked ors
//! cost several times more per key at 6·10⁹: docs/notes.md), and the arrays are bit for bit
//! those of a one-thread build (tested). A structure whose keys span parts goes in with atomic ors.

use super::owners::{join_showing_progress, sum_timings, Timings};
use super::{interrupted_error, Need, Runner, BATCH_KEYS};
use crate::hash::KeyHasher;
use crate::keys::{KeyBatch, KeyPipeline};
use crate::kind::BuildConfig;
use crate::kind::Role;
use crate::measure::machine;
use crate::membership::Membership;
use crate::registry::find;
use crate::registry::role_id;
use crate::results::{Record, ScenarioRecord, ScenarioStructure};
use crate::results::{SkipSubject, ARTICLE_BUDGET_BYTES, ARTICLE_N};
use crate::stats::wilson;
use crate::Result;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Keys each thread of the bulk build generates and routes at a time: twice the harness's [`BATCH_KEYS`].
/// Between two batches the inserts evict the generator's tables from the core's caches, and a longer
/// batch pays for fetching them again over more URLs; ≈ 630 KB of URLs still fit a 1 MiB L2 for the hash
/// that reads them next. docs/notes.md (2026-12-06) give the figures for 4096, 8192 and 16,384.
const BUILD_BATCH_KEYS: usize = 2 * BATCH_KEYS;

impl Runner<'_> {
    /// Runs the scenario at `n` keys and records it (or records why it could not run).
    pub fn run_seed_scenario(&mut self, n: u64) -> Result<()> {
        let started = Instant::now();
        let budget_bytes = ((ARTICLE_BUDGET_BYTES as f64) * n as f64 / ARTICLE_N as f64)
            .round()
            .max(8.0) as u64;
        let mut bitmap_config = BuildConfig::new(n, self.plan.fpr, self.plan.seed);
        bitmap_config.array_bits = Some(n);
        let mut bloom_config = BuildConfig::new(n, self.plan.fpr, self.plan.seed);
        bloom_config.array_bits = Some(budget_bytes * 8);
        let blocked_config = BuildConfig::new(n, self.plan.fpr, self.plan.seed);
        let plan = [
            (
                role_id(Role::RawBitmap),
                "the raw bitmap: one bit per URL",
                bitmap_config,
            ),
            (
                role_id(Role::ReferenceBloom),
                "the best Bloom filter in the budget",
                bloom_config,
            ),
            (
                role_id(Role::BlockedBloom),
                "a cache-blocked filter sized for the target rate",
                blocked_config,
            ),
        ];
        let predicted: f64 = plan
            .iter()
            .map(|(id, _, c)| {
                find(id)
                    .map(|k| k.predicted_memory(c).footprint_bytes)
                    .unwrap_or(0.0)
            })
            .sum();
        let need = Need {
            subject: SkipSubject::Scenario,
            n,
            peak_bytes: predicted,
            projected_bytes: predicted,
            what: "the three structures need",
        };
        if !self.fits(need)? {
            return Ok(());
        }
        let mut structures: Vec<Box<dyn Membership>> = Vec::new();
        for (id, _, config) in &plan {
            structures.push(find(id)?.build(config)?);
        }
        let threads = self.plan.threads.max(1) as u64;
        let hasher = structures[0].hasher();
        assert!(
            structures.iter().all(|s| s.hasher() == hasher),
            "the scenario hashes once for its three structures"
        );

        // Build: one pass, every thread generating and hashing its own index range once for all three.
        let build_started = Instant::now();
        let build = {
            let (a, rest) = structures.split_at_mut(1);
            let (b, c) = rest.split_at_mut(1);
            let inserters = [
                a[0].concurrent_inserter().ok_or_else(|| {
                    crate::Error::invalid("scenario", "bitmap has no shared inserter")
                })?,
                b[0].concurrent_inserter().ok_or_else(|| {
                    crate::Error::invalid("scenario", "bloom has no shared inserter")
                })?,
                c[0].concurrent_inserter().ok_or_else(|| {
                    crate::Error::invalid("scenario", "blocked has no shared inserter")
                })?,
            ];
            let label = "article-6e9: insert";
            sum_timings(&self.owned_build(
                n,
                threads,
                BUILD_BATCH_KEYS,
                hasher,
                &inserters,
                Some(label),
            )?)
        };
        for (i, s) in structures.iter_mut().enumerate() {
            s.add_inserted(build.hits[i]);
        }
        let build_wall_s = build_started.elapsed().as_secs_f64();

        // Queries: the same non-members for all three.
        let queries = (n / 60).clamp(
            1_000_000.min(n.max(1) * 10),
            self.plan.query_cap.max(100_000_000),
        );
        let query_started = Instant::now();
        let refs: Vec<&dyn Membership> = structures.iter().map(|s| s.as_ref()).collect();
        let answers = self.parallel_pass(
            "article-6e9: query non-members",
            queries,
            threads,
            hasher,
            true,
            |batch, t| {
                for (i, s) in refs.iter().enumerate() {
                    let t0 = Instant::now();
                    t.hits[i] += s.contains_batch(batch);
                    t.probe_ns[i] += t0.elapsed().as_nanos() as u64;
                }
            },
        )?;
        let query_wall_s = query_started.elapsed().as_secs_f64();

        // False negatives: a strided sample of members, in every structure.
        let sample = n.min(1_000_000);
        let stride = (n / sample).max(1);
        let mut batch = KeyBatch::with_capacity(BATCH_KEYS, 96);
        let mut missing = [0u64; 3];
        let mut members = KeyPipeline::strided_members(&self.source.generator, sample, stride)
            .with_batch_keys(BATCH_KEYS);
        while members.next_hashed(&mut batch, hasher)? > 0 {
            for (i, s) in structures.iter().enumerate() {
                missing[i] += batch.len() as u64 - s.contains_batch(&batch);
            }
        }

        let mut rows = Vec::new();
        for (i, ((id, role, _), s)) in plan.iter().zip(&structures).enumerate() {
            let interval = wilson(answers.hits[i], queries, 0.95);
            let expected = s.expected_fpr(n);
            let g = s.geometry();
            if missing[i] > 0 {
                self.failures.push(format!(
                    "{id} in the scenario: {} false negatives",
                    missing[i]
                ));
            }
            rows.push(ScenarioStructure {
                structure: id.to_string(),
                role: role.to_string(),
                bits: g.bits.unwrap_or(0),
                hashes: g.hashes.unwrap_or(0),
                bytes: s.bytes_held(),
                insert_ns_per_key: build.probe_ns[i] as f64 / n as f64,
                query_ns_per_key: answers.probe_ns[i] as f64 / queries as f64,
                n_queries: queries,
                n_false_positives: answers.hits[i],
                observed_fpr: answers.hits[i] as f64 / queries as f64,
                observed_fpr_wilson95: interval,
                expected_fpr: expected,
                theory_in_interval: interval.contains(expected),
                n_members_checked: sample,
                false_negatives: missing[i],
            });
        }
        let (_, peak_rss_bytes) = machine::rss_bytes();
        self.record(Record::Scenario(ScenarioRecord {
            name: "seed-6e9".into(),
            n,
            threads: threads as u32,
            budget_bytes,
            wall_s: started.elapsed().as_secs_f64(),
            build_wall_s,
            query_wall_s,
            generate_ns_per_key: build.generate_ns as f64 / n as f64,
            hash_ns_per_key: build.hash_ns as f64 / n as f64,
            structures: rows,
            peak_rss_bytes,
        }))
    }

    /// Splits `[0, count)` over `threads` threads; each generates (members, or non-members when
    /// `non_members`) and hashes a batch with `hasher`, then calls `work`. Returns timings summed over threads, except the
    /// probe times, which are the slowest thread's (the pass's wall time for that structure).
    fn parallel_pass(
        &mut self,
        label: &str,
        count: u64,
        threads: u64,
        hasher: KeyHasher,
        non_members: bool,
        work: impl Fn(&KeyBatch, &mut Timings) + Sync,
    ) -> Result<Timings> {
        let done = AtomicU64::new(0);
        let generator = &self.source.generator;
        let stop = self.stop;
        self.progress.start(label, count);
        let per_thread: Vec<Timings> = std::thread::scope(|scope| {
            let (done, work) = (&done, &work);
            let workers: Vec<_> = (0..threads)
                .map(|t| {
                    scope.spawn(move || {
                        let mut timings = Timings::default();
                        let mut batch = KeyBatch::with_capacity(BATCH_KEYS, 96);
                        let range = t * count / threads..(t + 1) * count / threads;
                        let mut keys = if non_members {
                            KeyPipeline::non_members(generator, range)
                        } else {
                            KeyPipeline::members(generator, range)
                        }
                        .with_batch_keys(BATCH_KEYS);
                        while !stop.load(Ordering::Relaxed) {
                            let t0 = Instant::now();
                            let made =
                                keys.make(&mut batch).expect("generated keys cannot fail") as u64;
                            if made == 0 {
                                break;
                            }
                            let t1 = Instant::now();
                            batch.hash_all(hasher);
                            timings.generate_ns += (t1 - t0).as_nanos() as u64;
                            timings.hash_ns += t1.elapsed().as_nanos() as u64;
                            work(&batch, &mut timings);
                            done.fetch_add(made, Ordering::Relaxed);
                        }
                        timings
                    })
                })
                .collect();
            join_showing_progress(workers, done, Some(self.progress))
        });
        self.progress.finish();
        if self.stopped() {
            return Err(interrupted_error());
        }
        Ok(sum_timings(&per_thread))
    }
}

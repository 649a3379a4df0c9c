//! The hash study: where a lookup's time goes once the hash is most of it. Every keyed hash of
//! [`HashFn::ALL`] is timed on the same distinct keys at 40, 77 and 200 bytes, and builds a `bloom` and a
//! `blocked` filter at 10⁷ (and, in the full suite, 10⁹) keys whose rate on the same non-members is set
//! against the filter's theory inside a 99.9% Wilson interval: a hash that is fast but biased for these
//! filters shows there, at the sizes where a bias would matter. At 10⁹ only the hashes documented to pass
//! SMHasher build filters ([`hash_study_hashes`]).
//!
//! The filters of one size are built in one pass over the keys: each thread takes whole filters (its share
//! of the hashes), generates every key itself and inserts through the filter's batch path, so no filter is
//! shared and the keys are never held.

use super::ExperimentRun;
use crate::hash::{HashFn, KeyHasher};
use crate::keys::{KeyBatch, KeyPipeline, UrlGenerator};
use crate::kind::BuildConfig;
use crate::kind::Role;
use crate::membership::Membership;
use crate::registry::find;
use crate::registry::role_id;
use crate::results::Results;
use crate::results::SkipSubject;
use crate::results::{HashQualityRecord, HashSpeedRecord, Record};
use crate::run::plan::{
    hash_study_hashes, hash_study_sizes, sized_as_planned, Experiment, ExperimentSizes,
    HASH_KEY_BYTES,
};
use crate::run::{interrupted_error, Need, Runner, Suite, BATCH_KEYS};
use crate::stats::{summarize, wilson};
use crate::Result;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// Distinct keys timed per hash and length.
const SPEED_KEYS: usize = 4096;
/// Passes over those keys per repetition, and repetitions (interleaved across hashes).
const SPEED_PASSES: usize = 64;
const SPEED_REPS: usize = 7;
/// Non-member queries per filter: ≈ 4·10⁴ false positives at a 1% rate, whose 99.9% interval is ±1.6%
/// of the rate, so a filter 5% off its theory falls outside it (at 1%; at lower rates the interval widens).
const QUALITY_QUERIES: u64 = 4_000_000;
/// Members checked per filter for false negatives.
const MEMBERS_CHECKED: u64 = 1_000_000;
/// The filters each hash builds.
const STUDY_ROLES: [Role; 2] = [Role::ReferenceBloom, Role::BlockedBloom];

/// The experiment's registration.
pub(super) struct HashStudy;

impl ExperimentRun for HashStudy {
    fn experiment(&self) -> Experiment {
        Experiment::HashStudy
    }
    fn size(&self, sizes: &ExperimentSizes) -> u64 {
        sizes.hash_study_max_keys
    }
    /// Its smallest size: each larger one is checked (and skipped alone) as it comes.
    fn peak_bytes(&self, runner: &Runner<'_>, n: u64) -> Result<f64> {
        runner.hash_study_peak_bytes(hash_study_sizes(n)[0])
    }
    fn expected_records(&self, results: &Results) -> usize {
        let largest = sized_as_planned(results, Suite::hash_study_max_keys);
        let hashes = HashFn::ALL.len();
        hashes * HASH_KEY_BYTES.len()
            + hash_study_sizes(largest)
                .into_iter()
                .map(|n| 2 * hash_study_hashes(n).len())
                .sum::<usize>()
    }
    fn run(&self, runner: &mut Runner<'_>, largest: u64) -> Result<()> {
        runner.hash_study(largest)
    }
}

impl Runner<'_> {
    /// Runs the hash study up to `largest` keys: the speeds, then the filters at each size.
    fn hash_study(&mut self, largest: u64) -> Result<()> {
        for record in hash_speeds(&self.source.generator, self.plan.seed) {
            self.record(Record::HashSpeed(record))?;
        }
        for n in hash_study_sizes(largest) {
            let peak = self.hash_study_peak_bytes(n)?;
            let need = Need {
                subject: SkipSubject::Experiment(Experiment::HashStudy),
                n,
                peak_bytes: peak,
                projected_bytes: peak,
                what: "its filters need",
            };
            if !self.fits(need)? {
                continue;
            }
            for record in self.hash_quality(n)? {
                self.record(Record::HashQuality(record))?;
            }
        }
        Ok(())
    }

    /// Every hash's `bloom` and `blocked` at `n` keys, all held at once, by their peak-memory models.
    fn hash_study_peak_bytes(&self, n: u64) -> Result<f64> {
        let config = BuildConfig::new(n, self.plan.fpr, self.plan.seed);
        let mut one = 0.0;
        for id in STUDY_ROLES.map(role_id) {
            one += find(id)?.predicted_peak_bytes(&config);
        }
        Ok(one * hash_study_hashes(n).len() as f64 * 1.05)
    }

    /// Builds `bloom` and `blocked` with every hash at `n` keys and measures their rates.
    fn hash_quality(&mut self, n: u64) -> Result<Vec<HashQualityRecord>> {
        let (fpr, seed) = (self.plan.fpr, self.plan.seed);
        let config = BuildConfig::new(n, fpr, seed);
        let hashes = hash_study_hashes(n);
        let threads = (self.plan.threads as usize).clamp(1, hashes.len());
        let generator = &self.source.generator;
        let stop = self.stop;
        let label = format!("hash study: {} filters at n = {n}", 2 * hashes.len());
        self.progress.start(&label, n * hashes.len() as u64);
        let done = AtomicU64::new(0);
        let progress = self.progress;
        let results: Vec<Result<Vec<HashQualityRecord>>> = std::thread::scope(|scope| {
            let done = &done;
            let workers: Vec<_> = (0..threads)
                .map(|t| {
                    let mine: Vec<HashFn> =
                        hashes.iter().copied().skip(t).step_by(threads).collect();
                    let config = config.clone();
                    scope.spawn(move || {
                        study_filters(generator, &mine, &config, n, stop, &|keys| {
                            done.fetch_add(keys, Ordering::Relaxed);
                        })
                    })
                })
                .collect();
            crate::run::owners::join_showing_progress(workers, done, Some(progress))
        });
        self.progress.finish();
        let mut records = Vec::new();
        for r in results {
            records.extend(r?);
        }
        // Registry order of the hashes, bloom before blocked.
        records.sort_by_key(|r| {
            (
                HashFn::ALL.iter().position(|h| h.id() == r.hash),
                STUDY_ROLES.iter().position(|s| role_id(*s) == r.structure),
            )
        });
        Ok(records)
    }
}

/// One thread's share: a `bloom` and a `blocked` per hash of `hashes`, filled with members `[0, n)`,
/// then queried with the same non-members and members.
fn study_filters(
    generator: &UrlGenerator,
    hashes: &[HashFn],
    config: &BuildConfig,
    n: u64,
    stop: &AtomicBool,
    advance: &dyn Fn(u64),
) -> Result<Vec<HashQualityRecord>> {
    let mut filters: Vec<(HashFn, Box<dyn Membership>)> = Vec::new();
    for h in hashes {
        let mut config = config.clone();
        config.hash = *h;
        for id in STUDY_ROLES.map(role_id) {
            filters.push((*h, find(id)?.build(&config)?));
        }
    }
    let seed = config.seed;
    let mut batch = KeyBatch::with_capacity(BATCH_KEYS, 96);
    let each_key = |range: std::ops::Range<u64>, members: bool| {
        let pipeline = if members {
            KeyPipeline::members(generator, range)
        } else {
            KeyPipeline::non_members(generator, range)
        };
        pipeline.with_batch_keys(BATCH_KEYS)
    };
    let mut members = each_key(0..n, true);
    while members.make(&mut batch)? > 0 {
        if stop.load(Ordering::Relaxed) {
            return Err(interrupted_error());
        }
        for h in hashes {
            batch.hash_all(KeyHasher::new(*h, seed));
            for (_, f) in filters.iter_mut().filter(|(fh, _)| fh == h) {
                f.insert_batch(&batch);
            }
        }
        advance(batch.len() as u64 * hashes.len() as u64);
    }
    for (_, f) in filters.iter_mut() {
        f.finish_build();
    }
    let mut false_positives = vec![0u64; filters.len()];
    let mut false_negatives = vec![0u64; filters.len()];
    let queries = QUALITY_QUERIES;
    let checked = MEMBERS_CHECKED.min(n);
    for (members, range, counts) in [
        (false, 0..queries, &mut false_positives),
        (true, 0..checked, &mut false_negatives),
    ] {
        let mut keys = each_key(range, members);
        while keys.make(&mut batch)? > 0 {
            if stop.load(Ordering::Relaxed) {
                return Err(interrupted_error());
            }
            for h in hashes {
                batch.hash_all(KeyHasher::new(*h, seed));
                for (i, (fh, f)) in filters.iter().enumerate() {
                    if fh == h {
                        let found = f.contains_batch(&batch);
                        counts[i] += if members {
                            batch.len() as u64 - found
                        } else {
                            found
                        };
                    }
                }
            }
        }
    }
    Ok(filters
        .iter()
        .enumerate()
        .map(|(i, (h, f))| {
            let fp = false_positives[i];
            let interval = wilson(fp, queries, 0.999);
            let theory = f.fill_fpr().unwrap_or_else(|| f.expected_fpr(n));
            HashQualityRecord {
                hash: h.id().to_string(),
                structure: f.id().to_string(),
                n,
                queries,
                false_positives: fp,
                observed_fpr: fp as f64 / queries as f64,
                observed_fpr_wilson999: interval,
                theory_fpr: theory,
                theory_in_interval: interval.contains(theory),
                members_checked: checked,
                false_negatives: false_negatives[i],
            }
        })
        .collect())
}

/// Each hash's nanoseconds per key at each of [`HASH_KEY_BYTES`], on [`SPEED_KEYS`] distinct keys cut or
/// padded from generated URLs; repetitions are interleaved across hashes so that a slow moment of the
/// machine falls on all of them.
fn hash_speeds(generator: &UrlGenerator, seed: u64) -> Vec<HashSpeedRecord> {
    let mut records = Vec::new();
    for bytes in HASH_KEY_BYTES {
        let keys = generator.keys_of_length(SPEED_KEYS as u64, bytes as usize);
        let mut samples = vec![Vec::new(); HashFn::ALL.len()];
        for _ in 0..SPEED_REPS {
            for (i, h) in HashFn::ALL.into_iter().enumerate() {
                let started = Instant::now();
                let mut sink = 0u64;
                for _ in 0..SPEED_PASSES {
                    for key in keys.iter() {
                        // Both halves, so the 64-bit hashes pay for the finaliser that derives h2.
                        let kh = h.hash(seed, black_box(key));
                        sink ^= kh.h1 ^ kh.h2;
                    }
                }
                black_box(sink);
                let keys_hashed = (SPEED_PASSES * keys.len()) as f64;
                samples[i].push(started.elapsed().as_nanos() as f64 / keys_hashed);
            }
        }
        for (i, h) in HashFn::ALL.into_iter().enumerate() {
            records.push(HashSpeedRecord {
                hash: h.id().to_string(),
                output_bits: h.output_bits(),
                smhasher: h.smhasher().to_string(),
                smhasher_passes: h.documented_to_pass(),
                key_bytes: bytes,
                keys: keys.len() as u64,
                ns_per_key: summarize(&samples[i]),
            });
        }
    }
    records
}

//! Passes over keys: members from a cursor or non-members by index, made a batch at a time (by a second
//! thread when there is a core for it), hashed, and given to the structure, with hashing and probing
//! timed apart.

use super::*;
use crate::hash::KeyHasher;
use crate::keys::KeyPipeline;
use crate::membership::CallPath;

/// What one pass over keys measured.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct PassTiming {
    pub(super) keys: u64,
    pub(super) hash_ns: u64,
    pub(super) probe_ns: u64,
    pub(super) hits: u64,
}

impl PassTiming {
    pub(super) fn hash_per_key(&self) -> f64 {
        self.hash_ns as f64 / self.keys.max(1) as f64
    }
    pub(super) fn probe_per_key(&self) -> f64 {
        self.probe_ns as f64 / self.keys.max(1) as f64
    }
    pub(super) fn total_per_key(&self) -> f64 {
        (self.hash_ns + self.probe_ns) as f64 / self.keys.max(1) as f64
    }
}

/// Inserts every key of a hashed batch on `path`; how many were new. The one timed insert loop of the
/// harness (the grid's passes and the speed groups).
#[inline]
pub(super) fn insert_hashed_batch(s: &mut dyn Membership, batch: &KeyBatch, path: CallPath) -> u64 {
    match path {
        CallPath::Batched => s.insert_batch(batch),
        CallPath::PerKey => {
            let mut new = 0u64;
            for (key, hash) in batch.iter() {
                new += u64::from(s.insert_hashed(key, hash));
            }
            new
        }
    }
}

/// Looks up every key of a hashed batch on `path`; how many were reported present.
#[inline]
pub(super) fn query_hashed_batch(s: &dyn Membership, batch: &KeyBatch, path: CallPath) -> u64 {
    match path {
        CallPath::Batched => s.contains_batch(batch),
        CallPath::PerKey => batch
            .iter()
            .filter(|(key, hash)| s.contains_hashed(key, *hash))
            .count() as u64,
    }
}

/// Which keys a pass touches.
pub(super) enum PassKeys {
    Members(u64),
    /// `count` of the first n members, spread evenly (the false-negative check of very large cells).
    MemberSample {
        n: u64,
        count: u64,
    },
    /// The grid's non-members (generated, or a checked file's).
    NonMembers {
        count: u64,
        deadline: Option<Instant>,
    },
    /// Generated non-members `[0, count)`, whatever the grid's are (the experiments' and the sweep's).
    GeneratedNonMembers {
        count: u64,
        deadline: Option<Instant>,
    },
}

/// Above this many keys, the first repetition checks an evenly spread sample of this many members for
/// false negatives instead of all of them (a pass over 10⁹ members costs minutes of key generation).
pub const MEMBER_CHECK_CAP: u64 = 20_000_000;

impl Runner<'_> {
    /// One timed pass: keys are made untimed, then hashed (timed) and inserted or queried (timed).
    ///
    /// Hashing a URL whose bytes must first come from the core that made them costs far more than one
    /// already in this core's cache (docs/notes.md), hence the untimed `touch`.
    ///
    /// With more than one core, a second thread makes the keys while this one hashes and probes (batches
    /// go back and forth over two channels), so a pass costs max(generation, work) of wall time instead of
    /// their sum. Generation is never inside the timed region either way.
    pub(super) fn pass(
        &mut self,
        label: &str,
        phase: &str,
        mut insert_into: Option<&mut dyn Membership>,
        query: Option<&dyn Membership>,
        keys: PassKeys,
        path: CallPath,
    ) -> Result<PassTiming> {
        let hasher = insert_into
            .as_ref()
            .map(|s| s.hasher())
            .or(query.map(|s| s.hasher()))
            .unwrap_or(KeyHasher::default_with_seed(0));
        let (total, deadline) = match &keys {
            PassKeys::Members(n) => (*n, None),
            PassKeys::MemberSample { count, .. } => (*count, None),
            PassKeys::NonMembers { count, deadline } => {
                (self.source.non_member_count(*count), *deadline)
            }
            PassKeys::GeneratedNonMembers { count, deadline } => (*count, *deadline),
        };
        self.progress.start(&format!("{label}: {phase}"), total);
        // Hashing is timed in `work`, so the pipeline only makes the keys here.
        let mut producer = match keys {
            PassKeys::Members(n) => self.source.members(n)?,
            PassKeys::MemberSample { n, count } => self.source.member_sample(n, count)?,
            PassKeys::NonMembers { count, .. } => self.source.non_members(count)?,
            PassKeys::GeneratedNonMembers { count, .. } => {
                self.source.generated_non_members(0..count)
            }
        }
        .with_batch_keys(BATCH_KEYS);
        let mut timing = PassTiming::default();
        let stop = self.stop;
        let progress = self.progress;
        let mut work = |batch: &mut KeyBatch, timing: &mut PassTiming| -> bool {
            // A batch made by the other thread is still in that core's cache: pull it over untimed, so
            // hashing costs what it costs on a key the caller just produced (as with one thread).
            std::hint::black_box(batch.touch());
            let t0 = Instant::now();
            batch.hash_all(hasher);
            let t1 = Instant::now();
            let hits = match (insert_into.as_deref_mut(), query) {
                (Some(s), _) => insert_hashed_batch(s, batch, path),
                (None, Some(s)) => query_hashed_batch(s, batch, path),
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
                        match producer.make(&mut batch) {
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
                if producer.make(&mut batch)? == 0 || !work(&mut batch, &mut timing) {
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

    /// Counts generated non-members `[0, count)` reported present (for experiments), with a deadline.
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
            PassKeys::GeneratedNonMembers { count, deadline },
            CallPath::Batched,
        )?;
        Ok((t.hits, t.keys))
    }

    /// Runs `op` over generated members `[from, to)` a hashed batch at a time (for experiments); returns
    /// the sum of what `op` returns. Stops with an error when interrupted.
    pub(super) fn over_members(
        &mut self,
        hasher: KeyHasher,
        from: u64,
        to: u64,
        mut op: impl FnMut(&KeyBatch) -> u64,
    ) -> Result<u64> {
        // Experiments run on generated keys, whatever the grid's members are.
        let mut members =
            KeyPipeline::members(&self.source.generator, from..to).with_batch_keys(BATCH_KEYS);
        let mut total = 0;
        while members.next_hashed(&mut self.batch, hasher)? > 0 {
            if self.stop.load(Ordering::Relaxed) {
                return Err(interrupted_error());
            }
            total += op(&self.batch);
        }
        Ok(total)
    }

    /// Runs `op` over the first `count` generated non-members a hashed batch at a time (for
    /// experiments); returns the sum of what `op` returns.
    pub(super) fn over_non_members(
        &mut self,
        hasher: KeyHasher,
        count: u64,
        mut op: impl FnMut(&KeyBatch) -> u64,
    ) -> Result<u64> {
        let mut keys =
            KeyPipeline::non_members(&self.source.generator, 0..count).with_batch_keys(BATCH_KEYS);
        let mut total = 0;
        while keys.next_hashed(&mut self.batch, hasher)? > 0 {
            if self.stop.load(Ordering::Relaxed) {
                return Err(interrupted_error());
            }
            total += op(&self.batch);
        }
        Ok(total)
    }

    /// Inserts generated members `[from, to)` (for experiments); returns how many were new.
    pub fn insert_members(&mut self, s: &mut dyn Membership, from: u64, to: u64) -> Result<u64> {
        let new = self.over_members(s.hasher(), from, to, |batch| s.insert_batch(batch))?;
        s.finish_build();
        Ok(new)
    }

    /// Counts generated members `[from, to)` found (for experiments).
    pub fn count_members_found(&mut self, s: &dyn Membership, from: u64, to: u64) -> Result<u64> {
        self.over_members(s.hasher(), from, to, |batch| s.contains_batch(batch))
    }

    /// Removes generated members `[from, to)` (for experiments); returns how many were removed.
    pub fn remove_members(&mut self, s: &mut dyn Membership, from: u64, to: u64) -> Result<u64> {
        let hasher = s.hasher();
        let removable = s
            .as_removable()
            .ok_or_else(|| Error::invalid("structure", "does not support removal"))?;
        self.over_members(hasher, from, to, |batch| removable.remove_batch(batch))
    }
}

//! The harness's one parallel build, [`Runner::owned_build`], with owner-writes: every array is cut into
//! one part per thread, each thread generates and hashes its own keys, and each hash goes to the thread
//! that owns the part holding its bits, which sets them with plain loads and stores (no locked
//! instruction). A structure whose keys span parts (`bloom` with k > 1) goes in with atomic ors. The grid's
//! parallel build and the 6·10⁹ scenario's bulk build (three structures at once) both use it; atomic ors
//! per key cost `blocked` eight locked instructions on one line and kept two threads at 1.17× one.
//!
//! Up to [`MAX_STRUCTURES`] structures share one pass over the keys.

use super::{interrupted_error, Runner};
use crate::hash::{KeyHash, KeyHasher};
use crate::keys::{KeyBatch, KeyPipeline};
use crate::membership::ConcurrentInsert;
use crate::Result;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError, TrySendError};
use std::time::{Duration, Instant};

/// Structures one pass can build or query together.
pub(super) const MAX_STRUCTURES: usize = 3;

impl Runner<'_> {
    /// Inserts the generated members `[0, n)` hashed with `hasher` into every inserter, `threads` threads each
    /// generating its own index range, `batch_keys` keys at a time, and writing as `writes` says. Returns
    /// each thread's timings (a
    /// structure's probe time is its inserts, and under owner-writes its routing and the parcels it
    /// applied); shows progress under `label` when given.
    pub(super) fn owned_build(
        &mut self,
        n: u64,
        threads: u64,
        batch_keys: usize,
        hasher: KeyHasher,
        inserters: &[Box<dyn ConcurrentInsert + '_>],
        label: Option<&str>,
    ) -> Result<Vec<Timings>> {
        assert!(
            inserters.len() <= MAX_STRUCTURES,
            "at most {MAX_STRUCTURES} structures per pass"
        );
        let done = AtomicU64::new(0);
        let generator = &self.source.generator;
        let stop = self.stop;
        let parts = threads as usize;
        let (senders, mut receivers): (Vec<SyncSender<Parcel>>, Vec<Option<Receiver<Parcel>>>) = (0
            ..parts)
            .map(|_| {
                let (tx, rx) = sync_channel(PARCELS_IN_FLIGHT);
                (tx, Some(rx))
            })
            .unzip();
        if let Some(label) = label {
            self.progress.start(label, n);
        }
        let per_thread: Vec<Timings> = std::thread::scope(|scope| {
            let done = &done;
            let workers: Vec<_> = (0..parts)
                .map(|t| {
                    let inbox = receivers[t].take().expect("one receiver per thread");
                    let outboxes: Vec<Option<SyncSender<Parcel>>> = (0..parts)
                        .map(|p| (p != t).then(|| senders[p].clone()))
                        .collect();
                    scope.spawn(move || {
                        let mut owner = Owner::new(inserters, t, inbox, outboxes);
                        let mut batch = KeyBatch::with_capacity(batch_keys, 96);
                        let range = t as u64 * n / threads..(t as u64 + 1) * n / threads;
                        let mut members =
                            KeyPipeline::members(generator, range).with_batch_keys(batch_keys);
                        while !stop.load(Ordering::Relaxed) {
                            let t0 = Instant::now();
                            let made = members
                                .make(&mut batch)
                                .expect("generated keys cannot fail")
                                as u64;
                            if made == 0 {
                                break;
                            }
                            let t1 = Instant::now();
                            batch.hash_all(hasher);
                            owner.timings.generate_ns += (t1 - t0).as_nanos() as u64;
                            owner.timings.hash_ns += t1.elapsed().as_nanos() as u64;
                            owner.route(batch.hashes());
                            owner.apply_waiting();
                            done.fetch_add(made, Ordering::Relaxed);
                        }
                        owner.finish()
                    })
                })
                .collect();
            drop(senders);
            join_showing_progress(workers, done, label.map(|_| self.progress))
        });
        if label.is_some() {
            self.progress.finish();
        }
        if self.stopped() {
            return Err(interrupted_error());
        }
        Ok(per_thread)
    }
}

/// Per-thread timings of one pass.
#[derive(Default, Clone)]
pub(super) struct Timings {
    pub(super) generate_ns: u64,
    pub(super) hash_ns: u64,
    pub(super) probe_ns: [u64; MAX_STRUCTURES],
    pub(super) hits: [u64; MAX_STRUCTURES],
}

/// Parcels of hashes a thread may have waiting for it (a bound on the memory in flight: each parcel holds
/// at most a batch's 16-byte hashes, 128 KiB at 8192 keys; with the spare parcels, 6 MiB per thread).
pub(super) const PARCELS_IN_FLIGHT: usize = 16;

/// Hashes of one structure's keys whose bits lie in the receiving thread's part.
pub(super) type Parcel = (usize, Vec<KeyHash>);

/// Emptied parcels a thread keeps for its next splits: enough for every parcel in flight to it.
const SPARE_PARCELS: usize = 2 * PARCELS_IN_FLIGHT;

/// One thread of the owner-writes build: it owns part `part` of every array.
///
/// Its invariant, which makes [`ConcurrentInsert::insert_owned`] sound here: it calls `insert_owned` only
/// with hashes of its own part (split by [`ConcurrentInsert::split_by_part`], which every thread runs
/// with the same structure and part count), and no thread reads the arrays until every thread is joined.
pub(super) struct Owner<'a, 'b> {
    inserters: &'a [Box<dyn ConcurrentInsert + 'b>],
    part: usize,
    inbox: Receiver<Parcel>,
    /// A sender to every other thread (`None` at this thread's own index).
    outboxes: Vec<Option<SyncSender<Parcel>>>,
    pub(super) timings: Timings,
    /// Time spent inside [`Owner::send`] waiting for room in a full inbox (yielding, or applying this
    /// thread's own parcels, which [`Owner::apply`] times itself): not part of the sending structure's
    /// routing time.
    waiting_ns: u64,
    /// Emptied parcels, reused (received ones too), so that most batches allocate no vector.
    spare: Vec<Vec<KeyHash>>,
    /// One split of a batch, a vector per part.
    by_part: Vec<Vec<KeyHash>>,
}

impl<'a, 'b> Owner<'a, 'b> {
    pub(super) fn new(
        inserters: &'a [Box<dyn ConcurrentInsert + 'b>],
        part: usize,
        inbox: Receiver<Parcel>,
        outboxes: Vec<Option<SyncSender<Parcel>>>,
    ) -> Self {
        Owner {
            inserters,
            part,
            inbox,
            by_part: Vec::with_capacity(outboxes.len()),
            outboxes,
            timings: Timings::default(),
            waiting_ns: 0,
            spare: Vec::new(),
        }
    }

    /// Under owner-writes, inserts this thread's keys of its own part and sends the others to their
    /// owners; inserts with atomic ors for structures without parts.
    pub(super) fn route(&mut self, hashes: &[KeyHash]) {
        let parts = self.outboxes.len();
        for (s, inserter) in self.inserters.iter().enumerate() {
            let t0 = Instant::now();
            let waiting_before = self.waiting_ns;
            let mut by_part = std::mem::take(&mut self.by_part);
            by_part.extend((0..parts).map(|_| {
                self.spare
                    .pop()
                    .unwrap_or_else(|| Vec::with_capacity(hashes.len() / parts + 64))
            }));
            if !inserter.split_by_part(hashes, &mut by_part) {
                self.timings.hits[s] += inserter.insert_hashes(hashes);
            } else {
                // SAFETY: these hashes lie in this thread's own part (the struct's invariant).
                self.timings.hits[s] += unsafe { inserter.insert_owned(&by_part[self.part]) };
            }
            for (p, keys) in by_part.drain(..).enumerate() {
                if p != self.part && !keys.is_empty() {
                    self.send(p, (s, keys));
                } else {
                    self.keep_spare(keys);
                }
            }
            self.by_part = by_part;
            let waited = self.waiting_ns - waiting_before;
            self.timings.probe_ns[s] += (t0.elapsed().as_nanos() as u64).saturating_sub(waited);
        }
    }

    fn keep_spare(&mut self, mut parcel: Vec<KeyHash>) {
        if self.spare.len() < SPARE_PARCELS {
            parcel.clear();
            self.spare.push(parcel);
        }
    }

    /// Sends a parcel to part `p`'s owner; while its inbox is full, applies this thread's own waiting
    /// parcels (so two threads waiting on each other both make progress).
    fn send(&mut self, p: usize, mut parcel: Parcel) {
        loop {
            let Some(outbox) = &self.outboxes[p] else {
                return;
            };
            match outbox.try_send(parcel) {
                Ok(()) => return,
                // The owner is gone (it stopped or panicked): the run is ending, drop the keys.
                Err(TrySendError::Disconnected(_)) => return,
                Err(TrySendError::Full(back)) => {
                    parcel = back;
                    let t0 = Instant::now();
                    if !self.apply_waiting() {
                        std::thread::yield_now();
                    }
                    self.waiting_ns += t0.elapsed().as_nanos() as u64;
                }
            }
        }
    }

    /// Inserts the parcels waiting in the inbox; returns whether there were any.
    pub(super) fn apply_waiting(&mut self) -> bool {
        let mut any = false;
        loop {
            match self.inbox.try_recv() {
                Ok(parcel) => {
                    self.apply(parcel);
                    any = true;
                }
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => return any,
            }
        }
    }

    fn apply(&mut self, (s, keys): Parcel) {
        let t0 = Instant::now();
        // SAFETY: a parcel holds hashes that its sender's split put in this thread's part.
        self.timings.hits[s] += unsafe { self.inserters[s].insert_owned(&keys) };
        self.timings.probe_ns[s] += t0.elapsed().as_nanos() as u64;
        self.keep_spare(keys);
    }

    /// After this thread's range: stops sending, then applies parcels until every other thread has too.
    pub(super) fn finish(mut self) -> Timings {
        self.outboxes.clear();
        while let Ok(parcel) = self.inbox.recv() {
            self.apply(parcel);
        }
        self.timings
    }
}

/// Waits for the pass's workers, advancing the progress bar (if any) by the keys they report done; a worker's panic
/// is raised again here.
pub(super) fn join_showing_progress<T>(
    workers: Vec<std::thread::ScopedJoinHandle<'_, T>>,
    done: &AtomicU64,
    progress: Option<&dyn super::Progress>,
) -> Vec<T> {
    let mut shown = 0;
    // Without a bar the workers are joined at once: no polling thread competes for the cores.
    while let Some(progress) = progress.filter(|_| workers.iter().any(|w| !w.is_finished())) {
        std::thread::sleep(Duration::from_millis(200));
        let now = done.load(Ordering::Relaxed);
        progress.advance(now - shown);
        shown = now;
    }
    workers
        .into_iter()
        .map(|w| {
            w.join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
        .collect()
}

/// Generation, hashing and hits summed over threads; each structure's probe time is the slowest thread's.
pub(super) fn sum_timings(per_thread: &[Timings]) -> Timings {
    let mut total = Timings::default();
    for t in per_thread {
        total.generate_ns += t.generate_ns;
        total.hash_ns += t.hash_ns;
        for i in 0..MAX_STRUCTURES {
            total.hits[i] += t.hits[i];
            total.probe_ns[i] = total.probe_ns[i].max(t.probe_ns[i]);
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{Profile, UrlGenerator};
    use crate::kind::BuildConfig;
    use crate::membership::Membership;
    use crate::registry::find;
    use crate::run::source::{KeySource, Members, NonMembers};
    use crate::run::{RunPlan, Silent, Suite};

    /// Two threads building three structures in one pass (bitmap, a one-probe bloom, blocked: every
    /// parcel kind, reused parcels, full inboxes) leave each array bit-for-bit as one thread's build, and
    /// the one-bit structures count the same new keys.
    #[test]
    fn two_owners_build_three_structures_as_one_thread_does() {
        let n = 300_000;
        let dir = tempfile::tempdir().unwrap();
        let plan = RunPlan::for_suite(Suite::Quick, Vec::new(), 0.01, 1 << 30, 9);
        let source = KeySource {
            generator: UrlGenerator::new(Profile::default_profile(), 9),
            members: Members::Generated,
            non_members: NonMembers::Generated,
        };
        let stop = std::sync::atomic::AtomicBool::new(false);
        let writer = crate::results::ResultsWriter::open(dir.path()).unwrap();
        let mut runner = Runner::new(plan, source, writer, &Silent, &stop).unwrap();
        let configs = [
            ("bitmap", BuildConfig::new(n, 0.01, 9)),
            ("bloom", {
                // 1.44 bits per key: k = 1, so its keys have parts.
                let mut c = BuildConfig::new(n, 0.5, 9);
                c.array_bits = Some(n * 3 / 2);
                c
            }),
            ("blocked", BuildConfig::new(n, 0.01, 9)),
        ];
        let build = |id: &str, config: &BuildConfig| find(id).unwrap().build(config).unwrap();
        let mut built: Vec<Box<dyn Membership>> =
            configs.iter().map(|(id, c)| build(id, c)).collect();
        let hasher = built[0].hasher();
        assert!(built.iter().all(|s| s.hasher() == hasher));
        let mut inserters: Vec<Box<dyn ConcurrentInsert + '_>> = Vec::new();
        for s in built.iter_mut() {
            inserters.push(s.concurrent_inserter().expect("each has an inserter"));
        }
        for i in &inserters {
            assert!(i.part_of(KeyHash::default(), 2).is_some(), "owner-writes");
        }
        let per_thread = runner
            .owned_build(n, 2, crate::run::BATCH_KEYS, hasher, &inserters, None)
            .unwrap();
        drop(inserters);
        let totals = sum_timings(&per_thread);
        for (s, ((id, config), parallel)) in configs.iter().zip(&built).enumerate() {
            let mut single = build(id, config);
            let mut new = 0;
            runner
                .over_members(hasher, 0, n, |batch| {
                    new += single.insert_batch(batch);
                    0
                })
                .unwrap();
            assert_eq!(parallel.word_array(), single.word_array(), "{id}");
            // Whether a key set a new bit depends on the order of keys sharing a block once a key has
            // several bits (`blocked`); with one bit per key it does not.
            if *id != "blocked" {
                assert_eq!(totals.hits[s], new, "{id}: new keys");
            }
        }
    }
}

//! The owner-writes parallel build: every array is cut into one part per thread, and each key's hash goes
//! to the thread that owns the part holding its bits, which sets them with plain loads and stores (no
//! locked instruction). A structure whose keys span parts goes in with atomic ors.

use crate::hash::KeyHash;
use crate::structures::ConcurrentInsert;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, TrySendError};
use std::time::{Duration, Instant};

/// Per-thread timings of one pass.
#[derive(Default, Clone)]
pub(super) struct Timings {
    pub(super) generate_ns: u64,
    pub(super) hash_ns: u64,
    pub(super) probe_ns: [u64; 3],
    pub(super) hits: [u64; 3],
}

/// Parcels of hashes a thread may have waiting for it (a bound on the memory in flight).
pub(super) const PARCELS_IN_FLIGHT: usize = 16;

/// Hashes of one structure's keys whose bits lie in the receiving thread's part.
pub(super) type Parcel = (usize, Vec<KeyHash>);

/// One thread of the owner-writes build: it owns part `part` of every array.
pub(super) struct Owner<'a, 'b> {
    pub(super) inserters: &'a [Box<dyn ConcurrentInsert + 'b>; 3],
    pub(super) part: usize,
    pub(super) inbox: Receiver<Parcel>,
    /// A sender to every other thread (`None` at this thread's own index).
    pub(super) outboxes: Vec<Option<SyncSender<Parcel>>>,
    pub(super) timings: Timings,
}

impl Owner<'_, '_> {
    /// Inserts this thread's keys of its own part, sends the others to their owners, and inserts keys
    /// of structures without parts with atomic ors.
    pub(super) fn route(&mut self, hashes: &[KeyHash]) {
        let parts = self.outboxes.len();
        for (s, inserter) in self.inserters.iter().enumerate() {
            let t0 = Instant::now();
            if hashes
                .first()
                .and_then(|h| inserter.part_of(*h, parts))
                .is_none()
            {
                self.timings.hits[s] += inserter.insert_hashes(hashes);
            } else {
                let mut by_part: Vec<Vec<KeyHash>> =
                    vec![Vec::with_capacity(hashes.len() / parts + 64); parts];
                for h in hashes {
                    by_part[inserter.part_of(*h, parts).unwrap_or(self.part)].push(*h);
                }
                self.timings.hits[s] += inserter.insert_owned(&by_part[self.part]);
                for (p, keys) in by_part.into_iter().enumerate() {
                    if p != self.part && !keys.is_empty() {
                        self.send(p, (s, keys));
                    }
                }
            }
            self.timings.probe_ns[s] += t0.elapsed().as_nanos() as u64;
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
                    if !self.apply_waiting() {
                        std::thread::yield_now();
                    }
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
        self.timings.hits[s] += self.inserters[s].insert_owned(&keys);
        self.timings.probe_ns[s] += t0.elapsed().as_nanos() as u64;
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

/// Waits for the pass's workers, advancing the progress bar by the keys they report done; a worker's panic
/// is raised again here.
pub(super) fn join_showing_progress(
    workers: Vec<std::thread::ScopedJoinHandle<'_, Timings>>,
    done: &AtomicU64,
    progress: &dyn super::Progress,
) -> Vec<Timings> {
    let mut shown = 0;
    while workers.iter().any(|w| !w.is_finished()) {
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
        for i in 0..3 {
            total.hits[i] += t.hits[i];
            total.probe_ns[i] = total.probe_ns[i].max(t.probe_ns[i]);
        }
    }
    total
}

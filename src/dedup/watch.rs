//! The keys a `dedup` filter was planned for, watched while the stream runs: its owner hears once, when
//! the filter first holds more, early enough to act (re-create it larger) rather than at the end of a long
//! crawl.
//!
//! Invariants: in this process the plan is passed exactly at the URL whose insert makes the filter hold
//! planned + 1 keys; a shared filter's count is its server's (every worker's keys), asked at most every
//! [`SHARED_LOAD_POLL`] and never more than 1% of the time the asking takes, so that a large bitmap's
//! count does not load the server every worker shares; a failed ask is no count.

use super::DedupCounts;
use crate::kind::Kind;
use crate::membership::Membership;
use std::time::{Duration, Instant};

/// How the stream watches its filter's load.
pub struct Watch<'a> {
    /// The `--expected` of a filter built for this stream or shared (unknown for a loaded file).
    pub planned_keys: Option<u64>,
    pub on_overfill: &'a mut dyn FnMut(Overfill),
}

/// A filter seen holding more keys than it was planned for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overfill {
    pub planned_keys: u64,
    /// Keys held when it was seen.
    pub keys_held: u64,
    /// Whether `keys_held` is the server's count of every worker's keys
    /// ([`Membership::keys_held_by_all`]), not this process's inserts.
    pub counted_by_server: bool,
    /// The stream's URLs handled when it was seen.
    pub read: u64,
}

/// The shortest time between two asks of a shared filter's load (one round trip per shard).
pub const SHARED_LOAD_POLL: Duration = Duration::from_secs(1);

/// A shared filter's load is asked again only after this many times the last ask took (≤ 1% of the
/// server's time per worker: a bitmap's load is a `BITCOUNT` over all its bits).
const POLL_COST_FACTOR: u32 = 100;

/// When a shared filter's load was last asked, and how long that took.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct LastAsk {
    at: Option<Instant>,
    took: Duration,
}

impl LastAsk {
    /// A first ask is due only after a full interval.
    pub(super) fn now() -> Self {
        LastAsk {
            at: Some(Instant::now()),
            took: Duration::ZERO,
        }
    }

    fn due(&self) -> bool {
        self.at
            .is_none_or(|t| t.elapsed() >= SHARED_LOAD_POLL.max(self.took * POLL_COST_FACTOR))
    }
}

impl Watch<'_> {
    /// Keys an in-process filter holding `held` may still call new before it passes the plan
    /// (`u64::MAX`: none is watched for, or `polled` when a shared filter's server is asked instead).
    pub(super) fn room(&self, held: u64, polled: bool) -> u64 {
        match self.planned_keys {
            Some(planned) if !polled => planned.saturating_sub(held),
            _ => u64::MAX,
        }
    }

    /// Tells the owner the filter holds `keys_held`, past its plan, after `read` URLs of the stream.
    pub(super) fn tell(
        &mut self,
        counts: &mut DedupCounts,
        keys_held: u64,
        counted_by_server: bool,
        read: u64,
    ) {
        let Some(planned_keys) = self.planned_keys.filter(|_| counts.overfill.is_none()) else {
            return;
        };
        let seen = Overfill {
            planned_keys,
            keys_held,
            counted_by_server,
            read,
        };
        counts.overfill = Some(seen);
        (self.on_overfill)(seen);
    }

    /// Asks a shared filter's server for its load when due (always with `force`); tells the owner the
    /// first time it is past the plan, as seen after this batch's `read` URLs.
    pub(super) fn poll(
        &mut self,
        structure: &dyn Membership,
        counts: &mut DedupCounts,
        last: &mut LastAsk,
        force: bool,
        read: u64,
    ) {
        let Some(planned) = self.planned_keys.filter(|_| counts.overfill.is_none()) else {
            return;
        };
        if !force && !last.due() {
            return;
        }
        let started = Instant::now();
        let held = structure.keys_held_by_all();
        *last = LastAsk {
            at: Some(Instant::now()),
            took: started.elapsed(),
        };
        if structure.failure().is_some() {
            return;
        }
        if let Some(held) = held.filter(|&h| h > planned) {
            self.tell(counts, held, true, counts.read + read);
        }
    }
}

/// What holding more keys than planned means for a structure of `kind` built for rate `fpr`, for a
/// warning.
pub fn past_plan_means(kind: &dyn Kind, fpr: f64) -> String {
    if kind.exact() {
        "an exact set drops no new URL for it, but its memory grows past the size planned"
            .to_string()
    } else if kind.growable() {
        format!("it goes on adding sub-filters, each at a tighter rate, so its rate stays within --fpr {fpr} while each lookup asks more of them")
    } else {
        format!("from here a new URL is dropped with a rate above the --fpr {fpr} it was built for, rising with every key; re-create it with a larger --expected, or a growing structure")
    }
}

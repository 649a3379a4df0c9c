//! Speed targets: what one of our structures must reach against a peer, and which paths a ratio sets side
//! by side. A peer's descriptor lists the targets set against it; `analysis::speed` judges them.

use super::Role;
use crate::membership::Op;

/// What a speed ratio sets side by side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comparison {
    /// One call per key on both sides: the filters themselves.
    PerKey,
    /// Our batch API against the peer's best path (its batch API where it has one, else per key): what
    /// our API buys a caller.
    OursBatchedVsBest,
}

impl Comparison {
    /// How a ratio says which comparison it is.
    pub fn words(self) -> &'static str {
        match self {
            Comparison::PerKey => "per key vs per key",
            Comparison::OursBatchedVsBest => "our batched path vs the peer's best",
        }
    }
}

/// A speed target of one of our structures against a peer: for each op, our throughput over the peer's,
/// measured in one run on the same keys and hash and compared as `comparison` says, is at least
/// `min_ratio`. Both comparisons are reported for every pair; the target applies to its own.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpeedTarget {
    /// Our structure, by the role it plays.
    pub ours: Role,
    pub ops: &'static [Op],
    pub comparison: Comparison,
    pub min_ratio: f64,
    /// Whether to add what a filter probing at the memory floor would reach against this peer.
    pub floor_reach: bool,
    /// The sizes n at which a run's ratio is judged against `min_ratio` (at others it is shown, not judged).
    pub judged_at: &'static [u64],
}

/// The size most targets are judged at: 10⁷ keys, out of every cache of these machines.
pub const AT_TEN_MILLION: &[u64] = &[10_000_000];

/// A target one of our structures sets itself, measured once per run (not in interleaved rounds): read
/// by `analysis::speed::other_ratios` from the structure's descriptor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OwnTarget {
    /// Its bits per key are at most `max_ratio` times those of the kind that plays `of`, at the headline
    /// size.
    BitsAgainst { of: Role, max_ratio: f64 },
    /// Its batched lookup is at most `max_ratio` times (hashing + the memory floor), from `at_keys` keys.
    LookupOverFloor { max_ratio: f64, at_keys: u64 },
    /// Its parallel build is at least `min_ratio` times one thread's insert throughput, from `at_keys`.
    ParallelSpeedup { min_ratio: f64, at_keys: u64 },
    /// `dedup` with it passes lines at least `min_ratio` times as fast as the fastest Unix tool of the
    /// dedup-cli experiment, each exact (lines per second of whole processes, paired by round), judged
    /// on streams of `at_lines` lines and more (shorter ones time the processes' start as much as them).
    DedupOverExactTools { min_ratio: f64, at_lines: u64 },
}

//! One worker's operation on a shared filter: insert or check generated members, or count non-members
//! reported present, a hashed batch at a time, stopping at the first server failure (which the filter
//! latches and the caller reports).

use crate::keys::{KeyBatch, KeyPipeline, UrlGenerator};
use crate::membership::Membership;
use crate::Result;
use std::ops::Range;

/// What a worker does to its key range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkerOp {
    /// Insert generated members.
    Insert,
    /// Count how many generated members the filter finds.
    Check,
    /// Count how many generated non-members the filter reports present.
    NonMembers,
}

impl WorkerOp {
    /// The name printed in the worker's JSON line.
    pub fn name(self) -> &'static str {
        match self {
            WorkerOp::Insert => "insert",
            WorkerOp::Check => "check",
            WorkerOp::NonMembers => "non-members",
        }
    }
}

/// Applies `op` to the keys `range` of `generator`, hashed with the filter's hasher; returns the keys answered (new
/// for inserts, present for queries). Stops early when the filter reports a failure.
pub fn apply(
    filter: &mut dyn Membership,
    op: WorkerOp,
    generator: &UrlGenerator,
    range: Range<u64>,
) -> Result<u64> {
    let hasher = filter.hasher();
    let mut keys = match op {
        WorkerOp::NonMembers => KeyPipeline::non_members(generator, range),
        WorkerOp::Insert | WorkerOp::Check => KeyPipeline::members(generator, range),
    };
    let mut batch = KeyBatch::with_capacity(4096, 96);
    let mut answered = 0u64;
    while filter.failure().is_none() && keys.next_hashed(&mut batch, hasher)? > 0 {
        answered += match op {
            WorkerOp::Insert => filter.insert_batch(&batch),
            WorkerOp::Check | WorkerOp::NonMembers => filter.contains_batch(&batch),
        };
    }
    Ok(answered)
}

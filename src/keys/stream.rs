//! Index streams over the generator: members, non-members, and a member stream with repeats.
//!
//! The repeat stream keeps only a counter of distinct members emitted so far (O(1) memory): at each step it
//! re-emits a uniformly chosen earlier member with probability d, otherwise the next new member.

/// What a stream position holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emitted {
    /// Member index emitted for the first time.
    New(u64),
    /// Member index emitted before.
    Repeat(u64),
}

impl Emitted {
    /// The member index.
    pub fn index(self) -> u64 {
        match self {
            Emitted::New(i) | Emitted::Repeat(i) => i,
        }
    }
}

/// Member indices with a fraction `d` of repeats of earlier members, deterministic in `seed`.
#[derive(Clone, Debug)]
pub struct RepeatStream {
    duplicate_fraction: f64,
    distinct: u64,
    state: u64,
}

impl RepeatStream {
    /// A stream that repeats with probability `duplicate_fraction` (in [0, 1)).
    pub fn new(seed: u64, duplicate_fraction: f64) -> Self {
        RepeatStream {
            duplicate_fraction,
            distinct: 0,
            state: seed ^ 0x6A09_E667_F3BC_C909,
        }
    }

    /// Distinct members emitted so far.
    pub fn distinct(&self) -> u64 {
        self.distinct
    }
}

impl Iterator for RepeatStream {
    type Item = Emitted;

    fn next(&mut self) -> Option<Emitted> {
        let z = crate::hash::splitmix64(&mut self.state);
        let u = (z >> 11) as f64 / (1u64 << 53) as f64;
        if self.distinct > 0 && u < self.duplicate_fraction {
            let pick = crate::hash::reduce(
                z.rotate_left(32).wrapping_mul(0xD6E8_FEB8_6659_FD93),
                self.distinct,
            );
            Some(Emitted::Repeat(pick))
        } else {
            self.distinct += 1;
            Some(Emitted::New(self.distinct - 1))
        }
    }
}

//! A plain bit array of m bits in 64-bit words: the storage of the bitmap and of every Bloom slice.
//!
//! Invariant: bits at positions ≥ m are never set, so `count_ones` is the number of set positions.

use std::sync::atomic::AtomicU64;

/// m bits, zero-initialised (the allocation is `calloc`ed, so untouched pages cost no RSS).
#[derive(Clone, Debug)]
pub struct BitArray {
    words: Vec<u64>,
    bits: u64,
}

impl BitArray {
    /// An all-zero array of `bits` bits.
    pub fn new(bits: u64) -> Self {
        let words = vec![0u64; bits.div_ceil(64) as usize];
        crate::mem::advise_huge_pages(&words);
        BitArray { words, bits }
    }

    /// Rebuilds an array from saved words, checking the invariants (word count; no bit at or past m).
    pub fn from_words(bits: u64, words: Vec<u64>) -> crate::Result<Self> {
        if bits == 0 || words.len() as u64 != bits.div_ceil(64) {
            return Err(crate::persist::corrupt(format!(
                "{} words do not hold {bits} bits",
                words.len()
            )));
        }
        let tail = bits % 64;
        if tail != 0 && words[words.len() - 1] >> tail != 0 {
            return Err(crate::persist::corrupt(
                "bits set past the end of the array".into(),
            ));
        }
        Ok(BitArray { words, bits })
    }

    /// Number of bits, m.
    #[inline]
    pub fn len(&self) -> u64 {
        self.bits
    }

    /// Whether the array has no bit.
    pub fn is_empty(&self) -> bool {
        self.bits == 0
    }

    /// Sets bit `pos`; returns whether it was clear.
    #[inline(always)]
    pub fn set(&mut self, pos: u64) -> bool {
        let word = &mut self.words[(pos >> 6) as usize];
        let mask = 1u64 << (pos & 63);
        let was_clear = *word & mask == 0;
        *word |= mask;
        was_clear
    }

    /// Reads bit `pos`.
    #[inline(always)]
    pub fn get(&self, pos: u64) -> bool {
        self.words[(pos >> 6) as usize] & (1u64 << (pos & 63)) != 0
    }

    /// Heap bytes of the words.
    pub fn bytes(&self) -> u64 {
        self.words.capacity() as u64 * 8
    }

    /// Number of set bits.
    pub fn count_ones(&self) -> u64 {
        self.words.iter().map(|w| w.count_ones() as u64).sum()
    }

    /// The words, for hashing or saving.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// A view of the words for concurrent inserts (atomic bit-or), valid while `self` is borrowed.
    pub fn atomic_words(&mut self) -> &[AtomicU64] {
        as_atomic(&mut self.words)
    }
}

/// Views words as atomics. Sound: `AtomicU64` has the size and alignment of `u64`, and the exclusive borrow
/// guarantees no non-atomic access while the view lives.
pub fn as_atomic(words: &mut [u64]) -> &[AtomicU64] {
    const _: () = assert!(std::mem::align_of::<AtomicU64>() == std::mem::align_of::<u64>());
    const _: () = assert!(std::mem::size_of::<AtomicU64>() == std::mem::size_of::<u64>());
    // SAFETY: same size and alignment (asserted above at compile time);
    // the `&mut` borrow makes the atomic view the only access for its lifetime.
    unsafe { &*(words as *mut [u64] as *const [AtomicU64]) }
}

/// Sets `mask`'s bits in a shared word; returns whether any of them was clear.
///
/// A plain load comes first and the locked read-modify-write only runs when a bit is missing: a locked
/// instruction drains the store buffer and stalls the core even when the line is cached, and at a filter's
/// working fill about half the words it would touch already hold their bit. The result stays exact: the
/// `fetch_or` reports what it found, so two threads racing on one bit never both count it as new.
#[inline(always)]
pub fn or_shared(word: &AtomicU64, mask: u64) -> bool {
    use std::sync::atomic::Ordering::Relaxed;
    word.load(Relaxed) & mask != mask && word.fetch_or(mask, Relaxed) & mask != mask
}

/// The part, of `parts` equal ranges of `len` indices, that holds `index` (for owned inserts).
#[inline(always)]
pub fn part_of_index(index: u64, len: u64, parts: usize) -> usize {
    (index as u128 * parts as u128 / len.max(1) as u128) as usize
}

/// The parts of [`part_of_index`] as bounds: index i lies in the part counted by the bounds at or below
/// it, with no division per index (`part_of_index` divides 128 bits, a library call, per key).
pub struct PartBounds {
    /// The first index of parts 1, 2, …: ⌈p·len / parts⌉.
    starts: Vec<u64>,
}

impl PartBounds {
    pub fn new(len: u64, parts: usize) -> PartBounds {
        let len = len.max(1) as u128;
        let parts = parts.max(1) as u128;
        PartBounds {
            starts: (1..parts)
                .map(|p| (p * len).div_ceil(parts) as u64)
                .collect(),
        }
    }

    /// The part holding `index`: the same as `part_of_index(index, len, parts)`.
    #[inline(always)]
    pub fn part(&self, index: u64) -> usize {
        self.starts.iter().filter(|s| **s <= index).count()
    }
}

/// Sets `mask` in a word only the calling thread writes (plain load and store: no locked instruction);
/// returns whether a bit of it was clear.
#[inline(always)]
pub fn or_owned(word: &AtomicU64, mask: u64) -> bool {
    use std::sync::atomic::Ordering::Relaxed;
    let old = word.load(Relaxed);
    word.store(old | mask, Relaxed);
    old & mask != mask
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn part_bounds_agree_with_the_division_at_every_boundary() {
        for (len, parts) in [
            (1u64, 1usize),
            (10, 3),
            (1000, 2),
            (6_000_000_000, 2),
            (7, 7),
            (97, 5),
        ] {
            let bounds = PartBounds::new(len, parts);
            let mut indices: Vec<u64> = (0..len.min(2000)).collect();
            for p in 0..=parts as u64 {
                let b = (p as u128 * len as u128 / parts as u128) as u64;
                indices.extend([b.saturating_sub(1), b, b + 1]);
            }
            for i in indices.into_iter().filter(|i| *i < len) {
                assert_eq!(
                    bounds.part(i),
                    part_of_index(i, len, parts),
                    "{i} of {len} in {parts}"
                );
            }
        }
    }
}

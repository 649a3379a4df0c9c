//! A plain bit array of m bits in 64-bit words: the storage of the bitmap and of every Bloom slice.
//!
//! Invariant: bits at positions ≥ m are never set, so `count_ones` is the number of set positions.

/// m bits, zero-initialised (the allocation is `calloc`ed, so untouched pages cost no RSS).
#[derive(Clone, Debug)]
pub struct BitArray {
    words: Vec<u64>,
    bits: u64,
}

impl BitArray {
    /// An all-zero array of `bits` bits.
    pub fn new(bits: u64) -> Self {
        let words = bits.div_ceil(64) as usize;
        BitArray {
            words: vec![0u64; words],
            bits,
        }
    }

    /// Rebuilds an array from saved words, checking the invariants (word count; no bit at or past m).
    pub fn from_words(bits: u64, words: Vec<u64>) -> crate::Result<Self> {
        if bits == 0 || words.len() as u64 != bits.div_ceil(64) {
            return Err(super::persist::corrupt(format!(
                "{} words do not hold {bits} bits",
                words.len()
            )));
        }
        let tail = bits % 64;
        if tail != 0 && words[words.len() - 1] >> tail != 0 {
            return Err(super::persist::corrupt(
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
}

//! The generator's byte-level pieces: one URL written into a buffer's spare capacity in whole 16-byte
//! blocks, base-36 digits two at a time, and the index-seeded random stream (wyrand).
//!
//! Invariant of [`Cursor`]: every write covers at least the bytes it advances over, so each byte before
//! the cursor's position has been written; the generator's one `set_len` relies on it.

use std::mem::MaybeUninit;

/// At most `N − 1` bytes in one aligned block of `N`: the bytes, zeros, and the length in the last byte,
/// so that the bytes and their length come from one load. A [`Word`] (a word or fixed string) is one
/// 16-byte block; a [`Host`] three (hosts are at most 35 bytes: see `MAX_PARTS_BYTES`).
#[derive(Clone, Copy, Debug)]
#[repr(align(16))]
pub(super) struct Block<const N: usize> {
    block: [u8; N],
}

/// A word or fixed string of at most 15 bytes.
pub(super) type Word = Block<16>;
/// A host of at most 47 bytes.
pub(super) type Host = Block<48>;

impl<const N: usize> Block<N> {
    /// The longest string a block holds.
    pub(super) const MAX_BYTES: usize = N - 1;

    /// A block from the first `len` bytes of `block` (the rest must be zero).
    #[inline(always)]
    pub(super) fn from_block(mut block: [u8; N], len: usize) -> Self {
        debug_assert!(len <= Self::MAX_BYTES);
        block[N - 1] = len as u8;
        Block { block }
    }

    pub(super) fn new(bytes: &[u8]) -> Self {
        assert!(
            bytes.len() <= Self::MAX_BYTES,
            "a block of {N} bytes holds {}",
            Self::MAX_BYTES
        );
        let mut block = [0u8; N];
        block[..bytes.len()].copy_from_slice(bytes);
        Self::from_block(block, bytes.len())
    }

    /// The string's length in bytes.
    #[inline(always)]
    pub(super) fn len(&self) -> usize {
        self.block[N - 1] as usize
    }

    /// The string's bytes.
    #[cfg(test)]
    pub(super) fn bytes(&self) -> &[u8] {
        &self.block[..self.len()]
    }
}

/// [`Cursor::copy_long`] copies in blocks of this many bytes (its last block overshoots by up to this much);
/// one block holds most slugs, so its loop is seldom taken twice.
pub(super) const LONG_COPY_BYTES: usize = 64;

/// Writes one URL into a buffer's spare capacity: words and fixed strings go as whole 16-byte blocks, and
/// an optional part is written always and advanced past only when present.
///
/// The writes are unchecked: a bounds check per part was a fifth of the generator's instructions. The
/// caller guarantees the room: [`Cursor::new`] takes a slice at least as long as the longest URL the
/// profile allows plus a block (`Tables::max_url_bytes`), and debug builds check every write against it.
pub(super) struct Cursor<'a> {
    spare: &'a mut [MaybeUninit<u8>],
    pos: usize,
}

impl<'a> Cursor<'a> {
    #[inline(always)]
    pub(super) fn new(spare: &'a mut [MaybeUninit<u8>]) -> Self {
        Cursor { spare, pos: 0 }
    }
    /// Bytes written so far (all of `spare[..written]` is initialised).
    #[inline(always)]
    pub(super) fn written(&self) -> usize {
        self.pos
    }
    #[inline(always)]
    fn put(&mut self, at: usize, b: u8) {
        debug_assert!(at < self.spare.len());
        // SAFETY: `at` is within `spare` (the caller's room guarantee, checked in debug builds).
        unsafe { self.spare.get_unchecked_mut(at).write(b) };
    }
    #[inline(always)]
    fn block_at<const N: usize>(&mut self, at: usize, w: &Block<N>) {
        debug_assert!(at + N <= self.spare.len());
        // SAFETY: `at + N` is within `spare` (as in `put`); a block and `spare` never overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(
                w.block.as_ptr(),
                self.spare.as_mut_ptr().add(at).cast(),
                N,
            )
        };
    }
    #[inline(always)]
    pub(super) fn byte(&mut self, b: u8) {
        self.put(self.pos, b);
        self.pos += 1;
    }
    /// Writes a block (a word, a host), kept only if `present`.
    #[inline(always)]
    pub(super) fn word_if<const N: usize>(&mut self, w: &Block<N>, present: bool) {
        self.block_at(self.pos, w);
        self.pos += usize::from(present) * w.len();
    }
    /// Writes a separator and a word, kept only if `present`.
    #[inline(always)]
    pub(super) fn sep_word_if(&mut self, sep: u8, w: &Word, present: bool) {
        self.put(self.pos, sep);
        self.block_at(self.pos + 1, w);
        self.pos += usize::from(present) * (1 + w.len());
    }
    /// Copies `keep` bytes of `run` (at most 80), copying all 80 so that the copy has no length branch.
    #[inline(always)]
    pub(super) fn copy_run(&mut self, run: &[u8], keep: usize) {
        let run: &[u8; 80] = run.try_into().expect("runs are 80 bytes");
        debug_assert!(keep <= 80 && self.pos + 80 <= self.spare.len());
        // SAFETY: `pos + 80` is within `spare` (the caller's room guarantee); `run` is a separate buffer.
        unsafe {
            std::ptr::copy_nonoverlapping(
                run.as_ptr(),
                self.spare.as_mut_ptr().add(self.pos).cast(),
                80,
            )
        };
        self.pos += keep;
    }
    /// Copies the first `len` bytes of `text` (which holds at least `len + LONG_COPY_BYTES`) in blocks of
    /// [`LONG_COPY_BYTES`], at least one: the loop is taken again only for slugs longer than a block.
    #[inline(always)]
    pub(super) fn copy_long(&mut self, text: &[u8], len: usize) {
        const BLOCK: usize = LONG_COPY_BYTES;
        assert!(text.len() >= len + BLOCK);
        debug_assert!(self.pos + len + BLOCK <= self.spare.len());
        let mut done = 0;
        loop {
            // SAFETY: `done` is 0 or below `len`, so the block read lies in `text` (asserted
            // above) and the block written lies in `spare` (the caller's room guarantee, checked in debug
            // builds).
            unsafe {
                std::ptr::copy_nonoverlapping(
                    text.as_ptr().add(done),
                    self.spare.as_mut_ptr().add(self.pos + done).cast(),
                    BLOCK,
                )
            };
            done += BLOCK;
            if done >= len {
                break;
            }
        }
        self.pos += len;
    }
    /// Writes `b` at `at`, which lies before the cursor or right at it (then past what is kept).
    #[inline(always)]
    pub(super) fn put_at(&mut self, at: usize, b: u8) {
        debug_assert!(at <= self.pos);
        self.put(at, b);
    }
    /// Overwrites the last written byte with `b`.
    #[inline(always)]
    pub(super) fn put_last(&mut self, b: u8) {
        debug_assert!(self.pos > 0);
        self.put(self.pos - 1, b);
    }
}

/// Base-36 digit pairs: entry `v` (< 36²) holds the two digits of `v`.
const PAIRS: [[u8; 2]; 1296] = {
    const ALPHABET: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut pairs = [[0u8; 2]; 1296];
    let mut v = 0;
    while v < 1296 {
        pairs[v] = [ALPHABET[v / 36], ALPHABET[v % 36]];
        v += 1;
    }
    pairs
};

/// `value` (< 36¹⁰) as ten base-36 digits (leading zeros kept, so every token has one width), as a block.
///
/// The value is split at 36⁵ so the two halves convert independently, two digits per step.
#[inline(always)]
pub(super) fn base36(value: u64) -> Word {
    const HALF: u64 = 36 * 36 * 36 * 36 * 36;
    debug_assert!(value < HALF * HALF);
    // Five digits of a half as the low five bytes of a word, assembled in a register: bytes stored one by
    // one and then read as one block stalled the load (no store forwarding).
    let five = |half: u32| -> u128 {
        let (a, rest) = (half % 1296, half / 1296);
        let (b, c) = (rest % 1296, rest / 1296);
        let pair = |v: u32| u16::from_le_bytes(PAIRS[v as usize]) as u128;
        PAIRS[c as usize % 36][1] as u128 | pair(b) << 8 | pair(a) << 24
    };
    let (high, low) = ((value / HALF) as u32, (value % HALF) as u32);
    Word {
        block: (five(high) | five(low) << 40 | 10u128 << 120).to_le_bytes(),
    }
}

pub(super) use crate::hash::splitmix64 as splitmix;

/// wyrand: a tiny fast PRNG for per-URL choices.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    #[inline(always)]
    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0xA076_1D64_78BD_642F);
        let t = (self.0 as u128).wrapping_mul((self.0 ^ 0xE703_7ED1_A0B4_28DB) as u128);
        (t >> 64) as u64 ^ t as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base36_slow(mut v: u64) -> String {
        let mut out = Vec::new();
        for _ in 0..10 {
            out.push(b"0123456789abcdefghijklmnopqrstuvwxyz"[(v % 36) as usize]);
            v /= 36;
        }
        out.reverse();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn base36_matches_digit_by_digit_conversion() {
        let mut state = 7;
        let edges = [
            0,
            1,
            35,
            36,
            1295,
            1296,
            60_466_175,
            60_466_176,
            (1 << 48) - 1,
        ];
        let samples = (0..100_000).map(|_| splitmix(&mut state) >> 16);
        for v in edges.into_iter().chain(samples) {
            let w = base36(v);
            assert_eq!(
                std::str::from_utf8(w.bytes()).unwrap(),
                base36_slow(v),
                "{v}"
            );
        }
    }
}

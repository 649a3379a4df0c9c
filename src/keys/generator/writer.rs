//! The generator's byte-level pieces: one URL written into a buffer's spare capacity in whole 16-byte
//! blocks, base-36 digits two at a time, and the index-seeded random stream (wyrand).
//!
//! Invariant of [`Cursor`]: every write covers at least the bytes it advances over, so each byte before
//! the cursor's position has been written; the generator's one `set_len` relies on it.

use std::mem::MaybeUninit;

/// A word or fixed string of at most 15 bytes in one aligned 16-byte block: its bytes, zeros, and its
/// length in the last byte, so that a word and its length come from one cache line in one load.
#[derive(Clone, Copy, Debug)]
#[repr(align(16))]
pub(super) struct Word {
    block: [u8; 16],
}

impl Word {
    /// The longest word a block holds.
    pub(super) const MAX_BYTES: usize = 15;

    /// A block from the first `len` bytes of `bytes` (the rest must be zero).
    #[inline(always)]
    pub(super) fn from_block(mut block: [u8; 16], len: usize) -> Word {
        debug_assert!(len <= Word::MAX_BYTES);
        block[15] = len as u8;
        Word { block }
    }

    pub(super) fn new(bytes: &[u8]) -> Word {
        assert!(bytes.len() <= Word::MAX_BYTES, "a block holds 15 bytes");
        let mut block = [0u8; 16];
        block[..bytes.len()].copy_from_slice(bytes);
        Word::from_block(block, bytes.len())
    }

    /// The word's length in bytes.
    #[inline(always)]
    pub(super) fn len(&self) -> usize {
        self.block[15] as usize
    }

    /// The word's bytes.
    #[cfg(test)]
    pub(super) fn bytes(&self) -> &[u8] {
        &self.block[..self.len()]
    }
}

/// A host of at most 47 bytes in three aligned 16-byte blocks, its length in the last byte (hosts are at
/// most 35: see `MAX_PARTS_BYTES`).
#[derive(Clone, Copy, Debug)]
#[repr(align(16))]
pub(super) struct Host {
    block: [u8; 48],
}

impl Host {
    /// The longest host a block holds.
    pub(super) const MAX_BYTES: usize = 47;

    pub(super) fn new(bytes: &[u8]) -> Host {
        assert!(
            bytes.len() <= Host::MAX_BYTES,
            "a host block holds 47 bytes"
        );
        let mut block = [0u8; 48];
        block[..bytes.len()].copy_from_slice(bytes);
        block[47] = bytes.len() as u8;
        Host { block }
    }
}

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
    fn block_at(&mut self, at: usize, w: &Word) {
        debug_assert!(at + 16 <= self.spare.len());
        // SAFETY: `at + 16` is within `spare` (as in `put`); a block and `spare` never overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(
                w.block.as_ptr(),
                self.spare.as_mut_ptr().add(at).cast(),
                16,
            )
        };
    }
    #[inline(always)]
    pub(super) fn byte(&mut self, b: u8) {
        self.put(self.pos, b);
        self.pos += 1;
    }
    /// Writes a word, kept only if `present`.
    #[inline(always)]
    pub(super) fn word_if(&mut self, w: &Word, present: bool) {
        self.block_at(self.pos, w);
        self.pos += usize::from(present) * w.len();
    }
    /// Writes a held host (48 bytes, advancing past its length).
    #[inline(always)]
    pub(super) fn host(&mut self, h: &Host) {
        debug_assert!(self.pos + 48 <= self.spare.len());
        // SAFETY: `pos + 48` is within `spare` (the caller's room guarantee, checked in debug builds); a
        // host block and `spare` never overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(
                h.block.as_ptr(),
                self.spare.as_mut_ptr().add(self.pos).cast(),
                48,
            )
        };
        self.pos += h.block[47] as usize;
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
    /// Copies the first `len` bytes of `text` (which holds at least `len + 64`) in 64-byte blocks, at least
    /// one: the loop is taken again only for slugs longer than a block.
    #[inline(always)]
    pub(super) fn copy_long(&mut self, text: &[u8], len: usize) {
        const BLOCK: usize = 64;
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

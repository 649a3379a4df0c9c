//! The generator's byte-level pieces: one URL written into a buffer's spare capacity in whole 16-byte
//! blocks, base-32 digits eight at a time, and the index-seeded random stream (wyrand).
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
            // SAFETY: `done` is 0 or below `len`, so the block read lies in `text` (asserted above) and
            // the block written lies in `spare` (the caller's room guarantee, checked in debug builds).
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

/// The five-bit groups of the low `8 × 5` bits of `value` spread one per byte, the lowest group in the
/// lowest byte (what BMI2's `pdep` with mask `0x1F1F…1F` does, in shifts and masks, so every CPU writes
/// the same bytes).
#[inline(always)]
fn spread_groups(value: u64) -> u64 {
    let x = (value & 0xF_FFFF) | (value >> 20 & 0xF_FFFF) << 32;
    let x = (x & 0x0000_03FF_0000_03FF) | (x >> 10 & 0x0000_03FF_0000_03FF) << 16;
    (x & 0x001F_001F_001F_001F) | (x >> 5 & 0x001F_001F_001F_001F) << 8
}

/// Bytes holding values below 32 as the digits `0`–`9`, `a`–`v`, eight at a time.
#[inline(always)]
fn base32_digits(groups: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    // A byte above 9 sets its top bit once 118 is added (31 + 118 < 256: no carry into the next byte).
    let letters = (groups + 118 * ONES) >> 7 & ONES;
    groups + b'0' as u64 * ONES + letters * (b'a' - b'0' - 10) as u64
}

/// `value` (< 2⁵⁰) as ten base-32 digits `0`–`9`, `a`–`v`, most significant first (leading zeros kept, so
/// every token has one width), as a block.
///
/// Base 32, not 36: a digit is five bits, so the digits come from shifts and masks, without the divisions
/// of base 36 (docs/notes.md has what they cost).
#[inline(always)]
pub(super) fn base32(value: u64) -> Word {
    debug_assert!(value < 1 << 50);
    // The high eight digits, most significant in the lowest byte (written first), then the low two.
    let high = base32_digits(spread_groups(value >> 10)).swap_bytes();
    let low = (base32_digits(spread_groups(value & 0x3FF)) as u16).swap_bytes();
    Word {
        block: (high as u128 | (low as u128) << 64 | 10u128 << 120).to_le_bytes(),
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

    fn base32_slow(mut v: u64) -> String {
        let mut out = Vec::new();
        for _ in 0..10 {
            out.push(b"0123456789abcdefghijklmnopqrstuv"[(v % 32) as usize]);
            v /= 32;
        }
        out.reverse();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn base32_matches_digit_by_digit_conversion() {
        let mut state = 7;
        // Each digit's 9/10 and 31/0 turns, the split between the high eight digits and the low two.
        let edges = [
            0,
            1,
            9,
            10,
            31,
            32,
            1023,
            1024,
            (1 << 40) - 1,
            1 << 40,
            (1 << 48) - 1,
            (1 << 50) - 1,
        ];
        let turns = (0..10).flat_map(|d| [9u64 << (5 * d), 10 << (5 * d), 31 << (5 * d)]);
        let samples = (0..100_000).map(|_| splitmix(&mut state) >> 14);
        for v in edges.into_iter().chain(turns).chain(samples) {
            let w = base32(v);
            assert_eq!(
                std::str::from_utf8(w.bytes()).unwrap(),
                base32_slow(v),
                "{v}"
            );
        }
    }
}

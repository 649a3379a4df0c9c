//! The generator's byte-level pieces: one URL written at the end of a buffer in whole 16-byte blocks,
//! base-36 digits, and the index-seeded random stream (splitmix64).

/// A vocabulary word in a fixed 16-byte block.
#[derive(Clone, Copy, Debug)]
pub(super) struct Word {
    pub(super) bytes: [u8; 16],
    pub(super) len: u8,
}

/// Writes one URL at the end of a buffer: the buffer is grown (zero-filled) ahead of the writes, words are
/// copied as whole 16-byte blocks, and `finish` cuts the buffer to what was written.
pub(super) struct Cursor<'a> {
    buf: &'a mut Vec<u8>,
    start: usize,
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(buf: &'a mut Vec<u8>, room: usize) -> Self {
        let start = buf.len();
        buf.resize(start + room + 16, 0);
        Cursor {
            buf,
            start,
            pos: start,
        }
    }
    #[inline(always)]
    pub(super) fn written(&self) -> usize {
        self.pos - self.start
    }
    /// Makes room for `more` bytes past the current position (plus a 16-byte block's slack).
    #[inline(always)]
    pub(super) fn reserve(&mut self, more: usize) {
        let need = self.pos + more + 16;
        if self.buf.len() < need {
            self.buf.resize(need, 0);
        }
    }
    #[inline(always)]
    pub(super) fn byte(&mut self, b: u8) {
        self.buf[self.pos] = b;
        self.pos += 1;
    }
    #[inline(always)]
    pub(super) fn bytes(&mut self, s: &[u8]) {
        self.buf[self.pos..self.pos + s.len()].copy_from_slice(s);
        self.pos += s.len();
    }
    /// Writes a word, cut to at most `max` bytes.
    #[inline(always)]
    pub(super) fn word(&mut self, w: &Word, max: usize) {
        self.buf[self.pos..self.pos + 16].copy_from_slice(&w.bytes);
        self.pos += (w.len as usize).min(max);
    }
    pub(super) fn replace_last(&mut self, from: u8, to: u8) {
        if self.pos > self.start && self.buf[self.pos - 1] == from {
            self.buf[self.pos - 1] = to;
        }
    }
    pub(super) fn finish(self) {
        self.buf.truncate(self.pos);
    }
}

/// Writes `value` in base 36 right-aligned into `digits`; returns the number of digits used.
pub(super) fn base36(mut value: u64, digits: &mut [u8; 10]) -> usize {
    const ALPHABET: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut len = 0;
    loop {
        digits[9 - len] = ALPHABET[(value % 36) as usize];
        value /= 36;
        len += 1;
        if value == 0 {
            return len;
        }
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

    #[inline(always)]
    pub(super) fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

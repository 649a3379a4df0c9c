//! The machine's memory floor: what one random cache-line read per key costs in an array of a given size,
//! with reads independent of each other and prefetched a few keys ahead (the access pattern of a batched
//! filter lookup, minus the filter's own work). A filter cannot be faster than this at the same size.

use crate::hash::{reduce, KeyHash};

const AHEAD: usize = 16;

/// Reads one word of a random 64-byte line of `words` (`lines` lines) per hash; returns their sum so the
/// reads cannot be optimised away.
pub fn read_lines(words: &[u64], lines: u64, hashes: &[KeyHash]) -> u64 {
    let mut sum = 0u64;
    let at = |h: &KeyHash| (reduce(h.h1, lines) * 8) as usize;
    for (i, h) in hashes.iter().enumerate() {
        if let Some(ahead) = hashes.get(i + AHEAD) {
            crate::structures::blocked::prefetch_word(words, at(ahead));
        }
        sum = sum.wrapping_add(words.get(at(h)).copied().unwrap_or(0));
    }
    sum
}

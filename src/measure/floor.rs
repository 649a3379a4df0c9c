//! The machine's memory floor: what one random cache-line read per key costs in an array of a given size,
//! with reads independent of each other and prefetched a few keys ahead (the access pattern of a batched
//! filter lookup, minus the filter's own work). A filter cannot be faster than this at the same size.

use crate::hash::{reduce, KeyHash};

/// The batched lookups' prefetch distance, so the floor and the filter issue the same pattern.
const AHEAD: usize = crate::mem::PREFETCH_AHEAD;

/// Reads one word of a random 64-byte line of `words` (`lines` lines) per hash; returns their sum so the
/// reads cannot be optimised away.
pub fn read_lines(words: &[u64], lines: u64, hashes: &[KeyHash]) -> u64 {
    let mut sum = 0u64;
    let at = |h: &KeyHash| (reduce(h.h1, lines) * 8) as usize;
    for (i, h) in hashes.iter().enumerate() {
        if let Some(ahead) = hashes.get(i + AHEAD) {
            crate::mem::prefetch_word(words, at(ahead));
        }
        sum = sum.wrapping_add(words.get(at(h)).copied().unwrap_or(0));
    }
    sum
}

/// What random cache-line reads cost in a large array, by access pattern and page size.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PageProbe {
    pub array_bytes: u64,
    pub reads: u64,
    /// Each read's address depends on the previous read's value (pure latency), 4 KiB pages.
    pub dependent_ns: f64,
    /// The same with huge pages asked for.
    pub dependent_huge_ns: f64,
    /// Addresses known in advance (the core overlaps misses), 4 KiB pages (`MADV_NOHUGEPAGE`).
    pub independent_ns: f64,
    /// The same with `MADV_HUGEPAGE`.
    pub independent_huge_ns: f64,
    /// Bytes of the huge-page array the kernel actually backed with huge pages.
    pub huge_page_bytes: u64,
}

/// An array of at least `bytes` (whole 64-byte lines), every page touched and huge pages asked for, as a
/// filter's array is: what [`read_lines`] reads for the floor of a filter of that size.
pub fn line_array(bytes: u64) -> Vec<u64> {
    touched_array((bytes.div_ceil(64) * 64).max(64) as usize, true)
}

/// An array of `bytes`, every page touched, with or without huge pages asked for.
fn touched_array(bytes: usize, huge: bool) -> Vec<u64> {
    let mut words = vec![0u64; bytes / 8];
    if huge {
        crate::mem::advise_huge_pages(&words);
    } else {
        crate::mem::advise(&words, 4096, libc::MADV_NOHUGEPAGE);
    }
    for (i, w) in words.iter_mut().enumerate().step_by(512) {
        *w = i as u64;
    }
    words
}

fn mix(x: u64) -> u64 {
    let mut state = x;
    crate::hash::splitmix64(&mut state)
}

/// ns per dependent read (the next line is chosen by the value just read), and the chain's final value.
fn dependent(words: &[u64], reads: u64) -> (f64, u64) {
    let lines = (words.len() / 8) as u64;
    let mut x = 1u64;
    let t = std::time::Instant::now();
    for step in 0..reads {
        let w = words[(reduce(mix(x), lines) * 8) as usize];
        x = x.wrapping_add(w ^ step);
    }
    let x = std::hint::black_box(x);
    (t.elapsed().as_nanos() as f64 / reads as f64, x)
}

/// ns per independent read (addresses come from a counter, not from memory), and the sum read.
fn independent(words: &[u64], reads: u64) -> (f64, u64) {
    let lines = (words.len() / 8) as u64;
    let mut sum = 0u64;
    let t = std::time::Instant::now();
    for step in 0..reads {
        sum = sum.wrapping_add(words[(reduce(mix(step ^ 0x5EED), lines) * 8) as usize]);
    }
    let sum = std::hint::black_box(sum);
    (t.elapsed().as_nanos() as f64 / reads as f64, sum)
}

/// Measures [`PageProbe`] over two arrays of `bytes` (one with 4 KiB pages, one with huge pages asked for).
pub fn probe_pages(bytes: usize, reads: u64) -> PageProbe {
    let small = touched_array(bytes, false);
    let (dependent_ns, _) = dependent(&small, reads / 4);
    let (independent_ns, _) = independent(&small, reads);
    drop(small);
    let before = crate::mem::anon_huge_page_bytes();
    let huge = touched_array(bytes, true);
    let huge_page_bytes = crate::mem::anon_huge_page_bytes().saturating_sub(before);
    let (dependent_huge_ns, _) = dependent(&huge, reads / 4);
    let (independent_huge_ns, _) = independent(&huge, reads);
    drop(huge);
    PageProbe {
        array_bytes: bytes as u64,
        reads,
        dependent_ns,
        dependent_huge_ns,
        independent_ns,
        independent_huge_ns,
        huge_page_bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kernel reads the words it says it reads: each result is checked against the same reads done
    /// plainly, on an array whose every word differs (so a wrong or skipped read changes the result).
    #[test]
    fn the_kernels_read_the_lines_they_name() {
        let words: Vec<u64> = (0..8 * 4096u64).map(|i| mix(i ^ 0xA5)).collect();
        let lines = 4096u64;
        let hashes: Vec<KeyHash> = (0..10_000u64)
            .map(|i| KeyHash {
                h1: mix(i),
                h2: mix(!i),
            })
            .collect();
        let plain = hashes.iter().fold(0u64, |sum, h| {
            sum.wrapping_add(words[(reduce(h.h1, lines) * 8) as usize])
        });
        assert_eq!(read_lines(&words, lines, &hashes), plain);
        let plain_independent = (0..5000u64).fold(0u64, |sum, step| {
            sum.wrapping_add(words[(reduce(mix(step ^ 0x5EED), lines) * 8) as usize])
        });
        assert_eq!(independent(&words, 5000).1, plain_independent);
        let mut x = 1u64;
        for step in 0..5000u64 {
            x = x.wrapping_add(words[(reduce(mix(x), lines) * 8) as usize] ^ step);
        }
        assert_eq!(dependent(&words, 5000).1, x);
    }

    /// Over an array far past the caches, a chain of dependent reads waits for each miss while
    /// independent reads overlap theirs: on any out-of-order core the first costs more per read (on this
    /// 2-core Xeon, several times more). A probe that measured no memory at all would not show it.
    #[test]
    fn the_page_probe_tells_latency_from_overlapped_reads() {
        let p = probe_pages(256 << 20, 400_000);
        for ns in [
            p.dependent_ns,
            p.dependent_huge_ns,
            p.independent_ns,
            p.independent_huge_ns,
        ] {
            assert!(ns > 0.0 && ns.is_finite(), "{p:?}");
        }
        assert!(p.dependent_ns > p.independent_ns, "{p:?}");
        assert!(p.dependent_huge_ns > p.independent_huge_ns, "{p:?}");
        assert_eq!(p.array_bytes, 256 << 20);
    }
}

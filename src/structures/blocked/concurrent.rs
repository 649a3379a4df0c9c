//! `blocked` built by several threads at once: atomic ors where threads share blocks, plain stores where
//! each thread owns its blocks (the owner-writes build).

use super::*;

pub(super) struct SharedBlocked<'a> {
    pub(super) words: &'a [AtomicU64],
    pub(super) offset: usize,
    pub(super) blocks: u64,
    pub(super) hashes: u32,
    pub(super) kernel: Kernel,
}

impl SharedBlocked<'_> {
    /// Sets each key's bits, prefetching its block [`PREFETCH_AHEAD`] keys ahead. `owned`: the caller's
    /// thread alone writes these blocks, so plain loads and stores do; otherwise plain loads decide "was it
    /// new?" branch-free and each needed word then takes one `lock or` (no compare-exchange loop). Two
    /// threads inserting into one block at the same instant may both count their key as new: a miscount,
    /// never a wrong bit.
    fn insert_with(&self, hashes: &[KeyHash], owned: bool) -> u64 {
        let mut new = 0;
        for (i, hash) in hashes.iter().enumerate() {
            if let Some(ahead) = hashes.get(i + PREFETCH_AHEAD) {
                let block = reduce(ahead.h1, self.blocks) as usize;
                if let Some(word) = self.words.get(self.offset + block * 8) {
                    crate::mem::prefetch_ptr(word.as_ptr() as *const u64);
                }
            }
            let block = reduce(hash.h1, self.blocks) as usize;
            let masks = masks_of(*hash, self.hashes, self.kernel);
            let base = self.offset + block * 8;
            let words = &self.words[base..base + 8];
            let mut missing = 0u64;
            for (w, m) in words.iter().zip(masks) {
                let old = w.load(Relaxed);
                missing |= !old & m;
                if owned {
                    w.store(old | m, Relaxed);
                }
            }
            if missing != 0 && !owned {
                for (w, m) in words.iter().zip(masks) {
                    w.fetch_or(m, Relaxed);
                }
            }
            new += (missing != 0) as u64;
        }
        new
    }
}

// SAFETY: `split_by_part` puts a key in the part of the block (one cache line, parts being whole blocks)
// holding its bits, and `insert_owned` writes only that block.
unsafe impl ConcurrentInsert for SharedBlocked<'_> {
    fn insert_hashes(&self, hashes: &[KeyHash]) -> u64 {
        self.insert_with(hashes, false)
    }
    fn part_of(&self, hash: KeyHash, parts: usize) -> Option<usize> {
        let block = reduce(hash.h1, self.blocks);
        Some(crate::structures::bits::part_of_index(
            block,
            self.blocks,
            parts,
        ))
    }
    fn split_by_part(&self, hashes: &[KeyHash], by_part: &mut [Vec<KeyHash>]) -> bool {
        let bounds = crate::structures::bits::PartBounds::new(self.blocks, by_part.len());
        for h in hashes {
            by_part[bounds.part(reduce(h.h1, self.blocks))].push(*h);
        }
        true
    }
    /// Two vector loads, ors and stores per key where the CPU has AVX2 (eight scalar stores per key filled
    /// the store buffer and kept two threads at about one thread's speed at 10⁹ keys).
    unsafe fn insert_owned(&self, hashes: &[KeyHash]) -> u64 {
        #[cfg(target_arch = "x86_64")]
        if self.kernel == Kernel::Vector {
            assert!(self.words.len() >= self.offset + self.blocks as usize * 8);
            // A pointer over the whole body (not one word's), writable: the words are atomics, whose
            // memory may be written through a shared reference wherever no other access races with it
            // (this function's contract).
            let body = self.words[self.offset..].as_ptr().cast::<u64>().cast_mut();
            assert!((body as usize).is_multiple_of(64));
            // SAFETY: `Kernel::Vector` is only chosen when the CPU has AVX2; the body is 64-byte aligned
            // (the filter's layout) and holds `blocks` blocks (asserted); the caller guarantees that no
            // other thread touches the blocks of `hashes` meanwhile.
            return unsafe {
                super::simd::insert_batch_raw(body, self.blocks, self.hashes, hashes)
            };
        }
        self.insert_with(hashes, true)
    }
}

//! `blocked` built by several threads at once: atomic ors where threads share blocks, plain stores where
//! each thread owns its blocks (the owner-writes build).

use super::*;

pub(super) struct SharedBlocked<'a> {
    pub(super) words: &'a [AtomicU64],
    pub(super) offset: usize,
    pub(super) blocks: u64,
    pub(super) hashes: u32,
    pub(super) simd: bool,
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
                    crate::structures::mem::prefetch_ptr(word.as_ptr() as *const u64);
                }
            }
            let block = reduce(hash.h1, self.blocks) as usize;
            let masks = masks_of(*hash, self.hashes, self.simd);
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

impl ConcurrentInsert for SharedBlocked<'_> {
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
    fn insert_owned(&self, hashes: &[KeyHash]) -> u64 {
        self.insert_with(hashes, true)
    }
}

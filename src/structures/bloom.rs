//! `bloom`: the standard Bloom filter (Bloom 1970), sized by m = ⌈−n·ln p / (ln 2)²⌉, k = round((m/n)·ln 2).
//!
//! Probe i of a key is `reduce(h1 + i·h2, m)` (Kirsch & Mitzenmacher 2006 double hashing, multiply-high range
//! reduction). Rate at fill n: (1 − (1 − 1/m)^(k·n))^k ([`crate::theory::bloom_fpr`]).

use super::bits::{or_owned, or_shared, part_of_index, BitArray, PartBounds};
use crate::hash::{reduce, KeyHash, KeyHasher};
use crate::keys::KeyBatch;
use crate::kind::{
    Advisor, BuildConfig, Capabilities, Descriptor, Family, Kind, MemoryModel, Placement,
    RateModel, Role,
};
use crate::membership::{ConcurrentInsert, Geometry, Membership};
use crate::persist::{corrupt, Loaded, Payload, SavedParts};
use crate::theory::{self, BloomSizing};
use std::sync::atomic::AtomicU64;

/// The registry id.
pub const ID: &str = "bloom";

/// Registry entry.
pub struct BloomKind;

/// The sizing a config asks for: the rate-based one, or the best k for a fixed number of bits.
pub fn sizing(config: &BuildConfig) -> BloomSizing {
    match config.array_bits {
        Some(bits) => BloomSizing::for_bits(config.expected_keys, bits.max(1)),
        None => BloomSizing::for_rate(config.expected_keys, config.fpr),
    }
}

/// What the registry knows about it.
pub static DESCRIPTOR: Descriptor = Descriptor {
    roles: &[Role::ReferenceBloom],
    advisor: Some(Advisor {
        pitch: "the smallest filter that meets the rate",
        rung:
            "even fingerprints no longer fit: a filter sized by m = -n ln p / ln²2 meets the rate",
        prefers_measured_bytes: false,
        size_for_advice: None,
    }),
    loader: Some(|saved| Ok(Box::new(Bloom::from_saved(saved)?))),
    at_full_suite_top: true,
    ..Descriptor::new(
        ID,
        "standard Bloom filter, m = -n ln p / ln²2, k = (m/n) ln 2",
        Family::Bloom,
        Placement::Ours,
        Capabilities::FILTER,
        RateModel::Fill,
    )
};

impl Kind for BloomKind {
    fn descriptor(&self) -> &Descriptor {
        &DESCRIPTOR
    }
    fn planned_geometry(&self, config: &BuildConfig) -> Geometry {
        let s = sizing(config);
        Geometry {
            bits: Some(s.bits),
            hashes: Some(s.hashes),
            slices: None,
        }
    }
    fn predicted_memory(&self, config: &BuildConfig) -> MemoryModel {
        MemoryModel::flat(sizing(config).bytes() as f64)
    }
    fn predicted_fpr(&self, config: &BuildConfig) -> f64 {
        sizing(config).fpr(config.expected_keys)
    }
    fn predicted_fpr_after(&self, config: &BuildConfig, n_inserted: u64) -> Option<f64> {
        Some(sizing(config).fpr(n_inserted))
    }
    fn build(&self, config: &BuildConfig) -> crate::Result<Box<dyn Membership>> {
        Ok(Box::new(Bloom::new(sizing(config), config.hasher())))
    }
}

/// A standard Bloom filter.
pub struct Bloom {
    bits: BitArray,
    hashes: u32,
    hasher: KeyHasher,
    inserted: u64,
}

impl Bloom {
    /// A filter of `sizing.bits` bits and `sizing.hashes` probes.
    pub fn new(sizing: BloomSizing, hasher: KeyHasher) -> Self {
        Bloom {
            bits: BitArray::new(sizing.bits),
            hashes: sizing.hashes,
            hasher,
            inserted: 0,
        }
    }

    /// Rebuilds a filter from a checked saved file.
    pub fn from_saved(mut saved: Loaded) -> crate::Result<Self> {
        let bits = saved.params.u64()?;
        let hashes = saved.params.u32()?;
        saved.params.finish()?;
        if hashes == 0 || hashes > 256 {
            return Err(corrupt(format!("k = {hashes} is outside 1..=256")));
        }
        let words = saved.payload.words(bits.div_ceil(64))?;
        saved.payload.finish()?;
        Ok(Bloom {
            bits: BitArray::from_words(bits, words)?,
            hashes,
            hasher: saved.hasher,
            inserted: saved.inserted,
        })
    }

    /// Share of bits set.
    pub fn fill_ratio(&self) -> f64 {
        self.bits.count_ones() as f64 / self.bits.len() as f64
    }

    /// Sets the key's k bits; returns whether any was clear.
    #[inline(always)]
    pub(crate) fn set_probes(bits: &mut BitArray, hashes: u32, hash: KeyHash) -> bool {
        let m = bits.len();
        let mut new = false;
        for i in 0..hashes {
            new |= bits.set(reduce(hash.probe(i), m));
        }
        new
    }

    /// Batched inserts in order: the k words of each key are prefetched a few keys ahead; `each(i, new)`
    /// hears whether key i was new and stops the batch after it by returning `false`. Returns how many of
    /// the keys inserted were new.
    #[inline(always)]
    fn insert_prefetched(
        &mut self,
        batch: &KeyBatch,
        mut each: impl FnMut(usize, bool) -> bool,
    ) -> u64 {
        const AHEAD: usize = 8;
        let hashes = batch.hashes();
        let m = self.bits.len();
        let mut new = 0;
        for (i, hash) in hashes.iter().enumerate() {
            if let Some(ahead) = hashes.get(i + AHEAD) {
                for p in 0..self.hashes {
                    crate::mem::prefetch_word(
                        self.bits.words(),
                        (reduce(ahead.probe(p), m) >> 6) as usize,
                    );
                }
            }
            let was_new = Bloom::set_probes(&mut self.bits, self.hashes, *hash);
            new += u64::from(was_new);
            if !each(i, was_new) {
                break;
            }
        }
        self.inserted = self.inserted.saturating_add(new);
        new
    }

    /// Whether all of the key's k bits are set.
    #[inline(always)]
    pub(crate) fn test_probes(bits: &BitArray, hashes: u32, hash: KeyHash) -> bool {
        let m = bits.len();
        (0..hashes).all(|i| bits.get(reduce(hash.probe(i), m)))
    }
}

impl Membership for Bloom {
    fn id(&self) -> &'static str {
        ID
    }
    fn hasher(&self) -> KeyHasher {
        self.hasher
    }
    #[inline]
    fn insert_hashed(&mut self, _key: &[u8], hash: KeyHash) -> bool {
        let new = Bloom::set_probes(&mut self.bits, self.hashes, hash);
        self.inserted = self.inserted.saturating_add(new as u64);
        new
    }
    #[inline]
    fn contains_hashed(&self, _key: &[u8], hash: KeyHash) -> bool {
        Bloom::test_probes(&self.bits, self.hashes, hash)
    }
    fn bytes_held(&self) -> u64 {
        self.bits.bytes()
    }
    fn n_inserted(&self) -> u64 {
        self.inserted
    }
    fn expected_fpr(&self, n_distinct: u64) -> f64 {
        theory::bloom_fpr(self.bits.len(), self.hashes, n_distinct)
    }
    fn geometry(&self) -> Geometry {
        Geometry {
            bits: Some(self.bits.len()),
            hashes: Some(self.hashes),
            slices: None,
        }
    }
    /// Batched inserts: the k words of each key are prefetched a few keys before they are written.
    fn batch_path(&self) -> bool {
        true
    }
    fn insert_batch(&mut self, batch: &KeyBatch) -> u64 {
        self.insert_prefetched(batch, |_, _| true)
    }
    fn insert_batch_if_new(
        &mut self,
        batch: &KeyBatch,
        each: &mut dyn FnMut(usize, bool) -> bool,
    ) -> u64 {
        self.insert_prefetched(batch, each)
    }
    /// Batched lookups: the k words of each key are prefetched a few keys ahead of the probes.
    fn contains_batch(&self, batch: &KeyBatch) -> u64 {
        const AHEAD: usize = 8;
        let hashes = batch.hashes();
        let m = self.bits.len();
        let words = self.bits.words();
        let mut found = 0;
        for (i, hash) in hashes.iter().enumerate() {
            if let Some(ahead) = hashes.get(i + AHEAD) {
                for p in 0..self.hashes {
                    crate::mem::prefetch_word(words, (reduce(ahead.probe(p), m) >> 6) as usize);
                }
            }
            found += Bloom::test_probes(&self.bits, self.hashes, *hash) as u64;
        }
        found
    }
    /// fill^k: exact for k independent probes, and close for double hashing at these sizes.
    fn fill_fpr(&self) -> Option<f64> {
        Some(self.fill_ratio().powi(self.hashes as i32))
    }
    fn concurrent_inserter(&mut self) -> Option<Box<dyn ConcurrentInsert + '_>> {
        let (m, hashes) = (self.bits.len(), self.hashes);
        Some(Box::new(SharedBloom {
            words: self.bits.atomic_words(),
            m,
            hashes,
        }))
    }
    fn add_inserted(&mut self, new: u64) {
        self.inserted = self.inserted.saturating_add(new);
    }
    fn saved_parts(&self) -> Option<SavedParts<'_>> {
        let mut params = self.bits.len().to_le_bytes().to_vec();
        params.extend_from_slice(&self.hashes.to_le_bytes());
        Some(SavedParts {
            params,
            payload: vec![Payload::Words(self.bits.words())],
        })
    }
}

struct SharedBloom<'a> {
    words: &'a [AtomicU64],
    m: u64,
    hashes: u32,
}

impl SharedBloom<'_> {
    /// Sets each key's k bits with `or`, prefetching the words of the key 8 ahead.
    fn insert_with(&self, hashes: &[KeyHash], or: impl Fn(&AtomicU64, u64) -> bool) -> u64 {
        let mut new = 0;
        for (j, hash) in hashes.iter().enumerate() {
            if let Some(ahead) = hashes.get(j + 8) {
                for p in 0..self.hashes {
                    let index = (reduce(ahead.probe(p), self.m) >> 6) as usize;
                    if let Some(word) = self.words.get(index) {
                        crate::mem::prefetch_ptr(word.as_ptr() as *const u64);
                    }
                }
            }
            let mut fresh = false;
            for i in 0..self.hashes {
                let pos = reduce(hash.probe(i), self.m);
                fresh |= or(&self.words[(pos >> 6) as usize], 1u64 << (pos & 63));
            }
            new += fresh as u64;
        }
        new
    }
}

// SAFETY: `split_by_part` puts a key in the part of the word holding its one bit (k = 1; with more probes
// there are no parts), and `insert_owned` writes only that word, with atomic loads and stores.
unsafe impl ConcurrentInsert for SharedBloom<'_> {
    fn insert_hashes(&self, hashes: &[KeyHash]) -> u64 {
        self.insert_with(hashes, or_shared)
    }
    /// With k = 1 a key's only bit lies in one part; with more probes its bits spread over the array.
    fn part_of(&self, hash: KeyHash, parts: usize) -> Option<usize> {
        let word = reduce(hash.probe(0), self.m) >> 6;
        (self.hashes == 1).then(|| part_of_index(word, self.words.len() as u64, parts))
    }
    fn split_by_part(&self, hashes: &[KeyHash], by_part: &mut [Vec<KeyHash>]) -> bool {
        if self.hashes != 1 {
            return false;
        }
        let bounds = PartBounds::new(self.words.len() as u64, by_part.len());
        for h in hashes {
            by_part[bounds.part(reduce(h.probe(0), self.m) >> 6)].push(*h);
        }
        true
    }
    unsafe fn insert_owned(&self, hashes: &[KeyHash]) -> u64 {
        if self.hashes == 1 {
            self.insert_with(hashes, or_owned)
        } else {
            self.insert_hashes(hashes)
        }
    }
}

//! `bitmap`: the raw bitmap of the "6 billion URLs in 1 GB" article: one hash maps a key into [0, m), one
//! bit per key. Default m = n (the article's sizing).
//!
//! The article says the bitmap "automatically deduplicates"; in fact a new key collides with an earlier one
//! with probability 1 − (1 − 1/m)ⁿ ([`crate::theory::bitmap_fpr`]): 63.2% at m = n.

use super::bits::{or_owned, or_shared, part_of_index, BitArray, PartBounds};
use crate::hash::{reduce, KeyHash, KeyHasher};
use crate::kind::{
    Advisor, BuildConfig, Capabilities, Descriptor, Family, Kind, MemoryModel, Placement,
    RateModel, Role,
};
use crate::mem::{prefetch_ptr, PREFETCH_AHEAD};
use crate::membership::{ConcurrentInsert, Geometry, Membership};
use crate::persist::{corrupt, Loaded, Payload, SavedParts};
use crate::theory;
use std::sync::atomic::AtomicU64;

/// The registry id.
pub const ID: &str = "bitmap";

/// Registry entry.
pub struct BitmapKind;

fn bits_for(config: &BuildConfig) -> u64 {
    config.array_bits.unwrap_or(config.expected_keys).max(1)
}

/// What the registry knows about it.
pub static DESCRIPTOR: Descriptor = Descriptor {
    roles: &[Role::RawBitmap],
    advisor: Some(Advisor {
        pitch: "one probe: needs ≈ 1/p bits per key",
        rung: "even fingerprints no longer fit: a one-probe bitmap of m = -n / ln(1 - p) bits meets the rate",
        prefers_measured_bytes: false,
        // Sized for the rate, m = -n / ln(1 - p), not the article's m = n.
        size_for_advice: Some(|config| {
            config.array_bits = Some((-(config.expected_keys as f64) / (-config.fpr).ln_1p()).ceil() as u64)
        }),
    }),
    loader: Some(|saved| Ok(Box::new(Bitmap::from_saved(saved)?))),
    at_full_suite_top: true,
    ..Descriptor::new(
        ID,
        "raw bitmap: one hash, one bit per key (m = n by default)",
        Family::Bitmap,
        Placement::Ours,
        Capabilities {
            sized_for_rate: false,
            ..Capabilities::FILTER
        },
        RateModel::Fill,
    )
};

impl Kind for BitmapKind {
    fn descriptor(&self) -> &Descriptor {
        &DESCRIPTOR
    }
    fn planned_geometry(&self, config: &BuildConfig) -> Geometry {
        Geometry {
            bits: Some(bits_for(config)),
            hashes: Some(1),
            slices: None,
        }
    }
    fn predicted_memory(&self, config: &BuildConfig) -> MemoryModel {
        MemoryModel::flat((bits_for(config).div_ceil(64) * 8) as f64)
    }
    fn predicted_fpr(&self, config: &BuildConfig) -> f64 {
        theory::bitmap_fpr(bits_for(config), config.expected_keys)
    }
    fn predicted_fpr_after(&self, config: &BuildConfig, n_inserted: u64) -> Option<f64> {
        Some(theory::bitmap_fpr(bits_for(config), n_inserted))
    }
    fn build(&self, config: &BuildConfig) -> crate::Result<Box<dyn Membership>> {
        Ok(Box::new(Bitmap::new(bits_for(config), config.hasher())))
    }
}

/// A one-probe bit array.
pub struct Bitmap {
    bits: BitArray,
    hasher: KeyHasher,
    inserted: u64,
}

impl Bitmap {
    /// A bitmap of `bits` bits.
    pub fn new(bits: u64, hasher: KeyHasher) -> Self {
        Bitmap {
            bits: BitArray::new(bits),
            hasher,
            inserted: 0,
        }
    }

    /// Rebuilds a bitmap from a checked saved file.
    pub fn from_saved(mut saved: Loaded) -> crate::Result<Self> {
        let bits = saved.params.u64()?;
        saved.params.finish()?;
        if bits == 0 {
            return Err(corrupt("a bitmap of 0 bits".into()));
        }
        let words = saved.payload.words(bits.div_ceil(64))?;
        saved.payload.finish()?;
        Ok(Bitmap {
            bits: BitArray::from_words(bits, words)?,
            hasher: saved.hasher,
            inserted: saved.inserted,
        })
    }

    /// Share of bits set.
    pub fn fill_ratio(&self) -> f64 {
        self.bits.count_ones() as f64 / self.bits.len() as f64
    }
}

impl Membership for Bitmap {
    fn id(&self) -> &'static str {
        ID
    }
    fn hasher(&self) -> KeyHasher {
        self.hasher
    }
    #[inline]
    fn insert_hashed(&mut self, _key: &[u8], hash: KeyHash) -> bool {
        let new = self.bits.set(reduce(hash.h1, self.bits.len()));
        self.inserted = self.inserted.saturating_add(new as u64);
        new
    }
    #[inline]
    fn contains_hashed(&self, _key: &[u8], hash: KeyHash) -> bool {
        self.bits.get(reduce(hash.h1, self.bits.len()))
    }
    fn bytes_held(&self) -> u64 {
        self.bits.bytes()
    }
    fn n_inserted(&self) -> u64 {
        self.inserted
    }
    fn expected_fpr(&self, n_distinct: u64) -> f64 {
        theory::bitmap_fpr(self.bits.len(), n_distinct)
    }
    fn geometry(&self) -> Geometry {
        Geometry {
            bits: Some(self.bits.len()),
            hashes: Some(1),
            slices: None,
        }
    }
    /// Exact: a non-member's one probe hits a set bit with probability fill.
    fn fill_fpr(&self) -> Option<f64> {
        Some(self.fill_ratio())
    }
    fn concurrent_inserter(&mut self) -> Option<Box<dyn ConcurrentInsert + '_>> {
        let m = self.bits.len();
        Some(Box::new(SharedBitmap {
            words: self.bits.atomic_words(),
            m,
        }))
    }
    fn add_inserted(&mut self, new: u64) {
        self.inserted = self.inserted.saturating_add(new);
    }
    fn saved_parts(&self) -> Option<SavedParts<'_>> {
        Some(SavedParts {
            params: self.bits.len().to_le_bytes().to_vec(),
            payload: vec![Payload::Words(self.bits.words())],
        })
    }
}

struct SharedBitmap<'a> {
    words: &'a [AtomicU64],
    m: u64,
}

impl SharedBitmap<'_> {
    /// Sets each key's bit with `or`, prefetching each word ahead so the misses overlap.
    fn insert_with(&self, hashes: &[KeyHash], or: impl Fn(&AtomicU64, u64) -> bool) -> u64 {
        let mut new = 0;
        for (j, hash) in hashes.iter().enumerate() {
            if let Some(ahead) = hashes.get(j + PREFETCH_AHEAD) {
                if let Some(word) = self.words.get((reduce(ahead.h1, self.m) >> 6) as usize) {
                    prefetch_ptr(word.as_ptr() as *const u64);
                }
            }
            let pos = reduce(hash.h1, self.m);
            new += or(&self.words[(pos >> 6) as usize], 1u64 << (pos & 63)) as u64;
        }
        new
    }
}

// SAFETY: `split_by_part` puts a key in the part of the word holding its bit, and `insert_owned` writes
// only that word, with atomic loads and stores.
unsafe impl ConcurrentInsert for SharedBitmap<'_> {
    fn insert_hashes(&self, hashes: &[KeyHash]) -> u64 {
        self.insert_with(hashes, or_shared)
    }
    fn part_of(&self, hash: KeyHash, parts: usize) -> Option<usize> {
        let word = reduce(hash.h1, self.m) >> 6;
        Some(part_of_index(word, self.words.len() as u64, parts))
    }
    fn split_by_part(&self, hashes: &[KeyHash], by_part: &mut [Vec<KeyHash>]) -> bool {
        let bounds = PartBounds::new(self.words.len() as u64, by_part.len());
        for h in hashes {
            by_part[bounds.part(reduce(h.h1, self.m) >> 6)].push(*h);
        }
        true
    }
    unsafe fn insert_owned(&self, hashes: &[KeyHash]) -> u64 {
        self.insert_with(hashes, or_owned)
    }
}

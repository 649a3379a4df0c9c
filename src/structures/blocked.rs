//! `blocked`: a cache-blocked Bloom filter. All k probes of a key fall in one 64-byte cache line: the block
//! is chosen by h1 (multiply-high over the blocks), and probe i sets one bit of word i mod 8 (a sectorised,
//! split-block layout as in Impala/Parquet's SBBF, with 64-bit words). The bit of probe i is 6 bits of a
//! 64-bit source taken at a fixed place ([`SHIFTS`]): the source of probes 0–7 is h1 times a constant, that
//! of probes 8–15 and 16–23 h1 through a finaliser ([`source`]); the layout reads h1 alone, as the peers
//! do. A key's masks cost one multiply and shifts, not the k multiplies of a salted layout, and the whole
//! lookup is a few vector instructions ([`simd`]). One cache miss per key instead of k.
//!
//! Theory: [`crate::theory::blocked_sector_fpr`], the per-block Poisson mixture of Putze, Sanders and
//! Singler (2007) for this layout (each probe an independent uniform bit of its word). Sizing for a target p
//! solves that formula for the fewest whole blocks ([`crate::theory::blocked_sizing`]), so the blocking
//! penalty is paid in bits: 10.10 bits per key at 1% against 9.59 for the standard filter.
//!
//! Batched paths prefetch each key's block [`PREFETCH_AHEAD`] keys before probing it; on CPUs with AVX2
//! every path computes the masks and tests the block with vector instructions ([`simd`]), bit-for-bit the
//! same filter as the scalar path.
//!
//! Files saved before the split layout used salted probes (bit = top 6 bits of h2·saltᵢ); they name no
//! layout in their parameters and load as [`Kernel::Salted`] filters, answered on the scalar path with
//! those probes, so a crawler's saved filter survives the change.
//!
//! Invariant: the blocks start on a 64-byte boundary: the words are over-allocated by one block and
//! `offset` words are skipped.

use super::bits::as_atomic;
use crate::hash::{fmix64, reduce, KeyHash, KeyHasher};
use crate::keys::KeyBatch;
use crate::kind::{
    Advisor, BuildConfig, Capabilities, Descriptor, Family, Kind, MemoryModel, OwnTarget,
    Placement, RateModel, Role,
};
use crate::mem::{advise_huge_pages, prefetch_word, PREFETCH_AHEAD};
use crate::membership::{ConcurrentInsert, Geometry, Membership};
use crate::persist::{corrupt, Loaded, Payload, SavedParts};
use crate::theory::{self, BLOCK_WORDS};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

/// The registry id.
pub const ID: &str = "blocked";

mod concurrent;
#[cfg(target_arch = "x86_64")]
mod simd;

use concurrent::SharedBlocked;

/// Where probe j of a round takes its 6 bits in the round's source: bits [s, s + 6) for s = SHIFTS[j].
const SHIFTS: [u64; 8] = [58, 52, 46, 40, 34, 28, 22, 16];

/// The 64-bit source of a round of 8 probes, from h1 alone (the 64 bits every peer is handed, so a
/// 64-bit hash's derived h2 is never work done for us outside the timed call): h1 times an odd constant
/// for the first round (bits 16–63 of the product hang on h1's low bits, which the block, taken from its
/// high bits, does not), h1 through murmur3's finaliser (offset per round) for the others.
#[inline(always)]
fn source(h1: u64, round: u32) -> u64 {
    if round == 0 {
        h1.wrapping_mul(0x9E37_79B9_7F4A_7C15)
    } else {
        fmix64(h1.wrapping_add(u64::from(round).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)))
    }
}

/// The layout the parameters of a saved split-layout filter name (files without it are salted).
const SPLIT_LAYOUT: u32 = 2;

/// The salted layout's odd multipliers, one per probe (the first eight are Parquet's SBBF salts widened to
/// 64 bits): only filters loaded from files saved before the split layout probe with them.
const SALTS: [u64; 24] = [
    0x47b6_137b_4497_4d91,
    0x8824_ad5b_a2b7_289d,
    0x7054_95c7_2df1_424b,
    0x9efc_4947_5c6b_fb31,
    0x9e37_79b9_7f4a_7c15,
    0xc2b2_ae3d_27d4_eb4f,
    0x1656_67b1_9e37_79f9,
    0xd6e8_feb8_6659_fd93,
    0xa076_1d64_78bd_642f,
    0xe703_7ed1_a0b4_28db,
    0x8ebc_6af0_9c88_c6e3,
    0x5899_65cc_7537_4cc3,
    0x1d8e_4e27_c47d_124f,
    0xbf58_476d_1ce4_e5b9,
    0x94d0_49bb_1331_11eb,
    0x2545_f491_4f6c_dd1d,
    0x9fb2_1c65_1e98_df25,
    0xff51_afd7_ed55_8ccd,
    0xc4ce_b9fe_1a85_ec53,
    0x8764_8f16_5afa_5f39,
    0x3c6e_f372_fe94_f82b,
    0xa54f_f53a_5f1d_36f1,
    0x510e_527f_ade6_82d1,
    0x9b05_688c_2b3e_6c1f,
];
/// The most probes per key.
pub const MAX_HASHES: u32 = SALTS.len() as u32;

/// How a filter computes its probes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kernel {
    /// The split layout on AVX2 ([`simd`]).
    Vector,
    /// The split layout in scalar code (no AVX2).
    Scalar,
    /// The salted layout of a file saved before the split one, in scalar code.
    Salted,
}

/// Registry entry.
pub struct BlockedKind;

fn sizing(config: &BuildConfig) -> (u64, u32) {
    match config.array_bits {
        Some(bits) => (bits.div_ceil(512).max(1), 8),
        None => solved_sizing(config.expected_keys, config.fpr),
    }
}

/// [`theory::blocked_sizing`], remembered by (n, p). Solving the Poisson mixture for the fewest blocks
/// costs 7 probe counts × 51 bisection steps whatever n is; the harness sizes every cell before it
/// allocates (memory guard, predicted rate), and without this each repetition's timed construction
/// would pay the solve again (docs/notes.md give the cost measured).
fn solved_sizing(n: u64, p: f64) -> (u64, u32) {
    /// (n, bits of p) → (blocks, k).
    type Solved = Vec<((u64, u64), (u64, u32))>;
    static SOLVED: Mutex<Solved> = Mutex::new(Vec::new());
    let key = (n, p.to_bits());
    let mut solved = SOLVED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&(_, s)) = solved.iter().find(|(k, _)| *k == key) {
        return s;
    }
    let s = theory::blocked_sizing(n, p);
    if solved.len() >= 64 {
        solved.remove(0);
    }
    solved.push((key, s));
    s
}

/// The geometry of a filter built for `config` (the windowed filter's generations are such filters).
pub fn planned_geometry(config: &BuildConfig) -> Geometry {
    let (blocks, k) = sizing(config);
    Geometry {
        bits: Some(blocks * theory::BLOCK_BITS),
        hashes: Some(k),
        slices: None,
    }
}

/// The memory of a filter built for `config`: its blocks and one cache line of alignment slack.
pub fn predicted_memory(config: &BuildConfig) -> MemoryModel {
    MemoryModel::flat(((sizing(config).0 + 1) * 64) as f64)
}

/// What the registry knows about it.
pub static DESCRIPTOR: Descriptor = Descriptor {
    roles: &[Role::BlockedBloom],
    own_targets: &[
        OwnTarget::BitsAgainst {
            of: Role::ReferenceBloom,
            max_ratio: 1.15,
        },
        OwnTarget::LookupOverFloor {
            max_ratio: 1.3,
            at_keys: 1_000_000_000,
        },
        OwnTarget::ParallelSpeedup {
            min_ratio: 1.6,
            at_keys: 1_000_000_000,
        },
        OwnTarget::DedupOverExactTools {
            min_ratio: 3.0,
            at_lines: crate::results::DEDUP_CLI_LINES,
        },
    ],
    advisor: Some(Advisor {
        pitch: "one cache miss per lookup",
        rung: "even fingerprints no longer fit: a cache-blocked filter meets the rate with one cache miss per lookup",
        prefers_measured_bytes: false,
        size_for_advice: None,
    }),
    loader: Some(|saved| Ok(Box::new(Blocked::from_saved(saved)?))),
    at_full_suite_top: true,
    ..Descriptor::new(
        ID,
        "cache-blocked Bloom filter: k bits in one 512-bit block (one cache miss per key)",
        Family::BlockedBloom,
        Placement::Ours,
        Capabilities::FILTER,
        RateModel::Fill,
    )
};

impl Kind for BlockedKind {
    fn descriptor(&self) -> &Descriptor {
        &DESCRIPTOR
    }
    fn planned_geometry(&self, config: &BuildConfig) -> Geometry {
        planned_geometry(config)
    }
    fn predicted_memory(&self, config: &BuildConfig) -> MemoryModel {
        predicted_memory(config)
    }
    fn predicted_fpr(&self, config: &BuildConfig) -> f64 {
        let (blocks, k) = sizing(config);
        theory::blocked_sector_fpr(blocks * 512, k, config.expected_keys)
    }
    fn predicted_fpr_after(&self, config: &BuildConfig, n_inserted: u64) -> Option<f64> {
        let (blocks, k) = sizing(config);
        Some(theory::blocked_sector_fpr(blocks * 512, k, n_inserted))
    }
    fn build(&self, config: &BuildConfig) -> crate::Result<Box<dyn Membership>> {
        let (blocks, k) = sizing(config);
        Ok(Box::new(Blocked::new(blocks, k, config.hasher())))
    }
}

/// A cache-blocked Bloom filter.
pub struct Blocked {
    words: Vec<u64>,
    offset: usize,
    blocks: u64,
    hashes: u32,
    hasher: KeyHasher,
    inserted: u64,
    /// How its probes are computed.
    kernel: Kernel,
}

/// The kernel of a new filter on this CPU.
fn split_kernel() -> Kernel {
    #[cfg(target_arch = "x86_64")]
    if simd::available() {
        return Kernel::Vector;
    }
    Kernel::Scalar
}

/// The 8 word masks of a key under `kernel` (the vector and scalar kernels give the same bits).
#[inline(always)]
fn masks_of(hash: KeyHash, hashes: u32, kernel: Kernel) -> [u64; 8] {
    match kernel {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Kernel::Vector` is only chosen when `simd::available()` found AVX2.
        Kernel::Vector => unsafe { simd::masks(hash.h1, hashes) },
        Kernel::Salted => salted_masks(hash.h2, hashes),
        _ => split_masks(hash.h1, hashes),
    }
}

/// The split layout's masks: probe 8r + j sets bit (source(h1, r) >> SHIFTS[j]) mod 64 of word j.
#[inline(always)]
fn split_masks(h1: u64, hashes: u32) -> [u64; 8] {
    let mut masks = [0u64; 8];
    for round in 0..hashes.div_ceil(8) {
        let src = source(h1, round);
        let probes = (hashes - round * 8).min(8) as usize;
        for (mask, shift) in masks.iter_mut().zip(SHIFTS).take(probes) {
            *mask |= 1u64 << ((src >> shift) & 63);
        }
    }
    masks
}

/// The salted layout's masks: probe i sets bit (h2·saltᵢ) >> 58 of word i mod 8.
#[inline(always)]
fn salted_masks(h2: u64, hashes: u32) -> [u64; 8] {
    let mut masks = [0u64; 8];
    for (i, salt) in SALTS.iter().enumerate().take(hashes as usize) {
        masks[i % 8] |= 1u64 << (h2.wrapping_mul(*salt) >> 58);
    }
    masks
}

impl Blocked {
    /// A filter of `blocks` 512-bit blocks with `hashes` probes per key (1 ≤ k ≤ 24).
    pub fn new(blocks: u64, hashes: u32, hasher: KeyHasher) -> Self {
        assert!((1..=MAX_HASHES).contains(&hashes), "k must be in 1..=24");
        let blocks = blocks.max(1);
        let words = vec![0u64; (blocks as usize + 1) * 8];
        let offset = (words.as_ptr() as usize)
            .next_multiple_of(64)
            .wrapping_sub(words.as_ptr() as usize)
            / 8;
        advise_huge_pages(&words);
        Blocked {
            words,
            offset,
            blocks,
            hashes,
            hasher,
            inserted: 0,
            kernel: split_kernel(),
        }
    }

    /// The blocks' words (without the alignment padding).
    fn body(&self) -> &[u64] {
        &self.words[self.offset..self.offset + self.blocks as usize * 8]
    }

    /// Rebuilds a filter from a checked saved file.
    pub fn from_saved(mut saved: Loaded) -> crate::Result<Self> {
        let blocks = saved.params.u64()?;
        let hashes = saved.params.u32()?;
        // Files saved before the split layout end their parameters here.
        let kernel = if saved.params.is_empty() {
            Kernel::Salted
        } else {
            match saved.params.u32()? {
                SPLIT_LAYOUT => split_kernel(),
                other => {
                    return Err(corrupt(format!(
                        "probe layout {other} is unknown (this build reads the salted layout and layout {SPLIT_LAYOUT})"
                    )))
                }
            }
        };
        saved.params.finish()?;
        if blocks == 0 || !(1..=MAX_HASHES).contains(&hashes) || blocks > (1 << 40) {
            return Err(corrupt(format!(
                "{blocks} blocks with k = {hashes} is out of range"
            )));
        }
        let words = saved.payload.words(blocks * 8)?;
        saved.payload.finish()?;
        let mut filter = Blocked::new(blocks, hashes, saved.hasher);
        let offset = filter.offset;
        filter.words[offset..offset + words.len()].copy_from_slice(&words);
        filter.inserted = saved.inserted;
        filter.kernel = kernel;
        Ok(filter)
    }

    /// Scalar batched inserts in order: each key's block is prefetched [`PREFETCH_AHEAD`] keys before it
    /// is written; `each(i, new)` hears whether key i was new and stops the batch after it by returning
    /// `false`. Returns how many of the keys inserted were new.
    #[inline(always)]
    fn insert_prefetched(
        &mut self,
        batch: &KeyBatch,
        mut each: impl FnMut(usize, bool) -> bool,
    ) -> u64 {
        let hashes = batch.hashes();
        let mut new = 0;
        for (i, hash) in hashes.iter().enumerate() {
            if let Some(ahead) = hashes.get(i + PREFETCH_AHEAD) {
                let block = reduce(ahead.h1, self.blocks) as usize;
                prefetch_word(&self.words, self.offset + block * 8);
            }
            let was_new = self.insert_hashed(&[], *hash);
            new += u64::from(was_new);
            if !each(i, was_new) {
                break;
            }
        }
        new
    }

    /// The per-key insert without AVX2 or in the salted layout (kept out of line, so the vector path's
    /// call stays small).
    #[inline(never)]
    fn insert_scalar(&mut self, hash: KeyHash) -> bool {
        let block = reduce(hash.h1, self.blocks) as usize;
        let masks = masks_of(hash, self.hashes, self.kernel);
        let base = self.offset + block * 8;
        let words: &mut [u64; 8] = (&mut self.words[base..base + 8])
            .try_into()
            .expect("8 words");
        let mut missing = 0u64;
        for i in 0..8 {
            missing |= !words[i] & masks[i];
            words[i] |= masks[i];
        }
        let new = missing != 0;
        self.inserted = self.inserted.saturating_add(new as u64);
        new
    }

    /// The per-key lookup without AVX2 or in the salted layout.
    #[inline(never)]
    fn contains_scalar(&self, hash: KeyHash) -> bool {
        let block = reduce(hash.h1, self.blocks) as usize;
        self.probe(block, &masks_of(hash, self.hashes, self.kernel))
    }

    /// Whether every needed bit of the block is set: branch-free over the 8 words (one compare at the end).
    #[inline(always)]
    fn probe(&self, block: usize, masks: &[u64; 8]) -> bool {
        let base = self.offset + block * BLOCK_WORDS as usize;
        let words: &[u64; 8] = self.words[base..base + 8].try_into().expect("8 words");
        let mut missing = 0u64;
        for i in 0..8 {
            missing |= !words[i] & masks[i];
        }
        missing == 0
    }
}

impl Membership for Blocked {
    fn id(&self) -> &'static str {
        ID
    }
    fn hasher(&self) -> KeyHasher {
        self.hasher
    }
    #[inline]
    fn insert_hashed(&mut self, _key: &[u8], hash: KeyHash) -> bool {
        #[cfg(target_arch = "x86_64")]
        if self.kernel == Kernel::Vector {
            // SAFETY: `offset` < 8 ≤ the words' length (they hold one block more than `blocks`).
            let body = unsafe { self.words.as_mut_ptr().add(self.offset) };
            // SAFETY: `Kernel::Vector` is only chosen when the CPU has AVX2; the body is 64-byte aligned
            // and holds `blocks` blocks (the words are allocated so), borrowed mutably here.
            let new = unsafe { simd::insert_one(body, self.blocks, self.hashes, hash) };
            self.inserted = self.inserted.saturating_add(new as u64);
            return new;
        }
        self.insert_scalar(hash)
    }
    #[inline]
    fn contains_hashed(&self, _key: &[u8], hash: KeyHash) -> bool {
        #[cfg(target_arch = "x86_64")]
        if self.kernel == Kernel::Vector {
            // SAFETY: `Kernel::Vector` is only chosen when the CPU has AVX2; the body is 64-byte aligned
            // and holds `blocks` blocks (the words are allocated so).
            // (`offset` < 8 ≤ the words' length: they hold one block more than `blocks`.)
            return unsafe {
                simd::contains_one(
                    self.words.as_ptr().add(self.offset),
                    self.blocks,
                    self.hashes,
                    hash,
                )
            };
        }
        self.contains_scalar(hash)
    }
    /// Batched inserts: each key's block is prefetched [`PREFETCH_AHEAD`] keys before it is written, so
    /// the cache misses of a batch overlap instead of queueing behind each other.
    fn batch_path(&self) -> bool {
        true
    }
    fn insert_batch(&mut self, batch: &KeyBatch) -> u64 {
        let hashes = batch.hashes();
        #[cfg(target_arch = "x86_64")]
        if self.kernel == Kernel::Vector {
            let (blocks, k) = (self.blocks, self.hashes);
            let body = &mut self.words[self.offset..self.offset + blocks as usize * 8];
            // SAFETY: `Kernel::Vector` is only chosen when the CPU has AVX2; `body` is 64-byte aligned.
            let new = unsafe { simd::insert_batch(body, blocks, k, hashes) };
            self.inserted = self.inserted.saturating_add(new);
            return new;
        }
        self.insert_prefetched(batch, |_, _| true)
    }
    /// Each key's block prefetched [`PREFETCH_AHEAD`] keys ahead, its answer heard before the next key:
    /// the vector kernel where the CPU has AVX2, the scalar prefetching path otherwise.
    fn insert_batch_if_new(
        &mut self,
        batch: &KeyBatch,
        each: &mut dyn FnMut(usize, bool) -> bool,
    ) -> u64 {
        #[cfg(target_arch = "x86_64")]
        if self.kernel == Kernel::Vector {
            let (blocks, k) = (self.blocks, self.hashes);
            let body = &mut self.words[self.offset..self.offset + blocks as usize * 8];
            // SAFETY: `Kernel::Vector` is only chosen when the CPU has AVX2; `body` is 64-byte aligned.
            let new = unsafe { simd::insert_each(body, blocks, k, batch.hashes(), each) };
            self.inserted = self.inserted.saturating_add(new);
            return new;
        }
        self.insert_prefetched(batch, each)
    }
    /// Batched lookups: each key's block is prefetched [`PREFETCH_AHEAD`] keys before it is probed, so a
    /// filter far larger than the caches is bound by memory parallelism rather than latency.
    fn contains_batch(&self, batch: &KeyBatch) -> u64 {
        let hashes = batch.hashes();
        #[cfg(target_arch = "x86_64")]
        if self.kernel == Kernel::Vector {
            // SAFETY: `Kernel::Vector` is only chosen when the CPU has AVX2; `body` is 64-byte aligned.
            return unsafe { simd::contains_batch(self.body(), self.blocks, self.hashes, hashes) };
        }
        let mut found = 0;
        for (i, hash) in hashes.iter().enumerate() {
            if let Some(ahead) = hashes.get(i + PREFETCH_AHEAD) {
                let block = reduce(ahead.h1, self.blocks) as usize;
                prefetch_word(&self.words, self.offset + block * 8);
            }
            let block = reduce(hash.h1, self.blocks) as usize;
            found += self.probe(block, &masks_of(*hash, self.hashes, self.kernel)) as u64;
        }
        found
    }
    fn bytes_held(&self) -> u64 {
        self.words.capacity() as u64 * 8
    }
    fn n_inserted(&self) -> u64 {
        self.inserted
    }
    fn expected_fpr(&self, n_distinct: u64) -> f64 {
        theory::blocked_sector_fpr(self.blocks * 512, self.hashes, n_distinct)
    }
    /// The rate a uniform query sees on this filter: the mean over blocks of Π_w (set bits of word w /
    /// 64)^c_w, c_w the probes word w takes (the model of [`theory::blocked_sector_fpr`], at this fill).
    fn fill_fpr(&self) -> Option<f64> {
        let per_word: [i32; 8] = std::array::from_fn(|w| {
            (self.hashes / 8 + u32::from((w as u32) < self.hashes % 8)) as i32
        });
        let sum: f64 = self
            .body()
            .chunks_exact(8)
            .map(|block| {
                block
                    .iter()
                    .zip(per_word)
                    .map(|(word, c)| (word.count_ones() as f64 / 64.0).powi(c))
                    .product::<f64>()
            })
            .sum();
        Some(sum / self.blocks as f64)
    }
    fn geometry(&self) -> Geometry {
        Geometry {
            bits: Some(self.blocks * 512),
            hashes: Some(self.hashes),
            slices: None,
        }
    }
    fn add_inserted(&mut self, new: u64) {
        self.inserted = self.inserted.saturating_add(new);
    }
    fn saved_parts(&self) -> Option<SavedParts<'_>> {
        let mut params = self.blocks.to_le_bytes().to_vec();
        params.extend_from_slice(&self.hashes.to_le_bytes());
        // A salted filter is saved as it was loaded, so it loads again as salted.
        if self.kernel != Kernel::Salted {
            params.extend_from_slice(&SPLIT_LAYOUT.to_le_bytes());
        }
        Some(SavedParts {
            params,
            payload: vec![Payload::Words(self.body())],
        })
    }
    fn concurrent_inserter(&mut self) -> Option<Box<dyn ConcurrentInsert + '_>> {
        let (offset, blocks, hashes, kernel) = (self.offset, self.blocks, self.hashes, self.kernel);
        Some(Box::new(SharedBlocked {
            words: as_atomic(&mut self.words),
            offset,
            blocks,
            hashes,
            kernel,
        }))
    }
}

#[cfg(test)]
mod tests;

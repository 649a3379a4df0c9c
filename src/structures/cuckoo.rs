//! `cuckoo`: the cuckoo filter (Fan, Andersen, Kaminsky, Mitzenmacher, "Cuckoo Filter: Practically Better
//! Than Bloom", CoNEXT 2014), for deletions at about a Bloom filter's memory instead of a counting filter's 4×.
//!
//! Layout: m buckets (at least 2) of b = 4 slots; a slot holds an f-bit fingerprint, 0
//! meaning empty, so fingerprints take the 2^f − 1 non-zero values. Slots are bit-packed, f bits each,
//! end to end in one array of 64-bit words (two words of padding at its end, so a bucket is three word
//! loads): the table is m·4·f bits, f/α bits per key at load α, the paper's figure. Slots of u8/u16/u32
//! would round f = 10 (p = 1%) up to 16 bits, 60% more memory than the filter needs; semi-sorting (the
//! paper's one bit per key saved) is not done.
//!
//! Sizing for n keys at rate p: f = ⌈log₂(2b/p)⌉ clamped to [`FINGERPRINT_BITS`] (the smallest f with
//! 2b/2^f ≤ p, the bound at full load), and m = ⌈n/(4·[`MAX_LOAD`])⌉ (at least 2), [`MAX_LOAD`] = 0.95
//! being the load the paper reaches with b = 4 and 500 kicks: the planned load is 0.95 but for rounding,
//! so the table costs f/0.95 bits per key at every n (a power of two of buckets would cost up to twice).
//!
//! Hashing is apart from probing: from the key's [`KeyHash`], i₁ = `reduce(h1, m)` (the top bits of h1)
//! and the fingerprint 1 + `reduce(h2, 2^f − 1)`, uniform over the non-zero values. Partial-key cuckoo
//! hashing: i₂ = (o(fp) − i₁) mod m with o(fp) = `reduce(fmix64(fp), m)`: each bucket is the other's
//! alternate, computed from the fingerprint alone, for any m (the paper's i₁ ⊕ h(fp) needs a power of
//! two). The two coincide when 2·i₁ ≡ o (mod m), for about one key in m, which then has one bucket.
//!
//! Insert stores the fingerprint in a free slot of i₁, else of i₂, else evicts a random fingerprint of
//! one of them and moves it to its alternate bucket, up to [`MAX_KICKS`] = 500 times (the paper's); the
//! random choices come from a generator seeded with the hash seed, so a run is repeatable. Every insert
//! stores a fingerprint (a key inserted twice holds two, and removing it once keeps the other);
//! [`Membership::insert_if_new`] stores only keys not already present.
//!
//! Invariants, at capacity included (never a silent loss):
//! 1. When the kicks run out, the fingerprint still homeless is kept in one victim slot with its bucket,
//!    which lookups and removals check: the key just inserted stays present, and every key held stays
//!    held.
//! 2. While the victim slot is in use, an insert whose two buckets are full is refused: nothing changes,
//!    the key is not called present because of it, the refusal is counted, and [`Membership::failure`]
//!    reports it from then on (the harness and `dedup` stop on it). A removal frees a slot and moves the
//!    victim back into the table.
//! 3. `occupancy[c]` is the number of buckets holding c fingerprints, kept in step with the table;
//!    `held` counts the fingerprints of the table and the victim.
//! 4. `remove` of a key whose fingerprint is in neither of its buckets nor the victim slot returns
//!    `false` and changes nothing. (As with any filter that deletes, removing a key never inserted can
//!    remove another key's fingerprint: callers remove only keys they inserted.)
//!
//! Rate: a non-member meets the fingerprints of its two buckets, each equal to its own with
//! ε = 1/(2^f − 1): at load α, 1 − (1 − ε)^(2b·α) ([`theory::cuckoo_fpr`]), and at the actual table the
//! mean over bucket pairs of 1 − (1 − ε)^(c_a + c_b) from the occupancy histogram, the victim included
//! ([`theory::cuckoo_fill_fpr`], [`Membership::fill_fpr`]).

use crate::hash::{fmix64, reduce, splitmix64, KeyHash, KeyHasher};
use crate::kind::{
    Advisor, BuildConfig, Capabilities, Descriptor, Family, Kind, MemoryModel, Placement, RateModel,
};
use crate::membership::{Geometry, Membership, Removable};
use crate::persist::{corrupt, Loaded, Payload, SavedParts};
use crate::theory;
use std::ops::RangeInclusive;

/// The registry id.
pub const ID: &str = "cuckoo";

/// Slots per bucket (the paper's b = 4).
pub const SLOTS: usize = 4;
/// Evictions an insert tries before it keeps the homeless fingerprint in the victim slot.
pub const MAX_KICKS: u32 = 500;
/// The load the table is sized for at most: keys / slots.
pub const MAX_LOAD: f64 = 0.95;
/// The fingerprint widths the sizing chooses from.
pub const FINGERPRINT_BITS: RangeInclusive<u32> = 4..=32;
/// Words after the table, so that a bucket's three-word read stays inside the array.
const PAD_WORDS: u64 = 2;
/// The most buckets a saved file may declare (2⁴⁷ keys at load 0.475 need fewer).
const MAX_BUCKETS: u64 = 1 << 47;

/// Registry entry.
pub struct CuckooKind;

/// What the registry knows about it.
pub static DESCRIPTOR: Descriptor = Descriptor {
    advisor: Some(Advisor {
        pitch: "deletions at f/α bits per key (a Bloom filter's memory, not 4×); refuses inserts past its capacity",
        rung: "even fingerprints no longer fit: a cuckoo filter (buckets of 4 slots, f = ⌈log₂(8/p)⌉-bit fingerprints, load ≤ 95%) meets the rate and deletes",
        prefers_measured_bytes: false,
        size_for_advice: None,
    }),
    loader: Some(|saved| Ok(Box::new(Cuckoo::from_saved(saved)?))),
    ..Descriptor::new(
        ID,
        "cuckoo filter, buckets of 4 f-bit fingerprints at load ≤ 95% (supports remove; refuses inserts when full)",
        Family::FingerprintTable,
        Placement::Ours,
        Capabilities {
            removable: true,
            // Past its capacity it refuses inserts (and says so) rather than store them.
            stores_past_capacity: false,
            ..Capabilities::FILTER
        },
        RateModel::Fill,
    )
};

/// The geometry of a cuckoo filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CuckooSizing {
    /// m ≥ 2.
    pub buckets: u64,
    /// f, within [`FINGERPRINT_BITS`].
    pub fingerprint_bits: u32,
}

impl CuckooSizing {
    /// The sizing for `n` keys at rate `p` (see the module's documentation).
    pub fn for_rate(n: u64, p: f64) -> Self {
        CuckooSizing {
            buckets: buckets_for(n),
            fingerprint_bits: fingerprint_bits_for(p),
        }
    }
    /// Slots: 4m.
    pub fn slots(&self) -> u64 {
        self.buckets * SLOTS as u64
    }
    /// Bits of the table: 4m·f.
    pub fn table_bits(&self) -> u64 {
        self.slots() * u64::from(self.fingerprint_bits)
    }
    /// Words of the array: the table's and the padding.
    pub fn words(&self) -> u64 {
        self.table_bits().div_ceil(64) + PAD_WORDS
    }
    /// Bytes of the array.
    pub fn bytes(&self) -> u64 {
        self.words() * 8
    }
    /// The load after `n` fingerprints (at most 1: a full table refuses the rest).
    pub fn load(&self, n: u64) -> f64 {
        n.min(self.slots()) as f64 / self.slots() as f64
    }
    /// The expected rate after `n` keys: 1 − (1 − ε)^(2b·α) at load α = n/(4m).
    pub fn fpr(&self, n: u64) -> f64 {
        theory::cuckoo_fpr(self.fingerprint_bits, SLOTS as u32, self.load(n))
    }
    /// The keys the table is sized to take at most: 0.95 of its slots.
    pub fn capacity(&self) -> u64 {
        (self.slots() as f64 * MAX_LOAD) as u64
    }
}

/// The fingerprint width for rate `p`: the smallest f in [`FINGERPRINT_BITS`] with 2b/2^f ≤ p.
pub fn fingerprint_bits_for(p: f64) -> u32 {
    let bound = 2.0 * SLOTS as f64 / p;
    let mut f = *FINGERPRINT_BITS.start();
    while f < *FINGERPRINT_BITS.end() && (2f64).powi(f as i32) < bound {
        f += 1;
    }
    f
}

/// The buckets for `n` keys: the fewest (at least 2) with n/(4m) ≤ [`MAX_LOAD`].
pub fn buckets_for(n: u64) -> u64 {
    let wanted = (n.max(1) as f64 / (SLOTS as f64 * MAX_LOAD)).ceil() as u64;
    wanted.max(2)
}

impl Kind for CuckooKind {
    fn descriptor(&self) -> &Descriptor {
        &DESCRIPTOR
    }
    fn planned_geometry(&self, config: &BuildConfig) -> Geometry {
        let s = CuckooSizing::for_rate(config.expected_keys, config.fpr);
        Geometry {
            bits: Some(s.table_bits()),
            hashes: Some(2),
            slices: None,
        }
    }
    fn predicted_memory(&self, config: &BuildConfig) -> MemoryModel {
        MemoryModel::flat(CuckooSizing::for_rate(config.expected_keys, config.fpr).bytes() as f64)
    }
    fn predicted_fpr(&self, config: &BuildConfig) -> f64 {
        CuckooSizing::for_rate(config.expected_keys, config.fpr).fpr(config.expected_keys)
    }
    /// The rate after `n_inserted` keys while the table is sized to take them; past 0.95 of its slots
    /// it refuses inserts, and there is no rate to quote.
    fn predicted_fpr_after(&self, config: &BuildConfig, n_inserted: u64) -> Option<f64> {
        let s = CuckooSizing::for_rate(config.expected_keys, config.fpr);
        (n_inserted <= s.capacity()).then(|| s.fpr(n_inserted))
    }
    fn build(&self, config: &BuildConfig) -> crate::Result<Box<dyn Membership>> {
        Ok(Box::new(Cuckoo::new(
            CuckooSizing::for_rate(config.expected_keys, config.fpr),
            config.hasher(),
        )))
    }
}

/// A fingerprint kept outside the table when the kicks ran out, with the bucket it was headed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Victim {
    bucket: u64,
    fingerprint: u64,
}

/// A cuckoo filter with buckets of four bit-packed f-bit fingerprints.
pub struct Cuckoo {
    words: Vec<u64>,
    sizing: CuckooSizing,
    /// 2^f − 1: the fingerprint mask, and the number of fingerprint values.
    mask: u64,
    hasher: KeyHasher,
    victim: Option<Victim>,
    occupancy: [u64; SLOTS + 1],
    held: u64,
    inserted: u64,
    refused: u64,
    kick_state: u64,
}

impl Cuckoo {
    /// An empty filter of `sizing`'s geometry (fingerprint bits within [`FINGERPRINT_BITS`], at least 2
    /// buckets).
    pub fn new(sizing: CuckooSizing, hasher: KeyHasher) -> Self {
        assert!(FINGERPRINT_BITS.contains(&sizing.fingerprint_bits));
        assert!(sizing.buckets >= 2);
        let words = vec![0u64; sizing.words() as usize];
        crate::mem::advise_huge_pages(&words);
        let mut occupancy = [0; SLOTS + 1];
        occupancy[0] = sizing.buckets;
        Cuckoo {
            words,
            sizing,
            mask: (1u64 << sizing.fingerprint_bits) - 1,
            hasher,
            victim: None,
            occupancy,
            held: 0,
            inserted: 0,
            refused: 0,
            kick_state: hasher.seed() ^ 0xC0C0_0F11_7E55_0001,
        }
    }

    /// Rebuilds a filter from a checked saved file.
    pub fn from_saved(mut saved: Loaded) -> crate::Result<Self> {
        let fingerprint_bits = saved.params.u32()?;
        let buckets = saved.params.u64()?;
        let kick_state = saved.params.u64()?;
        let refused = saved.params.u64()?;
        let victim_flag = saved.params.u8()?;
        let victim_bucket = saved.params.u64()?;
        let victim_fingerprint = saved.params.u64()?;
        saved.params.finish()?;
        if !FINGERPRINT_BITS.contains(&fingerprint_bits) || !(2..=MAX_BUCKETS).contains(&buckets) {
            return Err(corrupt(format!(
                "f = {fingerprint_bits}, m = {buckets}: need f in {}..={} and m in 2..=2^47",
                FINGERPRINT_BITS.start(),
                FINGERPRINT_BITS.end()
            )));
        }
        let sizing = CuckooSizing {
            buckets,
            fingerprint_bits,
        };
        let words = saved.payload.words(sizing.words())?;
        saved.payload.finish()?;
        let table_words = sizing.table_bits().div_ceil(64) as usize;
        let tail_bits = sizing.table_bits() % 64;
        let tail_clear = tail_bits == 0 || words[table_words - 1] >> tail_bits == 0;
        if !tail_clear || words[table_words..].iter().any(|w| *w != 0) {
            return Err(corrupt("a slot is set past the end of the table".into()));
        }
        let mask = (1u64 << fingerprint_bits) - 1;
        let victim = match victim_flag {
            0 if victim_bucket == 0 && victim_fingerprint == 0 => None,
            1 if victim_bucket < buckets && (1..=mask).contains(&victim_fingerprint) => {
                Some(Victim {
                    bucket: victim_bucket,
                    fingerprint: victim_fingerprint,
                })
            }
            _ => {
                return Err(corrupt(format!(
                    "victim slot {victim_flag} (bucket {victim_bucket}, fingerprint {victim_fingerprint}) is not one a filter of {buckets} buckets of {fingerprint_bits}-bit fingerprints holds"
                )))
            }
        };
        let mut filter = Cuckoo {
            words,
            sizing,
            mask,
            hasher: saved.hasher,
            victim,
            occupancy: [0; SLOTS + 1],
            held: 0,
            inserted: saved.inserted,
            refused,
            kick_state,
        };
        filter.occupancy = filter.count_occupancy();
        filter.held = filter.table_fingerprints() + u64::from(victim.is_some());
        if filter.inserted > filter.held {
            return Err(corrupt(format!(
                "{} keys inserted, more than its {} fingerprints",
                filter.inserted, filter.held
            )));
        }
        Ok(filter)
    }

    /// The geometry.
    pub fn sizing(&self) -> CuckooSizing {
        self.sizing
    }

    /// Inserts refused because the table was full.
    pub fn refused(&self) -> u64 {
        self.refused
    }

    /// Whether the victim slot holds a fingerprint.
    pub fn victim_in_use(&self) -> bool {
        self.victim.is_some()
    }

    /// Buckets holding 0, 1, …, 4 fingerprints.
    pub fn occupancy(&self) -> [u64; SLOTS + 1] {
        self.occupancy
    }

    /// The fingerprint of a key's hash, in 1..=2^f − 1.
    #[inline(always)]
    fn fingerprint(&self, hash: KeyHash) -> u64 {
        1 + reduce(hash.h2, self.mask)
    }

    /// A key's first bucket.
    #[inline(always)]
    fn first_bucket(&self, hash: KeyHash) -> u64 {
        reduce(hash.h1, self.sizing.buckets)
    }

    /// The other bucket of a fingerprint in `bucket`: (o − `bucket`) mod m with o below m, so applying
    /// it twice gives `bucket` back.
    #[inline(always)]
    fn alternate(&self, bucket: u64, fingerprint: u64) -> u64 {
        let m = self.sizing.buckets;
        let o = reduce(fmix64(fingerprint), m);
        if o >= bucket {
            o - bucket
        } else {
            o + m - bucket
        }
    }

    /// A key's fingerprint and two buckets.
    #[inline(always)]
    fn locate(&self, hash: KeyHash) -> (u64, u64, u64) {
        let fingerprint = self.fingerprint(hash);
        let first = self.first_bucket(hash);
        (fingerprint, first, self.alternate(first, fingerprint))
    }

    /// The four slots of bucket `b`.
    #[inline(always)]
    fn bucket(&self, b: u64) -> [u64; SLOTS] {
        let f = u64::from(self.sizing.fingerprint_bits);
        let bit = b * SLOTS as u64 * f;
        let (w, o) = ((bit / 64) as usize, (bit % 64) as u32);
        let three = &self.words[w..w + 3];
        let mut x = (u128::from(three[0]) | u128::from(three[1]) << 64) >> o;
        if o != 0 {
            x |= u128::from(three[2]) << (128 - o);
        }
        let mut slots = [0u64; SLOTS];
        for (j, slot) in slots.iter_mut().enumerate() {
            *slot = (x >> (j as u64 * f)) as u64 & self.mask;
        }
        slots
    }

    /// Writes `value` into slot `j` of bucket `b`.
    #[inline(always)]
    fn set_slot(&mut self, b: u64, j: usize, value: u64) {
        let bit = (b * SLOTS as u64 + j as u64) * u64::from(self.sizing.fingerprint_bits);
        let (w, o) = ((bit / 64) as usize, (bit % 64) as u32);
        let mut x = u128::from(self.words[w]) | u128::from(self.words[w + 1]) << 64;
        x = (x & !(u128::from(self.mask) << o)) | u128::from(value) << o;
        self.words[w] = x as u64;
        self.words[w + 1] = (x >> 64) as u64;
    }

    /// Whether a fingerprint is in one of its buckets or in the victim slot with one of them.
    #[inline(always)]
    fn holds(&self, fingerprint: u64, first: u64, second: u64) -> bool {
        self.bucket(first).contains(&fingerprint)
            || self.bucket(second).contains(&fingerprint)
            || self.victim.is_some_and(|v| {
                v.fingerprint == fingerprint && (v.bucket == first || v.bucket == second)
            })
    }

    /// Puts `fingerprint` in a free slot of bucket `b`; `false` when the bucket is full.
    #[inline(always)]
    fn put(&mut self, b: u64, fingerprint: u64) -> bool {
        let slots = self.bucket(b);
        let Some(j) = slots.iter().position(|s| *s == 0) else {
            return false;
        };
        let before = slots.iter().filter(|s| **s != 0).count();
        self.set_slot(b, j, fingerprint);
        self.occupancy[before] -= 1;
        self.occupancy[before + 1] += 1;
        true
    }

    /// Takes `fingerprint` out of bucket `b`; `false` when it is not there.
    fn take(&mut self, b: u64, fingerprint: u64) -> bool {
        let slots = self.bucket(b);
        let Some(j) = slots.iter().position(|s| *s == fingerprint) else {
            return false;
        };
        let before = slots.iter().filter(|s| **s != 0).count();
        self.set_slot(b, j, 0);
        self.occupancy[before] -= 1;
        self.occupancy[before - 1] += 1;
        true
    }

    /// Stores a fingerprint whose buckets are `first` and `second`; `false` (nothing changed) when both
    /// are full and the victim slot is in use.
    fn store(&mut self, fingerprint: u64, first: u64, second: u64) -> bool {
        if self.put(first, fingerprint) || self.put(second, fingerprint) {
            self.held += 1;
            return true;
        }
        if self.victim.is_some() {
            self.refused += 1;
            return false;
        }
        let start = if splitmix64(&mut self.kick_state) & 1 == 0 {
            first
        } else {
            second
        };
        self.kick(start, fingerprint);
        self.held += 1;
        true
    }

    /// Puts `fingerprint` into the full bucket `b` in place of a random one, and that one into its other
    /// bucket, and so on, [`MAX_KICKS`] times at most; the fingerprint still homeless after that takes the
    /// victim slot, which must be free.
    fn kick(&mut self, mut b: u64, mut fingerprint: u64) {
        debug_assert!(self.victim.is_none());
        for _ in 0..MAX_KICKS {
            let j = (splitmix64(&mut self.kick_state) % SLOTS as u64) as usize;
            let evicted = self.bucket(b)[j];
            self.set_slot(b, j, fingerprint);
            fingerprint = evicted;
            b = self.alternate(b, fingerprint);
            if self.put(b, fingerprint) {
                return;
            }
        }
        self.victim = Some(Victim {
            bucket: b,
            fingerprint,
        });
    }

    /// Counts the buckets by how many fingerprints they hold.
    fn count_occupancy(&self) -> [u64; SLOTS + 1] {
        let mut occupancy = [0u64; SLOTS + 1];
        for b in 0..self.sizing.buckets {
            occupancy[self.bucket(b).iter().filter(|s| **s != 0).count()] += 1;
        }
        occupancy
    }

    /// Fingerprints in the table (the victim slot aside), from the histogram.
    fn table_fingerprints(&self) -> u64 {
        self.occupancy
            .iter()
            .enumerate()
            .map(|(c, h)| c as u64 * h)
            .sum()
    }
}

impl Membership for Cuckoo {
    fn id(&self) -> &'static str {
        ID
    }
    fn hasher(&self) -> KeyHasher {
        self.hasher
    }
    /// Stores the key's fingerprint (a second one if it is present already); a refused insert reports
    /// the key new, as it is, and leaves the filter unchanged.
    #[inline]
    fn insert_hashed(&mut self, _key: &[u8], hash: KeyHash) -> bool {
        let (fingerprint, first, second) = self.locate(hash);
        let new = !self.holds(fingerprint, first, second);
        if self.store(fingerprint, first, second) && new {
            self.inserted += 1;
        }
        new
    }
    fn insert_if_new(&mut self, _key: &[u8], hash: KeyHash) -> bool {
        let (fingerprint, first, second) = self.locate(hash);
        if self.holds(fingerprint, first, second) {
            return false;
        }
        if self.store(fingerprint, first, second) {
            self.inserted += 1;
        }
        true
    }
    #[inline]
    fn contains_hashed(&self, _key: &[u8], hash: KeyHash) -> bool {
        let (fingerprint, first, second) = self.locate(hash);
        self.holds(fingerprint, first, second)
    }
    fn bytes_held(&self) -> u64 {
        self.words.capacity() as u64 * 8
    }
    fn n_inserted(&self) -> u64 {
        self.inserted
    }
    /// The rate at load n/(4m), as planned ([`CuckooSizing::fpr`]).
    fn expected_fpr(&self, n_distinct: u64) -> f64 {
        self.sizing.fpr(n_distinct)
    }
    /// The rate of this table, from its histogram of bucket occupancies and its victim slot.
    fn fill_fpr(&self) -> Option<f64> {
        Some(theory::cuckoo_fill_fpr(
            self.sizing.fingerprint_bits,
            &self.occupancy,
            u64::from(self.victim.is_some()),
        ))
    }
    fn geometry(&self) -> Geometry {
        Geometry {
            bits: Some(self.sizing.table_bits()),
            hashes: Some(2),
            slices: None,
        }
    }
    fn failure(&self) -> Option<String> {
        (self.refused > 0).then(|| {
            format!(
                "the cuckoo filter is full: {} inserts refused (not stored) with {} fingerprints held in {} slots and the victim slot in use; size it for more keys",
                self.refused,
                self.held,
                self.sizing.slots()
            )
        })
    }
    fn as_removable(&mut self) -> Option<&mut dyn Removable> {
        Some(self)
    }
    fn saved_parts(&self) -> Option<SavedParts<'_>> {
        let victim = self.victim.unwrap_or(Victim {
            bucket: 0,
            fingerprint: 0,
        });
        let mut params = self.sizing.fingerprint_bits.to_le_bytes().to_vec();
        params.extend_from_slice(&self.sizing.buckets.to_le_bytes());
        params.extend_from_slice(&self.kick_state.to_le_bytes());
        params.extend_from_slice(&self.refused.to_le_bytes());
        params.push(u8::from(self.victim.is_some()));
        params.extend_from_slice(&victim.bucket.to_le_bytes());
        params.extend_from_slice(&victim.fingerprint.to_le_bytes());
        Some(SavedParts {
            params,
            payload: vec![Payload::Words(&self.words)],
        })
    }
}

impl Removable for Cuckoo {
    fn remove_hashed(&mut self, _key: &[u8], hash: KeyHash) -> bool {
        let (fingerprint, first, second) = self.locate(hash);
        if self.take(first, fingerprint) || self.take(second, fingerprint) {
            // A slot is free now: the victim goes back into the table (or, if its kicks run out again,
            // another fingerprint takes its place in the victim slot).
            if let Some(v) = self.victim.take() {
                let other = self.alternate(v.bucket, v.fingerprint);
                if !self.put(v.bucket, v.fingerprint) && !self.put(other, v.fingerprint) {
                    self.kick(v.bucket, v.fingerprint);
                }
            }
        } else if self.victim.is_some_and(|v| {
            v.fingerprint == fingerprint && (v.bucket == first || v.bucket == second)
        }) {
            self.victim = None;
        } else {
            return false;
        }
        self.held -= 1;
        self.inserted = self.inserted.saturating_sub(1);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{Profile, UrlGenerator};
    use crate::stats::{check_rate, check_trials};

    const SEED: u64 = 0xC0C0;

    fn filter(n: u64, p: f64) -> Cuckoo {
        Cuckoo::new(
            CuckooSizing::for_rate(n, p),
            KeyHasher::default_with_seed(SEED),
        )
    }

    fn generator() -> UrlGenerator {
        UrlGenerator::new(Profile::default_profile(), 3)
    }

    /// Calls `each(key, hash)` for members `[from, to)` (or non-members).
    fn keys(f: &Cuckoo, from: u64, to: u64, members: bool, mut each: impl FnMut(&[u8], KeyHash)) {
        let g = generator();
        let mut buf = Vec::new();
        for i in from..to {
            if members {
                g.member(i, &mut buf);
            } else {
                g.non_member(i, &mut buf);
            }
            each(&buf, f.hasher().hash(&buf));
        }
    }

    fn insert(f: &mut Cuckoo, from: u64, to: u64) -> u64 {
        let mut hashes = Vec::new();
        keys(f, from, to, true, |key, h| hashes.push((key.to_vec(), h)));
        hashes
            .iter()
            .filter(|(key, h)| f.insert_hashed(key, *h))
            .count() as u64
    }

    fn present(f: &Cuckoo, from: u64, to: u64, members: bool) -> u64 {
        let mut found = 0;
        keys(f, from, to, members, |key, h| {
            found += u64::from(f.contains_hashed(key, h))
        });
        found
    }

    /// Non-members reported present, on enough queries to tell `rate` from one 20% off.
    fn check_non_members(f: &Cuckoo, rate: f64, label: &str) {
        let queries = check_trials(rate, 100_000);
        let fp = present(f, 0, queries, false);
        if let Err(e) = check_rate(fp, queries, rate) {
            panic!("{label}: {e}");
        }
    }

    fn assert_histogram_in_step(f: &Cuckoo) {
        assert_eq!(f.occupancy, f.count_occupancy());
        assert_eq!(
            f.held,
            f.table_fingerprints() + u64::from(f.victim.is_some())
        );
    }

    #[test]
    fn the_fingerprint_is_the_smallest_width_with_2b_over_2_to_the_f_at_most_p() {
        for (p, f) in [
            (0.01, 10),
            (0.001, 13),
            (0.0001, 17),
            (0.03, 9),
            (1.0 / 128.0, 10),
            (0.5, 4),
            (0.9, 4),
            (1e-12, 32),
        ] {
            assert_eq!(fingerprint_bits_for(p), f, "p = {p}");
        }
        for p in [0.2, 0.05, 0.01, 0.003, 1e-4, 1e-6] {
            let f = fingerprint_bits_for(p) as i32;
            assert!(8.0 / 2f64.powi(f) <= p, "p = {p}: f = {f}");
            assert!(
                8.0 / 2f64.powi(f - 1) > p,
                "p = {p}: f = {f} is not the smallest"
            );
            assert!(
                CuckooSizing::for_rate(1_000_000, p).fpr(1_000_000) <= p,
                "p = {p}"
            );
        }
    }

    #[test]
    fn buckets_are_the_fewest_at_a_load_of_at_most_95_percent() {
        for n in [
            1u64,
            3,
            7,
            8,
            100,
            3_800,
            3_801,
            200_000,
            1_000_000,
            1_000_000_000,
        ] {
            let m = buckets_for(n);
            assert!(m >= 2, "{n}: {m}");
            assert!(n as f64 / (4 * m) as f64 <= MAX_LOAD, "{n}: {m}");
            assert!(
                m == 2 || n as f64 / (4 * (m - 1)) as f64 > MAX_LOAD,
                "{n}: {m} is not the fewest"
            );
        }
        // 200,000 keys: 52,632 buckets of 4 slots at load 0.950, 10-bit fingerprints, 10.5 bits per key.
        let s = CuckooSizing::for_rate(200_000, 0.01);
        assert_eq!((s.buckets, s.fingerprint_bits), (52_632, 10));
        assert_eq!(s.bytes(), (52_632 * 40u64).div_ceil(64) * 8 + 16);
    }

    #[test]
    fn slots_pack_and_unpack_at_every_width() {
        for bits in FINGERPRINT_BITS {
            let mut f = Cuckoo::new(
                CuckooSizing {
                    buckets: 8,
                    fingerprint_bits: bits,
                },
                KeyHasher::default_with_seed(1),
            );
            // Values with high and low bits set, so a field that spills into its neighbour shows.
            let mask = f.mask;
            let value =
                |b: u64, j: usize| mask - (b * 4 + j as u64).wrapping_mul(0x9E37_79B9) % (mask / 2);
            for b in 0..8 {
                for j in 0..SLOTS {
                    f.set_slot(b, j, value(b, j));
                }
            }
            for b in 0..8 {
                let expected: Vec<u64> = (0..SLOTS).map(|j| value(b, j)).collect();
                assert_eq!(f.bucket(b).to_vec(), expected, "f = {bits}, bucket {b}");
            }
            f.set_slot(5, 2, 0);
            assert_eq!(f.bucket(5)[2], 0);
            assert_eq!(f.bucket(5)[1], value(5, 1), "f = {bits}");
            assert_eq!(f.bucket(5)[3], value(5, 3), "f = {bits}");
            assert_eq!(f.bucket(4), [0, 1, 2, 3].map(|j| value(4, j)), "f = {bits}");
            assert_eq!(f.bucket(6), [0, 1, 2, 3].map(|j| value(6, j)), "f = {bits}");
        }
    }

    #[test]
    fn alternate_buckets_lead_back_and_rarely_coincide() {
        let f = filter(10_000, 0.01);
        let m = f.sizing.buckets;
        assert!(!m.is_power_of_two(), "{m}: the test is for any m");
        let mut same = 0;
        for fingerprint in 1..=f.mask {
            let b = fingerprint.wrapping_mul(7919) % m;
            let other = f.alternate(b, fingerprint);
            same += u64::from(other == b);
            assert!(other < m);
            assert_eq!(f.alternate(other, fingerprint), b);
        }
        // About one in m: over 1023 fingerprints and 2,632 buckets, at most a few.
        assert!(same <= 5, "{same} of {} coincide", f.mask);
    }

    /// Filled to its planned load (0.95): every key found, and non-members at the rate of the table.
    #[test]
    fn no_false_negatives_and_the_rate_of_the_table() {
        let n = 200_000;
        let mut f = filter(n, 0.01);
        let new = insert(&mut f, 0, n);
        assert!(new > n - n / 50, "{new}");
        assert_eq!(f.held, n);
        assert_eq!(f.refused, 0);
        assert!(f.failure().is_none());
        assert_histogram_in_step(&f);
        assert_eq!(present(&f, 0, n, true), n);
        let fill = f.fill_fpr().unwrap();
        check_non_members(&f, fill, "fill");
        check_non_members(&f, f.expected_fpr(n), "theory at the load");
        assert!((fill / f.expected_fpr(n) - 1.0).abs() < 0.01, "{fill}");
    }

    /// Removing half: the rest are all found, the removed ones and non-members are called present at
    /// the rate of the half-full table, and removing a key twice is refused the second time.
    #[test]
    fn removal_returns_the_rate_to_theory() {
        let n = 200_000;
        let mut f = filter(n, 0.01);
        let new = insert(&mut f, 0, n);
        let mut removed = 0;
        let mut hashes = Vec::new();
        keys(&f, 0, n / 2, true, |key, h| hashes.push((key.to_vec(), h)));
        for (key, h) in &hashes {
            removed += u64::from(f.remove_hashed(key, *h));
        }
        assert_eq!(removed, n / 2);
        assert_histogram_in_step(&f);
        assert_eq!(present(&f, n / 2, n, true), n / 2);
        assert_eq!(f.held, n / 2);
        assert_eq!(f.n_inserted(), new - n / 2);
        check_non_members(&f, f.fill_fpr().unwrap(), "fill after removal");
        check_non_members(&f, f.expected_fpr(n / 2), "theory after removal");
    }

    /// Filled past its slots: nothing is lost. The first time the kicks run out the homeless fingerprint
    /// takes the victim slot; from then on an insert whose buckets are full is refused, changes nothing and
    /// is reported by `failure`; every key accepted is found. Removing keys brings the victim back.
    #[test]
    fn past_capacity_inserts_are_refused_and_reported_never_lost() {
        let mut f = Cuckoo::new(
            CuckooSizing {
                buckets: 64,
                fingerprint_bits: 12,
            },
            KeyHasher::default_with_seed(SEED),
        );
        let mut offered = Vec::new();
        keys(&f, 0, 400, true, |key, h| offered.push((key.to_vec(), h)));
        let mut accepted = Vec::new();
        let mut refused = 0;
        for (key, h) in &offered {
            let before = (f.words.clone(), f.victim, f.held);
            let was_refused = f.refused;
            f.insert_hashed(key, *h);
            if f.refused > was_refused {
                refused += 1;
                assert!(
                    f.victim.is_some(),
                    "refused only once the victim slot is in use"
                );
                assert_eq!(
                    (f.words.clone(), f.victim, f.held),
                    before,
                    "a refusal changes nothing"
                );
            } else {
                accepted.push((key, *h));
            }
            assert_histogram_in_step(&f);
        }
        assert!(f.victim.is_some());
        assert_eq!(refused, f.refused);
        assert_eq!(accepted.len() as u64 + refused, 400);
        assert_eq!(f.held, accepted.len() as u64);
        assert!(f.held > 240 && f.held <= 257, "{}", f.held);
        assert!(f
            .failure()
            .unwrap()
            .contains(&format!("{refused} inserts refused")));
        for (key, h) in &accepted {
            assert!(f.contains_hashed(key, *h), "an accepted key was lost");
        }
        // The victim counts in the rate.
        let with_victim = f.fill_fpr().unwrap();
        assert!(with_victim > theory::cuckoo_fill_fpr(12, &f.occupancy, 0));
        // Removing accepted keys frees slots; the victim goes back into the table.
        for (key, h) in accepted.iter().take(8) {
            assert!(f.remove_hashed(key, *h));
        }
        assert!(f.victim.is_none());
        assert_histogram_in_step(&f);
        for (key, h) in accepted.iter().skip(8) {
            assert!(
                f.contains_hashed(key, *h),
                "a key was lost moving the victim back"
            );
        }
        assert!(f.failure().is_some(), "the refusals stay reported");
    }

    /// Every key the filter does not hold (removed, or never inserted) is refused, and changes nothing.
    #[test]
    fn a_removal_of_an_absent_key_changes_nothing() {
        let mut f = filter(1_000, 0.01);
        insert(&mut f, 0, 500);
        let mut absent = Vec::new();
        keys(&f, 0, 2_000, false, |key, h| absent.push((key.to_vec(), h)));
        let mut hashes = Vec::new();
        keys(&f, 0, 100, true, |key, h| hashes.push((key.to_vec(), h)));
        for (key, h) in &hashes {
            assert!(f.remove_hashed(key, *h));
        }
        absent.extend(hashes);
        let before = (f.words.clone(), f.held, f.inserted);
        let mut refused = 0;
        for (key, h) in &absent {
            if !f.contains_hashed(key, *h) {
                assert!(!f.remove_hashed(key, *h));
                refused += 1;
            }
        }
        assert!(refused > 2_000, "{refused}");
        assert_eq!((f.words.clone(), f.held, f.inserted), before);
    }

    #[test]
    fn insert_if_new_stores_a_key_once_and_insert_every_time() {
        let mut f = filter(1_000, 0.01);
        let mut hashes = Vec::new();
        keys(&f, 0, 100, true, |key, h| hashes.push((key.to_vec(), h)));
        for (key, h) in &hashes {
            f.insert_if_new(key, *h);
            assert!(!f.insert_if_new(key, *h));
        }
        assert_eq!(f.held, 100);
        let (key, h) = &hashes[0];
        assert!(!f.insert_hashed(key, *h), "present: not new");
        assert_eq!(f.held, 101, "but stored again");
        assert!(f.remove_hashed(key, *h));
        assert!(
            f.contains_hashed(key, *h),
            "one removal leaves the second copy"
        );
        assert!(f.remove_hashed(key, *h));
    }
}

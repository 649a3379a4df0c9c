//! `counting`: the counting Bloom filter (Fan, Cao, Almeida, Broder, "Summary Cache", 2000), for deletions.
//!
//! m 4-bit counters packed two per byte, with the same m and k as `bloom` at the same rate, so 4× its memory
//! and the same false-positive rate. Invariants:
//! 1. A counter that reaches 15 sticks there: it is never decremented and never wraps (P(any counter ≥ 16)
//!    ≤ m·(e·ln 2/15)^15 ≈ 3·10⁻¹⁴·m at the optimal k (Fan et al.'s bound with the sticky value 15), so
//!    sticking is rare and only costs a little extra rate).
//! 2. `remove` of a key any of whose counters is too low (zero, or lower than the number of its probes that
//!    land there) returns `false` and changes nothing.

use super::bloom::sizing;
use crate::hash::{reduce, KeyHash, KeyHasher};
use crate::kind::{
    Advisor, BuildConfig, Capabilities, Descriptor, Family, Kind, MemoryModel, Placement,
    RateModel, Role,
};
use crate::membership::{Geometry, Membership, Removable};
use crate::persist::{corrupt, Loaded, Payload, SavedParts};
use crate::theory::{self, BloomSizing};

/// The registry id.
pub const ID: &str = "counting";

/// The value at which a counter sticks.
pub const STICKY: u8 = 15;
/// The largest k a counting filter accepts (its probe list lives on the stack).
pub const MAX_HASHES: usize = 64;

/// Registry entry.
pub struct CountingKind;

/// What the registry knows about it.
pub static DESCRIPTOR: Descriptor = Descriptor {
    roles: &[Role::DeletingFilter],
    advisor: Some(Advisor {
        pitch: "deletions at 4× a Bloom filter's memory",
        rung: "even fingerprints no longer fit: a counting filter (4-bit counters, m = -n ln p / ln²2) meets the rate and deletes",
        prefers_measured_bytes: false,
        size_for_advice: None,
    }),
    loader: Some(|saved| Ok(Box::new(CountingBloom::from_saved(saved)?))),
    ..Descriptor::new(
        ID,
        "counting Bloom filter, 4-bit sticky counters (supports remove)",
        Family::CountingBloom,
        Placement::Ours,
        Capabilities {
            removable: true,
            ..Capabilities::FILTER
        },
        RateModel::Fill,
    )
};

impl Kind for CountingKind {
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
        MemoryModel::flat(sizing(config).bits.div_ceil(2) as f64)
    }
    fn predicted_fpr(&self, config: &BuildConfig) -> f64 {
        sizing(config).fpr(config.expected_keys)
    }
    fn predicted_fpr_after(&self, config: &BuildConfig, n_inserted: u64) -> Option<f64> {
        Some(sizing(config).fpr(n_inserted))
    }
    fn build(&self, config: &BuildConfig) -> crate::Result<Box<dyn Membership>> {
        Ok(Box::new(CountingBloom::for_config(config)?))
    }
}

impl CountingBloom {
    /// The filter the registry builds for `config` (an error when its rate needs more than
    /// [`MAX_HASHES`] probes); callers that time it per key hold it as this concrete type.
    pub fn for_config(config: &BuildConfig) -> crate::Result<CountingBloom> {
        let s = sizing(config);
        if s.hashes as usize > MAX_HASHES {
            return Err(crate::Error::invalid(
                "--fpr",
                format!(
                    "needs k = {} probes; the counting filter allows at most {MAX_HASHES}",
                    s.hashes
                ),
            ));
        }
        Ok(CountingBloom::new(s, config.hasher()))
    }
}

/// A counting Bloom filter with 4-bit counters.
pub struct CountingBloom {
    counters: Vec<u8>,
    m: u64,
    hashes: u32,
    hasher: KeyHasher,
    inserted: u64,
}

impl CountingBloom {
    /// A filter of `sizing.bits` counters and `sizing.hashes` probes (k ≤ [`MAX_HASHES`]).
    pub fn new(sizing: BloomSizing, hasher: KeyHasher) -> Self {
        assert!(sizing.hashes as usize <= MAX_HASHES, "k above {MAX_HASHES}");
        let counters = vec![0u8; sizing.bits.div_ceil(2) as usize];
        crate::mem::advise_huge_pages(&counters);
        CountingBloom {
            counters,
            m: sizing.bits,
            hashes: sizing.hashes,
            hasher,
            inserted: 0,
        }
    }

    /// Rebuilds a filter from a checked saved file.
    pub fn from_saved(mut saved: Loaded) -> crate::Result<Self> {
        let m = saved.params.u64()?;
        let hashes = saved.params.u32()?;
        saved.params.finish()?;
        if m == 0 || hashes == 0 || hashes as usize > MAX_HASHES {
            return Err(corrupt(format!(
                "m = {m}, k = {hashes}: need m ≥ 1 and 1 ≤ k ≤ {MAX_HASHES}"
            )));
        }
        let counters = saved.payload.bytes(m.div_ceil(2))?.to_vec();
        saved.payload.finish()?;
        if m % 2 == 1 && counters[counters.len() - 1] >> 4 != 0 {
            return Err(corrupt("a counter is set past the end of the array".into()));
        }
        Ok(CountingBloom {
            counters,
            m,
            hashes,
            hasher: saved.hasher,
            inserted: saved.inserted,
        })
    }

    /// Counter at `pos`.
    #[inline(always)]
    pub fn counter(&self, pos: u64) -> u8 {
        (self.counters[(pos >> 1) as usize] >> ((pos & 1) * 4)) & 0xF
    }

    #[inline(always)]
    fn set_counter(&mut self, pos: u64, value: u8) {
        let byte = &mut self.counters[(pos >> 1) as usize];
        let shift = (pos & 1) * 4;
        *byte = (*byte & !(0xF << shift)) | (value << shift);
    }

    #[inline(always)]
    fn positions(&self, hash: KeyHash, out: &mut [u64; MAX_HASHES]) -> usize {
        let k = self.hashes as usize;
        for (i, slot) in out.iter_mut().enumerate().take(k) {
            *slot = reduce(hash.probe(i as u32), self.m);
        }
        k
    }
}

impl Membership for CountingBloom {
    fn id(&self) -> &'static str {
        ID
    }
    fn hasher(&self) -> KeyHasher {
        self.hasher
    }
    #[inline]
    fn insert_hashed(&mut self, _key: &[u8], hash: KeyHash) -> bool {
        let mut new = false;
        for i in 0..self.hashes {
            let pos = reduce(hash.probe(i), self.m);
            let c = self.counter(pos);
            new |= c == 0;
            if c < STICKY {
                self.set_counter(pos, c + 1);
            }
        }
        self.inserted = self.inserted.saturating_add(new as u64);
        new
    }
    fn insert_if_new(&mut self, key: &[u8], hash: KeyHash) -> bool {
        !self.contains_hashed(key, hash) && self.insert_hashed(key, hash)
    }
    #[inline]
    fn contains_hashed(&self, _key: &[u8], hash: KeyHash) -> bool {
        (0..self.hashes).all(|i| self.counter(reduce(hash.probe(i), self.m)) != 0)
    }
    fn bytes_held(&self) -> u64 {
        self.counters.capacity() as u64
    }
    fn n_inserted(&self) -> u64 {
        self.inserted
    }
    fn expected_fpr(&self, n_distinct: u64) -> f64 {
        theory::bloom_fpr(self.m, self.hashes, n_distinct)
    }
    /// (non-zero counters / m)^k: the rate of this filter at its fill.
    fn fill_fpr(&self) -> Option<f64> {
        let nonzero: u64 = self
            .counters
            .iter()
            .map(|b| u64::from(b & 0x0F != 0) + u64::from(b & 0xF0 != 0))
            .sum();
        Some((nonzero as f64 / self.m as f64).powi(self.hashes as i32))
    }
    fn geometry(&self) -> Geometry {
        Geometry {
            bits: Some(self.m),
            hashes: Some(self.hashes),
            slices: None,
        }
    }
    fn as_removable(&mut self) -> Option<&mut dyn Removable> {
        Some(self)
    }
    fn saved_parts(&self) -> Option<SavedParts<'_>> {
        let mut params = self.m.to_le_bytes().to_vec();
        params.extend_from_slice(&self.hashes.to_le_bytes());
        Some(SavedParts {
            params,
            payload: vec![Payload::Bytes(&self.counters)],
        })
    }
}

impl Removable for CountingBloom {
    /// Counters stuck at 15.
    fn saturated_counters(&self) -> Option<u64> {
        Some((0..self.m).filter(|p| self.counter(*p) == STICKY).count() as u64)
    }
    fn remove_hashed(&mut self, _key: &[u8], hash: KeyHash) -> bool {
        let mut positions = [0u64; MAX_HASHES];
        let k = self.positions(hash, &mut positions);
        let positions = &mut positions[..k];
        positions.sort_unstable();
        // Check first: every counter must cover the probes that land on it (or be stuck).
        let mut i = 0;
        while i < k {
            let mut j = i;
            while j < k && positions[j] == positions[i] {
                j += 1;
            }
            let c = self.counter(positions[i]);
            if c != STICKY && (c as usize) < j - i {
                return false;
            }
            i = j;
        }
        for &pos in positions.iter() {
            let c = self.counter(pos);
            if c != STICKY {
                self.set_counter(pos, c - 1);
            }
        }
        self.inserted = self.inserted.saturating_sub(1);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::hash_key;

    #[test]
    fn saturated_counters_stick_and_absent_keys_are_refused() {
        let mut f = CountingBloom::new(
            BloomSizing {
                bits: 64,
                hashes: 3,
            },
            KeyHasher::default_with_seed(1),
        );
        let key = b"https://example.com/a";
        for _ in 0..20 {
            f.insert(key);
        }
        let h = hash_key(1, key);
        let pos = reduce(h.probe(0), 64);
        assert_eq!(f.counter(pos), STICKY);
        for _ in 0..20 {
            assert!(f.remove_hashed(key, h));
        }
        assert_eq!(
            f.counter(pos),
            STICKY,
            "a stuck counter is never decremented"
        );
        assert!(f.contains(key), "stuck counters keep the key present");

        let mut g = CountingBloom::new(
            BloomSizing {
                bits: 1 << 16,
                hashes: 4,
            },
            KeyHasher::default_with_seed(2),
        );
        g.insert(b"present");
        let before = g.counters.clone();
        assert!(!g.remove_hashed(b"absent", hash_key(2, b"absent")));
        assert_eq!(g.counters, before, "refused removal changes nothing");
        assert!(g.remove_hashed(b"present", hash_key(2, b"present")));
        assert!(!g.contains(b"present"));
        assert!(g.counters.iter().all(|b| *b == 0));
    }
}

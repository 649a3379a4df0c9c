//! `scalable`: the scalable Bloom filter (Almeida, Baquero, Preguiça, Hutchison, IPL 101(6), 2007), for
//! unknown growth.
//!
//! Slice i is a standard Bloom filter for n₀·sⁱ keys at rate p₀·rⁱ with p₀ = p·(1 − r), so the compound rate
//! 1 − ∏(1 − pᵢ) stays ≤ p however far it grows. A key is inserted into the newest slice only when no slice
//! reports it; a new slice is added when the newest holds its capacity. Defaults s = 2, r = 0.9.

use super::bits::BitArray;
use super::bloom::Bloom;
use crate::hash::{KeyHash, KeyHasher};
use crate::kind::{
    Advisor, BuildConfig, Capabilities, Descriptor, Family, Kind, MemoryModel, Placement,
    RateModel, Role,
};
use crate::membership::{Geometry, Membership};
use crate::persist::{corrupt, Loaded, Payload, SavedParts};
use crate::theory::{self, ScalableParams};

/// The registry id.
pub const ID: &str = "scalable";

/// Registry entry.
pub struct ScalableKind;

pub use crate::kind::Growth;

/// The scalable parameters a config asks for.
pub fn params(config: &BuildConfig) -> ScalableParams {
    ScalableParams {
        initial_capacity: config.growth.first_slice_keys(config.expected_keys),
        fpr: config.fpr,
        growth: config.growth.factor,
        tightening: config.growth.tightening,
    }
}

/// What the registry knows about it.
pub static DESCRIPTOR: Descriptor = Descriptor {
    roles: &[Role::GrowingFilter],
    advisor: Some(Advisor {
        pitch: "grows by slices (s = 2, r = 0.9), rate bounded by p however far it grows; first slice sized for n",
        rung: "even fingerprints no longer fit: a scalable filter meets the rate however far it grows",
        prefers_measured_bytes: false,
        // The advice sizes the first slice for the expected n (the harness's default starts at n/64).
        size_for_advice: Some(|config| config.growth.initial_keys = Some(config.expected_keys)),
    }),
    loader: Some(|saved| Ok(Box::new(ScalableBloom::from_saved(saved)?))),
    ..Descriptor::new(
        ID,
        "scalable Bloom filter: slices n0*s^i at p(1-r)r^i (unknown growth)",
        Family::ScalableBloom,
        Placement::Ours,
        Capabilities {
            growable: true,
            ..Capabilities::FILTER
        },
        RateModel::Fill,
    )
};

impl Kind for ScalableKind {
    fn descriptor(&self) -> &Descriptor {
        &DESCRIPTOR
    }
    fn planned_geometry(&self, config: &BuildConfig) -> Geometry {
        let first = params(config).slice(0).1;
        Geometry {
            bits: Some(first.bits),
            hashes: Some(first.hashes),
            slices: Some(1),
        }
    }
    fn predicted_memory(&self, config: &BuildConfig) -> MemoryModel {
        MemoryModel::flat(params(config).bytes(config.expected_keys) as f64)
    }
    fn predicted_fpr(&self, config: &BuildConfig) -> f64 {
        params(config).fpr(config.expected_keys)
    }
    fn predicted_fpr_after(&self, config: &BuildConfig, n_inserted: u64) -> Option<f64> {
        Some(params(config).fpr(n_inserted))
    }
    fn build(&self, config: &BuildConfig) -> crate::Result<Box<dyn Membership>> {
        let p = params(config);
        if !((1.0..=16.0).contains(&p.growth) && p.tightening > 0.0 && p.tightening < 1.0) {
            return Err(crate::Error::invalid(
                "scalable parameters",
                format!(
                    "growth {} must be in [1, 16] and tightening {} in (0, 1)",
                    p.growth, p.tightening
                ),
            ));
        }
        Ok(Box::new(ScalableBloom::new(p, config.hasher())))
    }
}

struct Slice {
    bits: BitArray,
    hashes: u32,
    capacity: u64,
    count: u64,
}

/// A chain of Bloom slices of growing capacity and tightening rate.
pub struct ScalableBloom {
    params: ScalableParams,
    slices: Vec<Slice>,
    hasher: KeyHasher,
    inserted: u64,
}

impl ScalableBloom {
    /// An empty filter with its first slice.
    pub fn new(params: ScalableParams, hasher: KeyHasher) -> Self {
        let mut filter = ScalableBloom {
            params,
            slices: Vec::new(),
            hasher,
            inserted: 0,
        };
        filter.add_slice();
        filter
    }

    fn add_slice(&mut self) {
        let (capacity, sizing) = self.params.slice(self.slices.len() as u32);
        self.slices.push(Slice {
            bits: BitArray::new(sizing.bits),
            hashes: sizing.hashes,
            capacity,
            count: 0,
        });
    }

    /// Rebuilds a filter from a checked saved file.
    pub fn from_saved(mut saved: Loaded) -> crate::Result<Self> {
        let params = ScalableParams {
            initial_capacity: saved.params.u64()?,
            fpr: saved.params.f64()?,
            growth: saved.params.f64()?,
            tightening: saved.params.f64()?,
        };
        let count = saved.params.u32()?;
        let valid = params.initial_capacity >= 1
            && params.fpr > 0.0
            && params.fpr < 1.0
            && (1.0..=16.0).contains(&params.growth)
            && params.tightening > 0.0
            && params.tightening < 1.0
            && (1..=64).contains(&count);
        if !valid {
            return Err(corrupt("scalable parameters out of range".into()));
        }
        let mut slices = Vec::with_capacity(count as usize);
        for i in 0..count {
            let bits = saved.params.u64()?;
            let hashes = saved.params.u32()?;
            let capacity = saved.params.u64()?;
            let slice_count = saved.params.u64()?;
            if hashes == 0 || hashes > 256 || slice_count > capacity {
                return Err(corrupt(format!(
                    "slice with k = {hashes}, {slice_count} keys of capacity {capacity}"
                )));
            }
            // Every slice is the one the parameters give, so growth follows from what the file holds:
            // its capacity exactly, its bits within 2× (files saved under earlier sizing formulas differ
            // by a little; the payload's length bounds them anyway).
            let (want_capacity, want) = params.slice(i);
            if capacity != want_capacity
                || bits < want.bits / 2
                || bits > want.bits.saturating_mul(2)
            {
                return Err(corrupt(format!(
                    "slice {i} holds {capacity} keys in {bits} bits; its parameters give {want_capacity} keys in ≈ {} bits",
                    want.bits
                )));
            }
            let words = saved.payload.words(bits.div_ceil(64))?;
            slices.push(Slice {
                bits: BitArray::from_words(bits, words)?,
                hashes,
                capacity,
                count: slice_count,
            });
        }
        saved.params.finish()?;
        saved.payload.finish()?;
        // The slice the next growth allocates, checked now: past the memory available it would abort the
        // process in the middle of a stream.
        let next_bytes = params.slice(count).1.bits.div_ceil(8);
        let available = crate::measure::machine::available_memory_bytes();
        if next_bytes > available {
            return Err(corrupt(format!(
                "its next slice would take {} (slice {count}), more than the {} available; start a new filter",
                crate::units::human_bytes(next_bytes as f64),
                crate::units::human_bytes(available as f64)
            )));
        }
        Ok(ScalableBloom {
            params,
            slices,
            hasher: saved.hasher,
            inserted: saved.inserted,
        })
    }

    /// Number of slices.
    pub fn slice_count(&self) -> usize {
        self.slices.len()
    }
}

impl Membership for ScalableBloom {
    fn id(&self) -> &'static str {
        ID
    }
    fn hasher(&self) -> KeyHasher {
        self.hasher
    }
    #[inline]
    fn insert_hashed(&mut self, key: &[u8], hash: KeyHash) -> bool {
        if self.contains_hashed(key, hash) {
            return false;
        }
        if self.slices.last().is_some_and(|s| s.count >= s.capacity) {
            self.add_slice();
        }
        let slice = self.slices.last_mut().expect("at least one slice");
        Bloom::set_probes(&mut slice.bits, slice.hashes, hash);
        slice.count += 1;
        self.inserted = self.inserted.saturating_add(1);
        true
    }
    #[inline]
    fn contains_hashed(&self, _key: &[u8], hash: KeyHash) -> bool {
        // Newest first: it holds the most keys of a growing set.
        self.slices
            .iter()
            .rev()
            .any(|s| Bloom::test_probes(&s.bits, s.hashes, hash))
    }
    fn bytes_held(&self) -> u64 {
        self.slices.iter().map(|s| s.bits.bytes()).sum::<u64>()
            + (self.slices.capacity() * std::mem::size_of::<Slice>()) as u64
    }
    fn n_inserted(&self) -> u64 {
        self.inserted
    }
    /// The compound rate of the slices at their actual fills (`n_distinct` is not needed: every key that
    /// reached a slice is counted there).
    fn expected_fpr(&self, _n_distinct: u64) -> f64 {
        theory::compound_fpr(
            self.slices
                .iter()
                .map(|s| theory::bloom_fpr(s.bits.len(), s.hashes, s.count)),
        )
    }
    fn saved_parts(&self) -> Option<SavedParts<'_>> {
        let p = &self.params;
        let mut params = Vec::new();
        params.extend_from_slice(&p.initial_capacity.to_le_bytes());
        for x in [p.fpr, p.growth, p.tightening] {
            params.extend_from_slice(&x.to_bits().to_le_bytes());
        }
        params.extend_from_slice(&(self.slices.len() as u32).to_le_bytes());
        for s in &self.slices {
            params.extend_from_slice(&s.bits.len().to_le_bytes());
            params.extend_from_slice(&s.hashes.to_le_bytes());
            params.extend_from_slice(&s.capacity.to_le_bytes());
            params.extend_from_slice(&s.count.to_le_bytes());
        }
        Some(SavedParts {
            params,
            payload: self
                .slices
                .iter()
                .map(|s| Payload::Words(s.bits.words()))
                .collect(),
        })
    }
    /// 1 − Π(1 − fillᵢ^kᵢ) over the slices: the rate of this filter at its fill.
    fn fill_fpr(&self) -> Option<f64> {
        Some(theory::compound_fpr(self.slices.iter().map(|s| {
            (s.bits.count_ones() as f64 / s.bits.len() as f64).powi(s.hashes as i32)
        })))
    }
    fn geometry(&self) -> Geometry {
        Geometry {
            bits: Some(self.slices.iter().map(|s| s.bits.len()).sum()),
            hashes: self.slices.last().map(|s| s.hashes),
            slices: Some(self.slices.len() as u32),
        }
    }
}

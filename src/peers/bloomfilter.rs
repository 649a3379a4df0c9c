//! Peer `bloomfilter` (crates.io `bloomfilter`): a Bloom filter with SipHash, sized by its own
//! `new_for_fp_rate`; it hashes our 64-bit key hash again. Theory: the standard formula at its m and k.

use super::{peer, PeerFilter};
use crate::kind::{
    BuildConfig, Capabilities, Crate, Descriptor, Family, Kind, MemoryModel, Placement, RateModel,
};
use crate::membership::{Geometry, Membership};
use crate::theory::{self, BloomSizing};

/// Registry entry.
pub struct BloomfilterKind;

struct Filter(::bloomfilter::Bloom<u64>);

impl PeerFilter for Filter {
    fn insert(&mut self, hash: u64) -> bool {
        !self.0.check_and_set(&hash)
    }
    fn contains(&self, hash: u64) -> bool {
        self.0.check(&hash)
    }
    fn bytes(&self) -> u64 {
        self.0.len().div_ceil(8)
    }
    fn expected_fpr(&self, n: u64) -> f64 {
        theory::bloom_fpr(self.0.len(), self.0.number_of_hash_functions(), n)
    }
    fn geometry(&self) -> Geometry {
        Geometry {
            bits: Some(self.0.len()),
            hashes: Some(self.0.number_of_hash_functions()),
            slices: None,
        }
    }
}

/// What the registry knows about it.
pub static DESCRIPTOR: Descriptor = Descriptor::new(
    "bloomfilter",
    "peer: bloomfilter crate (SipHash), sized by its own new_for_fp_rate",
    Family::Bloom,
    Placement::PeerCrate(Crate {
        name: "bloomfilter",
        version: "3.0.2",
    }),
    Capabilities::FILTER,
    RateModel::Fill,
);

impl Kind for BloomfilterKind {
    fn descriptor(&self) -> &Descriptor {
        &DESCRIPTOR
    }
    fn predicted_memory(&self, config: &BuildConfig) -> MemoryModel {
        MemoryModel::flat(BloomSizing::for_rate(config.expected_keys, config.fpr).bytes() as f64)
    }
    fn predicted_fpr(&self, config: &BuildConfig) -> f64 {
        config.fpr
    }
    fn build(&self, config: &BuildConfig) -> crate::Result<Box<dyn Membership>> {
        let mut seed = [0u8; 32];
        seed[..8].copy_from_slice(&config.seed.to_le_bytes());
        let filter = ::bloomfilter::Bloom::new_for_fp_rate_with_seed(
            config.expected_keys.max(1) as usize,
            config.fpr,
            &seed,
        )
        .map_err(|e| crate::Error::invalid("bloomfilter", e))?;
        Ok(peer(DESCRIPTOR.id, Filter(filter), config.hasher(), false))
    }
}

//! Peer `qfilter` (crates.io): a quotient filter that supports removal, the peer of our `counting` (which
//! pays 4× a Bloom filter's memory for deletions). Fed our hash as its fingerprint. Theory: the crate's own
//! estimate of its current error ratio.

use super::{peer, PeerFilter};
use crate::kind::{
    BuildConfig, Capabilities, Descriptor, Family, Kind, MemoryModel, Placement, RateModel,
};
use crate::membership::{Geometry, Membership};

/// Registry entry.
pub struct QfilterKind;

struct Filter(::qfilter::Filter);

impl PeerFilter for Filter {
    fn insert(&mut self, hash: u64) -> bool {
        // A full filter cannot insert: it reports the key new rather than claim a key it never stored.
        self.0.insert_fingerprint(false, hash).unwrap_or(true)
    }
    fn contains(&self, hash: u64) -> bool {
        self.0.contains_fingerprint(hash)
    }
    fn bytes(&self) -> u64 {
        self.0.memory_usage() as u64
    }
    fn expected_fpr(&self, _n: u64) -> f64 {
        self.0.current_error_ratio()
    }
    fn geometry(&self) -> Geometry {
        Geometry::default()
    }
    fn remove(&mut self, hash: u64) -> Option<bool> {
        Some(self.0.remove_fingerprint(hash))
    }
}

/// What the registry knows about it.
pub static DESCRIPTOR: Descriptor = Descriptor::new(
    "qfilter",
    "peer: qfilter crate, quotient filter with removal",
    Family::FingerprintTable,
    Placement::PeerCrate,
    Capabilities {
        removable: true,
        stores_past_capacity: false,
        ..Capabilities::FILTER
    },
    RateModel::Stated,
);

impl Kind for QfilterKind {
    fn descriptor(&self) -> &Descriptor {
        &DESCRIPTOR
    }
    fn predicted_memory(&self, config: &BuildConfig) -> MemoryModel {
        // Remainder bits ⌈log2(1/p)⌉ plus ≈ 2.1 metadata bits per slot, slots at ≤ 95% load.
        let remainder = (1.0 / config.fpr).log2().ceil();
        MemoryModel::flat(config.expected_keys as f64 * (remainder + 2.125) / 0.95 / 8.0 * 1.1)
    }
    fn predicted_fpr(&self, config: &BuildConfig) -> f64 {
        config.fpr
    }
    fn build(&self, config: &BuildConfig) -> crate::Result<Box<dyn Membership>> {
        let filter = ::qfilter::Filter::new(config.expected_keys.max(1), config.fpr)
            .map_err(|e| crate::Error::invalid("qfilter", format!("{e:?}")))?;
        Ok(peer(DESCRIPTOR.id, Filter(filter), config.hasher(), true))
    }
}

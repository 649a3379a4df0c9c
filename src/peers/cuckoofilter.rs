//! Peer `cuckoofilter` (crates.io 0.5, axiomhq's rust-cuckoofilter): the cuckoo filter of Fan et al.
//! with 8-bit fingerprints in buckets of 4, beside our `cuckoo`. Fed our hash h1 as its item, which it
//! hashes again with its default hasher (std's SipHash-1-3, keys 0; part of its measured cost): the
//! fingerprint is that hash's top byte (100 marks an empty slot, so a fingerprint of 100 becomes 101),
//! the first bucket its low 32 bits modulo the buckets, the other one the first xor the SipHash of the
//! fingerprint. Sized like ours: a capacity of ⌈n/0.95⌉, which the crate rounds up to a power of two of
//! slots, so the load is at most 95%. Its evictions draw from the thread's random generator, so two
//! builds of the same keys differ (and so do their false-positive counts).
//!
//! Theory (a model of the fill, as ours): a non-member's fingerprint equals a stored one with
//! ε = Σ_g P(g)² = (254 + 2²)/2¹⁶ = 258/65536 (255 values, 101 twice as likely), so at load α the rate is
//! 1 − (1 − ε)^(8α): about 2.4% at α = 0.76 whatever rate it is asked for, since 8-bit fingerprints
//! cannot reach 1% at a useful load.
//!
//! Every insert stores a fingerprint (the crate's `add`), so removing one of two keys that share one
//! leaves the other present; `insert_if_new` stores only keys not present (`test_and_add`). Removal is
//! the crate's `delete`. At capacity, when its 500 kicks run out, the crate keeps the new key and drops
//! the last fingerprint it moved, another key's, which then reads absent: the wrapper counts those
//! drops and reports them as the structure's failure, so no loss is silent. It does not keep keys past
//! its capacity.

use super::{peer, PeerFilter};
use crate::kind::{
    BuildConfig, Capabilities, Crate, Descriptor, Family, Kind, MemoryModel, Placement, RateModel,
};
use crate::membership::{Geometry, Membership};
use std::collections::hash_map::DefaultHasher;

/// Registry entry.
pub struct CuckoofilterKind;

/// The chance that a non-member's fingerprint equals a stored one: 258/65536.
const EPSILON: f64 = 258.0 / 65536.0;
/// Slots per bucket.
const SLOTS: u64 = 4;
/// The load the capacity is asked for, as ours.
const LOAD: f64 = 0.95;

/// The slots the crate allocates for `n` keys: ⌈n/0.95⌉ up to a power of two (at least one bucket).
fn slots_for(n: u64) -> u64 {
    let capacity = (n.max(1) as f64 / LOAD).ceil() as u64;
    (capacity.next_power_of_two() / SLOTS).max(1) * SLOTS
}

/// The rate after `n` keys in `slots` slots: 1 − (1 − ε)^(2·4·α).
fn fpr(slots: u64, n: u64) -> f64 {
    let load = n.min(slots) as f64 / slots as f64;
    -(2.0 * SLOTS as f64 * load * (-EPSILON).ln_1p()).exp_m1()
}

struct Filter {
    filter: ::cuckoofilter::CuckooFilter<DefaultHasher>,
    slots: u64,
    dropped: u64,
}

impl Filter {
    /// Adds the key, counting a fingerprint the crate dropped when its kicks ran out.
    fn add(&mut self, hash: u64) {
        if self.filter.add(&hash).is_err() {
            self.dropped += 1;
        }
    }
}

impl PeerFilter for Filter {
    fn insert(&mut self, hash: u64) -> bool {
        let new = !self.filter.contains(&hash);
        self.add(hash);
        new
    }
    fn insert_if_new(&mut self, hash: u64) -> bool {
        if self.filter.contains(&hash) {
            return false;
        }
        self.add(hash);
        true
    }
    fn contains(&self, hash: u64) -> bool {
        self.filter.contains(&hash)
    }
    fn bytes(&self) -> u64 {
        self.filter.memory_usage() as u64
    }
    fn expected_fpr(&self, n: u64) -> f64 {
        fpr(self.slots, n)
    }
    fn geometry(&self) -> Geometry {
        Geometry {
            bits: Some(self.slots * 8),
            hashes: Some(2),
            slices: None,
        }
    }
    fn remove(&mut self, hash: u64) -> Option<bool> {
        Some(self.filter.delete(&hash))
    }
    fn failure(&self) -> Option<String> {
        (self.dropped > 0).then(|| {
            format!(
                "the cuckoofilter crate ran out of kicks {} times, each time dropping another key's fingerprint (that key now reads absent)",
                self.dropped
            )
        })
    }
}

/// What the registry knows about it.
pub static DESCRIPTOR: Descriptor = Descriptor::new(
    "cuckoofilter",
    "peer: cuckoofilter crate, cuckoo filter of 8-bit fingerprints with removal",
    Family::FingerprintTable,
    Placement::PeerCrate(Crate {
        name: "cuckoofilter",
        version: "0.5.0",
    }),
    Capabilities {
        removable: true,
        stores_past_capacity: false,
        ..Capabilities::FILTER
    },
    RateModel::Fill,
);

impl Kind for CuckoofilterKind {
    fn descriptor(&self) -> &Descriptor {
        &DESCRIPTOR
    }
    fn planned_geometry(&self, config: &BuildConfig) -> Geometry {
        Geometry {
            bits: Some(slots_for(config.expected_keys) * 8),
            hashes: Some(2),
            slices: None,
        }
    }
    fn predicted_memory(&self, config: &BuildConfig) -> MemoryModel {
        // One byte a slot (the crate's own count adds its 24-byte handle).
        MemoryModel::flat(slots_for(config.expected_keys) as f64)
    }
    fn predicted_fpr(&self, config: &BuildConfig) -> f64 {
        fpr(slots_for(config.expected_keys), config.expected_keys)
    }
    fn build(&self, config: &BuildConfig) -> crate::Result<Box<dyn Membership>> {
        let slots = slots_for(config.expected_keys);
        let capacity = usize::try_from(slots).map_err(|_| {
            crate::Error::invalid(
                "cuckoofilter",
                format!("{slots} slots do not fit this machine's addresses"),
            )
        })?;
        let filter = Filter {
            filter: ::cuckoofilter::CuckooFilter::with_capacity(capacity),
            slots,
            dropped: 0,
        };
        Ok(peer(DESCRIPTOR.id, filter, config.hasher(), true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The geometry the model assumes is the crate's: its bytes are one per slot (and its handle).
    #[test]
    fn the_model_has_the_slots_the_crate_allocates() {
        for n in [1u64, 100, 200_000, 1_000_000, 3_000_000] {
            let config = BuildConfig::new(n, 0.01, 1);
            let built = CuckoofilterKind.build(&config).unwrap();
            let handle = std::mem::size_of::<::cuckoofilter::CuckooFilter<DefaultHasher>>() as u64;
            assert_eq!(built.bytes_held(), slots_for(n) + handle, "{n}");
            assert!(n as f64 / slots_for(n) as f64 <= LOAD, "{n}");
        }
    }
}

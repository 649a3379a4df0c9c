//! `fingerprint`: an exact-in-practice set of 64-bit key hashes.
//!
//! Stores h1 (64 bits) of the seeded hash in a `hashbrown` table (8-byte slots; the fingerprint is its own
//! table hash). A non-member is reported present only if its fingerprint equals one of the n stored ones:
//! rate 1 − (1 − 2⁻⁶⁴)ⁿ ≈ n/2⁶⁴ ([`crate::theory::fingerprint_fpr`]). Distinct keys with equal fingerprints are
//! stored once, so `insert` can (with that probability) call a new key old.

use crate::hash::{KeyHash, KeyHasher};
use crate::kind::{
    Advisor, BuildConfig, Capabilities, Descriptor, Family, Kind, MemoryModel, Placement,
    RateModel, Role,
};
use crate::membership::{Geometry, Membership, Removable};
use crate::theory;
use hashbrown::hash_table::{Entry, HashTable};

/// The registry id.
pub const ID: &str = "fingerprint";

/// Registry entry.
pub struct FingerprintKind;

/// What the registry knows about it.
pub static DESCRIPTOR: Descriptor = Descriptor {
    roles: &[Role::ExactFingerprints],
    advisor: Some(Advisor {
        pitch: "exact in practice (collision rate n/2^64), 8-byte slots",
        rung: "the URL strings no longer fit, 64-bit fingerprints do (collision rate n/2^64)",
        prefers_measured_bytes: false,
        size_for_advice: None,
    }),
    ..Descriptor::new(
        ID,
        "hashbrown set of 64-bit key fingerprints (collision rate n/2^64)",
        Family::ExactSet,
        Placement::Ours,
        Capabilities::EXACT_SET,
        RateModel::Exact,
    )
};

impl Kind for FingerprintKind {
    fn descriptor(&self) -> &Descriptor {
        &DESCRIPTOR
    }
    fn planned_geometry(&self, _config: &BuildConfig) -> Geometry {
        Geometry {
            bits: Some(64),
            ..Geometry::default()
        }
    }
    fn predicted_memory(&self, config: &BuildConfig) -> MemoryModel {
        MemoryModel::flat(theory::hashbrown_table_bytes(config.expected_keys, 8) as f64)
    }
    /// While hashbrown grows into its last table, the previous one (half its size) is still allocated.
    fn predicted_peak_bytes(&self, config: &BuildConfig) -> f64 {
        self.predicted_memory(config).footprint_bytes
            + theory::hashbrown_table_bytes(config.expected_keys, 8) as f64 / 2.0
    }
    fn predicted_fpr(&self, config: &BuildConfig) -> f64 {
        theory::fingerprint_fpr(config.expected_keys)
    }
    fn build(&self, config: &BuildConfig) -> crate::Result<Box<dyn Membership>> {
        Ok(Box::new(FingerprintSet {
            table: HashTable::new(),
            hasher: config.hasher(),
            inserted: 0,
        }))
    }
}

/// A set of 64-bit fingerprints.
pub struct FingerprintSet {
    table: HashTable<u64>,
    hasher: KeyHasher,
    inserted: u64,
}

impl Membership for FingerprintSet {
    fn id(&self) -> &'static str {
        ID
    }
    fn hasher(&self) -> KeyHasher {
        self.hasher
    }
    #[inline]
    fn insert_hashed(&mut self, _key: &[u8], hash: KeyHash) -> bool {
        let fp = hash.h1;
        match self.table.entry(fp, |f| *f == fp, |f| *f) {
            Entry::Occupied(_) => false,
            Entry::Vacant(slot) => {
                slot.insert(fp);
                self.inserted = self.inserted.saturating_add(1);
                true
            }
        }
    }
    #[inline]
    fn contains_hashed(&self, _key: &[u8], hash: KeyHash) -> bool {
        self.table.find(hash.h1, |f| *f == hash.h1).is_some()
    }
    fn bytes_held(&self) -> u64 {
        self.table.allocation_size() as u64
    }
    fn n_inserted(&self) -> u64 {
        self.inserted
    }
    fn expected_fpr(&self, n_distinct: u64) -> f64 {
        theory::fingerprint_fpr(n_distinct)
    }
    fn geometry(&self) -> Geometry {
        Geometry {
            bits: Some(64),
            ..Geometry::default()
        }
    }
    fn as_removable(&mut self) -> Option<&mut dyn Removable> {
        Some(self)
    }
}

impl Removable for FingerprintSet {
    fn remove_hashed(&mut self, _key: &[u8], hash: KeyHash) -> bool {
        match self.table.find_entry(hash.h1, |f| *f == hash.h1) {
            Ok(entry) => {
                entry.remove();
                self.inserted -= 1;
                true
            }
            Err(_) => false,
        }
    }
}

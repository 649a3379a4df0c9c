//! `hashset`: the exact set of URL strings, the "just use a set" regime.
//!
//! A `hashbrown` table of boxed byte strings (`Box<[u8]>`: 16-byte slot, exactly-sized heap copy of the key),
//! probed by our seeded hash, so hashing is timed apart like every other structure. No reserve: it
//! grows by doubling as a set in a crawler would. Memory model: [`crate::theory::hashbrown_table_bytes`] for
//! the slots plus one heap string per key (requested bytes = key length; footprint = glibc's chunk size).

use crate::hash::{KeyHash, KeyHasher};
use crate::kind::{
    Advisor, BuildConfig, Capabilities, Descriptor, Family, KeyLengths, Kind, MemoryModel,
    Placement, RateModel, Role,
};
use crate::membership::{Geometry, Membership, Removable};
use crate::theory;
use hashbrown::hash_table::{Entry, HashTable};

/// The registry id.
pub const ID: &str = "hashset";

const SLOT_BYTES: u64 = std::mem::size_of::<Box<[u8]>>() as u64;

/// Registry entry.
pub struct HashSetKind;

/// What the registry knows about it.
pub static DESCRIPTOR: Descriptor = Descriptor {
    roles: &[Role::ExactSet],
    advisor: Some(Advisor {
        pitch: "exact: no false positives at all",
        rung: "the exact set of URLs fits: no false positive to explain",
        prefers_measured_bytes: true,
        size_for_advice: None,
    }),
    ..Descriptor::new(
        ID,
        "exact hashbrown set of the URL strings",
        Family::ExactSet,
        Placement::Ours,
        Capabilities::EXACT_SET,
        RateModel::Exact,
    )
};

impl Kind for HashSetKind {
    fn descriptor(&self) -> &Descriptor {
        &DESCRIPTOR
    }
    fn predicted_memory(&self, config: &BuildConfig) -> MemoryModel {
        model(config.expected_keys, config.key_lengths)
    }
    /// While hashbrown grows into its last table, the previous one (half its size) is still allocated.
    fn predicted_peak_bytes(&self, config: &BuildConfig) -> f64 {
        self.predicted_memory(config).footprint_bytes
            + theory::hashbrown_table_bytes(config.expected_keys, SLOT_BYTES) as f64 / 2.0
    }
    fn predicted_fpr(&self, _config: &BuildConfig) -> f64 {
        0.0
    }
    fn build(&self, config: &BuildConfig) -> crate::Result<Box<dyn Membership>> {
        Ok(Box::new(ExactSet::new(config.hasher())))
    }
}

/// The memory of an exact set of `n` keys with the given lengths.
pub fn model(n: u64, lengths: KeyLengths) -> MemoryModel {
    let table = theory::hashbrown_table_bytes(n, SLOT_BYTES) as f64;
    MemoryModel {
        heap_bytes: table + n as f64 * lengths.mean_bytes,
        footprint_bytes: table + n as f64 * lengths.mean_chunk_bytes,
    }
}

/// An exact set of keys.
pub struct ExactSet {
    table: HashTable<Box<[u8]>>,
    hasher: KeyHasher,
    key_bytes: u64,
    inserted: u64,
}

impl ExactSet {
    /// An empty set hashing with `hasher`.
    pub fn new(hasher: KeyHasher) -> Self {
        ExactSet {
            table: HashTable::new(),
            hasher,
            key_bytes: 0,
            inserted: 0,
        }
    }
}

impl Membership for ExactSet {
    fn id(&self) -> &'static str {
        ID
    }
    fn hasher(&self) -> KeyHasher {
        self.hasher
    }
    #[inline]
    fn insert_hashed(&mut self, key: &[u8], hash: KeyHash) -> bool {
        let hasher = self.hasher;
        match self
            .table
            .entry(hash.h1, |k| **k == *key, |k| hasher.hash(k).h1)
        {
            Entry::Occupied(_) => false,
            Entry::Vacant(slot) => {
                slot.insert(Box::from(key));
                self.key_bytes += key.len() as u64;
                self.inserted = self.inserted.saturating_add(1);
                true
            }
        }
    }
    #[inline]
    fn contains_hashed(&self, key: &[u8], hash: KeyHash) -> bool {
        self.table.find(hash.h1, |k| **k == *key).is_some()
    }
    fn bytes_held(&self) -> u64 {
        self.table.allocation_size() as u64 + self.key_bytes
    }
    fn n_inserted(&self) -> u64 {
        self.inserted
    }
    fn expected_fpr(&self, _n_distinct: u64) -> f64 {
        0.0
    }
    fn geometry(&self) -> Geometry {
        Geometry::default()
    }
    fn as_removable(&mut self) -> Option<&mut dyn Removable> {
        Some(self)
    }
}

impl Removable for ExactSet {
    fn remove_hashed(&mut self, key: &[u8], hash: KeyHash) -> bool {
        match self.table.find_entry(hash.h1, |k| **k == *key) {
            Ok(entry) => {
                let (removed, _) = entry.remove();
                self.key_bytes -= removed.len() as u64;
                self.inserted -= 1;
                true
            }
            Err(_) => false,
        }
    }
}

//! Peer crates as comparison rows: well-known filters from crates.io behind the same trait, on the same
//! keys. They are benchmark rows only (the `peers` feature), never used inside our structures.
//!
//! Hashing: every peer receives h1 of our seeded hash (the run's, as our structures). Crates with a raw-hash entry point
//! (fastbloom, sbbf-rs-safe, qfilter, xorf) use it directly; the others (bloomfilter, growable-bloom-filter,
//! cuckoofilter) take it as their `Hash` item and hash those 8 bytes again with their own hasher, which is
//! part of their measured cost. Theory: each peer's own formula from its visible geometry, or, where the geometry is
//! hidden, the target it was built for (reported as such); the report states plainly when a peer misses.

#[cfg(feature = "peers")]
pub mod binary_fuse;
#[cfg(feature = "peers")]
pub mod bloomfilter;
pub mod boost;
#[cfg(feature = "peers")]
pub mod cuckoofilter;
pub mod fastbloom;
#[cfg(feature = "peers")]
pub mod growable;
#[cfg(feature = "peers")]
pub mod qfilter;
pub mod sbbf;

use crate::hash::{KeyHash, KeyHasher};
use crate::kind::Descriptor;

/// The peers that carry speed targets, listed whether or not the `peers` feature builds them, so every
/// build judges a results file's speed groups the same way (`registry::speed_targets`).
pub static WITH_SPEED_TARGETS: [&Descriptor; 3] = [
    &fastbloom::DESCRIPTOR,
    &sbbf::DESCRIPTOR,
    &boost::MULTIBLOCK32,
];
use crate::keys::KeyBatch;
use crate::membership::{Geometry, Membership, Removable};

/// What a peer filter offers, in terms of our 64-bit key hash.
pub trait PeerFilter: Send + Sync {
    /// Inserts; returns whether the key was new as far as the filter can tell. A filter that deletes
    /// stores every insert (as [`Membership::insert_hashed`] says), so that deleting one key never takes
    /// another's fingerprint with it.
    fn insert(&mut self, hash: u64) -> bool;
    /// Inserts only when the key is not (as far as it can tell) present; returns whether it was new.
    fn insert_if_new(&mut self, hash: u64) -> bool {
        self.insert(hash)
    }
    /// Whether the key may be present.
    fn contains(&self, hash: u64) -> bool;
    /// Whether the crate has a batch path of its own ([`Membership::batch_path`]).
    fn batch_path(&self) -> bool {
        false
    }
    /// Inserts a batch's keys; returns how many were new (as [`PeerFilter::insert`] tells).
    fn insert_many(&mut self, hashes: &[KeyHash]) -> u64 {
        hashes.iter().map(|h| u64::from(self.insert(h.h1))).sum()
    }
    /// How many of a batch's keys may be present.
    fn contains_many(&self, hashes: &[KeyHash]) -> u64 {
        hashes.iter().map(|h| u64::from(self.contains(h.h1))).sum()
    }
    /// Bytes of the filter (from the crate's own accessors or its layout).
    fn bytes(&self) -> u64;
    /// Theoretical false-positive rate after `n` distinct keys.
    fn expected_fpr(&self, n: u64) -> f64;
    /// Geometry, where the crate shows it.
    fn geometry(&self) -> Geometry;
    /// Called once after the last insert (static filters build themselves here).
    fn finish(&mut self) {}
    /// Removes a key, for peers that can.
    fn remove(&mut self, _hash: u64) -> Option<bool> {
        None
    }
    /// For a peer that refuses inserts (or drops keys) when full: what it lost, once it has (see
    /// [`Membership::failure`]).
    fn failure(&self) -> Option<String> {
        None
    }
}

/// A peer filter behind our membership trait.
pub struct Peer<F: PeerFilter> {
    pub id: &'static str,
    pub filter: F,
    pub hasher: KeyHasher,
    pub inserted: u64,
    pub removable: bool,
}

impl<F: PeerFilter> Membership for Peer<F> {
    fn id(&self) -> &'static str {
        self.id
    }
    fn hasher(&self) -> KeyHasher {
        self.hasher
    }
    #[inline]
    fn insert_hashed(&mut self, _key: &[u8], hash: KeyHash) -> bool {
        let new = self.filter.insert(hash.h1);
        self.inserted = self.inserted.saturating_add(new as u64);
        new
    }
    fn insert_if_new(&mut self, _key: &[u8], hash: KeyHash) -> bool {
        let new = self.filter.insert_if_new(hash.h1);
        self.inserted = self.inserted.saturating_add(new as u64);
        new
    }
    #[inline]
    fn contains_hashed(&self, _key: &[u8], hash: KeyHash) -> bool {
        self.filter.contains(hash.h1)
    }
    fn failure(&self) -> Option<String> {
        self.filter.failure()
    }
    fn batch_path(&self) -> bool {
        self.filter.batch_path()
    }
    fn insert_batch(&mut self, batch: &KeyBatch) -> u64 {
        let new = self.filter.insert_many(batch.hashes());
        self.inserted = self.inserted.saturating_add(new);
        new
    }
    fn contains_batch(&self, batch: &KeyBatch) -> u64 {
        self.filter.contains_many(batch.hashes())
    }
    fn bytes_held(&self) -> u64 {
        self.filter.bytes()
    }
    fn n_inserted(&self) -> u64 {
        self.inserted
    }
    fn expected_fpr(&self, n_distinct: u64) -> f64 {
        self.filter.expected_fpr(n_distinct)
    }
    fn geometry(&self) -> Geometry {
        self.filter.geometry()
    }
    fn finish_build(&mut self) {
        self.filter.finish();
    }
    fn as_removable(&mut self) -> Option<&mut dyn Removable> {
        if self.removable {
            Some(self)
        } else {
            None
        }
    }
}

impl<F: PeerFilter> Removable for Peer<F> {
    fn remove_hashed(&mut self, _key: &[u8], hash: KeyHash) -> bool {
        let removed = self.filter.remove(hash.h1).unwrap_or(false);
        self.inserted = self.inserted.saturating_sub(removed as u64);
        removed
    }
}

/// Wraps a peer filter.
pub fn peer<F: PeerFilter + 'static>(
    id: &'static str,
    filter: F,
    hasher: KeyHasher,
    removable: bool,
) -> Box<dyn Membership> {
    Box::new(Peer {
        id,
        filter,
        hasher,
        inserted: 0,
        removable,
    })
}

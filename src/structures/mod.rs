//! Our membership structures, one file each; each implements [`crate::membership::Membership`] and
//! registers a [`crate::kind::Kind`] in [`crate::registry::REGISTRY`].

pub mod bitmap;
pub mod bits;
pub mod blocked;
pub mod bloom;
pub mod counting;
pub mod cuckoo;
pub mod fingerprint;
pub mod hashset;
pub mod scalable;
pub mod windowed;

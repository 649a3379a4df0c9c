//! Peer `xorf` BinaryFuse8 (Graf & Lemire, "Binary Fuse Filters", 2022): a static filter near the space
//! lower bound (≈ 9 bits per key for a rate of 2⁻⁸ = 0.39%), for reference. Static: inserts collect the
//! hashes, and the filter is built once after the last insert (its build time is part of the insert cost;
//! the collected hashes, 8 bytes per key, are freed then). Theory: 2⁻⁸ per non-member.

use super::{peer, PeerFilter};
use crate::kind::{
    BuildConfig, Capabilities, Crate, Descriptor, Family, Kind, MemoryModel, Placement, RateModel,
};
use crate::membership::{Geometry, Membership};
use xorf::Filter as _;

/// Registry entry.
pub struct BinaryFuseKind;

struct Filter {
    pending: Vec<u64>,
    built: Option<::xorf::BinaryFuse8>,
}

impl PeerFilter for Filter {
    fn insert(&mut self, hash: u64) -> bool {
        self.pending.push(hash);
        true
    }
    fn contains(&self, hash: u64) -> bool {
        match &self.built {
            Some(f) => f.contains(&hash),
            // Before the build, answer exactly from the pending keys (small sets only).
            None => self.pending.contains(&hash),
        }
    }
    fn bytes(&self) -> u64 {
        let built = self
            .built
            .as_ref()
            .map(|f| f.fingerprints.len() as u64)
            .unwrap_or(0);
        built + self.pending.capacity() as u64 * 8
    }
    fn expected_fpr(&self, _n: u64) -> f64 {
        1.0 / 256.0
    }
    fn geometry(&self) -> Geometry {
        Geometry {
            bits: self.built.as_ref().map(|f| f.fingerprints.len() as u64 * 8),
            hashes: Some(3),
            slices: None,
        }
    }
    fn finish(&mut self) {
        if self.built.is_none() && !self.pending.is_empty() {
            self.pending.sort_unstable();
            self.pending.dedup();
            if let Ok(filter) = ::xorf::BinaryFuse8::try_from(&self.pending) {
                self.built = Some(filter);
                self.pending = Vec::new();
            }
        }
    }
}

/// What the registry knows about it.
pub static DESCRIPTOR: Descriptor = Descriptor::new(
    "binary-fuse8",
    "peer: xorf BinaryFuse8, static filter near the space bound (rate 1/256)",
    Family::StaticFilter,
    Placement::PeerCrate(Crate {
        name: "xorf",
        version: "0.13.0",
    }),
    Capabilities {
        dynamic: false,
        ..Capabilities::FILTER
    },
    RateModel::Fill,
);

impl Kind for BinaryFuseKind {
    fn descriptor(&self) -> &Descriptor {
        &DESCRIPTOR
    }
    fn predicted_memory(&self, config: &BuildConfig) -> MemoryModel {
        // After the build: the filter, ≈ 1.13 bytes per key.
        MemoryModel::flat(config.expected_keys as f64 * 1.13)
    }
    fn predicted_peak_bytes(&self, config: &BuildConfig) -> f64 {
        // While building: our collected hashes (8 bytes per key) plus xorf's construction arrays, 32
        // bytes per key in all (docs/notes.md give the peak measured).
        config.expected_keys as f64 * 32.0
    }
    fn predicted_fpr(&self, _config: &BuildConfig) -> f64 {
        1.0 / 256.0
    }
    fn build(&self, config: &BuildConfig) -> crate::Result<Box<dyn Membership>> {
        Ok(peer(
            DESCRIPTOR.id,
            Filter {
                // Reserved at once: growing by doubling would hold up to twice the hashes at the peak.
                pending: Vec::with_capacity(config.expected_keys.min(1 << 32) as usize),
                built: None,
            },
            config.hasher(),
            false,
        ))
    }
}

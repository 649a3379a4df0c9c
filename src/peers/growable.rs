//! Peer `growable-bloom-filter` (crates.io): a scalable Bloom filter (growth 2, tightening ≈ 0.85), the
//! peer of our `scalable`. Its slices are not visible, so its "theory" is the bound it promises: the target
//! rate it was built for. Starts at the same initial capacity as our `scalable`.

use super::{peer, PeerFilter};
use crate::kind::{
    BuildConfig, Capabilities, Crate, Descriptor, Family, Kind, MemoryModel, Placement, RateModel,
    Role,
};
use crate::membership::{Geometry, Membership};
use crate::registry::role;
use crate::structures::scalable;

/// Registry entry.
pub struct GrowableKind;

struct Filter {
    inner: ::growable_bloom_filter::GrowableBloom,
    target: f64,
    initial: u64,
}

impl PeerFilter for Filter {
    fn insert(&mut self, hash: u64) -> bool {
        self.inner.insert(hash)
    }
    fn contains(&self, hash: u64) -> bool {
        self.inner.contains(hash)
    }
    fn bytes(&self) -> u64 {
        // Its slices hold m = −capacity·ln(pᵢ)/ln²2 bits each; estimated from its capacity at the tightened
        // rates (the counting allocator measures the truth in the harness).
        let mut bytes = 0.0;
        let (mut capacity, mut rate) = (self.initial as f64, self.target * (1.0 - 0.8515625));
        let mut covered = 0.0;
        while covered < self.inner.len().max(1) as f64 {
            bytes += -capacity * rate.ln() / (std::f64::consts::LN_2.powi(2)) / 8.0;
            covered += capacity;
            capacity *= 2.0;
            rate *= 0.8515625;
        }
        bytes as u64
    }
    fn expected_fpr(&self, _n: u64) -> f64 {
        self.target
    }
    fn geometry(&self) -> Geometry {
        Geometry::default()
    }
}

/// What the registry knows about it.
pub static DESCRIPTOR: Descriptor = Descriptor::new(
    "growable-bloom",
    "peer: growable-bloom-filter crate, scalable Bloom (bound = target rate)",
    Family::ScalableBloom,
    Placement::PeerCrate(Crate {
        name: "growable-bloom-filter",
        version: "2.1.1",
    }),
    Capabilities {
        growable: true,
        ..Capabilities::FILTER
    },
    RateModel::Stated,
);

impl Kind for GrowableKind {
    fn descriptor(&self) -> &Descriptor {
        &DESCRIPTOR
    }
    fn predicted_memory(&self, config: &BuildConfig) -> MemoryModel {
        MemoryModel::flat(
            role(Role::GrowingFilter)
                .predicted_memory(config)
                .heap_bytes
                * 1.2,
        )
    }
    fn predicted_fpr(&self, config: &BuildConfig) -> f64 {
        config.fpr
    }
    fn build(&self, config: &BuildConfig) -> crate::Result<Box<dyn Membership>> {
        let initial = scalable::params(config).initial_capacity;
        let inner = ::growable_bloom_filter::GrowableBloom::new(config.fpr, initial as usize);
        Ok(peer(
            DESCRIPTOR.id,
            Filter {
                inner,
                target: config.fpr,
                initial,
            },
            config.hasher(),
            false,
        ))
    }
}

//! Peer `sbbf-rs-safe` (crates.io): the split-block Bloom filter of Impala/Parquet (256-bit blocks of eight
//! 32-bit words, one bit per word), the blocked peer of our `blocked`. Bits per key: the fewest whole bits
//! that meet the target by the split-block formula Σᵢ Pois(i; 256·n/m)·(1 − (1 − 1/32)^i)^8.

use crate::kind::{
    Capabilities, Comparison, Crate, Descriptor, Family, Placement, RateModel, Role, SpeedTarget,
    AT_TEN_MILLION,
};
use crate::membership::Op;

/// The registry id.
pub const ID: &str = "sbbf";

/// What ours must reach against this peer (kept outside the `peers` feature, so a build without the
/// peer crates still judges results that hold this row).
pub const SPEED_TARGETS: &[SpeedTarget] = &[SpeedTarget {
    ours: Role::BlockedBloom,
    ops: &[Op::Insert, Op::MemberQuery, Op::NonMemberQuery],
    comparison: Comparison::PerKey,
    min_ratio: 1.0,
    floor_reach: false,
    judged_at: AT_TEN_MILLION,
}];

/// What the registry knows about it (outside the `peers` feature, like the targets it carries).
pub static DESCRIPTOR: Descriptor = Descriptor {
    speed_targets: SPEED_TARGETS,
    ..Descriptor::new(
        ID,
        "peer: sbbf-rs-safe crate, split-block Bloom (256-bit blocks, k = 8)",
        Family::BlockedBloom,
        Placement::PeerCrate(Crate {
            name: "sbbf-rs-safe",
            version: "0.3.2",
        }),
        Capabilities::FILTER,
        RateModel::Fill,
    )
};

#[cfg(feature = "peers")]
pub use imp::*;

#[cfg(feature = "peers")]
mod imp {
    use super::super::{peer, PeerFilter};
    use super::DESCRIPTOR;
    use crate::kind::{BuildConfig, Descriptor, Kind, MemoryModel};
    use crate::membership::{Geometry, Membership};
    use crate::theory;

    /// Registry entry.
    pub struct SbbfKind;

    /// The split-block rate for m bits and n keys.
    pub fn split_block_fpr(m: u64, n: u64) -> f64 {
        let lambda = 256.0 * n as f64 / m.max(1) as f64;
        theory::poisson_mixture(lambda, |i| {
            (-(i as f64 * (-1.0f64 / 32.0).ln_1p()).exp_m1()).powi(8)
        })
    }

    /// Whole bits per key that meet `p` (at most 64).
    fn bits_per_key(p: f64) -> u64 {
        (2..=64)
            .find(|b| split_block_fpr(b * 1_000_000, 1_000_000) <= p)
            .unwrap_or(64)
    }

    struct Filter {
        inner: ::sbbf_rs_safe::Filter,
    }

    impl PeerFilter for Filter {
        fn insert(&mut self, hash: u64) -> bool {
            // sbbf-rs returns whether the hash was already present.
            !self.inner.insert_hash(hash)
        }
        fn contains(&self, hash: u64) -> bool {
            self.inner.contains_hash(hash)
        }
        fn bytes(&self) -> u64 {
            self.inner.as_bytes().len() as u64
        }
        fn expected_fpr(&self, n: u64) -> f64 {
            split_block_fpr(self.bytes() * 8, n)
        }
        fn geometry(&self) -> Geometry {
            Geometry {
                bits: Some(self.bytes() * 8),
                hashes: Some(8),
                slices: None,
            }
        }
    }

    impl Kind for SbbfKind {
        fn descriptor(&self) -> &Descriptor {
            &DESCRIPTOR
        }
        fn predicted_memory(&self, config: &BuildConfig) -> MemoryModel {
            MemoryModel::flat(
                (bits_per_key(config.fpr) * config.expected_keys.max(1)).div_ceil(256) as f64
                    * 32.0,
            )
        }
        fn predicted_fpr(&self, config: &BuildConfig) -> f64 {
            split_block_fpr(
                bits_per_key(config.fpr) * config.expected_keys.max(1),
                config.expected_keys,
            )
        }
        fn build(&self, config: &BuildConfig) -> crate::Result<Box<dyn Membership>> {
            let inner = ::sbbf_rs_safe::Filter::new(
                bits_per_key(config.fpr) as usize,
                config.expected_keys.max(1) as usize,
            );
            Ok(peer(
                DESCRIPTOR.id,
                Filter { inner },
                config.hasher(),
                false,
            ))
        }
    }
}

//! Peer `fastbloom` (crates.io `fastbloom`): a standard Bloom filter, probes derived from one u64 by its
//! double hasher. Built with the same m and k as our `bloom`, fed our hash through `insert_hash`.
//! Theory: the standard Bloom formula at its m and k.
//!
//! Version: 0.17, which reduces a probe to a bit index with a 128-bit product (earlier versions wrapped
//! past 2³² bits; see docs/notes.md). `filters_past_two_to_the_32_bits_keep_their_rate` checks
//! this row past 2³² bits like our own.

use crate::kind::{
    Capabilities, Comparison, Crate, Descriptor, Family, Placement, RateModel, Role, SpeedTarget,
    AT_TEN_MILLION,
};
use crate::membership::Op;

/// The registry id.
pub const ID: &str = "fastbloom";

/// What ours must reach against this peer (kept outside the `peers` feature, so a build without the
/// peer crates still judges results that hold this row).
pub const SPEED_TARGETS: &[SpeedTarget] = &[
    SpeedTarget {
        ours: Role::ReferenceBloom,
        ops: &[Op::Insert, Op::MemberQuery, Op::NonMemberQuery],
        comparison: Comparison::PerKey,
        min_ratio: 1.0,
        floor_reach: false,
        judged_at: AT_TEN_MILLION,
    },
    SpeedTarget {
        ours: Role::BlockedBloom,
        ops: &[Op::MemberQuery, Op::NonMemberQuery],
        comparison: Comparison::OursBatchedVsBest,
        min_ratio: 2.5,
        floor_reach: true,
        judged_at: AT_TEN_MILLION,
    },
];

/// What the registry knows about it (outside the `peers` feature, like the targets it carries).
pub static DESCRIPTOR: Descriptor = Descriptor {
    speed_targets: SPEED_TARGETS,
    ..Descriptor::new(
        ID,
        "peer: fastbloom crate, standard Bloom filter (same m, k as bloom)",
        Family::Bloom,
        Placement::PeerCrate(Crate {
            name: "fastbloom",
            version: "0.17.0",
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
    use crate::hash::KeyHasher;
    use crate::kind::{BuildConfig, Descriptor, Kind, MemoryModel};
    use crate::membership::{Geometry, Membership};
    use crate::structures::bloom;
    use crate::theory;

    /// Registry entry.
    pub struct FastBloomKind;

    struct Filter(::fastbloom::BloomFilter);

    impl PeerFilter for Filter {
        fn insert(&mut self, hash: u64) -> bool {
            // fastbloom returns whether the item was already present.
            !self.0.insert_hash(hash)
        }
        fn contains(&self, hash: u64) -> bool {
            self.0.contains_hash(hash)
        }
        fn bytes(&self) -> u64 {
            (self.0.as_slice().len() * 8) as u64
        }
        fn expected_fpr(&self, n: u64) -> f64 {
            theory::bloom_fpr(self.0.num_bits() as u64, self.0.num_hashes(), n)
        }
        fn geometry(&self) -> Geometry {
            Geometry {
                bits: Some(self.0.num_bits() as u64),
                hashes: Some(self.0.num_hashes()),
                slices: None,
            }
        }
    }

    /// The peer with this exact geometry (bits, probes) behind the membership trait (for the conformance
    /// suite's past-2³²-bits check).
    pub fn with_geometry(bits: u64, hashes: u32, hasher: KeyHasher) -> Box<dyn Membership> {
        let filter = ::fastbloom::BloomFilter::with_num_bits(bits as usize).hashes(hashes);
        peer(DESCRIPTOR.id, Filter(filter), hasher, false)
    }

    impl Kind for FastBloomKind {
        fn descriptor(&self) -> &Descriptor {
            &DESCRIPTOR
        }
        fn predicted_memory(&self, config: &BuildConfig) -> MemoryModel {
            MemoryModel::flat(bloom::sizing(config).bytes() as f64)
        }
        fn predicted_fpr(&self, config: &BuildConfig) -> f64 {
            bloom::sizing(config).fpr(config.expected_keys)
        }
        /// The same model after any fill: the crate is built with `bloom`'s m and k.
        fn predicted_fpr_after(&self, config: &BuildConfig, n_inserted: u64) -> Option<f64> {
            Some(bloom::sizing(config).fpr(n_inserted))
        }
        fn build(&self, config: &BuildConfig) -> crate::Result<Box<dyn Membership>> {
            let s = bloom::sizing(config);
            let filter = ::fastbloom::BloomFilter::with_num_bits(s.bits as usize).hashes(s.hashes);
            Ok(peer(DESCRIPTOR.id, Filter(filter), config.hasher(), false))
        }
    }
}

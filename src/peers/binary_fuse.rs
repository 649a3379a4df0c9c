//! Peers `xorf` BinaryFuse8 and BinaryFuse16 (Graf & Lemire, "Binary Fuse Filters: Fast and Smaller
//! Than Xor Filters", JEA 2022): static filters near the space lower bound, ≈ 9 bits per key for a rate
//! of 2⁻⁸ = 0.39% and ≈ 18 bits per key for 2⁻¹⁶ ≈ 0.0015%, for reference. Static: inserts collect the
//! hashes, and the filter is built once after the last insert (its build time is part of the insert cost;
//! the collected hashes, 8 bytes per key, are freed then). Theory: 2^−f per non-member, f the fingerprint
//! bits. One body serves both widths ([`Width`]).
//!
//! Memory: the 3-wise layout xorf builds for s distinct keys: segments of L = 2^⌊ln s / ln 3.33 + 2.25⌋
//! slots (at most 2¹⁸), ⌈round(s·c)/L⌉ segments for the size factor c = max(1.125, 0.875 + 0.25·ln 10⁶ /
//! ln s), less two, plus the two the third hash reaches past them; f/8 bytes a slot
//! ([`fuse_slots`]).

use super::{peer, PeerFilter};
use crate::kind::{
    BuildConfig, Capabilities, Crate, Descriptor, Family, Kind, MemoryModel, Placement, RateModel,
};
use crate::membership::{Geometry, Membership};
use xorf::Filter as _;

/// A fingerprint width: the xorf filter that stores it.
pub trait Width: Send + Sync + 'static {
    /// xorf's filter of this width.
    type Built: xorf::Filter<u64> + for<'a> TryFrom<&'a [u64]> + Send + Sync + 'static;
    /// Bits per fingerprint.
    const BITS: u32;
    /// Slots of a built filter.
    fn slots(built: &Self::Built) -> u64;
}

/// 8-bit fingerprints.
pub struct Fuse8;
/// 16-bit fingerprints.
pub struct Fuse16;

impl Width for Fuse8 {
    type Built = ::xorf::BinaryFuse8;
    const BITS: u32 = 8;
    fn slots(built: &Self::Built) -> u64 {
        built.fingerprints.len() as u64
    }
}

impl Width for Fuse16 {
    type Built = ::xorf::BinaryFuse16;
    const BITS: u32 = 16;
    fn slots(built: &Self::Built) -> u64 {
        built.fingerprints.len() as u64
    }
}

/// The rate of a width: 2^−f.
fn rate<W: Width>() -> f64 {
    (2f64).powi(-(W::BITS as i32))
}

/// Slots of the fingerprint array xorf builds for `keys` distinct keys (the module's formula).
pub fn fuse_slots(keys: u64) -> u64 {
    let size = keys as f64;
    let segment: u64 = if keys == 0 {
        4
    } else {
        let exponent = (size.ln() / 3.33f64.ln() + 2.25).floor().max(0.0) as u32;
        (1u64 << exponent).min(1 << 18)
    };
    let factor = (0.875 + 0.25 * 1e6f64.ln() / size.ln()).max(1.125);
    let capacity = if keys > 1 {
        (size * factor).round() as u64
    } else {
        0
    };
    let segments = capacity.div_ceil(segment).saturating_sub(2).max(1);
    (segments + 2) * segment
}

/// A static filter of width `W`, built from the hashes collected.
struct Filter<W: Width> {
    pending: Vec<u64>,
    built: Option<W::Built>,
    /// Why the build failed, if it did (the filter then answers from the pending hashes, exactly but
    /// slowly, and the cell fails rather than time that).
    build_failed: Option<String>,
}

impl<W: Width> PeerFilter for Filter<W> {
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
            .map(|f| W::slots(f) * u64::from(W::BITS) / 8)
            .unwrap_or(0);
        built + self.pending.capacity() as u64 * 8
    }
    fn expected_fpr(&self, _n: u64) -> f64 {
        rate::<W>()
    }
    fn failure(&self) -> Option<String> {
        self.build_failed.clone()
    }
    fn geometry(&self) -> Geometry {
        Geometry {
            bits: self
                .built
                .as_ref()
                .map(|f| W::slots(f) * u64::from(W::BITS)),
            hashes: Some(3),
            slices: None,
        }
    }
    fn finish(&mut self) {
        if self.built.is_none() && !self.pending.is_empty() {
            self.pending.sort_unstable();
            self.pending.dedup();
            let built = W::Built::try_from(&self.pending[..]).ok();
            match built {
                Some(built) => {
                    self.built = Some(built);
                    self.pending = Vec::new();
                }
                None => {
                    self.build_failed = Some(format!(
                        "the binary fuse build from {} keys failed (xorf found no mapping)",
                        self.pending.len()
                    ))
                }
            }
        }
    }
}

/// The model of a width's filter after the build: its slots of f bits.
fn memory<W: Width>(config: &BuildConfig) -> MemoryModel {
    MemoryModel::flat((fuse_slots(config.expected_keys) * u64::from(W::BITS) / 8) as f64)
}

/// The peak while building: our collected hashes (8 bytes a key) and xorf's construction arrays (9
/// bytes a key and 13 a slot), beside the fingerprints (docs/notes.md gives the peak measured for the
/// 8-bit filter: 31.9 bytes a key at 10⁸).
fn peak_bytes<W: Width>(config: &BuildConfig) -> f64 {
    let slots = fuse_slots(config.expected_keys) as f64;
    config.expected_keys as f64 * 17.0 + slots * (13.0 + f64::from(W::BITS) / 8.0)
}

fn build<W: Width>(id: &'static str, config: &BuildConfig) -> Box<dyn Membership> {
    peer(
        id,
        Filter::<W> {
            // Reserved at once: growing by doubling would hold up to twice the hashes at the peak.
            pending: Vec::with_capacity(config.expected_keys.min(1 << 32) as usize),
            built: None,
            build_failed: None,
        },
        config.hasher(),
        false,
    )
}

macro_rules! kind {
    ($kind:ident, $descriptor:ident, $width:ty, $id:expr, $summary:literal) => {
        /// Registry entry.
        pub struct $kind;

        /// What the registry knows about it.
        pub static $descriptor: Descriptor = Descriptor::new(
            $id,
            $summary,
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

        impl Kind for $kind {
            fn descriptor(&self) -> &Descriptor {
                &$descriptor
            }
            fn predicted_memory(&self, config: &BuildConfig) -> MemoryModel {
                memory::<$width>(config)
            }
            fn predicted_peak_bytes(&self, config: &BuildConfig) -> f64 {
                peak_bytes::<$width>(config)
            }
            fn predicted_fpr(&self, _config: &BuildConfig) -> f64 {
                rate::<$width>()
            }
            fn build(&self, config: &BuildConfig) -> crate::Result<Box<dyn Membership>> {
                Ok(build::<$width>($descriptor.id, config))
            }
        }
    };
}

/// The registry id of the 8-bit filter.
pub const FUSE8_ID: &str = "binary-fuse8";
/// The registry id of the 16-bit filter.
pub const FUSE16_ID: &str = "binary-fuse16";

kind!(
    BinaryFuse8Kind,
    DESCRIPTOR_8,
    Fuse8,
    FUSE8_ID,
    "peer: xorf BinaryFuse8, static filter near the space bound (rate 1/256)"
);
kind!(
    BinaryFuse16Kind,
    DESCRIPTOR_16,
    Fuse16,
    FUSE16_ID,
    "peer: xorf BinaryFuse16, static filter near the space bound (rate 1/65536)"
);

#[cfg(test)]
mod tests {
    use super::*;

    /// The memory model is xorf's layout, slot for slot.
    #[test]
    fn the_model_has_the_slots_xorf_builds() {
        for keys in [
            2u64, 10, 1_000, 99_999, 200_000, 300_000, 1_000_000, 3_000_000,
        ] {
            let hashes: Vec<u64> = (0..keys).map(|i| crate::hash::fmix64(i + 1)).collect();
            let f8 = ::xorf::BinaryFuse8::try_from(&hashes[..]).unwrap();
            let f16 = ::xorf::BinaryFuse16::try_from(&hashes[..]).unwrap();
            assert_eq!(Fuse8::slots(&f8), fuse_slots(keys), "{keys}");
            assert_eq!(Fuse16::slots(&f16), fuse_slots(keys), "{keys}");
        }
    }
}

//! Peer `qfilter` (crates.io): a rank-select quotient filter (Pandey, Bender, Johnson, Patro, SIGMOD 2017)
//! that supports removal, the peer of our `counting` (which pays 4× a Bloom filter's memory for
//! deletions). Fed our hash as its fingerprint.
//!
//! Models, from the crate's sizing: 2^q slots, the smallest power of two (≥ 64) whose 95% holds the
//! expected keys; r = ⌈log2(1/p)⌉ remainder bits; blocks of 64 slots of 17 + 8r bytes, plus 8. A
//! non-member matches one of the n stored (q + r)-bit fingerprints with probability 1 − e^(−n/2^(q+r))
//! (the crate's own `current_error_ratio`), which the conformance suite checks. The power of two makes
//! its bits per key step between ≈ 12 and ≈ 19 at p = 1% as n crosses 95% of a power of two.

use super::{peer, PeerFilter};
use crate::kind::{
    BuildConfig, Capabilities, Crate, Descriptor, Family, Kind, MemoryModel, Placement, RateModel,
};
use crate::membership::{Geometry, Membership};

/// Registry entry.
pub struct QfilterKind;

/// The crate's filter and the inserts it refused (full).
struct Filter {
    filter: ::qfilter::Filter,
    refused: u64,
}

impl PeerFilter for Filter {
    fn insert(&mut self, hash: u64) -> bool {
        // Every insert is stored, a repeated fingerprint as a second copy: with the crate's
        // duplicate-skipping insert, a key whose fingerprint collided with an earlier one's was never
        // stored, and deleting the earlier key lost it. A full filter
        // cannot insert: the key is reported new rather than claimed, and the failure is counted.
        let new = !self.filter.contains_fingerprint(hash);
        if self.filter.insert_fingerprint(true, hash).is_err() {
            self.refused += 1;
        }
        new
    }
    fn insert_if_new(&mut self, hash: u64) -> bool {
        if self.filter.contains_fingerprint(hash) {
            return false;
        }
        if self.filter.insert_fingerprint(true, hash).is_err() {
            self.refused += 1;
        }
        true
    }
    fn contains(&self, hash: u64) -> bool {
        self.filter.contains_fingerprint(hash)
    }
    fn bytes(&self) -> u64 {
        self.filter.memory_usage() as u64
    }
    fn expected_fpr(&self, n: u64) -> f64 {
        // The crate's `current_error_ratio` at n keys instead of at its own count.
        -(-(n as f64) / f64::from(self.filter.fingerprint_size()).exp2()).exp_m1()
    }
    fn geometry(&self) -> Geometry {
        Geometry::default()
    }
    fn remove(&mut self, hash: u64) -> Option<bool> {
        Some(self.filter.remove_fingerprint(hash))
    }
    fn failure(&self) -> Option<String> {
        (self.refused > 0).then(|| {
            format!(
                "the quotient filter is full: {} inserts refused (not stored); size it for more keys",
                self.refused
            )
        })
    }
}

/// What the registry knows about it.
pub static DESCRIPTOR: Descriptor = Descriptor::new(
    "qfilter",
    "peer: qfilter crate, quotient filter with removal",
    Family::FingerprintTable,
    Placement::PeerCrate(Crate {
        name: "qfilter",
        version: "0.3.1",
    }),
    Capabilities {
        removable: true,
        stores_past_capacity: false,
        ..Capabilities::FILTER
    },
    RateModel::Fill,
);

/// The crate's geometry for `n` keys at rate `p`: (log2 of the slots, remainder bits).
fn quotient_and_remainder_bits(n: u64, p: f64) -> (u32, u32) {
    let mut slots = n.max(1).next_power_of_two().max(64);
    while (slots * 19).div_ceil(20) < n {
        slots *= 2;
    }
    let p = p.clamp((-64f64).exp2(), 0.5);
    (slots.trailing_zeros(), ((-p.log2()).ceil() as u32).max(1))
}

/// The rate after `n` distinct fingerprints in a filter of 2^q slots with r remainder bits.
fn rate_after(q: u32, r: u32, n: u64) -> f64 {
    -(-(n as f64) / f64::from(q + r).exp2()).exp_m1()
}

impl Kind for QfilterKind {
    fn descriptor(&self) -> &Descriptor {
        &DESCRIPTOR
    }
    fn predicted_memory(&self, config: &BuildConfig) -> MemoryModel {
        let (q, r) = quotient_and_remainder_bits(config.expected_keys, config.fpr);
        MemoryModel::flat(((1u64 << q) / 64 * (17 + 8 * r as u64) + 8) as f64)
    }
    fn predicted_fpr(&self, config: &BuildConfig) -> f64 {
        let (q, r) = quotient_and_remainder_bits(config.expected_keys, config.fpr);
        rate_after(q, r, config.expected_keys)
    }
    fn predicted_fpr_after(&self, config: &BuildConfig, n_inserted: u64) -> Option<f64> {
        let (q, r) = quotient_and_remainder_bits(config.expected_keys, config.fpr);
        // Past 95% of its slots it refuses inserts: the rate stops where the keys stop.
        let stored = n_inserted.min(((1u64 << q) * 19).div_ceil(20));
        Some(rate_after(q, r, stored))
    }
    fn build(&self, config: &BuildConfig) -> crate::Result<Box<dyn Membership>> {
        let filter = ::qfilter::Filter::new(config.expected_keys.max(1), config.fpr)
            .map_err(|e| crate::Error::invalid("qfilter", format!("{e:?}")))?;
        Ok(peer(
            DESCRIPTOR.id,
            Filter { filter, refused: 0 },
            config.hasher(),
            true,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_models_are_the_crates_own_sizes_and_estimate() {
        for (n, p) in [
            (1u64, 0.5),
            (1000, 0.01),
            (50_000_000, 0.01),
            (3_000_000, 1e-4),
        ] {
            let config = BuildConfig::new(n, p, 1);
            let built = ::qfilter::Filter::new(n, p).unwrap();
            let model = QfilterKind.predicted_memory(&config).footprint_bytes;
            assert_eq!(model, built.memory_usage() as f64, "n = {n}, p = {p}");
            let q = quotient_and_remainder_bits(n, p).0;
            assert_eq!(((1u64 << q) * 19).div_ceil(20), built.capacity(), "n = {n}");
        }
        // 50M keys at 1%: 2^26 slots of 7 remainder bits, 12.2 bits per key, 0.58%.
        let config = BuildConfig::new(50_000_000, 0.01, 1);
        let bits = QfilterKind.predicted_memory(&config).footprint_bytes * 8.0 / 50e6;
        assert!((bits - 12.25).abs() < 0.01, "{bits}");
        let rate = QfilterKind.predicted_fpr(&config);
        assert!((rate - 0.00581).abs() < 1e-5, "{rate}");
    }
}

//! Peer `qfilter` (crates.io): a rank-select quotient filter (Pandey, Bender, Johnson, Patro, SIGMOD 2017)
//! that supports removal, the peer of our `counting` (which pays 4× a Bloom filter's memory for
//! deletions). Fed our hash as its fingerprint.
//!
//! Models, from the crate's sizing: 2^q slots, the smallest power of two (≥ 64) whose 95% holds the
//! expected keys; r = ⌈log2(1/p)⌉ remainder bits; blocks of 64 slots of 17 + 8r bytes, plus 8. A
//! non-member matches one of the n stored (q + r)-bit fingerprints with probability 1 − e^(−n/2^(q+r))
//! (the crate's own `current_error_ratio`), which the conformance suite checks. The power of two makes
//! its bits per key step between ≈ 12 and ≈ 19 at p = 1% as n crosses 95% of a power of two.
//!
//! `qfilter-resizable` is the crate's resizable filter: it starts with [`GROWTH_BITS`] more remainder
//! bits and gives one up at each doubling (a quotient bit more), up to 64× its initial keys; the
//! fingerprint keeps its q + r bits, so the same rate formula holds at every size, and at full growth the
//! rate is the one asked. Past that it refuses inserts, reported like the fixed filter's.

use super::{peer, PeerFilter};
use crate::kind::{
    BuildConfig, Capabilities, Crate, Descriptor, Family, Kind, MemoryModel, Placement, RateModel,
};
use crate::membership::{Geometry, Membership};

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

/// The crate both entries wrap.
const CRATE: Crate = Crate {
    name: "qfilter",
    version: "0.3.1",
};

/// What the registry knows about it.
pub static DESCRIPTOR: Descriptor = Descriptor::new(
    "qfilter",
    "peer: qfilter crate, quotient filter with removal",
    Family::FingerprintTable,
    Placement::PeerCrate(CRATE),
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

/// How far a resizable filter may grow: 2⁶ = 64 times its initial capacity (the growth experiment's
/// span), each doubling taking one remainder bit, so that at full growth the rate is the one asked.
pub const GROWTH_BITS: u32 = 6;

/// Registry entry: a filter of `growth_bits` doublings (0: fixed); both rows are one of these.
pub struct QfilterKind {
    descriptor: &'static Descriptor,
    growth_bits: u32,
}

impl QfilterKind {
    /// (q, r) at the start: the fixed filter's slots, and its remainder bits plus one per doubling.
    fn geometry(&self, config: &BuildConfig) -> (u32, u32) {
        let (q, r) = quotient_and_remainder_bits(config.expected_keys, config.fpr);
        (q, r + self.growth_bits)
    }
    /// The most keys it holds: 95% of its slots after every doubling.
    fn max_keys(&self, config: &BuildConfig) -> u64 {
        let (q, _) = self.geometry(config);
        ((1u64 << (q + self.growth_bits)) * 19).div_ceil(20)
    }
    fn memory(&self, config: &BuildConfig) -> MemoryModel {
        let (q, r) = self.geometry(config);
        MemoryModel::flat(((1u64 << q) / 64 * (17 + 8 * r as u64) + 8) as f64)
    }
    /// A doubling adds a quotient bit and takes a remainder bit: the fingerprint keeps its q + r bits,
    /// so the rate after n keys is the one formula, whatever the growth.
    fn rate_after(&self, config: &BuildConfig, n_inserted: u64) -> f64 {
        let (q, r) = self.geometry(config);
        rate_after(q, r, n_inserted.min(self.max_keys(config)))
    }
    fn build_filter(&self, config: &BuildConfig) -> crate::Result<Box<dyn Membership>> {
        let n = config.expected_keys.max(1);
        let filter = ::qfilter::Filter::new_resizeable(n, n << self.growth_bits, config.fpr)
            .map_err(|e| crate::Error::invalid(self.descriptor.id, format!("{e:?}")))?;
        Ok(peer(
            self.descriptor.id,
            Filter { filter, refused: 0 },
            config.hasher(),
            true,
        ))
    }
}

/// The fixed filter's registry entry.
pub static QFILTER: QfilterKind = QfilterKind {
    descriptor: &DESCRIPTOR,
    growth_bits: 0,
};

/// The resizable filter's registry entry.
pub static QFILTER_RESIZABLE: QfilterKind = QfilterKind {
    descriptor: &RESIZABLE_DESCRIPTOR,
    growth_bits: GROWTH_BITS,
};

/// What the registry knows about the resizable filter.
pub static RESIZABLE_DESCRIPTOR: Descriptor = Descriptor::new(
    "qfilter-resizable",
    "peer: qfilter crate, resizable quotient filter with removal (grows to 64× its initial keys, at the rate asked there)",
    Family::FingerprintTable,
    Placement::PeerCrate(CRATE),
    Capabilities {
        removable: true,
        growable: true,
        stores_past_capacity: false,
        ..Capabilities::FILTER
    },
    RateModel::Fill,
);

impl Kind for QfilterKind {
    fn descriptor(&self) -> &Descriptor {
        self.descriptor
    }
    fn predicted_memory(&self, config: &BuildConfig) -> MemoryModel {
        self.memory(config)
    }
    fn predicted_peak_bytes(&self, config: &BuildConfig) -> f64 {
        // A doubling rebuilds into a table twice the size while the old one is held.
        let rebuild = if self.growth_bits > 0 { 3.0 } else { 1.0 };
        self.memory(config).footprint_bytes * rebuild
    }
    fn predicted_fpr(&self, config: &BuildConfig) -> f64 {
        self.rate_after(config, config.expected_keys)
    }
    fn predicted_fpr_after(&self, config: &BuildConfig, n_inserted: u64) -> Option<f64> {
        // Past 95% of its slots after every doubling it refuses inserts: the rate stops where the
        // keys stop.
        Some(self.rate_after(config, n_inserted))
    }
    fn build(&self, config: &BuildConfig) -> crate::Result<Box<dyn Membership>> {
        self.build_filter(config)
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
            let model = QFILTER.predicted_memory(&config).footprint_bytes;
            assert_eq!(model, built.memory_usage() as f64, "n = {n}, p = {p}");
            let q = quotient_and_remainder_bits(n, p).0;
            assert_eq!(((1u64 << q) * 19).div_ceil(20), built.capacity(), "n = {n}");
        }
        // 50M keys at 1%: 2^26 slots of 7 remainder bits, 12.2 bits per key, 0.58%.
        let config = BuildConfig::new(50_000_000, 0.01, 1);
        let bits = QFILTER.predicted_memory(&config).footprint_bytes * 8.0 / 50e6;
        assert!((bits - 12.25).abs() < 0.01, "{bits}");
        let rate = QFILTER.predicted_fpr(&config);
        assert!((rate - 0.00581).abs() < 1e-5, "{rate}");
    }

    #[test]
    fn the_resizable_filter_starts_with_its_growths_bits_and_ends_at_the_rate_asked() {
        for (n, p) in [(1000u64, 0.01), (1_000_000, 0.01), (300_000, 1e-3)] {
            let config = BuildConfig::new(n, p, 1);
            let built = ::qfilter::Filter::new_resizeable(n, n << GROWTH_BITS, p).unwrap();
            let model = QFILTER_RESIZABLE.predicted_memory(&config).footprint_bytes;
            assert_eq!(model, built.memory_usage() as f64, "n = {n}, p = {p}");
            assert_eq!(
                QFILTER_RESIZABLE.max_keys(&config),
                built.max_capacity(),
                "n = {n}"
            );
            // Grown all the way: about the fixed filter's rate at those keys, within the target.
            let full = QFILTER_RESIZABLE.rate_after(&config, built.max_capacity());
            assert!(full <= p && full > p / 4.0, "n = {n}: {full}");
        }
    }
}

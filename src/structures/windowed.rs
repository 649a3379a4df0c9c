//! `windowed`: a seen-set over a sliding window of the last W admitted keys, without a log of what to
//! delete. Rotating generations of cache-blocked Bloom filters ([`super::blocked`]): g generations of
//! c = ⌈W / (g − 1)⌉ keys each; a new key goes into the newest generation, and when that holds c keys the
//! oldest generation is dropped and an empty one begins. This is the generational (segmented) design that
//! Shtul, Baquero and Almeida, "Age-Partitioned Bloom Filters" (2020), take as their baseline; their
//! age-partitioned filter shares slices between generations to save bits, which this one does not.
//!
//! Window semantics (asserted by the tests beside this file): the clock is the count of admitted keys
//! (inserts that found the key absent); a key is inserted once and its age counts from that insert (a
//! crawler's "last crawled" time: a URL seen again inside the window is skipped and not refreshed).
//! - No false negative inside the window: a key admitted at tick t is reported present at every tick up to
//!   t + W (at least (g − 1)·c ≥ W later admissions pass before its generation is dropped).
//! - Forgotten within g·c admissions (c = ⌈W / (g − 1)⌉, so g·c ≤ W + c + g − 2): its generation is
//!   gone by then, and it is reported present only as any non-member is (a false positive).
//!
//! Theory: a query is positive when any generation's filter is; generation i holding nᵢ keys answers
//! falsely with the blocked filter's rate fᵢ(nᵢ) ([`crate::theory::blocked_sector_fpr`]), the generations'
//! arrays are independent, so the rate is 1 − Π(1 − fᵢ). Each generation is sized for c keys at
//! p_g = 1 − (1 − p)^(1/g), so a full window holds the rate at p or below.
//!
//! Hashing apart from probing: one hash per key, probed in every generation (each generation's array is
//! its own, so its false positives are independent of the others').

use super::blocked::Blocked;
use crate::hash::{KeyHash, KeyHasher};
use crate::kind::{
    BuildConfig, Capabilities, Descriptor, Family, Kind, MemoryModel, Placement, RateModel, Role,
};
use crate::membership::{Geometry, Membership};
use crate::theory;
use std::collections::VecDeque;

/// The registry id.
pub const ID: &str = "windowed";

/// Generations kept: the window is forgotten within W / (g − 1) keys beyond it, for g times a generation's
/// bits. Four keeps the overshoot at a third of the window for 1.33 W keys' worth of bits.
pub const GENERATIONS: u32 = 4;

/// Registry entry.
pub struct WindowedKind;

/// The plan of a windowed filter: the window W, keys per generation c, generations g and each
/// generation's target rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WindowPlan {
    pub window_keys: u64,
    pub generation_keys: u64,
    pub generations: u32,
    pub generation_fpr: f64,
}

impl WindowPlan {
    /// The plan for `config`: its window (`window_keys`, else `expected_keys`) at its rate.
    pub fn of(config: &BuildConfig) -> WindowPlan {
        let window_keys = config.window_keys.unwrap_or(config.expected_keys).max(1);
        let generations = GENERATIONS;
        WindowPlan {
            window_keys,
            generation_keys: window_keys.div_ceil(u64::from(generations - 1)).max(1),
            generations,
            generation_fpr: 1.0 - (1.0 - config.fpr).powf(1.0 / f64::from(generations)),
        }
    }

    /// The configuration of one generation's filter.
    fn generation_config(&self, seed: u64) -> BuildConfig {
        BuildConfig::new(self.generation_keys, self.generation_fpr, seed)
    }

    /// Keys held by each kept generation after `admitted` admissions from empty, oldest first. A new
    /// generation begins with the first key that does not fit the newest, so at a multiple of c the
    /// newest is full.
    pub fn fills(&self, admitted: u64) -> Vec<u64> {
        let c = self.generation_keys;
        let begun = admitted.div_ceil(c).max(1);
        let newest = admitted - (begun - 1) * c;
        let held = self.generations_held(admitted) as usize;
        let mut fills = vec![c; held - 1];
        fills.push(newest);
        fills
    }

    /// Blocks and probes of one generation's filter: `blocked`'s own sizing (solved once per (c, p_g)
    /// and remembered by `blocked`).
    fn generation_sizing(&self) -> (u64, u32) {
        let g = super::blocked::planned_geometry(&self.generation_config(0));
        (
            g.bits.unwrap_or(theory::BLOCK_BITS) / theory::BLOCK_BITS,
            g.hashes.unwrap_or(1),
        )
    }

    /// The rate after `admitted` admissions from empty: 1 − Π(1 − fᵢ(nᵢ)).
    pub fn fpr(&self, admitted: u64) -> f64 {
        let (blocks, k) = self.generation_sizing();
        theory::compound_fpr(
            self.fills(admitted)
                .into_iter()
                .map(|n| theory::blocked_sector_fpr(blocks * 512, k, n)),
        )
    }

    /// Bytes of one generation's filter (its model).
    fn generation_bytes(&self, seed: u64) -> f64 {
        super::blocked::predicted_memory(&self.generation_config(seed)).footprint_bytes
    }

    /// Generations held after `admitted` admissions from empty: a new one begins with the first key
    /// that does not fit the newest, so W admissions fill g − 1 of them.
    pub fn generations_held(&self, admitted: u64) -> u32 {
        admitted
            .div_ceil(self.generation_keys)
            .clamp(1, u64::from(self.generations)) as u32
    }

    /// The most admissions after which a key can still be reported present (other than falsely): g·c.
    pub fn forgotten_within_keys(&self) -> u64 {
        self.generation_keys * u64::from(self.generations)
    }
}

/// What the registry knows about it.
pub static DESCRIPTOR: Descriptor = Descriptor {
    roles: &[Role::ExpiringFilter],
    ..Descriptor::new(
        ID,
        "sliding window of the last W keys: 4 rotating generations of blocked filters (no delete log)",
        Family::WindowedBloom,
        Placement::Ours,
        Capabilities {
            // It forgets keys older than its window by design; filling it past n is not an overshoot.
            stores_past_capacity: false,
            expires: true,
            ..Capabilities::FILTER
        },
        RateModel::Fill,
    )
};

impl Kind for WindowedKind {
    fn descriptor(&self) -> &Descriptor {
        &DESCRIPTOR
    }
    fn planned_geometry(&self, config: &BuildConfig) -> Geometry {
        let plan = WindowPlan::of(config);
        let generation = super::blocked::planned_geometry(&plan.generation_config(0));
        Geometry {
            bits: generation.bits.map(|b| b * u64::from(plan.generations)),
            hashes: generation.hashes,
            slices: None,
        }
    }
    fn predicted_memory(&self, config: &BuildConfig) -> MemoryModel {
        let plan = WindowPlan::of(config);
        let held = plan.generations_held(config.expected_keys);
        MemoryModel::flat(plan.generation_bytes(config.seed) * f64::from(held))
    }
    fn predicted_peak_bytes(&self, config: &BuildConfig) -> f64 {
        // A stream longer than the window holds all g generations.
        let plan = WindowPlan::of(config);
        plan.generation_bytes(config.seed) * f64::from(plan.generations)
    }
    fn predicted_fpr(&self, config: &BuildConfig) -> f64 {
        WindowPlan::of(config).fpr(config.expected_keys)
    }
    fn predicted_fpr_after(&self, config: &BuildConfig, n_inserted: u64) -> Option<f64> {
        Some(WindowPlan::of(config).fpr(n_inserted))
    }
    fn build(&self, config: &BuildConfig) -> crate::Result<Box<dyn Membership>> {
        Ok(Box::new(Windowed::new(
            WindowPlan::of(config),
            config.hasher(),
        )))
    }
}

/// The rotating generations.
pub struct Windowed {
    plan: WindowPlan,
    hasher: KeyHasher,
    /// Blocks and probes of every generation.
    sizing: (u64, u32),
    /// Oldest first; the last one takes new keys. Concrete filters: a lookup probes each without a
    /// dynamic call.
    generations: VecDeque<Blocked>,
    /// Keys in the newest generation.
    current_keys: u64,
    admitted: u64,
}

impl Windowed {
    /// An empty windowed filter for `plan`.
    pub fn new(plan: WindowPlan, hasher: KeyHasher) -> Windowed {
        let sizing = plan.generation_sizing();
        let mut generations = VecDeque::with_capacity(plan.generations as usize);
        generations.push_back(Blocked::new(sizing.0, sizing.1, hasher));
        Windowed {
            plan,
            hasher,
            sizing,
            generations,
            current_keys: 0,
            admitted: 0,
        }
    }

    /// The plan it was built with.
    pub fn plan(&self) -> WindowPlan {
        self.plan
    }

    /// Starts a new generation, dropping the oldest when g are kept.
    fn rotate(&mut self) {
        if self.generations.len() as u32 >= self.plan.generations {
            self.generations.pop_front();
        }
        let (blocks, hashes) = self.sizing;
        self.generations
            .push_back(Blocked::new(blocks, hashes, self.hasher));
        self.current_keys = 0;
    }
}

impl Membership for Windowed {
    fn id(&self) -> &'static str {
        ID
    }
    fn hasher(&self) -> KeyHasher {
        self.hasher
    }
    fn insert_hashed(&mut self, key: &[u8], hash: KeyHash) -> bool {
        if self.contains_hashed(key, hash) {
            return false;
        }
        if self.current_keys >= self.plan.generation_keys {
            self.rotate();
        }
        if let Some(newest) = self.generations.back_mut() {
            newest.insert_hashed(key, hash);
        }
        self.current_keys += 1;
        self.admitted += 1;
        true
    }
    fn contains_hashed(&self, key: &[u8], hash: KeyHash) -> bool {
        self.generations
            .iter()
            .any(|g| g.contains_hashed(key, hash))
    }
    fn bytes_held(&self) -> u64 {
        self.generations.iter().map(|g| g.bytes_held()).sum()
    }
    fn n_inserted(&self) -> u64 {
        self.admitted
    }
    fn expected_fpr(&self, n_distinct: u64) -> f64 {
        self.plan.fpr(n_distinct)
    }
    fn geometry(&self) -> Geometry {
        let one = self
            .generations
            .back()
            .map(|g| g.geometry())
            .unwrap_or_default();
        Geometry {
            bits: one.bits.map(|b| b * self.generations.len() as u64),
            hashes: one.hashes,
            slices: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::hash_key;
    use crate::keys::{Profile, UrlGenerator};
    use crate::stats::wilson;

    fn key(g: &UrlGenerator, i: u64) -> Vec<u8> {
        let mut buf = Vec::new();
        g.member(i, &mut buf);
        buf
    }

    fn windowed(window: u64) -> Windowed {
        let mut config = BuildConfig::new(window, 0.01, 7);
        config.window_keys = Some(window);
        Windowed::new(WindowPlan::of(&config), config.hasher())
    }

    #[test]
    fn every_key_is_found_for_its_whole_window_and_forgotten_within_w_plus_c() {
        let g = UrlGenerator::new(Profile::default_profile(), 42);
        let window = 30_000;
        let mut w = windowed(window);
        let plan = w.plan();
        assert_eq!(plan.generation_keys, 10_000);
        // admitted[a] = the member index admitted as the a-th key (a key the filter already reported
        // present, falsely, is not admitted: the clock counts admissions).
        let mut admitted: Vec<u64> = Vec::new();
        let (mut missed, mut inside_checked) = (0u64, 0u64);
        let (mut old_present, mut old_checked) = (0u64, 0u64);
        let mut expected_sum = 0.0;
        let present = |w: &Windowed, i: u64| {
            let k = key(&g, i);
            w.contains_hashed(&k, hash_key(7, &k))
        };
        for i in 0..200_000u64 {
            let k = key(&g, i);
            if w.insert_hashed(&k, hash_key(7, &k)) {
                admitted.push(i);
            }
            let now = admitted.len() as u64;
            if i % 97 != 0 || now == 0 {
                continue;
            }
            // Keys admitted within the last W admissions, the oldest included: all present.
            for age in [0, 1, window / 2, window - 1, window] {
                if age < now {
                    inside_checked += 1;
                    missed += u64::from(!present(&w, admitted[(now - 1 - age) as usize]));
                }
            }
            // A key admitted more than W + c admissions ago: present only as a false positive.
            let age = plan.forgotten_within_keys();
            if age < now {
                old_checked += 1;
                old_present += u64::from(present(&w, admitted[(now - 1 - age) as usize]));
                expected_sum += plan.fpr(now);
            }
        }
        assert!(inside_checked > 5_000, "{inside_checked}");
        assert_eq!(missed, 0, "keys inside their window reported new");
        // Forgotten keys answer like non-members: their rate's 99.9% interval holds the theory at the
        // fills they were asked at (a kept generation would answer "present" every time).
        let expected = expected_sum / old_checked as f64;
        let interval = wilson(old_present, old_checked, crate::stats::CHECK_CONFIDENCE);
        assert!(old_checked > 1_000, "{old_checked}");
        assert!(
            interval.contains(expected),
            "{old_present} of {old_checked} forgotten keys present; theory {expected}"
        );
        assert_eq!(w.n_inserted(), admitted.len() as u64);
        assert_eq!(w.generations.len(), GENERATIONS as usize);
    }

    #[test]
    fn a_repeated_key_inside_the_window_is_not_admitted_again() {
        let g = UrlGenerator::new(Profile::default_profile(), 42);
        let mut w = windowed(3_000);
        let k = key(&g, 0);
        assert!(w.insert_hashed(&k, hash_key(7, &k)));
        assert!(!w.insert_hashed(&k, hash_key(7, &k)));
        assert_eq!(w.n_inserted(), 1);
    }

    #[test]
    fn the_rate_of_a_full_window_is_at_most_the_target() {
        let mut config = BuildConfig::new(1_000_000, 0.01, 7);
        config.window_keys = Some(1_000_000);
        let plan = WindowPlan::of(&config);
        assert!(plan.fpr(1_000_000) <= 0.01, "{}", plan.fpr(1_000_000));
        // Past the window it stays there: the oldest generation is dropped as a new one fills.
        for admitted in [2_000_000u64, 5_000_000, 10_000_000] {
            assert!(
                plan.fpr(admitted) <= 0.0101,
                "{admitted}: {}",
                plan.fpr(admitted)
            );
        }
        assert_eq!(plan.fills(5), vec![5]);
        assert_eq!(
            plan.fills(plan.generation_keys * 7 + 3).len(),
            GENERATIONS as usize
        );
    }
}

//! Peers `boost-multiblock32` and `boost-multiblock64`: Boost.Bloom's `fast_multiblock32<K>` and
//! `fast_multiblock64<K>` (Boost 1.89, from the crates.io `boost_bloom` crate, BSL-1.0), the fastest
//! published CPU Bloom filters. Each key sets one bit in each of K consecutive 32-bit (or 64-bit) words
//! of one block, found and tested with SIMD (AVX2 where the CPU has it). They are called through a small
//! C++ shim (`boost_bloom.cpp`, compiled by build.rs with `-O3 -march=native`, as Boost's benchmarks
//! build), one indirect call per key; the packaged 1.89 has no bulk lookup (1.90 added one), so their
//! batched path is the loop a Boost user writes, in C++: one call per batch, Boost's lookup inlined.
//! Boost's insert does not say whether the key was new, which every row's insert answers: the row's
//! insert looks the key up first, and that lookup is part of its timed insert.
//!
//! Hashing: Boost is handed our 64-bit key hash through a hasher that declares itself avalanching, so it
//! uses the hash as it is (no mixing of its own), as it would a good user hash.
//!
//! Sizing, as a Boost user sizes it: `filter(n, p)` (Boost's `capacity_for`), with K the value that needs
//! the fewest bits for p, as Boost's documentation and benchmarks pick K (the optimum for the capacity).
//!
//! Theory: Boost's documented multiblock formula (its Appendix A, after Putze, Sanders and Singler 2007):
//! FPR = Σᵢ Pois(i; n·b·K/m)·(1 − (1 − 1/b)^i)^K, with b the word's bits and m the filter's bits. A
//! unit test holds it to Boost's own `fpr_for`; the conformance suite holds it to the rate the filter
//! shows on keys it never saw.

use crate::kind::{
    Capabilities, Comparison, Crate, Descriptor, Family, Placement, RateModel, Role, SpeedTarget,
};
use crate::membership::Op;
use crate::theory;

/// The crate whose headers (Boost.Bloom 1.89) the rows are built from.
const CRATE: Crate = Crate {
    name: "boost_bloom",
    version: "0.1.0",
};

/// Where the targets are judged: in cache, just out of it, and far out of it.
const JUDGED_AT: &[u64] = &[1_000_000, 10_000_000, 100_000_000];

/// What `blocked` must reach against Boost's 32-bit filter, the speed anchor: per key at least its
/// speed, and batched at least 1.5× its best path (its C++ loop over its lookup: it has no bulk API), at
/// each of [`JUDGED_AT`].
pub const SPEED_TARGETS: &[SpeedTarget] = &[
    SpeedTarget {
        ours: Role::BlockedBloom,
        ops: &[Op::MemberQuery, Op::NonMemberQuery],
        comparison: Comparison::PerKey,
        min_ratio: 1.0,
        floor_reach: false,
        judged_at: JUDGED_AT,
    },
    SpeedTarget {
        ours: Role::BlockedBloom,
        ops: &[Op::MemberQuery, Op::NonMemberQuery],
        comparison: Comparison::OursBatchedVsBest,
        min_ratio: 1.5,
        floor_reach: false,
        judged_at: JUDGED_AT,
    },
];

/// Boost's `fast_multiblock32<K>` (outside the `peers` feature, like the targets it carries).
pub static MULTIBLOCK32: Descriptor = Descriptor {
    speed_targets: SPEED_TARGETS,
    ..Descriptor::new(
        "boost-multiblock32",
        "peer: Boost.Bloom fast_multiblock32<K> (C++, SIMD, K 32-bit words of one block per key; per key only)",
        Family::BlockedBloom,
        Placement::PeerCrate(CRATE),
        Capabilities::FILTER,
        RateModel::Fill,
    )
};

/// Boost's `fast_multiblock64<K>`.
pub static MULTIBLOCK64: Descriptor = Descriptor::new(
    "boost-multiblock64",
    "peer: Boost.Bloom fast_multiblock64<K> (C++, SIMD, K 64-bit words of one block per key; per key only)",
    Family::BlockedBloom,
    Placement::PeerCrate(CRATE),
    Capabilities::FILTER,
    RateModel::Fill,
);

/// Boost's multiblock formula: the rate after `n` keys in `m_bits`, K words of `word_bits` per block,
/// one bit set in each.
pub fn multiblock_fpr(m_bits: u64, n: u64, word_bits: u32, k: u32) -> f64 {
    let lambda = n as f64 * word_bits as f64 * k as f64 / m_bits.max(1) as f64;
    theory::poisson_mixture(lambda, |i| {
        theory::bit_set_probability(word_bits as u64, i as f64).powi(k as i32)
    })
}

/// With the peers on, the rows must exist: a shim that did not build (no C++ compiler) fails here with
/// the compiler's reason, instead of the rows quietly leaving every run.
#[cfg(all(test, feature = "peers", not(dedupbench_boost)))]
#[test]
fn the_boost_shim_is_built() {
    panic!(
        "the Boost.Bloom rows are unavailable: {}",
        option_env!("DEDUPBENCH_BOOST_UNAVAILABLE").unwrap_or("build.rs did not compile the shim")
    );
}

#[cfg(all(feature = "peers", dedupbench_boost))]
pub use imp::*;

#[cfg(all(feature = "peers", dedupbench_boost))]
mod imp {
    use super::super::{peer, PeerFilter};
    use super::{multiblock_fpr, MULTIBLOCK32, MULTIBLOCK64};
    use crate::hash::KeyHash;
    use crate::kind::{BuildConfig, Descriptor, Kind, MemoryModel};
    use crate::membership::{Geometry, Membership};
    use std::ffi::{c_int, c_void};

    /// The shim's table for one instantiation (`boost_bloom.cpp`).
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Ops {
        create: unsafe extern "C" fn(usize, f64) -> *mut c_void,
        destroy: unsafe extern "C" fn(*mut c_void),
        insert_new: unsafe extern "C" fn(*mut c_void, u64) -> bool,
        contains: unsafe extern "C" fn(*const c_void, u64) -> bool,
        insert_many: unsafe extern "C" fn(*mut c_void, *const u64, usize) -> usize,
        contains_many: unsafe extern "C" fn(*const c_void, *const u64, usize) -> usize,
        capacity: unsafe extern "C" fn(*const c_void) -> usize,
        capacity_for: unsafe extern "C" fn(usize, f64) -> usize,
        fpr_for: unsafe extern "C" fn(usize, usize) -> f64,
    }

    extern "C" {
        fn dedupbench_boost_ops_for(word_bits: c_int, k: c_int, out: *mut Ops) -> bool;
        fn dedupbench_boost_max_k() -> c_int;
    }

    /// The shim's allocations, from Rust's global allocator (so the counting allocator sees them); null
    /// when it fails or the layout is invalid, which the shim turns into `std::bad_alloc`.
    #[no_mangle]
    extern "C" fn dedupbench_boost_alloc(size: usize, align: usize) -> *mut u8 {
        match std::alloc::Layout::from_size_align(size.max(1), align) {
            // SAFETY: the layout has a non-zero size.
            Ok(layout) => unsafe { std::alloc::alloc(layout) },
            Err(_) => std::ptr::null_mut(),
        }
    }

    /// Frees what [`dedupbench_boost_alloc`] gave, with the same size and alignment.
    #[no_mangle]
    extern "C" fn dedupbench_boost_dealloc(ptr: *mut u8, size: usize, align: usize) {
        if let Ok(layout) = std::alloc::Layout::from_size_align(size.max(1), align) {
            // SAFETY: `ptr` came from dedupbench_boost_alloc with this size and alignment.
            unsafe { std::alloc::dealloc(ptr, layout) }
        }
    }

    /// The largest K the shim instantiates (its own constant, so the two cannot drift).
    fn max_k() -> u32 {
        // SAFETY: a constant read through a function without arguments.
        unsafe { dedupbench_boost_max_k() as u32 }
    }

    fn ops(word_bits: u32, k: u32) -> Option<Ops> {
        let mut out = std::mem::MaybeUninit::<Ops>::uninit();
        // SAFETY: the shim writes a whole table into `out` exactly when it returns true.
        unsafe {
            dedupbench_boost_ops_for(word_bits as c_int, k as c_int, out.as_mut_ptr())
                .then(|| out.assume_init())
        }
    }

    /// Keys the choice of K is made at (Boost's capacity is proportional to n).
    const K_CHOICE_KEYS: usize = 1_000_000;

    /// The K that needs the fewest bits for `fpr` (the smaller on a tie: fewer words to touch),
    /// remembered per word size and rate: the choice runs Boost's capacity search for every K.
    fn best_k(word_bits: u32, fpr: f64) -> u32 {
        use std::collections::HashMap;
        use std::sync::{Mutex, OnceLock};
        static CHOSEN: OnceLock<Mutex<HashMap<(u32, u64), u32>>> = OnceLock::new();
        let chosen = CHOSEN.get_or_init(Default::default);
        let key = (word_bits, fpr.to_bits());
        if let Some(k) = chosen.lock().ok().and_then(|c| c.get(&key).copied()) {
            return k;
        }
        let k = (1..=max_k())
            .filter_map(|k| ops(word_bits, k).map(|o| (k, o)))
            // SAFETY: capacity_for is a pure function of its arguments.
            .min_by_key(|(k, o)| (unsafe { (o.capacity_for)(K_CHOICE_KEYS, fpr) }, *k))
            .map_or(1, |(k, _)| k);
        if let Ok(mut c) = chosen.lock() {
            c.insert(key, k);
        }
        k
    }

    /// One Boost filter, owned.
    struct Filter {
        raw: *mut c_void,
        ops: Ops,
        word_bits: u32,
        k: u32,
    }

    // SAFETY: the filter is owned by this value alone; `contains` only reads it (Boost's const
    // may_contain), and every mutation goes through `&mut self`.
    unsafe impl Send for Filter {}
    unsafe impl Sync for Filter {}

    impl Drop for Filter {
        fn drop(&mut self) {
            // SAFETY: `raw` came from this table's `create` and is dropped once.
            unsafe { (self.ops.destroy)(self.raw) }
        }
    }

    impl Filter {
        fn bits(&self) -> u64 {
            // SAFETY: `raw` is a live filter of this table's type.
            unsafe { (self.ops.capacity)(self.raw) as u64 }
        }
    }

    impl PeerFilter for Filter {
        /// Boost's insert returns nothing; whether the key was new, which every row's insert answers
        /// (the conformance suite holds it to the rate), is Boost's lookup just before it. That lookup
        /// is part of this row's timed insert: no API of 1.89 answers it in one pass.
        #[inline]
        fn insert(&mut self, hash: u64) -> bool {
            // SAFETY: `raw` is a live filter of this table's type, borrowed mutably.
            unsafe { (self.ops.insert_new)(self.raw, hash) }
        }
        #[inline]
        fn contains(&self, hash: u64) -> bool {
            // SAFETY: `raw` is a live filter of this table's type.
            unsafe { (self.ops.contains)(self.raw, hash) }
        }
        /// Boost's batch path is the loop a Boost user writes, in C++ (one call per batch, Boost's
        /// lookup inlined): 1.89 has no bulk API, so this is its best path.
        fn batch_path(&self) -> bool {
            true
        }
        fn insert_many(&mut self, hashes: &[KeyHash]) -> u64 {
            // SAFETY: `raw` is a live filter of this table's type, borrowed mutably; KeyHash is
            // repr(C), so the slice is hashes.len() (h1, h2) pairs of u64.
            unsafe { (self.ops.insert_many)(self.raw, hashes.as_ptr().cast(), hashes.len()) as u64 }
        }
        fn contains_many(&self, hashes: &[KeyHash]) -> u64 {
            // SAFETY: as for insert_many, reading only.
            unsafe {
                (self.ops.contains_many)(self.raw, hashes.as_ptr().cast(), hashes.len()) as u64
            }
        }
        fn bytes(&self) -> u64 {
            self.bits() / 8
        }
        fn expected_fpr(&self, n: u64) -> f64 {
            multiblock_fpr(self.bits(), n, self.word_bits, self.k)
        }
        fn geometry(&self) -> Geometry {
            Geometry {
                bits: Some(self.bits()),
                hashes: Some(self.k),
                slices: None,
            }
        }
    }

    /// A registry entry: the filter of `word_bits`-bit words.
    pub struct BoostKind {
        descriptor: &'static Descriptor,
        word_bits: u32,
    }

    /// `fast_multiblock32<K>`.
    pub static MULTIBLOCK32_KIND: BoostKind = BoostKind {
        descriptor: &MULTIBLOCK32,
        word_bits: 32,
    };
    /// `fast_multiblock64<K>`.
    pub static MULTIBLOCK64_KIND: BoostKind = BoostKind {
        descriptor: &MULTIBLOCK64,
        word_bits: 64,
    };

    impl BoostKind {
        /// Boost's K and capacity in bits for `config`, remembered per word size, n and rate: the
        /// models ask at every step of a fill.
        fn plan(&self, config: &BuildConfig) -> (u32, Ops, u64) {
            use std::collections::HashMap;
            use std::sync::{Mutex, OnceLock};
            /// (word bits, n, rate's bits) → (K, capacity in bits).
            type Plans = HashMap<(u32, u64, u64), (u32, u64)>;
            static PLANS: OnceLock<Mutex<Plans>> = OnceLock::new();
            let n = config.expected_keys.max(1);
            let key = (self.word_bits, n, config.fpr.to_bits());
            let plans = PLANS.get_or_init(Default::default);
            let remembered = plans.lock().ok().and_then(|p| p.get(&key).copied());
            let (k, bits) = remembered.unwrap_or_else(|| {
                let k = best_k(self.word_bits, config.fpr);
                let ops = ops(self.word_bits, k).expect("best_k picks an instantiated K");
                // SAFETY: capacity_for is a pure function of its arguments.
                let bits = unsafe { (ops.capacity_for)(n as usize, config.fpr) } as u64;
                if let Ok(mut p) = plans.lock() {
                    p.insert(key, (k, bits));
                }
                (k, bits)
            });
            let ops = ops(self.word_bits, k).expect("best_k picks an instantiated K");
            (k, ops, bits)
        }
    }

    impl Kind for BoostKind {
        fn descriptor(&self) -> &Descriptor {
            self.descriptor
        }
        fn predicted_memory(&self, config: &BuildConfig) -> MemoryModel {
            MemoryModel::flat(self.plan(config).2 as f64 / 8.0)
        }
        fn predicted_fpr(&self, config: &BuildConfig) -> f64 {
            self.predicted_fpr_after(config, config.expected_keys)
                .unwrap_or(1.0)
        }
        fn predicted_fpr_after(&self, config: &BuildConfig, n_inserted: u64) -> Option<f64> {
            let (k, _, bits) = self.plan(config);
            Some(multiblock_fpr(bits, n_inserted, self.word_bits, k))
        }
        fn build(&self, config: &BuildConfig) -> crate::Result<Box<dyn Membership>> {
            let (k, ops, _) = self.plan(config);
            // SAFETY: create returns a new filter or null (allocation failed).
            let raw = unsafe { (ops.create)(config.expected_keys.max(1) as usize, config.fpr) };
            if raw.is_null() {
                return Err(crate::Error::invalid(
                    "--n",
                    format!(
                        "Boost.Bloom could not allocate a filter for {} keys",
                        config.expected_keys
                    ),
                ));
            }
            let filter = Filter {
                raw,
                ops,
                word_bits: self.word_bits,
                k,
            };
            Ok(peer(self.descriptor.id, filter, config.hasher(), false))
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// Our formula is Boost's: its own fpr_for, for every K and both word sizes, at loads around
        /// the rates the rows are built for.
        #[test]
        fn the_formula_is_boosts_own_estimate() {
            for word_bits in [32, 64] {
                for k in 1..=max_k() {
                    let o = ops(word_bits, k).unwrap();
                    for bits_per_key in [6u64, 10, 16, 24] {
                        let (n, m) = (1_000_000u64, bits_per_key * 1_000_000);
                        let ours = multiblock_fpr(m, n, word_bits, k);
                        // SAFETY: fpr_for is a pure function of its arguments.
                        let boost = unsafe { (o.fpr_for)(n as usize, m as usize) };
                        assert!(
                            (ours / boost - 1.0).abs() < 1e-3,
                            "{word_bits}-bit words, K = {k}, {bits_per_key} bits/key: ours {ours}, Boost {boost}"
                        );
                    }
                }
            }
        }

        /// Insert, one by one or in a batch, tells a repeat from a new key (Boost's lookup first).
        #[test]
        fn inserts_tell_repeats_from_new_keys() {
            let config = BuildConfig::new(1_000, 0.01, 7);
            let mut s = MULTIBLOCK32_KIND.build(&config).unwrap();
            let hasher = s.hasher();
            let (a, b) = (
                hasher.hash(b"https://a.example/"),
                hasher.hash(b"https://b.example/"),
            );
            assert!(s.insert_if_new(b"a", a));
            assert!(!s.insert_if_new(b"a", a));
            assert!(s.insert_hashed(b"b", b));
            assert!(s.contains_hashed(b"b", b));
            assert!(!s.insert_hashed(b"b", b));
            let mut batch = crate::keys::KeyBatch::default();
            for key in [
                &b"https://c.example/"[..],
                b"https://a.example/",
                b"https://c.example/",
            ] {
                batch.push(key);
            }
            batch.hash_all(hasher);
            assert_eq!(s.insert_batch(&batch), 1);
            assert_eq!(s.contains_batch(&batch), 3);
        }

        /// K as Boost's documentation tabulates it (the optimum for the bits per key): at 1% about
        /// 10.5 bits per key with K = 7 or 8 for 32-bit words (its table's multiblock<uint32_t, K> at
        /// c = 10–11); and down to 1 per million the optimum lies below the largest K instantiated, so
        /// the cap never decides.
        #[test]
        fn k_is_boosts_optimum_and_never_the_cap() {
            let bits_per_key = |word_bits: u32, fpr: f64| {
                let k = best_k(word_bits, fpr);
                let o = ops(word_bits, k).unwrap();
                // SAFETY: capacity_for is a pure function of its arguments.
                let bits = unsafe { (o.capacity_for)(K_CHOICE_KEYS, fpr) };
                (k, bits as f64 / K_CHOICE_KEYS as f64)
            };
            let (k, c) = bits_per_key(32, 0.01);
            assert!(
                (7..=8).contains(&k) && c > 10.0 && c < 11.0,
                "K = {k}, {c} bits per key"
            );
            for word_bits in [32, 64] {
                for fpr in [0.01, 1e-3, 1e-4, 1e-5, 1e-6] {
                    let (k, _) = bits_per_key(word_bits, fpr);
                    assert!(k < max_k(), "{word_bits}-bit words at {fpr}: K = {k}");
                }
            }
        }
    }
}

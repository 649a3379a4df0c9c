//! The seeded key hash and the derivation of probe positions from it.
//!
//! Every structure hashes a key exactly once, with its [`KeyHasher`] (a hash function of [`HashFn`] keyed
//! by the structure's seed; [`HashFn::DEFAULT`] unless a saved file, a shared filter or `--hash` names
//! another), and derives all of its positions from the two 64-bit halves: probe i is `h1 + i·h2` (Kirsch & Mitzenmacher, "Less Hashing,
//! Same Performance", ESA 2006), mapped to `[0, m)` by a multiply-high range reduction (Lemire 2019), which is
//! exact for any `m < 2^64` (no 32-bit truncation) and avoids a division.
//! Keeping hashing apart from probing lets the harness time each on its own.

pub mod candidates;

pub use candidates::HashFn;

use xxhash_rust::xxh3::xxh3_128_with_seed;

/// The hash of one key as the two 64-bit halves double hashing uses: a 128-bit hash's low and high
/// halves, or a 64-bit hash and that hash through [`fmix64`] (see [`HashFn::hash`]).
/// `repr(C)`: a batch's hashes cross to C++ as (h1, h2) pairs (the Boost.Bloom shim's batch loop).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(C)]
pub struct KeyHash {
    /// The first position and the fingerprint.
    pub h1: u64,
    /// The step between probes.
    pub h2: u64,
}

/// A hash function and the seed it is keyed with: what a structure hashes its keys with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyHasher {
    func: HashFn,
    seed: u64,
}

impl KeyHasher {
    /// `func` keyed by `seed`.
    pub const fn new(func: HashFn, seed: u64) -> Self {
        KeyHasher { func, seed }
    }
    /// The default hash keyed by `seed`.
    pub const fn default_with_seed(seed: u64) -> Self {
        KeyHasher::new(HashFn::DEFAULT, seed)
    }
    /// The hash function.
    pub fn func(self) -> HashFn {
        self.func
    }
    /// The seed.
    pub fn seed(self) -> u64 {
        self.seed
    }
    /// Hashes one key.
    #[inline]
    pub fn hash(self, key: &[u8]) -> KeyHash {
        self.func.hash(self.seed, key)
    }
}

/// One step of SplitMix64 (Steele, Lea and Flood, 2014): advances `state` by the golden-ratio increment
/// and returns it mixed. The streams and generators of the workbench draw their deterministic choices
/// from it.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Hashes `key` with the default hash keyed by `seed`, for unit tests (a structure hashes with its own
/// [`KeyHasher`]).
#[cfg(test)]
pub fn hash_key(seed: u64, key: &[u8]) -> KeyHash {
    KeyHasher::default_with_seed(seed).hash(key)
}

/// Hashes `key` with xxh3-128 keyed by `seed`.
#[inline]
pub fn xxh3_128(seed: u64, key: &[u8]) -> KeyHash {
    let h = xxh3_128_with_seed(key, seed);
    KeyHash {
        h1: h as u64,
        h2: (h >> 64) as u64,
    }
}

/// murmur3's 64-bit finaliser: a bijection that spreads every input bit over the output.
#[inline(always)]
pub fn fmix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    x ^= x >> 33;
    x = x.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    x ^ (x >> 33)
}

/// Maps a uniform 64-bit value to `[0, range)` by taking the high half of the 128-bit product.
#[inline(always)]
pub fn reduce(x: u64, range: u64) -> u64 {
    ((x as u128 * range as u128) >> 64) as u64
}

impl KeyHash {
    /// The i-th double-hashing probe value (before range reduction).
    #[inline(always)]
    pub fn probe(self, i: u32) -> u64 {
        self.h1.wrapping_add((i as u64).wrapping_mul(self.h2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_changes_the_hash() {
        assert_ne!(
            hash_key(1, b"https://a.example/"),
            hash_key(2, b"https://a.example/")
        );
        assert_eq!(hash_key(7, b"x"), hash_key(7, b"x"));
    }

    #[test]
    fn reduce_is_exact_past_32_bits() {
        let m = 6_000_000_000u64;
        assert_eq!(reduce(u64::MAX, m), m - 1);
        assert_eq!(reduce(0, m), 0);
        assert_eq!(reduce(1 << 63, m), m / 2);
        // A range above 2^32 reaches positions above 2^32.
        assert!(reduce(u64::MAX / 4 * 3, m) > 1 << 32);
    }
}

//! The keyed hashes a structure can hash with, which the hash study sets side by side on the same keys.
//!
//! Each maps `(seed, key)` to a [`KeyHash`]. The 128-bit xxh3 gives both halves; a 64-bit hash gives `h1`
//! and `h2` is `h1` through the murmur3 finaliser (a bijection), so the probe sequence `h1 + i·h2` is as
//! good as the 64-bit hash: two keys share their probes exactly when their 64-bit hashes collide, which at
//! 6·10⁹ keys happens to ≈ 1 pair (n²/2⁶⁵), against a 1% rate of the filters.
//!
//! What each crate's documentation says of its SMHasher results is kept in [`HashFn::smhasher`], quoted
//! as the crate states it (no test of ours reruns SMHasher). gxhash is left out: it does not compile
//! without `-C target-feature=+aes` and this project builds for the baseline x86-64 target. ahash runs its
//! portable fallback here for the same reason (no AES instructions enabled at compile time).

use super::fmix64;
use super::KeyHash;
use std::hash::{BuildHasher, Hasher};

/// A keyed hash the study compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HashFn {
    /// xxh3 with a 128-bit output (`xxhash-rust`): the default until December 2026, and what files and
    /// shared filters that name no other hash were built with.
    Xxh3_128,
    /// xxh3 with a 64-bit output (`xxhash-rust`).
    Xxh3_64,
    /// rapidhash v3 (`rapidhash`).
    Rapidhash,
    /// foldhash's fast variant (`foldhash` 0.1; 0.2 hashes differently).
    Foldhash,
    /// wyhash as the `wyhash` crate implements it at its top level (its `v1`, the same in 0.5 and 0.6):
    /// an earlier version of wyhash than final 4.
    Wyhash,
    /// ahash, portable fallback without AES (`ahash`).
    Ahash,
}

impl HashFn {
    /// What a new structure hashes with: xxh3-64, keyed, documented to pass SMHasher, inside the 99.9%
    /// interval for `bloom` and `blocked` at 10⁷ and 10⁹ keys, and the fastest such hash on this
    /// project's URLs through the batch loop every structure hashes with (`keys/hash * urls` in
    /// `benches/structures.rs`; docs/notes.md, December 2026, gives the figures).
    pub const DEFAULT: HashFn = HashFn::Xxh3_64;

    /// The default before the hash was a choice: what a saved file, a Redis parameter line or a results
    /// header that names no hash was built with, and what `dedup --name` still derives its seed with.
    pub const FORMER_DEFAULT: HashFn = HashFn::Xxh3_128;

    /// What a 128-bit fingerprint keeps (`redis-set-fp`, the distinct-key counts of URL files): both
    /// halves of a 128-bit hash, whatever the run's hash (a 64-bit hash's second half adds no bits).
    pub const FINGERPRINT: HashFn = HashFn::Xxh3_128;

    /// Every hash of the study.
    pub const ALL: [HashFn; 6] = [
        HashFn::Xxh3_128,
        HashFn::Xxh3_64,
        HashFn::Rapidhash,
        HashFn::Foldhash,
        HashFn::Wyhash,
        HashFn::Ahash,
    ];

    /// The name in results and reports.
    pub fn id(self) -> &'static str {
        match self {
            HashFn::Xxh3_128 => "xxh3-128",
            HashFn::Xxh3_64 => "xxh3-64",
            HashFn::Rapidhash => "rapidhash-v3",
            HashFn::Foldhash => "foldhash-fast",
            HashFn::Wyhash => "wyhash",
            HashFn::Ahash => "ahash-fallback",
        }
    }

    /// The hash of that name.
    pub fn from_id(id: &str) -> Option<HashFn> {
        HashFn::ALL.into_iter().find(|h| h.id() == id)
    }

    /// Whether the hash's output is fixed across crate versions, CPUs and builds, so that a saved file or
    /// a filter shared between hosts answers the same wherever it is read: xxh3 is a specified format,
    /// and rapidhash's README guarantees its v3 output; ahash's README says its output differs between
    /// computers, versions and builds, and the foldhash and wyhash crates promise nothing of the kind.
    pub fn persistent(self) -> bool {
        matches!(self, HashFn::Xxh3_128 | HashFn::Xxh3_64 | HashFn::Rapidhash)
    }

    /// Whether a structure may be built with it (`--hash`, saved files): documented to pass SMHasher and
    /// persistent.
    pub fn usable(self) -> bool {
        self.documented_to_pass() && self.persistent()
    }

    /// The ids of the usable hashes, for error messages.
    pub fn usable_ids() -> String {
        HashFn::ALL
            .into_iter()
            .filter(|h| h.usable())
            .map(HashFn::id)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The usable hash of that name.
    pub fn parse_usable(id: &str) -> Result<HashFn, String> {
        HashFn::from_id(id)
            .ok_or_else(|| format!("unknown hash '{id}'; usable: {}", HashFn::usable_ids()))?
            .checked_usable()
    }

    /// This hash if it is usable, or why not.
    pub fn checked_usable(self) -> Result<HashFn, String> {
        if self.usable() {
            return Ok(self);
        }
        Err(format!(
            "'{}' is in the hash study only (its documentation does not say it passes SMHasher, or that its output stays the same across versions and machines); usable: {}",
            self.id(),
            HashFn::usable_ids()
        ))
    }

    /// Bits of output the hash itself gives (64-bit hashes get `h2` by a finaliser).
    pub fn output_bits(self) -> u32 {
        match self {
            HashFn::Xxh3_128 => 128,
            _ => 64,
        }
    }

    /// What the hash's documentation says of its SMHasher results.
    pub fn smhasher(self) -> &'static str {
        match self {
            HashFn::Xxh3_128 | HashFn::Xxh3_64 => "passes SMHasher (xxHash's README)",
            HashFn::Rapidhash => "passes SMHasher and SMHasher3 (rapidhash's README)",
            HashFn::Foldhash => {
                "the fast variant fails SMHasher3's avalanche tests by design; foldhash-q passes (foldhash's README)"
            }
            HashFn::Wyhash => {
                "wyhash passes SMHasher (its README), for its current version; this crate implements an earlier one"
            }
            HashFn::Ahash => "passes SMHasher3 (ahash's README); here without its AES path",
        }
    }

    /// Whether that documentation says this very hash passes: a hash the report may recommend must.
    pub fn documented_to_pass(self) -> bool {
        !matches!(self, HashFn::Foldhash | HashFn::Wyhash)
    }

    /// Hashes `key` under `seed`.
    #[inline(always)]
    pub fn hash(self, seed: u64, key: &[u8]) -> KeyHash {
        let h1 = match self {
            HashFn::Xxh3_128 => return super::xxh3_128(seed, key),
            HashFn::Xxh3_64 => xxhash_rust::xxh3::xxh3_64_with_seed(key, seed),
            // The C++ reference's seeding (its default secrets, the seed mixed in): the v3 output
            // rapidhash guarantees, as rapidhash 2's `rapidhash_v3_seeded(key, seed)` gave it.
            HashFn::Rapidhash => rapidhash::v3::rapidhash_v3_seeded(
                key,
                &rapidhash::v3::RapidSecrets::seed_cpp(seed),
            ),
            // The byte-stream entry point (`write`), as the others hash: `hash_one(&[u8])` would also
            // hash a length prefix.
            HashFn::Foldhash => {
                let mut h = foldhash::fast::FixedState::with_seed(seed).build_hasher();
                h.write(key);
                h.finish()
            }
            HashFn::Wyhash => wyhash::wyhash(key, seed),
            HashFn::Ahash => {
                let mut h =
                    ahash::RandomState::with_seeds(seed, !seed, seed ^ 0x5A, 7).build_hasher();
                h.write(key);
                h.finish()
            }
        };
        KeyHash { h1, h2: fmix64(h1) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_hash_is_keyed_deterministic_and_named_once() {
        for h in HashFn::ALL {
            let key = b"https://www.example.com/a/b-c-0123456789.html";
            assert_eq!(h.hash(1, key), h.hash(1, key), "{}", h.id());
            assert_ne!(
                h.hash(1, key),
                h.hash(2, key),
                "{} ignores its seed",
                h.id()
            );
            assert_ne!(h.hash(1, key), h.hash(1, b"other"), "{}", h.id());
            assert_eq!(HashFn::from_id(h.id()), Some(h));
        }
        // A filter is saved or shared only with a hash whose output does not move between machines.
        assert_eq!(HashFn::usable_ids(), "xxh3-128, xxh3-64, rapidhash-v3");
        assert!(HashFn::parse_usable("ahash-fallback").is_err());
        assert!(HashFn::DEFAULT.usable() && HashFn::FORMER_DEFAULT.usable());
        assert_eq!(
            HashFn::Xxh3_128.hash(9, b"k"),
            super::super::xxh3_128(9, b"k")
        );
    }

    /// Known answers, recorded before the crates were bumped: a persistent hash must never change (saved
    /// files and shared filters name it), and a study hash changing would change the study's rates, so
    /// a crate update that moves any of them fails here (ahash is left out: its output may differ
    /// between machines).
    #[test]
    fn the_hashes_give_the_outputs_they_always_gave() {
        let long = [7u8; 200];
        let cases: [(u64, &[u8]); 3] = [
            (0, b""),
            (42, b"https://www.example.com/a/b-c-0123456789.html"),
            (0x9E37_79B9_7F4A_7C15, &long),
        ];
        let known: [(HashFn, [u64; 3]); 5] = [
            (
                HashFn::Xxh3_128,
                [0x6001c324468d497f, 0xbf936d16fbc2726e, 0xd656a75ef004fd25],
            ),
            (
                HashFn::Xxh3_64,
                [0x2d06800538d394c2, 0x77e0a500a137de78, 0xc7c168a662d0c99c],
            ),
            (
                HashFn::Rapidhash,
                [0x0338dc4be2cecdae, 0x7f32308247810c13, 0x6736920923b593ae],
            ),
            (
                HashFn::Foldhash,
                [0x6c49ad7bebcb79ea, 0xd3967a5fc4e04c78, 0x3611e2dd35bac27f],
            ),
            (
                HashFn::Wyhash,
                [0xf961f936e29c9345, 0xfb7599783ee79f90, 0xd4653c64be6e2dfb],
            ),
        ];
        for (h, want) in known {
            for ((seed, key), want) in cases.iter().zip(want) {
                assert_eq!(
                    h.hash(*seed, key).h1,
                    want,
                    "{} of {} bytes under seed {seed}",
                    h.id(),
                    key.len()
                );
            }
        }
        assert_eq!(HashFn::Xxh3_128.hash(0, b"").h2, 0x99aa06d3014798d8);
    }
}

//! Saving and loading structures through the registry: a file names its kind, the kind's
//! [`Kind::loader`](crate::kind::Kind::loader) rebuilds it. The bytes are [`crate::persist`]'s.

use super::REGISTRY;
use crate::membership::Membership;
use crate::persist::{self, FormatError, Header};
use crate::{Error, Result};
use std::path::Path;

/// The ids of the kinds that can be saved, in registry order.
pub fn savable_ids() -> Vec<&'static str> {
    REGISTRY
        .iter()
        .filter(|k| k.loader().is_some())
        .map(|k| k.id())
        .collect()
}

/// Writes `structure` to `path` atomically.
pub fn save(structure: &dyn Membership, path: &Path) -> Result<()> {
    let parts = structure.saved_parts().ok_or_else(|| {
        Error::invalid(
            "--save",
            format!(
                "'{}' cannot be saved; savable: {}",
                structure.id(),
                savable_ids().join(", ")
            ),
        )
    })?;
    let header = Header {
        kind_id: structure.id(),
        hasher: structure.hasher(),
        inserted: structure.n_inserted(),
    };
    persist::write(path, &header, &parts)
}

/// Loads a saved structure from `path`.
pub fn load(path: &Path) -> Result<Box<dyn Membership>> {
    // A load holds the file's bytes and the arrays built from them (for some kinds a copy more): a third
    // of what is available now.
    let limit = crate::measure::machine::available_memory_bytes() / 3;
    let bytes = crate::input_file::read_bounded(path, "--load", limit)?;
    decode(&bytes).map_err(|e| match e {
        Error::SavedFile(source) => Error::SavedFileAt {
            path: path.to_path_buf(),
            source,
        },
        other => other,
    })
}

/// Rebuilds a saved structure from the file's bytes.
pub fn decode(bytes: &[u8]) -> Result<Box<dyn Membership>> {
    let (id, loaded) = persist::decode(bytes)?;
    let loader = REGISTRY
        .iter()
        .find(|k| k.id() == id)
        .and_then(|k| k.loader())
        .ok_or_else(|| FormatError::NotSavable {
            id: crate::error::printable(&id),
            savable: savable_ids().join(", "),
        })?;
    loader(loaded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::HashFn;
    use xxhash_rust::xxh3::xxh3_64;

    fn filled(id: &str, n: u64) -> Box<dyn Membership> {
        filled_with(id, n, HashFn::DEFAULT)
    }

    fn filled_with(id: &str, n: u64, hash: HashFn) -> Box<dyn Membership> {
        super::super::fuzz::filled(id, n, hash).unwrap()
    }

    fn encoded(s: &dyn Membership, dir: &Path) -> Vec<u8> {
        let path = dir.join(format!("{}.filter", s.id()));
        save(s, &path).unwrap();
        std::fs::read(path).unwrap()
    }

    #[test]
    fn saved_filters_answer_exactly_as_before() {
        assert_eq!(
            savable_ids(),
            ["bitmap", "bloom", "blocked", "counting", "cuckoo", "scalable"],
            "every kind with a loader, and only those"
        );
        let dir = tempfile::tempdir().unwrap();
        let g = crate::keys::UrlGenerator::new(crate::keys::Profile::default_profile(), 5);
        // Each kind with the default hash and with the one files made before it name.
        for (id, hash) in savable_ids()
            .into_iter()
            .flat_map(|id| [(id, HashFn::DEFAULT), (id, HashFn::FORMER_DEFAULT)])
        {
            let s = filled_with(id, 20_000, hash);
            assert_eq!(s.hasher().func(), hash);
            let path = dir.path().join(format!("{id}.filter"));
            save(s.as_ref(), &path).unwrap();
            assert!(
                crate::atomic_file::leftovers(&path).is_empty(),
                "no temporary file is left"
            );
            let back = load(&path).unwrap();
            assert_eq!(back.id(), id);
            assert_eq!(back.hasher(), s.hasher());
            assert_eq!(back.n_inserted(), s.n_inserted());
            assert_eq!(back.geometry(), s.geometry());
            assert_eq!(back.bytes_held(), s.bytes_held());
            let mut buf = Vec::new();
            for i in 0..40_000 {
                g.member(i, &mut buf);
                assert_eq!(back.contains(&buf), s.contains(&buf), "{id}: member {i}");
                g.non_member(i, &mut buf);
                assert_eq!(
                    back.contains(&buf),
                    s.contains(&buf),
                    "{id}: non-member {i}"
                );
            }
        }
        let exact = filled("hashset", 10);
        assert!(
            save(exact.as_ref(), &dir.path().join("x")).is_err(),
            "the exact set is not savable"
        );
    }

    #[test]
    fn damaged_files_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let good = encoded(filled("bloom", 2_000).as_ref(), dir.path());
        let err = |bytes: &[u8]| {
            decode(bytes)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert!(
            err(&good[..good.len() - 1]).contains("checksum"),
            "truncated"
        );
        assert!(err(&good[..10]).contains("truncated"));
        assert!(err(b"hello world, not a filter").contains("magic"));
        let mut flipped = good.clone();
        flipped[100] ^= 0x10;
        assert!(err(&flipped).contains("checksum"));
        let mut version = good.clone();
        version[8] = 7;
        assert!(err(&version).contains("version 7"));
        // A file of another kind, re-checksummed so only the kind is wrong.
        let mut kind = good.clone();
        let at = 13;
        kind[at..at + 5].copy_from_slice(b"blorm");
        let n = kind.len();
        let sum = xxh3_64(&kind[..n - 8]);
        kind[n - 8..].copy_from_slice(&sum.to_le_bytes());
        assert!(err(&kind).contains("kind 'blorm'"), "{}", err(&kind));
        // A hash this build does not know, re-checksummed likewise.
        let mut hash = good.clone();
        let id = HashFn::DEFAULT.id().as_bytes();
        assert_eq!(&hash[19..19 + id.len()], id, "the hash id follows the kind");
        hash[19] = b'y';
        let sum = xxh3_64(&hash[..n - 8]);
        hash[n - 8..].copy_from_slice(&sum.to_le_bytes());
        assert!(
            err(&hash).contains("is not one this build knows; known hashes: xxh3-128, xxh3-64"),
            "{}",
            err(&hash)
        );
        // A hash this build knows but builds no structure with: the reason, not "unknown".
        let ahash = encoded(
            filled_with("bloom", 2_000, HashFn::Ahash).as_ref(),
            dir.path(),
        );
        assert!(
            err(&ahash).contains("saved with hash 'ahash-fallback' is in the hash study only"),
            "{}",
            err(&ahash)
        );
        let path = dir.path().join("missing.filter");
        assert!(load(&path)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
            .contains("missing.filter"));
    }

    /// The fuzzer (`registry::fuzz`) at 30,000 cases: no panic, no abort, and no changed file loads
    /// without a fresh checksum. Loaded filters take 64 new keys each, so a scalable file whose growth
    /// would allocate past the machine is met here too.
    #[test]
    fn the_loader_survives_mutated_files() {
        let summary = super::super::fuzz::fuzz_loader(30_000, 0xF022, |_| {}).unwrap();
        assert_eq!(summary.loaded_unchecked, 0, "{summary:?}");
        assert!(
            summary.loaded > 0,
            "re-checksummed mutations reach the parameter checks"
        );
        eprintln!("fuzzed the loader: {summary:?}");
    }

    /// A scalable file whose parameters were edited (and re-checksummed) so that its slices no longer
    /// follow from them, or so that growth would allocate past the machine, is refused at load: before,
    /// a first slice edited to 2⁶² keys loaded and aborted the process at the next insert.
    #[test]
    fn a_scalable_file_cannot_declare_sizes_it_does_not_hold() {
        let dir = tempfile::tempdir().unwrap();
        let s = filled("scalable", 2_000);
        let mut bytes = encoded(s.as_ref(), dir.path());
        // The parameters start after magic, version, the two ids, seed, inserts and the length word.
        let id_len = bytes[12] as usize;
        let hash_len = bytes[13 + id_len] as usize;
        let params = 14 + id_len + hash_len + 8 + 8 + 4;
        // The file with the u64 at `at` set to `value` and its checksum made valid again; its load error.
        let load_edited = |at: usize, value: u64| {
            let mut edited = bytes.clone();
            edited[at..at + 8].copy_from_slice(&value.to_le_bytes());
            let n = edited.len();
            let sum = xxh3_64(&edited[..n - 8]);
            edited[n - 8..].copy_from_slice(&sum.to_le_bytes());
            decode(&edited)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        for first_slice_keys in [1u64 << 62, 1_100_000_000, 251] {
            let err = load_edited(params, first_slice_keys);
            assert!(
                err.contains("its parameters give"),
                "{first_slice_keys}: {err}"
            );
        }
        // A count of keys inserted past what its arrays can have taken (here u64::MAX, which the next
        // insert would wrap to 0) is refused too.
        let err = load_edited(14 + id_len + hash_len + 8, u64::MAX);
        assert!(err.contains("more than its"), "{err}");
        // Unedited, it loads and grows.
        let n = bytes.len();
        let sum = xxh3_64(&bytes[..n - 8]);
        bytes[n - 8..].copy_from_slice(&sum.to_le_bytes());
        let mut back = decode(&bytes).unwrap();
        let mut buf = Vec::new();
        let g = crate::keys::UrlGenerator::new(crate::keys::Profile::default_profile(), 8);
        for i in 0..10_000 {
            g.member(i, &mut buf);
            back.insert(&buf);
        }
    }
}

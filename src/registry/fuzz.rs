//! A mutation fuzzer over the saved-filter loader: each case takes a small saved filter of every savable
//! kind, applies one to three bit flips, byte overwrites, truncations or insertions, and for every other
//! case writes a fresh checksum (so the mutation reaches the parameter checks behind it). A case passes
//! when decoding returns an error, or a filter that answers and takes new keys without a panic or an
//! allocation past the machine (which would abort the process, so a failing case ends the run). Run by
//! the unit test at a few tens of thousands of cases and by `cargo run --release --example fuzz_loader`
//! at a million or more.

use super::saved::decode;
use crate::hash::HashFn;
use crate::kind::BuildConfig;
use crate::membership::Membership;
use crate::registry::{find, savable_ids, save};
use crate::Result;
use rand::{RngExt, SeedableRng};
use xxhash_rust::xxh3::xxh3_64;

/// What a fuzz run found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FuzzSummary {
    pub cases: u64,
    /// Mutated files that loaded (all re-checksummed, or left unchanged by their mutation).
    pub loaded: u64,
    /// Changed files without a fresh checksum that loaded: each one is a finding.
    pub loaded_unchecked: u64,
}

/// A small filter of kind `id` hashing with `hash`, holding `n` generated URLs (the fuzzer's seeds, and
/// the saved-file tests' filters).
pub(super) fn filled(id: &str, n: u64, hash: HashFn) -> Result<Box<dyn Membership>> {
    let mut config = BuildConfig::new(n, 0.01, 99);
    config.hash = hash;
    config.growth.initial_keys = Some(n / 8);
    let mut s = find(id)?.build(&config)?;
    let g = crate::keys::UrlGenerator::new(crate::keys::Profile::default_profile(), 5);
    let mut buf = Vec::new();
    for i in 0..n {
        g.member(i, &mut buf);
        s.insert(&buf);
    }
    Ok(s)
}

/// The saved bytes of one small filter of every savable kind.
pub fn seed_files() -> Result<Vec<Vec<u8>>> {
    let dir = tempfile::tempdir().map_err(|e| crate::Error::io(std::path::Path::new("."), e))?;
    savable_ids()
        .into_iter()
        .map(|id| {
            let path = dir.path().join(format!("{id}.filter"));
            save(filled(id, 300, HashFn::DEFAULT)?.as_ref(), &path)?;
            std::fs::read(&path).map_err(|e| crate::Error::io(&path, e))
        })
        .collect()
}

/// Runs `cases` mutated files through the loader, calling `progress` every 65,536 cases.
pub fn fuzz_loader(cases: u64, seed: u64, mut progress: impl FnMut(u64)) -> Result<FuzzSummary> {
    let seeds = seed_files()?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut summary = FuzzSummary {
        cases,
        ..FuzzSummary::default()
    };
    let mut buf = Vec::new();
    let g = crate::keys::UrlGenerator::new(crate::keys::Profile::default_profile(), 6);
    for case in 0..cases {
        if case % 65_536 == 0 {
            progress(case);
        }
        let original = &seeds[(case % seeds.len() as u64) as usize];
        let mut bytes = original.clone();
        for _ in 0..rng.random_range(1..4) {
            match rng.random_range(0..4) {
                0 => {
                    let i = rng.random_range(0..bytes.len());
                    bytes[i] ^= 1 << rng.random_range(0..8);
                }
                1 => {
                    let i = rng.random_range(0..bytes.len());
                    bytes[i] = rng.random();
                }
                2 => bytes.truncate(rng.random_range(0..bytes.len())),
                _ => {
                    let i = rng.random_range(0..=bytes.len());
                    bytes.insert(i, rng.random());
                }
            }
            if bytes.is_empty() {
                break;
            }
        }
        let rechecked = case % 2 == 1 && bytes.len() > 8;
        if rechecked {
            let n = bytes.len();
            let sum = xxh3_64(&bytes[..n - 8]);
            bytes[n - 8..].copy_from_slice(&sum.to_le_bytes());
        }
        if let Ok(mut filter) = decode(&bytes) {
            summary.loaded += 1;
            if !rechecked && bytes != *original {
                summary.loaded_unchecked += 1;
            }
            // Whatever loads must answer and take new keys (growth included) without a panic.
            let _ = filter.contains(b"https://example.com/");
            for i in 0..64 {
                g.member(case * 64 + i, &mut buf);
                filter.insert(&buf);
            }
        }
    }
    Ok(summary)
}

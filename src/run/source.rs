//! Where a run's keys come from: the generator (members and non-members by index) or real URL files
//! (members, and non-members checked disjoint from them, read again for every pass).
//!
//! Invariant: a non-member file's keys are queried only once checked: repeats and keys that are members
//! of the run (its largest scale's) are dropped and counted, so every non-member query is a distinct
//! non-member. Generated non-members are disjoint by construction (indices at or above 2⁴⁷).

use crate::hash::{HashFn, KeyHasher};
use crate::keys::file::{KeyMask, UrlFile};
use crate::keys::{KeyBatch, KeyPipeline, UrlGenerator};
use crate::kind::KeyLengths;
use crate::results::NonMemberFile;
use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The flag that names a non-member file.
const NON_MEMBERS_FLAG: &str = "--non-members";

/// Member keys of a run.
pub enum Members {
    /// Generated members `[0, n)`.
    Generated,
    /// The first n lines of a URL file of `lines` keys; `distinct_at` holds (prefix length, distinct keys
    /// in that prefix) for every scale of the run and for the whole file.
    File {
        path: PathBuf,
        lines: u64,
        distinct_at: Vec<(u64, u64)>,
        /// Lines that are not valid UTF-8 (keys like the others, as their bytes).
        non_utf8_lines: u64,
    },
}

impl Members {
    /// The members of a URL file: its lines (validated line by line) and the distinct keys in each
    /// prefix of `scales` lines and in the whole file, counted in one pass by 64-bit fingerprints.
    pub fn from_file(path: &Path, scales: &[u64]) -> Result<Members> {
        let count = UrlFile::count(path)?;
        let lines = count.keys;
        let mut file = KeyPipeline::file(UrlFile::open(path)?, lines);
        let mut seen = hashbrown::HashSet::with_capacity(lines as usize);
        let mut batch = KeyBatch::with_capacity(4096, 80);
        let mut marks: Vec<u64> = scales.iter().copied().filter(|s| *s < lines).collect();
        marks.push(lines);
        marks.sort_unstable();
        marks.dedup();
        let mut distinct_at = Vec::new();
        let mut read = 0u64;
        for mark in marks {
            while read < mark {
                // Batches end at each mark, so every prefix is counted exactly.
                file.set_batch_keys((mark - read).min(4096) as usize);
                let made = file.next_hashed(&mut batch, FINGERPRINT_HASHER)?;
                if made == 0 {
                    break;
                }
                seen.extend(batch.hashes().iter().map(|h| h.h1));
                read += made as u64;
            }
            distinct_at.push((mark, seen.len() as u64));
        }
        Ok(Members::File {
            path: path.to_path_buf(),
            lines,
            distinct_at,
            non_utf8_lines: count.non_utf8,
        })
    }
}

/// Non-member keys of a run's grid.
pub enum NonMembers {
    /// Generated non-members (never members by construction).
    Generated,
    /// The keys of a URL file that `mask` keeps: distinct, and none a member.
    File {
        path: PathBuf,
        mask: Arc<KeyMask>,
        checked: NonMemberFile,
    },
}

/// What the distinct-key counts hash with: a 128-bit hash whatever the run's, so a fingerprint keeps 128
/// bits.
const FINGERPRINT_HASHER: KeyHasher = KeyHasher::new(HashFn::FINGERPRINT, 0);

/// A key's 128-bit fingerprint (both halves of its [`FINGERPRINT_HASHER`] hash): a false match between
/// distinct keys has probability about k²/2¹²⁹ for k keys.
fn fingerprint(h: &crate::hash::KeyHash) -> [u64; 2] {
    [h.h1, h.h2]
}

/// Bytes the check's table of `keys` fingerprints takes at most: hashbrown's buckets (a power of two
/// at least 8/7 of the entries), 24 bytes and one control byte each.
fn check_table_bytes(keys: u64) -> u64 {
    (keys.max(1) * 8 / 7 + 1).next_power_of_two() * 25
}

impl NonMembers {
    /// The non-members of a URL file, checked against the first `member_count` members of `source`: one
    /// pass over the file (fingerprints of its distinct keys, repeats counted), one over the members
    /// (fingerprints found are dropped). Holds 29–57 bytes per key of the file while checking (a table
    /// of 24-byte entries; [`check_table_bytes`]), refused with an error beyond `memory_limit_bytes`.
    pub fn from_file(
        path: &Path,
        source: &KeySource,
        member_count: u64,
        memory_limit_bytes: u64,
    ) -> Result<NonMembers> {
        let count = UrlFile::count_for(path, NON_MEMBERS_FLAG)?;
        let table_bytes = check_table_bytes(count.keys);
        if table_bytes > memory_limit_bytes {
            return Err(Error::invalid(
                NON_MEMBERS_FLAG,
                format!(
                    "checking the {} keys of {} needs ≈ {}; the memory limit is {}: give a shorter file",
                    count.keys,
                    path.display(),
                    crate::units::human_bytes(table_bytes as f64),
                    crate::units::human_bytes(memory_limit_bytes as f64)
                ),
            ));
        }
        let mut first_at = hashbrown::HashMap::<[u64; 2], u64>::with_capacity(count.keys as usize);
        let mut batch = KeyBatch::with_capacity(4096, 80);
        let mut file = KeyPipeline::file(UrlFile::open_for(path, NON_MEMBERS_FLAG)?, u64::MAX);
        let (mut ordinal, mut repeats) = (0u64, 0u64);
        while file.next_hashed(&mut batch, FINGERPRINT_HASHER)? > 0 {
            for h in batch.hashes() {
                match first_at.entry(fingerprint(h)) {
                    hashbrown::hash_map::Entry::Occupied(_) => repeats += 1,
                    hashbrown::hash_map::Entry::Vacant(slot) => {
                        slot.insert(ordinal);
                    }
                }
                ordinal += 1;
            }
        }
        let mut members = source.members(member_count)?;
        let mut members_dropped = 0u64;
        let mut members_checked = 0u64;
        while members.next_hashed(&mut batch, FINGERPRINT_HASHER)? > 0 {
            members_checked += batch.len() as u64;
            for h in batch.hashes() {
                members_dropped += u64::from(first_at.remove(&fingerprint(h)).is_some());
            }
        }
        let mut mask = KeyMask::none(count.keys);
        for ordinal in first_at.values() {
            mask.keep(*ordinal);
        }
        if mask.kept() == 0 {
            return Err(Error::invalid(
                NON_MEMBERS_FLAG,
                format!(
                    "{} leaves no non-member: its {} keys are {repeats} repeats and {members_dropped} members of the run; give URLs that are not members",
                    path.display(),
                    count.keys
                ),
            ));
        }
        Ok(NonMembers::File {
            path: path.to_path_buf(),
            checked: NonMemberFile {
                path: path.display().to_string(),
                keys: count.keys,
                repeats_dropped: repeats,
                members_dropped,
                members_checked,
                kept: mask.kept(),
                non_utf8_lines: count.non_utf8,
            },
            mask: Arc::new(mask),
        })
    }

    /// What checking the file found (`None` for generated non-members).
    pub fn checked(&self) -> Option<&NonMemberFile> {
        match self {
            NonMembers::Generated => None,
            NonMembers::File { checked, .. } => Some(checked),
        }
    }
}

/// The keys of a run: members, non-members, and the generator (the experiments' keys, the memory floor's,
/// and generated members and non-members).
pub struct KeySource {
    pub generator: UrlGenerator,
    pub members: Members,
    pub non_members: NonMembers,
}

impl KeySource {
    /// Key lengths of the first 20,000 members.
    pub fn key_lengths(&self) -> Result<KeyLengths> {
        let mut members = self.members(20_000)?;
        let mut batch = KeyBatch::with_capacity(4096, 80);
        let mut lengths = Vec::new();
        while members.make(&mut batch)? > 0 {
            lengths.extend((0..batch.len()).map(|i| batch.key(i).len()));
        }
        Ok(KeyLengths::from_lengths(lengths))
    }

    /// Distinct members among the first n (all of them for generated keys; counted in one pass over the
    /// file for each scale of the run, otherwise n as an upper bound).
    pub fn distinct_members(&self, n: u64) -> u64 {
        match &self.members {
            Members::Generated => n,
            Members::File {
                distinct_at, lines, ..
            } => {
                let n = n.min(*lines);
                distinct_at
                    .iter()
                    .find(|(prefix, _)| *prefix == n)
                    .map(|(_, d)| *d)
                    .unwrap_or(n)
            }
        }
    }

    /// The first `n` members.
    pub fn members(&self, n: u64) -> Result<KeyPipeline<'_>> {
        Ok(match &self.members {
            Members::Generated => KeyPipeline::members(&self.generator, 0..n),
            Members::File { path, lines, .. } => {
                KeyPipeline::file(UrlFile::open(path)?, n.min(*lines))
            }
        })
    }

    /// `count` of the first `n` members spread evenly over them (every ⌊n/count⌋-th generated member; a
    /// file's first `count` lines, since a file has no random access).
    pub fn member_sample(&self, n: u64, count: u64) -> Result<KeyPipeline<'_>> {
        if count >= n {
            return self.members(n);
        }
        Ok(match &self.members {
            Members::Generated => {
                KeyPipeline::strided_members(&self.generator, count, n / count.max(1))
            }
            Members::File { .. } => self.members(count)?,
        })
    }

    /// How many of the grid's non-members a pass asking for `count` gets (fewer when a file has fewer).
    pub fn non_member_count(&self, count: u64) -> u64 {
        match &self.non_members {
            NonMembers::Generated => count,
            NonMembers::File { mask, .. } => count.min(mask.kept()),
        }
    }

    /// The grid's first `count` non-members (fewer when a file has fewer).
    pub fn non_members(&self, count: u64) -> Result<KeyPipeline<'_>> {
        Ok(match &self.non_members {
            NonMembers::Generated => self.generated_non_members(0..count),
            NonMembers::File { path, mask, .. } => KeyPipeline::file(
                UrlFile::open_for(path, NON_MEMBERS_FLAG)?.masked(mask.clone()),
                count.min(mask.kept()),
            ),
        })
    }

    /// Generated non-members `range` (the experiments' and the memory floor's).
    pub fn generated_non_members(&self, range: std::ops::Range<u64>) -> KeyPipeline<'_> {
        KeyPipeline::non_members(&self.generator, range)
    }
}

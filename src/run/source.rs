//! Where a run's keys come from: the generator (members and non-members by index) or a real URL file
//! (members, read again for every pass; non-members are then generated).

use crate::keys::file::UrlFile;
use crate::keys::{KeyBatch, KeyPipeline, UrlGenerator};
use crate::structures::KeyLengths;
use crate::Result;
use std::path::{Path, PathBuf};

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
        let mut file = KeyPipeline::file(UrlFile::open(path)?, lines, 0);
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
                let made = file.next_hashed(&mut batch)?;
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

/// The keys of a run: members and the generator that also makes the non-members.
pub struct KeySource {
    pub generator: UrlGenerator,
    pub members: Members,
}

impl KeySource {
    /// Key lengths of the first 20,000 members.
    pub fn key_lengths(&self) -> Result<KeyLengths> {
        let mut members = self.members(20_000, 0)?;
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

    /// The first `n` members, hashed with `seed`.
    pub fn members(&self, n: u64, seed: u64) -> Result<KeyPipeline<'_>> {
        Ok(match &self.members {
            Members::Generated => KeyPipeline::members(&self.generator, 0..n, seed),
            Members::File { path, lines, .. } => {
                KeyPipeline::file(UrlFile::open(path)?, n.min(*lines), seed)
            }
        })
    }

    /// `count` of the first `n` members spread evenly over them (every ⌊n/count⌋-th generated member; a
    /// file's first `count` lines, since a file has no random access).
    pub fn member_sample(&self, n: u64, count: u64, seed: u64) -> Result<KeyPipeline<'_>> {
        if count >= n {
            return self.members(n, seed);
        }
        Ok(match &self.members {
            Members::Generated => {
                KeyPipeline::strided_members(&self.generator, count, n / count.max(1), seed)
            }
            Members::File { .. } => self.members(count, seed)?,
        })
    }

    /// Generated non-members `range`, hashed with `seed`.
    pub fn non_members(&self, range: std::ops::Range<u64>, seed: u64) -> KeyPipeline<'_> {
        KeyPipeline::non_members(&self.generator, range, seed)
    }
}

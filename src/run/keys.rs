//! Where a run's keys come from: the generator (members and non-members by index) or a real URL file
//! (members, read again for every pass; non-members are then generated).

use crate::keys::file::UrlFile;
use crate::keys::{KeyBatch, UrlGenerator};
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
    },
}

impl Members {
    /// The members of a URL file: its lines (validated line by line) and the distinct keys in each
    /// prefix of `scales` lines and in the whole file, counted in one pass by 64-bit fingerprints.
    pub fn from_file(path: &Path, scales: &[u64]) -> Result<Members> {
        let lines = UrlFile::count(path)?;
        let mut file = UrlFile::open(path)?;
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
                batch.clear();
                let want = (mark - read).min(4096) as usize;
                let got = file.read_batch(&mut batch, want)?;
                if got == 0 {
                    break;
                }
                batch.hash_all(0);
                seen.extend(batch.hashes().iter().map(|h| h.h1));
                read += got as u64;
            }
            distinct_at.push((mark, seen.len() as u64));
        }
        Ok(Members::File {
            path: path.to_path_buf(),
            lines,
            distinct_at,
        })
    }
}

/// The keys of a run: members and the generator that also makes the non-members.
pub struct KeySource {
    pub generator: UrlGenerator,
    pub members: Members,
}

/// A reader over one pass of the members.
pub enum MemberCursor {
    Generated {
        next: u64,
        end: u64,
    },
    /// Every `stride`-th generated member: indices `j·stride` for j in `[next, end)`.
    Strided {
        next: u64,
        end: u64,
        stride: u64,
    },
    File {
        file: Box<UrlFile>,
        left: u64,
    },
}

impl KeySource {
    /// Key lengths of the first 20,000 members.
    pub fn key_lengths(&self) -> Result<KeyLengths> {
        let mut cursor = self.member_cursor(20_000)?;
        let mut batch = KeyBatch::with_capacity(4096, 80);
        let mut lengths = Vec::new();
        loop {
            batch.clear();
            if self.fill_members(&mut cursor, &mut batch, 4096)? == 0 {
                break;
            }
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

    /// A cursor over the first `n` members.
    pub fn member_cursor(&self, n: u64) -> Result<MemberCursor> {
        Ok(match &self.members {
            Members::Generated => MemberCursor::Generated { next: 0, end: n },
            Members::File { path, lines, .. } => MemberCursor::File {
                file: Box::new(UrlFile::open(path)?),
                left: n.min(*lines),
            },
        })
    }

    /// A cursor over `count` of the first `n` members spread evenly over them (every ⌊n/count⌋-th generated
    /// member; a file's first `count` lines, since a file has no random access).
    pub fn member_sample_cursor(&self, n: u64, count: u64) -> Result<MemberCursor> {
        if count >= n {
            return self.member_cursor(n);
        }
        Ok(match &self.members {
            Members::Generated => MemberCursor::Strided {
                next: 0,
                end: count,
                stride: n / count.max(1),
            },
            Members::File { .. } => self.member_cursor(count)?,
        })
    }

    /// Appends up to `max` members from `cursor`; returns how many.
    #[inline]
    pub fn fill_members(
        &self,
        cursor: &mut MemberCursor,
        batch: &mut KeyBatch,
        max: usize,
    ) -> Result<usize> {
        match cursor {
            MemberCursor::Generated { next, end } => {
                let stop = (*next + max as u64).min(*end);
                self.generator.fill_members(*next..stop, batch);
                let added = (stop - *next) as usize;
                *next = stop;
                Ok(added)
            }
            MemberCursor::Strided { next, end, stride } => {
                let stop = (*next + max as u64).min(*end);
                for j in *next..stop {
                    batch.push_with(|buf| self.generator.append_member(j * *stride, buf));
                }
                let added = (stop - *next) as usize;
                *next = stop;
                Ok(added)
            }
            MemberCursor::File { file, left } => {
                let want = (*left).min(max as u64) as usize;
                let added = file.read_batch(batch, want)?;
                *left -= added as u64;
                Ok(added)
            }
        }
    }

    /// Appends non-members `[from, to)`.
    #[inline]
    pub fn fill_non_members(&self, from: u64, to: u64, batch: &mut KeyBatch) {
        self.generator.fill_non_members(from..to, batch);
    }
}

//! The one key pipeline: a source (the generator's members or non-members over an index range, an evenly
//! spread sample of members, or the lines of a URL file) made into batches one at a time, and hashed with
//! the hasher the caller gives (its structure's). Every loop that feeds a structure (the harness's passes,
//! the parallel builds, the scenario, the sweep, `dedup`, `shared`, the tests) reads keys through it.
//!
//! Making and hashing are separate steps ([`KeyPipeline::make`], then [`KeyBatch::hash_all`] or
//! [`KeyPipeline::next_hashed`] for both), so the harness can time them apart. Batches belong to the
//! caller and are reused: a pipeline holds no key.

use super::file::UrlFile;
use super::{KeyBatch, UrlGenerator};
use crate::hash::KeyHasher;
use crate::Result;
use std::ops::Range;

/// Keys per batch unless told otherwise.
pub const DEFAULT_BATCH_KEYS: usize = 4096;

/// Where a pipeline's keys come from.
enum Source<'g> {
    /// Generated members `[next, end)`.
    Members {
        generator: &'g UrlGenerator,
        next: u64,
        end: u64,
    },
    /// Generated members `j·stride` for j in `[next, end)`.
    Strided {
        generator: &'g UrlGenerator,
        next: u64,
        end: u64,
        stride: u64,
    },
    /// Generated non-members `[next, end)`.
    NonMembers {
        generator: &'g UrlGenerator,
        next: u64,
        end: u64,
    },
    /// At most `left` more lines of a URL file.
    File { file: Box<UrlFile>, left: u64 },
}

/// Batches of keys from one source.
pub struct KeyPipeline<'g> {
    source: Source<'g>,
    batch_keys: usize,
}

impl<'g> KeyPipeline<'g> {
    fn new(source: Source<'g>) -> Self {
        KeyPipeline {
            source,
            batch_keys: DEFAULT_BATCH_KEYS,
        }
    }

    /// Generated members `range`.
    pub fn members(generator: &'g UrlGenerator, range: Range<u64>) -> Self {
        Self::new(Source::Members {
            generator,
            next: range.start,
            end: range.end.max(range.start),
        })
    }

    /// `count` generated members spread evenly: every `stride`-th, from index 0.
    pub fn strided_members(generator: &'g UrlGenerator, count: u64, stride: u64) -> Self {
        Self::new(Source::Strided {
            generator,
            next: 0,
            end: count,
            stride: stride.max(1),
        })
    }

    /// Generated non-members `range`.
    pub fn non_members(generator: &'g UrlGenerator, range: Range<u64>) -> Self {
        Self::new(Source::NonMembers {
            generator,
            next: range.start,
            end: range.end.max(range.start),
        })
    }

    /// At most `lines` lines of `file` (`u64::MAX`: to its end), validated as they are read.
    pub fn file(file: UrlFile, lines: u64) -> Self {
        Self::new(Source::File {
            file: Box::new(file),
            left: lines,
        })
    }

    /// The same pipeline with `keys` keys per batch.
    pub fn with_batch_keys(mut self, keys: usize) -> Self {
        self.batch_keys = keys.max(1);
        self
    }

    /// From now on, at most `keys` keys per batch (a batch can end exactly where the caller needs).
    pub fn set_batch_keys(&mut self, keys: usize) {
        self.batch_keys = keys.max(1);
    }

    /// Clears `batch` and fills it with the next keys, not hashed; returns how many (0: the source is
    /// exhausted). Only a file can fail (unreadable, or a bad line).
    pub fn make(&mut self, batch: &mut KeyBatch) -> Result<usize> {
        batch.clear();
        let max = self.batch_keys as u64;
        let taken = |next: &mut u64, end: u64| {
            let range = *next..(*next + max).min(end);
            *next = range.end;
            range
        };
        Ok(match &mut self.source {
            Source::Members {
                generator,
                next,
                end,
            } => {
                let range = taken(next, *end);
                let added = (range.end - range.start) as usize;
                generator.fill_members(range, batch);
                added
            }
            Source::Strided {
                generator,
                next,
                end,
                stride,
            } => {
                let range = taken(next, *end);
                let added = (range.end - range.start) as usize;
                for j in range {
                    batch.push_with(|buf| generator.append_member(j * *stride, buf));
                }
                added
            }
            Source::NonMembers {
                generator,
                next,
                end,
            } => {
                let range = taken(next, *end);
                let added = (range.end - range.start) as usize;
                generator.fill_non_members(range, batch);
                added
            }
            Source::File { file, left } => {
                let want = (*left).min(max) as usize;
                let added = file.read_batch(batch, want)?;
                *left -= added as u64;
                added
            }
        })
    }

    /// The next batch, made and hashed with `hasher`; returns how many keys (0: exhausted).
    pub fn next_hashed(&mut self, batch: &mut KeyBatch, hasher: KeyHasher) -> Result<usize> {
        let made = self.make(batch)?;
        if made > 0 {
            batch.hash_all(hasher);
        }
        Ok(made)
    }

    /// Runs `op` over every batch hashed with `hasher` and sums what it returns.
    pub fn sum(mut self, hasher: KeyHasher, mut op: impl FnMut(&KeyBatch) -> u64) -> Result<u64> {
        let mut batch = KeyBatch::with_capacity(self.batch_keys, 96);
        let mut total = 0;
        while self.next_hashed(&mut batch, hasher)? > 0 {
            total += op(&batch);
        }
        Ok(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::Profile;

    fn generator() -> UrlGenerator {
        UrlGenerator::new(Profile::default_profile(), 5)
    }

    fn collect(mut p: KeyPipeline<'_>) -> Vec<Vec<u8>> {
        let mut batch = KeyBatch::with_capacity(16, 80);
        let mut keys = Vec::new();
        let hasher = KeyHasher::default_with_seed(1);
        while p.next_hashed(&mut batch, hasher).unwrap() > 0 {
            for (i, (key, hash)) in batch.iter().enumerate() {
                assert_eq!(hash, hasher.hash(key), "key {i} hashed");
                keys.push(key.to_vec());
            }
        }
        keys
    }

    #[test]
    fn every_source_gives_its_keys_in_order_in_batches() {
        let g = generator();
        let members = collect(KeyPipeline::members(&g, 3..1000).with_batch_keys(7));
        assert_eq!(members.len(), 997);
        let mut buf = Vec::new();
        g.member(3, &mut buf);
        assert_eq!(members[0], buf);
        g.member(999, &mut buf);
        assert_eq!(members[996], buf);
        let strided = collect(KeyPipeline::strided_members(&g, 10, 100).with_batch_keys(3));
        g.member(900, &mut buf);
        assert_eq!((strided.len(), &strided[9]), (10, &buf));
        let non = collect(KeyPipeline::non_members(&g, 0..50));
        g.non_member(49, &mut buf);
        assert_eq!((non.len(), &non[49]), (50, &buf));
        let text = "https://a.example/\nhttps://b.example/\nhttps://c.example/\n";
        let file = UrlFile::from_reader(
            "<test>",
            Box::new(std::io::Cursor::new(text.as_bytes().to_vec())),
        );
        let lines = collect(KeyPipeline::file(file, 2));
        assert_eq!(
            lines,
            vec![
                b"https://a.example/".to_vec(),
                b"https://b.example/".to_vec()
            ]
        );
        assert!(collect(KeyPipeline::members(&g, 5..5)).is_empty());
    }
}

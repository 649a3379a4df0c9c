//! The saved-filter file format, so a crawler keeps its filter across restarts. This module knows bytes,
//! not structures: each savable structure turns itself into [`SavedParts`] and back from [`Loaded`], and
//! [`crate::registry`] finds the kind a file names.
//!
//! Layout (little-endian): magic `DDBFILT\0`; version u32; kind id (u8 length + bytes); hash id (u8 length +
//! bytes: the [`crate::hash::HashFn`] id the structure hashes with; files that predate the choice of hash
//! all name xxh3-128); seed u64; inserts u64; parameters (u32 length + bytes, the structure's own); payload (u64 length +
//! bytes: the bit or counter arrays); then the xxh3-64 checksum of everything before it.
//! Writes are atomic ([`crate::atomic_file`]). Reading checks every length against the file before
//! allocating, and the checksum before trusting anything: a truncated, corrupted, wrong-version or
//! wrong-type file is a [`FormatError`], never a panic or a silently wrong filter.

mod reader;

pub use reader::Reader;

use crate::atomic_file::{AtomicFile, Readers};
use crate::hash::{HashFn, KeyHasher};
use crate::{Error, Result};
use std::io::Write;
use std::path::Path;
use xxhash_rust::xxh3::{xxh3_64, Xxh3};

/// The file's magic bytes.
pub const MAGIC: &[u8; 8] = b"DDBFILT\0";
/// The format version this build writes and reads.
pub const VERSION: u32 = 1;

pub use crate::error::FormatError;

/// A piece of a structure's saved state.
pub enum Payload<'a> {
    /// 64-bit words, written little-endian.
    Words(&'a [u64]),
    /// Raw bytes.
    Bytes(&'a [u8]),
}

impl Payload<'_> {
    fn len(&self) -> u64 {
        match self {
            Payload::Words(w) => w.len() as u64 * 8,
            Payload::Bytes(b) => b.len() as u64,
        }
    }
}

/// What a structure saves: its parameters and its arrays.
pub struct SavedParts<'a> {
    pub params: Vec<u8>,
    pub payload: Vec<Payload<'a>>,
}

/// The header fields every saved structure has.
pub struct Header<'a> {
    /// The registry id of the structure's kind.
    pub kind_id: &'a str,
    /// The hash function and seed the structure hashes with.
    pub hasher: KeyHasher,
    pub inserted: u64,
}

/// A checked file, for a structure to rebuild itself from.
pub struct Loaded<'a> {
    /// The hash function the file names, keyed by its seed.
    pub hasher: KeyHasher,
    pub inserted: u64,
    pub params: Reader<'a>,
    pub payload: Reader<'a>,
}

/// An error about a structure's saved parameters or arrays.
pub fn corrupt(message: String) -> Error {
    FormatError::Corrupt(message).into()
}

/// Writes a saved structure to `path` atomically.
pub fn write(path: &Path, header: &Header, parts: &SavedParts) -> Result<()> {
    // The file holds the hash seed, which must stay private (the hostile-keys defence rests on it).
    let mut file = AtomicFile::create_for(path, Readers::Owner)?;
    let mut out = HashingWriter {
        inner: &mut file,
        hasher: Xxh3::new(),
    };
    let id = header.kind_id.as_bytes();
    let hash_id = header.hasher.func().id().as_bytes();
    let mut head = Vec::new();
    head.extend_from_slice(MAGIC);
    head.extend_from_slice(&VERSION.to_le_bytes());
    head.push(id.len() as u8);
    head.extend_from_slice(id);
    head.push(hash_id.len() as u8);
    head.extend_from_slice(hash_id);
    head.extend_from_slice(&header.hasher.seed().to_le_bytes());
    head.extend_from_slice(&header.inserted.to_le_bytes());
    head.extend_from_slice(&(parts.params.len() as u32).to_le_bytes());
    head.extend_from_slice(&parts.params);
    let payload_len: u64 = parts.payload.iter().map(Payload::len).sum();
    head.extend_from_slice(&payload_len.to_le_bytes());
    let written = (|| -> std::io::Result<()> {
        out.write_all(&head)?;
        let mut chunk = Vec::with_capacity(1 << 16);
        for piece in &parts.payload {
            match piece {
                Payload::Bytes(b) => out.write_all(b)?,
                Payload::Words(words) => {
                    for group in words.chunks(8192) {
                        chunk.clear();
                        for w in group {
                            chunk.extend_from_slice(&w.to_le_bytes());
                        }
                        out.write_all(&chunk)?;
                    }
                }
            }
        }
        let checksum = out.hasher.digest();
        out.inner.write_all(&checksum.to_le_bytes())
    })();
    written.map_err(|e| Error::io(file.tmp_path(), e))?;
    file.commit()
}

struct HashingWriter<W: Write> {
    inner: W,
    hasher: Xxh3,
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Checks a saved file's bytes; returns the kind id it names and the rest for that kind to read.
pub fn decode(bytes: &[u8]) -> Result<(String, Loaded<'_>), FormatError> {
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(FormatError::BadMagic);
    }
    if bytes.len() < MAGIC.len() + 4 + 8 {
        return Err(FormatError::Truncated);
    }
    let found = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if found != VERSION {
        return Err(FormatError::Version {
            found,
            expected: VERSION,
        });
    }
    let (body, tail) = bytes.split_at(bytes.len() - 8);
    let stored = u64::from_le_bytes(tail.try_into().expect("8 bytes"));
    if xxh3_64(body) != stored {
        return Err(FormatError::Checksum);
    }
    let mut r = Reader::new(&body[12..], "header");
    let id_len = r.u8()?;
    let id = std::str::from_utf8(r.bytes(id_len as u64)?)
        .map_err(|_| FormatError::KindNotUtf8)?
        .to_string();
    let hash_len = r.u8()?;
    let hash_id = r.bytes(hash_len as u64)?;
    let found = String::from_utf8_lossy(hash_id).into_owned();
    let hash = match HashFn::from_id(&found) {
        None => {
            return Err(FormatError::Hash {
                found: crate::error::printable(&found),
                known: HashFn::usable_ids(),
            })
        }
        Some(hash) => hash.checked_usable().map_err(FormatError::HashNotUsable)?,
    };
    let seed = r.u64()?;
    let inserted = r.u64()?;
    let params_len = r.u32()?;
    let params = Reader::new(r.bytes(params_len as u64)?, "parameters");
    let payload_len = r.u64()?;
    let payload = Reader::new(r.bytes(payload_len)?, "payload");
    r.finish()?;
    // A key an insert-only structure called new set at least one bit (or counter) of its arrays, so the
    // count is at most their bits: a larger one is corrupt. (A counting filter with removes could in
    // principle count past it; no command saves one after removes. Counts saturate in any case.)
    if inserted > payload_len.saturating_mul(8) {
        return Err(FormatError::Corrupt(format!(
            "it counts {inserted} keys inserted, more than its {} bits of arrays can have taken",
            payload_len.saturating_mul(8)
        )));
    }
    Ok((
        id,
        Loaded {
            hasher: KeyHasher::new(hash, seed),
            inserted,
            params,
            payload,
        },
    ))
}

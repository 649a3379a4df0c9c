//! Saved filters: a small versioned file so a crawler keeps its filter across restarts.
//!
//! Layout (little-endian): magic `DDBFILT\0`; version u32; kind id (u8 length + bytes); hash id (u8 length +
//! bytes); seed u64; inserts u64; parameters (u32 length + bytes, the structure's own); payload (u64 length +
//! bytes: the bit or counter arrays); then the xxh3-64 checksum of everything before it.
//! Writes are atomic (temporary file, fsync, rename). Loading checks every length against the file before
//! allocating, and the checksum before trusting anything: a truncated, corrupted, wrong-version or
//! wrong-type file is an error, never a panic or a silently wrong filter.

use super::Membership;
use crate::{Error, Result};
use std::io::Write;
use std::path::Path;
use xxhash_rust::xxh3::{xxh3_64, Xxh3};

/// The file's magic bytes.
pub const MAGIC: &[u8; 8] = b"DDBFILT\0";
/// The format version this build writes and reads.
pub const VERSION: u32 = 1;

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

/// A loaded file, checked, for a structure to rebuild itself from.
pub struct Loaded<'a> {
    pub seed: u64,
    pub inserted: u64,
    pub params: Reader<'a>,
    pub payload: Reader<'a>,
}

/// A bounds-checked little-endian reader over bytes.
pub struct Reader<'a> {
    bytes: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8], what: &'static str) -> Self {
        Reader { bytes, what }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.bytes.len() < n {
            return Err(corrupt(format!(
                "{} ends early (needs {n} more bytes, has {})",
                self.what,
                self.bytes.len()
            )));
        }
        let (head, tail) = self.bytes.split_at(n);
        self.bytes = tail;
        Ok(head)
    }
    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    pub fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    pub fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_bits(self.u64()?))
    }
    pub fn bytes(&mut self, n: u64) -> Result<&'a [u8]> {
        let n = usize::try_from(n)
            .map_err(|_| corrupt(format!("{} length {n} is too large", self.what)))?;
        self.take(n)
    }
    /// `count` words; checks the length before allocating.
    pub fn words(&mut self, count: u64) -> Result<Vec<u64>> {
        let bytes = self.bytes(
            count
                .checked_mul(8)
                .ok_or_else(|| corrupt("word count overflows".into()))?,
        )?;
        Ok(bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect())
    }
    /// Errors unless every byte was read.
    pub fn finish(&self) -> Result<()> {
        if self.bytes.is_empty() {
            Ok(())
        } else {
            Err(corrupt(format!(
                "{} has {} unexpected trailing bytes",
                self.what,
                self.bytes.len()
            )))
        }
    }
}

/// An error about the file's content (the caller adds the path).
pub fn corrupt(message: String) -> Error {
    Error::invalid("filter file", message)
}

/// The kinds that can be saved.
pub const SAVABLE: &[&str] = &["bitmap", "bloom", "blocked", "counting", "scalable"];

/// Whether a structure kind can be saved.
pub fn savable(id: &str) -> bool {
    SAVABLE.contains(&id)
}

/// Writes `structure` to `path` atomically.
pub fn save(structure: &dyn Membership, path: &Path) -> Result<()> {
    let parts = structure.saved_parts().ok_or_else(|| {
        Error::invalid(
            "--save",
            format!(
                "'{}' cannot be saved; savable: bitmap, bloom, blocked, counting, scalable",
                structure.id()
            ),
        )
    })?;
    let tmp = path.with_extension("partial");
    let io = |e| Error::io(&tmp, e);
    let file = std::fs::File::create(&tmp).map_err(io)?;
    let mut out = HashingWriter {
        inner: std::io::BufWriter::with_capacity(1 << 20, file),
        hasher: Xxh3::new(),
    };
    let id = structure.id().as_bytes();
    let hash_id = crate::hash::HASH_ID.as_bytes();
    let mut header = Vec::new();
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&VERSION.to_le_bytes());
    header.push(id.len() as u8);
    header.extend_from_slice(id);
    header.push(hash_id.len() as u8);
    header.extend_from_slice(hash_id);
    header.extend_from_slice(&structure.seed().to_le_bytes());
    header.extend_from_slice(&structure.n_inserted().to_le_bytes());
    header.extend_from_slice(&(parts.params.len() as u32).to_le_bytes());
    header.extend_from_slice(&parts.params);
    let payload_len: u64 = parts.payload.iter().map(Payload::len).sum();
    header.extend_from_slice(&payload_len.to_le_bytes());
    let written = (|| -> std::io::Result<()> {
        out.write_all(&header)?;
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
        out.inner.write_all(&checksum.to_le_bytes())?;
        out.inner.flush()?;
        out.inner.get_ref().sync_all()
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(e));
    }
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
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

/// Loads a saved filter from `path`.
pub fn load(path: &Path) -> Result<Box<dyn Membership>> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    decode(&bytes).map_err(|e| match e {
        Error::Invalid { message, .. } => Error::Format {
            path: path.to_path_buf(),
            line: 0,
            message,
        },
        other => other,
    })
}

/// Decodes a saved filter from its bytes.
pub fn decode(bytes: &[u8]) -> Result<Box<dyn Membership>> {
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(corrupt(
            "not a dedupbench filter file (bad magic bytes)".into(),
        ));
    }
    if bytes.len() < MAGIC.len() + 4 + 8 {
        return Err(corrupt("truncated: the header is incomplete".into()));
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if version != VERSION {
        return Err(corrupt(format!(
            "format version {version}; this build reads version {VERSION}"
        )));
    }
    let (body, tail) = bytes.split_at(bytes.len() - 8);
    let stored = u64::from_le_bytes(tail.try_into().expect("8 bytes"));
    if xxh3_64(body) != stored {
        return Err(corrupt(
            "checksum mismatch: the file is corrupt or truncated".into(),
        ));
    }
    let mut r = Reader::new(&body[12..], "header");
    let id_len = r.u8()?;
    let id = std::str::from_utf8(r.bytes(id_len as u64)?)
        .map_err(|_| corrupt("kind id is not UTF-8".into()))?
        .to_string();
    let hash_len = r.u8()?;
    let hash_id = r.bytes(hash_len as u64)?;
    if hash_id != crate::hash::HASH_ID.as_bytes() {
        return Err(corrupt(format!(
            "hash '{}' is not this build's {}",
            String::from_utf8_lossy(hash_id),
            crate::hash::HASH_ID
        )));
    }
    let seed = r.u64()?;
    let inserted = r.u64()?;
    let params_len = r.u32()?;
    let params = Reader::new(r.bytes(params_len as u64)?, "parameters");
    let payload_len = r.u64()?;
    let payload = Reader::new(r.bytes(payload_len)?, "payload");
    r.finish()?;
    let loaded = Loaded {
        seed,
        inserted,
        params,
        payload,
    };
    match id.as_str() {
        "bloom" => Ok(Box::new(super::bloom::Bloom::from_saved(loaded)?)),
        "blocked" => Ok(Box::new(super::blocked::Blocked::from_saved(loaded)?)),
        "bitmap" => Ok(Box::new(super::bitmap::Bitmap::from_saved(loaded)?)),
        "counting" => Ok(Box::new(super::counting::CountingBloom::from_saved(
            loaded,
        )?)),
        "scalable" => Ok(Box::new(super::scalable::ScalableBloom::from_saved(
            loaded,
        )?)),
        other => Err(corrupt(format!(
            "kind '{other}' cannot be loaded; savable kinds: bloom, counting, scalable"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::structures::{find, BuildConfig};
    use rand::{Rng, SeedableRng};

    fn filled(id: &str, n: u64) -> Box<dyn Membership> {
        let mut config = BuildConfig::new(n, 0.01, 99);
        config.scalable_initial_capacity = Some(n / 8);
        let mut s = find(id).unwrap().build(&config).unwrap();
        let g = crate::keys::UrlGenerator::new(crate::keys::Profile::default_profile(), 5);
        let mut buf = Vec::new();
        for i in 0..n {
            g.member(i, &mut buf);
            s.insert(&buf);
        }
        s
    }

    fn encoded(s: &dyn Membership, dir: &Path) -> Vec<u8> {
        let path = dir.join(format!("{}.filter", s.id()));
        save(s, &path).unwrap();
        std::fs::read(path).unwrap()
    }

    #[test]
    fn saved_filters_answer_exactly_as_before() {
        let dir = tempfile::tempdir().unwrap();
        let g = crate::keys::UrlGenerator::new(crate::keys::Profile::default_profile(), 5);
        for id in SAVABLE.iter().copied() {
            let s = filled(id, 20_000);
            let path = dir.path().join(format!("{id}.filter"));
            save(s.as_ref(), &path).unwrap();
            assert!(
                !path.with_extension("partial").exists(),
                "no temporary file is left"
            );
            let back = load(&path).unwrap();
            assert_eq!(back.id(), id);
            assert_eq!(back.seed(), s.seed());
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
        let path = dir.path().join("missing.filter");
        assert!(load(&path)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
            .contains("missing.filter"));
    }

    /// A mutation fuzzer over the loader: bit flips, byte overwrites, truncations, insertions and
    /// re-checksummed mutations (which reach the parameter checks past the checksum).
    #[test]
    fn the_loader_survives_mutated_files() {
        let dir = tempfile::tempdir().unwrap();
        let seeds: Vec<Vec<u8>> = SAVABLE
            .iter()
            .map(|id| encoded(filled(id, 300).as_ref(), dir.path()))
            .collect();
        let mut rng = rand::rngs::StdRng::seed_from_u64(0xF022);
        let cases = 30_000;
        let mut loaded = 0;
        for case in 0..cases {
            let mut bytes = seeds[case % seeds.len()].clone();
            for _ in 0..rng.gen_range(1..4) {
                match rng.gen_range(0..4) {
                    0 => {
                        let i = rng.gen_range(0..bytes.len());
                        bytes[i] ^= 1 << rng.gen_range(0..8);
                    }
                    1 => {
                        let i = rng.gen_range(0..bytes.len());
                        bytes[i] = rng.gen();
                    }
                    2 => bytes.truncate(rng.gen_range(0..bytes.len())),
                    _ => {
                        let i = rng.gen_range(0..=bytes.len());
                        bytes.insert(i, rng.gen());
                    }
                }
                if bytes.is_empty() {
                    break;
                }
            }
            if case % 2 == 1 && bytes.len() > 8 {
                let n = bytes.len();
                let sum = xxh3_64(&bytes[..n - 8]);
                bytes[n - 8..].copy_from_slice(&sum.to_le_bytes());
            }
            if let Ok(filter) = decode(&bytes) {
                // Only a mutation that was given a fresh checksum can pass the checksum check (or one that
                // happened to leave the file as it was, e.g. a byte overwritten with its own value).
                assert!(
                    case % 2 == 1 || bytes == seeds[case % seeds.len()],
                    "case {case}: a changed file loaded without a fresh checksum"
                );
                loaded += 1;
                // Whatever loads must answer without panicking.
                let _ = filter.contains(b"https://example.com/");
            }
        }
        // Only re-checksummed mutations can load: they are well-formed files with other bits.
        eprintln!("fuzzed the loader with {cases} mutated files: no panic, {loaded} re-checksummed ones loaded");
    }
}

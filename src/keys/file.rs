//! Real URL files as member sets: one URL per line, plain text or gzip (`.gz`), read a batch at a time.
//!
//! Invariants: a line is a key without its line ending (`\n` or `\r\n`); blank lines are skipped; a line that
//! is not UTF-8, holds a NUL byte, or is longer than [`MAX_LINE_BYTES`] is an error naming the file and line.

use crate::keys::KeyBatch;
use crate::{Error, Result};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// The longest accepted line (64 KiB).
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// Reads keys from a URL file.
pub struct UrlFile {
    path: PathBuf,
    reader: Box<dyn BufRead + Send>,
    line: usize,
    buf: Vec<u8>,
}

impl UrlFile {
    /// Opens `path` (gzip when it ends in `.gz`).
    pub fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        if file.metadata().map(|m| m.is_dir()).unwrap_or(false) {
            return Err(Error::invalid(
                "--input",
                format!("{} is a directory, expected a file of URLs", path.display()),
            ));
        }
        let reader: Box<dyn BufRead + Send> = if path.extension().is_some_and(|e| e == "gz") {
            Box::new(BufReader::with_capacity(
                1 << 16,
                flate2::read::MultiGzDecoder::new(file),
            ))
        } else {
            Box::new(BufReader::with_capacity(1 << 16, file))
        };
        Ok(UrlFile {
            path: path.to_path_buf(),
            reader,
            line: 0,
            buf: Vec::new(),
        })
    }

    /// Reads keys from any reader (e.g. stdin); `name` stands for the path in errors.
    pub fn from_reader(name: &str, reader: Box<dyn BufRead + Send>) -> Self {
        UrlFile {
            path: PathBuf::from(name),
            reader,
            line: 0,
            buf: Vec::new(),
        }
    }

    /// Appends up to `max` keys to `batch`; returns how many were added (0 at the end of the file).
    pub fn read_batch(&mut self, batch: &mut KeyBatch, max: usize) -> Result<usize> {
        let mut added = 0;
        while added < max {
            self.buf.clear();
            let read = (&mut self.reader)
                .take(MAX_LINE_BYTES as u64 + 2)
                .read_until(b'\n', &mut self.buf)
                .map_err(|e| self.error(format!("cannot read: {e}")))?;
            if read == 0 {
                break;
            }
            self.line += 1;
            if self.buf.len() > MAX_LINE_BYTES + 1 && self.buf.last() != Some(&b'\n') {
                return Err(self.error(format!("line is longer than {MAX_LINE_BYTES} bytes")));
            }
            let mut key: &[u8] = &self.buf;
            while let Some((last, rest)) = key.split_last() {
                if *last == b'\n' || *last == b'\r' {
                    key = rest;
                } else {
                    break;
                }
            }
            if key.is_empty() {
                continue;
            }
            if key.len() > MAX_LINE_BYTES {
                return Err(self.error(format!("line is longer than {MAX_LINE_BYTES} bytes")));
            }
            if key.contains(&0) {
                return Err(self.error(
                    "contains a NUL byte: this looks like a binary file, expected one URL per line"
                        .into(),
                ));
            }
            if std::str::from_utf8(key).is_err() {
                return Err(self.error("is not valid UTF-8; expected one URL per line".into()));
            }
            batch.push(key);
            added += 1;
        }
        Ok(added)
    }

    /// Counts the keys of the whole file (one pass), validating every line.
    pub fn count(path: &Path) -> Result<u64> {
        let mut file = UrlFile::open(path)?;
        let mut batch = KeyBatch::with_capacity(4096, 80);
        let mut total = 0;
        loop {
            batch.clear();
            let added = file.read_batch(&mut batch, 4096)?;
            if added == 0 {
                break;
            }
            total += added as u64;
        }
        if total == 0 {
            return Err(Error::invalid(
                "--input",
                format!("{} holds no URLs (empty file)", path.display()),
            ));
        }
        Ok(total)
    }

    fn error(&self, message: String) -> Error {
        Error::Format {
            path: self.path.clone(),
            line: self.line,
            message,
        }
    }
}

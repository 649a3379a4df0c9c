//! Real URL files as member sets: one URL per line, plain text or gzip (`.gz`), read a batch at a time.
//!
//! Invariants: a line is a key, as its bytes, without its line ending (`\n` or `\r\n`); blank lines
//! (empty, or ASCII whitespace only) are skipped; a line that is not UTF-8 is a key like any other (real crawl lists carry stray bytes) and is
//! counted; a line holding a NUL byte (a binary file) or longer than [`MAX_LINE_BYTES`] is an error naming
//! the file and line and quoting the line's start escaped, or, for a reader told to skip them
//! ([`super::bad_lines`]), left out and logged (its bytes past the limit are read and dropped, never
//! held), unless it is the first line or more than 1% of the lines are bad: a binary or compressed
//! stream, refused as ever. A file can be read through a [`KeyMask`]: only
//! the keys (numbered from 0 in file order, blank lines not counted) the mask keeps come out.

use crate::keys::bad_lines::SkippedLines;
use crate::keys::KeyBatch;
use crate::{Error, Result};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The longest accepted line (64 KiB).
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// Which keys of a file to keep, by their number in file order (one bit each).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyMask {
    words: Vec<u64>,
    kept: u64,
}

impl KeyMask {
    /// A mask of `keys` keys keeping none.
    pub fn none(keys: u64) -> Self {
        KeyMask {
            words: vec![0; keys.div_ceil(64) as usize],
            kept: 0,
        }
    }

    /// Keeps key `ordinal` (which must be below the mask's size).
    pub fn keep(&mut self, ordinal: u64) {
        let (word, bit) = ((ordinal / 64) as usize, 1u64 << (ordinal % 64));
        if self.words[word] & bit == 0 {
            self.words[word] |= bit;
            self.kept += 1;
        }
    }

    /// Whether key `ordinal` is kept (keys past the mask's size are not).
    pub fn keeps(&self, ordinal: u64) -> bool {
        self.words
            .get((ordinal / 64) as usize)
            .is_some_and(|w| w & (1 << (ordinal % 64)) != 0)
    }

    /// How many keys are kept.
    pub fn kept(&self) -> u64 {
        self.kept
    }
}

/// Reads keys from a URL file.
pub struct UrlFile {
    path: PathBuf,
    reader: Box<dyn BufRead + Send>,
    line: usize,
    buf: Vec<u8>,
    non_utf8_lines: u64,
    /// The error of a bad line met after some keys of a batch, returned by the next read.
    pending: Option<Error>,
    /// Only the keys this keeps come out (all when `None`).
    mask: Option<Arc<KeyMask>>,
    /// Keys met so far, kept or not.
    ordinal: u64,
    /// Where skipped bad lines are logged; `None`: a bad line is an error ([`super::bad_lines::BadLines::Fail`]).
    skipped: Option<Arc<SkippedLines>>,
}

/// What one pass over a URL file found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineCount {
    /// Keys (non-blank lines).
    pub keys: u64,
    /// Keys that are not valid UTF-8 (kept as their bytes).
    pub non_utf8: u64,
}

/// The first bytes of a line, escaped (`\xNN` for bytes outside printable ASCII), for a message.
pub fn quoted(line: &[u8]) -> String {
    const SHOWN: usize = 60;
    let mut text: String = line[..line.len().min(SHOWN)].escape_ascii().to_string();
    if line.len() > SHOWN {
        text.push('…');
    }
    format!("\"{text}\"")
}

/// What the rules make of one line, without its `\n`.
enum Line<'a> {
    /// A key: the line without its trailing `\r`s.
    Key(&'a [u8]),
    /// Empty, or ASCII whitespace only: no key.
    Blank,
    /// Longer than [`MAX_LINE_BYTES`] (judged first, so a long line of spaces is refused, not skipped).
    TooLong(&'a [u8]),
}

/// The rules both paths of [`UrlFile`] read lines by; a NUL byte is the caller's to find (the direct path
/// finds it with the line's end).
fn judge(line: &[u8]) -> Line<'_> {
    let mut end = line.len();
    while end > 0 && line[end - 1] == b'\r' {
        end -= 1;
    }
    let key = &line[..end];
    if key.len() > MAX_LINE_BYTES {
        Line::TooLong(key)
    } else if key.iter().all(u8::is_ascii_whitespace) {
        Line::Blank
    } else {
        Line::Key(key)
    }
}

/// Numbers the next key (`ordinal`, counted whether kept or not) and says whether `mask` keeps it.
fn number_key(mask: Option<&KeyMask>, ordinal: &mut u64) -> bool {
    *ordinal += 1;
    mask.is_none_or(|m| m.keeps(*ordinal - 1))
}

impl UrlFile {
    /// Opens `path` (gzip when it ends in `.gz`), given by `--input`.
    pub fn open(path: &Path) -> Result<Self> {
        Self::open_for(path, "--input")
    }

    /// Opens `path` (gzip when it ends in `.gz`); `flag` names where it was given, in errors.
    pub fn open_for(path: &Path, flag: &str) -> Result<Self> {
        let file = crate::input_file::open_regular(
            path,
            flag,
            "a file of URLs, read once to count its lines and again for every pass; save a stream to a file first",
        )?;
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
            non_utf8_lines: 0,
            pending: None,
            mask: None,
            ordinal: 0,
            skipped: None,
        })
    }

    /// The same file, giving only the keys `mask` keeps.
    pub fn masked(mut self, mask: Arc<KeyMask>) -> Self {
        self.mask = Some(mask);
        self
    }

    /// The same file, skipping bad lines into `log` instead of failing at the first ([`super::bad_lines::BadLines::Skip`]).
    pub fn skipping_bad_lines(mut self, log: Arc<SkippedLines>) -> Self {
        self.skipped = Some(log);
        self
    }

    /// The log bad lines are skipped into, if they are.
    pub fn skipped_lines(&self) -> Option<Arc<SkippedLines>> {
        self.skipped.clone()
    }

    /// Reads keys from any reader (e.g. stdin); `name` stands for the path in errors.
    pub fn from_reader(name: &str, reader: Box<dyn BufRead + Send>) -> Self {
        UrlFile {
            path: PathBuf::from(name),
            reader,
            line: 0,
            buf: Vec::new(),
            non_utf8_lines: 0,
            pending: None,
            mask: None,
            ordinal: 0,
            skipped: None,
        }
    }

    /// Keys read so far that were not valid UTF-8.
    pub fn non_utf8_lines(&self) -> u64 {
        self.non_utf8_lines
    }

    /// Appends up to `max` keys to `batch`; returns how many were added (0 at the end of the file). A bad
    /// line after some keys of the batch ends the batch there; its error comes with the next call, so a
    /// caller handles every key before the bad line.
    pub fn read_batch(&mut self, batch: &mut KeyBatch, max: usize) -> Result<usize> {
        if let Some(error) = self.pending.take() {
            return Err(error);
        }
        let mut added = 0;
        while added < max {
            match self.keys_in_buffer(batch, max - added) {
                Ok(Some(keys)) => {
                    added += keys;
                    continue;
                }
                Ok(None) => {}
                Err(error) if added > 0 => {
                    self.pending = Some(error);
                    break;
                }
                Err(error) => return Err(error),
            }
            match self.next_key() {
                Ok(None) => break,
                Ok(Some(range)) => {
                    batch.push(&self.buf[range]);
                    added += 1;
                }
                Err(error) if added > 0 => {
                    self.pending = Some(error);
                    break;
                }
                Err(error) => return Err(error),
            }
        }
        Ok(added)
    }

    /// The common case, without copying lines twice: the whole lines inside the reader's buffer, up to
    /// `max` keys, go straight from it into `batch` (blank and masked lines are skipped), found by one
    /// SIMD scan for line ends and NULs over the buffer. Stops before a line crossing the buffer's end, a
    /// line with a NUL or too long (whose error [`Self::next_key`] words), and at the input's end or a
    /// interrupted read, all left to that path. Returns the keys added, or `None` when it consumed
    /// nothing; a read error is returned (a gzip decoder reports a bad checksum once, then ends).
    fn keys_in_buffer(&mut self, batch: &mut KeyBatch, max: usize) -> Result<Option<usize>> {
        let mask = self.mask.as_deref();
        let available = match self.reader.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => return Ok(None),
            Err(e) => {
                let message = format!("cannot read: {e}");
                return Err(Error::Format {
                    path: self.path.clone(),
                    line: self.line + 1,
                    message,
                });
            }
        };
        let (mut start, mut added, mut lines) = (0, 0, 0);
        let (mut ordinal, mut non_utf8) = (self.ordinal, 0);
        // One test of the whole buffer (word at a time) spares each line of an ASCII file its own, which
        // a short line pays byte by byte.
        let all_ascii = available.is_ascii();
        for at in memchr::memchr2_iter(b'\n', 0, available) {
            if added == max || available[at] == 0 {
                break;
            }
            let key = match judge(&available[start..at]) {
                Line::TooLong(_) => break,
                Line::Blank => None,
                Line::Key(key) => Some(key),
            };
            start = at + 1;
            lines += 1;
            let Some(key) = key.filter(|_| number_key(mask, &mut ordinal)) else {
                continue;
            };
            non_utf8 += u64::from(!all_ascii && std::str::from_utf8(key).is_err());
            batch.push(key);
            added += 1;
        }
        if start == 0 {
            return Ok(None);
        }
        self.reader.consume(start);
        self.line += lines;
        self.ordinal = ordinal;
        self.non_utf8_lines += non_utf8;
        Ok(Some(added))
    }

    /// Reads up to the next non-blank line; returns where its key lies in `buf` (`None` at the end).
    fn next_key(&mut self) -> Result<Option<std::ops::Range<usize>>> {
        loop {
            self.buf.clear();
            // Rare since the direct path takes whole lines from the buffer: std's search is enough here.
            let read = (&mut self.reader)
                .take(MAX_LINE_BYTES as u64 + 2)
                .read_until(b'\n', &mut self.buf)
                .map_err(|e| self.error(format!("cannot read: {e}")))?;
            if read == 0 {
                return Ok(None);
            }
            self.line += 1;
            let complete = self.buf.ends_with(b"\n");
            // Cut at the limit without its end: too long, whatever `\r`s the cut left at its tail.
            let cut = !complete && read == MAX_LINE_BYTES + 2;
            let line = self.buf.strip_suffix(b"\n").unwrap_or(&self.buf);
            let judged = if cut {
                Line::TooLong(line)
            } else {
                judge(line)
            };
            let bad = match judged {
                Line::TooLong(key) => format!(
                    "line is longer than {MAX_LINE_BYTES} bytes (starts {})",
                    quoted(key)
                ),
                Line::Blank => continue,
                Line::Key(key) if memchr::memchr(0, key).is_some() => format!(
                    "contains a NUL byte: this looks like a binary file, expected one URL per line (starts {})",
                    quoted(key)
                ),
                Line::Key(key) => {
                    let key = 0..key.len();
                    if !number_key(self.mask.as_deref(), &mut self.ordinal) {
                        continue;
                    }
                    let key = &self.buf[key];
                    self.non_utf8_lines +=
                        u64::from(!key.is_ascii() && std::str::from_utf8(key).is_err());
                    return Ok(Some(0..key.len()));
                }
            };
            // The first line bad, or more than 1% of lines bad past the first 100: not a stream of
            // URLs with a stray line but a binary or compressed file, refused as without skipping.
            let first = self.ordinal == 0 && self.skipped.as_ref().is_some_and(|l| l.count() == 0);
            let too_many = self.skipped.as_ref().is_some_and(|l| {
                let bad = l.count() + 1;
                bad > 100 && bad * 100 > self.ordinal + bad
            });
            let Some(log) = self.skipped.clone().filter(|_| !first && !too_many) else {
                let why = match (first, too_many) {
                    (true, _) => "; the first line, so the whole input is taken for a binary or compressed file (zcat a .gz first)",
                    (_, true) => "; more than 1% of the lines so far are bad, so the input is taken for a binary file",
                    _ => "",
                };
                return Err(self.error(format!("{bad}{why}")));
            };
            if !complete {
                self.discard_rest_of_line()?;
            }
            log.record(format!("line {}: {bad}", self.line));
        }
    }

    /// Reads and drops the bytes up to and including the next line end (or to the input's end), a
    /// buffer at a time: the tail of a skipped over-long line, never held whole.
    fn discard_rest_of_line(&mut self) -> Result<()> {
        loop {
            let available = match self.reader.fill_buf() {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.error(format!("cannot read: {e}"))),
            };
            if available.is_empty() {
                return Ok(());
            }
            match memchr::memchr(b'\n', available) {
                Some(end) => {
                    self.reader.consume(end + 1);
                    return Ok(());
                }
                None => {
                    let all = available.len();
                    self.reader.consume(all);
                }
            }
        }
    }
    /// Counts the keys of the whole file and those not UTF-8 (one pass), validating every line.
    pub fn count(path: &Path) -> Result<LineCount> {
        Self::count_for(path, "--input")
    }

    /// [`UrlFile::count`] of a file given by `flag`.
    pub fn count_for(path: &Path, flag: &str) -> Result<LineCount> {
        let mut file = UrlFile::open_for(path, flag)?;
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
                flag,
                format!("{} holds no URLs (empty file)", path.display()),
            ));
        }
        Ok(LineCount {
            keys: total,
            non_utf8: file.non_utf8_lines,
        })
    }

    fn error(&self, message: String) -> Error {
        Error::Format {
            path: self.path.clone(),
            line: self.line,
            message,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &[u8]) -> UrlFile {
        UrlFile::from_reader("<test>", Box::new(std::io::Cursor::new(text.to_vec())))
    }

    #[test]
    fn keys_before_a_bad_line_come_first_then_its_error() {
        let mut f = file(b"https://a.example/\r\n\nhttps://b.example/caf\xe9\n\x00\x01\nlater\n");
        let mut batch = KeyBatch::default();
        assert_eq!(f.read_batch(&mut batch, 100).unwrap(), 2);
        assert_eq!(batch.key(1), b"https://b.example/caf\xe9");
        assert_eq!(f.non_utf8_lines(), 1);
        let error = f.read_batch(&mut batch, 100).unwrap_err().to_string();
        assert!(
            error.contains("<test>:4") && error.contains(r#""\x00\x01""#),
            "{error}"
        );
    }

    /// Lines of spaces, tabs or a lone `\r` are blank, as the README promises: no key.
    #[test]
    fn whitespace_only_lines_are_blank() {
        let mut f = file(b"   \n\t\n \t \r\nhttps://a.example/ x \n\n");
        let mut batch = KeyBatch::default();
        assert_eq!(f.read_batch(&mut batch, 100).unwrap(), 1);
        assert_eq!(batch.key(0), b"https://a.example/ x ");
        assert_eq!(f.read_batch(&mut batch, 100).unwrap(), 0);
    }

    #[test]
    fn a_mask_keeps_only_its_keys_counted_in_file_order_without_blank_lines() {
        let mut mask = KeyMask::none(4);
        mask.keep(1);
        mask.keep(3);
        mask.keep(3);
        assert_eq!(mask.kept(), 2);
        let mut f = file(b"a\n\nb\nc\nd\ne\n").masked(Arc::new(mask));
        let mut batch = KeyBatch::default();
        assert_eq!(f.read_batch(&mut batch, 100).unwrap(), 2);
        assert_eq!((batch.key(0), batch.key(1)), (&b"b"[..], &b"d"[..]));
    }

    /// Lines cut by the reader's buffer take the copying path, whole ones the direct path: whatever the
    /// buffer's size, the same keys, counts and errors (with their line numbers) come out.
    #[test]
    fn every_buffer_size_reads_the_same_keys_and_errors() {
        let text: &[u8] =
            b"https://a.example/\r\n\n  \nhttps://b.example/caf\xe9\nno-newline-before-nul\nx\x00y\nlast";
        let read_all = |mut f: UrlFile| {
            let mut batch = KeyBatch::default();
            let mut keys = Vec::new();
            loop {
                batch.clear();
                match f.read_batch(&mut batch, 2) {
                    Ok(0) => break,
                    Ok(n) => keys.extend((0..n).map(|i| batch.key(i).to_vec())),
                    Err(e) => {
                        keys.push(e.to_string().into_bytes());
                        break;
                    }
                }
            }
            (keys, f.non_utf8_lines())
        };
        let whole = read_all(file(text));
        assert_eq!(whole.0.len(), 4, "{whole:?}");
        assert!(String::from_utf8_lossy(&whole.0[3]).contains("<test>:6"));
        for capacity in 1..text.len() + 2 {
            let reader =
                std::io::BufReader::with_capacity(capacity, std::io::Cursor::new(text.to_vec()));
            let cut = read_all(UrlFile::from_reader("<test>", Box::new(reader)));
            assert_eq!(cut, whole, "buffer of {capacity} bytes");
        }
        let end = read_all(file(b"a\nb"));
        assert_eq!(end.0, vec![b"a".to_vec(), b"b".to_vec()]);
        // Through a mask, keys are numbered in file order without blank lines on both paths alike.
        let text: &[u8] = b"k0\n\nk1\r\nk2\n \nk3\nk4\nk5";
        let mut mask = KeyMask::none(6);
        for kept in [0, 2, 3, 5] {
            mask.keep(kept);
        }
        let mask = Arc::new(mask);
        for capacity in 1..text.len() + 2 {
            let reader =
                std::io::BufReader::with_capacity(capacity, std::io::Cursor::new(text.to_vec()));
            let f = UrlFile::from_reader("<test>", Box::new(reader)).masked(mask.clone());
            let keys: Vec<Vec<u8>> = ["k0", "k2", "k3", "k5"]
                .map(|k| k.as_bytes().to_vec())
                .into();
            assert_eq!(read_all(f), (keys, 0), "buffer of {capacity} bytes");
        }
    }

    /// A reader that fails once and then says it has ended (as a gzip decoder does after a bad checksum)
    /// gives its error, not a shorter file.
    #[test]
    fn a_read_error_reported_once_is_not_taken_for_the_end() {
        struct FailsOnce(bool);
        impl std::io::Read for FailsOnce {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                if std::mem::replace(&mut self.0, true) {
                    Ok(0)
                } else {
                    Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        "corrupt deflate stream",
                    ))
                }
            }
        }
        let reader = std::io::BufReader::new(std::io::Read::chain(
            std::io::Cursor::new(b"https://a.example/\n".to_vec()),
            FailsOnce(false),
        ));
        let mut f = UrlFile::from_reader("<test>", Box::new(reader));
        let mut batch = KeyBatch::default();
        assert_eq!(f.read_batch(&mut batch, 100).unwrap(), 1);
        let error = f.read_batch(&mut batch, 100).unwrap_err().to_string();
        assert!(error.contains("corrupt deflate stream"), "{error}");
        // Over-long lines are refused whatever they hold, spaces too, on either path.
        let long = [b' '; MAX_LINE_BYTES + 10];
        let mut text = b"a\n".to_vec();
        text.extend_from_slice(&long);
        text.extend_from_slice(b"\nb\n");
        let mut f = file(&text);
        let mut batch = KeyBatch::default();
        assert_eq!(f.read_batch(&mut batch, 100).unwrap(), 1);
        let error = f.read_batch(&mut batch, 100).unwrap_err().to_string();
        assert!(
            error.contains("<test>:2") && error.contains("longer"),
            "{error}"
        );
    }

    /// Skipping: an over-long line (with and without its line end, `\r\n` too) and a NUL line are left out
    /// and logged with their line numbers, every other key comes out in order on every buffer size, the
    /// mask numbers keys without them, and the reader never holds the long line (its buffer stays within
    /// the limit however long the line).
    #[test]
    fn skipped_bad_lines_are_counted_and_every_other_key_comes_out() {
        let long = vec![b'x'; 3 * MAX_LINE_BYTES];
        let mut text = b"k0\n".to_vec();
        text.extend_from_slice(&long);
        text.extend_from_slice(b"\r\nk1\nx\x00y\n\nk2\n");
        text.extend_from_slice(&long);
        let read_all = |f: UrlFile| {
            let mut f = f;
            let mut batch = KeyBatch::default();
            let mut keys = Vec::new();
            loop {
                batch.clear();
                match f.read_batch(&mut batch, 2).unwrap() {
                    0 => break,
                    n => keys.extend((0..n).map(|i| batch.key(i).to_vec())),
                }
            }
            assert!(
                f.buf.capacity() <= 2 * (MAX_LINE_BYTES + 2),
                "{}",
                f.buf.capacity()
            );
            keys
        };
        let expected: Vec<Vec<u8>> = ["k0", "k1", "k2"].map(|k| k.as_bytes().to_vec()).into();
        for capacity in [1, 7, 64, 4096, 1 << 16, 1 << 20] {
            let log = Arc::new(SkippedLines::new(|_| {}));
            let reader =
                std::io::BufReader::with_capacity(capacity, std::io::Cursor::new(text.clone()));
            let f =
                UrlFile::from_reader("<test>", Box::new(reader)).skipping_bad_lines(log.clone());
            assert_eq!(read_all(f), expected, "buffer of {capacity} bytes");
            assert_eq!(log.count(), 3, "buffer of {capacity} bytes");
            let first = log.first().unwrap();
            assert!(first.starts_with("line 2: line is longer"), "{first}");
        }
        let mut mask = KeyMask::none(3);
        mask.keep(1);
        let log = Arc::new(SkippedLines::new(|_| {}));
        let f = file(&text)
            .masked(Arc::new(mask))
            .skipping_bad_lines(log.clone());
        assert_eq!(read_all(f), vec![b"k1".to_vec()]);
        assert_eq!(log.count(), 3);
    }

    /// A line cut at the limit is too long even when the cut leaves `\r`s at its tail (its rest is not a
    /// key); a bad first line, or bad lines past 1% of the lines, refuse the input even when skipping.
    #[test]
    fn skipping_refuses_a_binary_input_and_a_cut_line_is_whole() {
        let skipping = |text: Vec<u8>| {
            let log = Arc::new(SkippedLines::new(|_| {}));
            let mut f = file(&text).skipping_bad_lines(log.clone());
            let mut batch = KeyBatch::default();
            let mut keys = Vec::new();
            let outcome = loop {
                batch.clear();
                match f.read_batch(&mut batch, 3) {
                    Ok(0) => break Ok(()),
                    Ok(n) => keys.extend((0..n).map(|i| batch.key(i).to_vec())),
                    Err(e) => break Err(e.to_string()),
                }
            };
            (keys, log.count(), outcome)
        };
        let mut cut = b"k0\n".to_vec();
        cut.extend_from_slice(&[b'x'; MAX_LINE_BYTES]);
        cut.extend_from_slice(b"\r\rX\nk1\n");
        assert_eq!(
            skipping(cut),
            (vec![b"k0".to_vec(), b"k1".to_vec()], 1, Ok(()))
        );
        let (keys, _, outcome) = skipping(b"\x1f\x8b\x08\x00\x00\nk0\n".to_vec());
        assert!(keys.is_empty());
        assert!(outcome.unwrap_err().contains("the first line"));
        let mut mostly_bad = Vec::new();
        for i in 0..1000 {
            mostly_bad.extend_from_slice(format!("k{i}\n").as_bytes());
            if i % 5 == 4 {
                mostly_bad.extend_from_slice(b"a\x00b\n");
            }
        }
        let (keys, bad, outcome) = skipping(mostly_bad);
        assert!(outcome.unwrap_err().contains("more than 1%"));
        assert_eq!(
            (keys.len(), bad),
            (505, 100),
            "refused at the 101st bad line"
        );
    }
}

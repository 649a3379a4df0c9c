//! A bounds-checked little-endian reader over a saved file's bytes: every length is checked against what
//! is left before anything is allocated.

use super::FormatError;

type Result<T> = std::result::Result<T, FormatError>;

fn corrupt(message: String) -> FormatError {
    FormatError::Corrupt(message)
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
    /// Whether every byte was read.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
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

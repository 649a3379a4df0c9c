//! The one way this crate writes a file a reader may open at any moment (results, reports, saved filters,
//! generated URL files): into a temporary sibling `NAME.partial`, flushed and fsynced, then renamed over
//! `NAME`. Invariant: `NAME` is either absent, its old content, or the complete new content; a failed or
//! abandoned write removes the temporary file.

use crate::{Error, Result};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// The temporary sibling a write to `path` goes through.
pub fn partial_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    path.with_file_name(name)
}

/// A file being written; [`AtomicFile::commit`] publishes it, dropping it uncommitted removes it.
pub struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    out: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Starts writing `path` (nothing is visible under `path` until [`AtomicFile::commit`]).
    pub fn create(path: &Path) -> Result<Self> {
        let tmp = partial_path(path);
        let file = File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
        Ok(AtomicFile {
            path: path.to_path_buf(),
            tmp,
            out: Some(BufWriter::with_capacity(1 << 20, file)),
        })
    }

    /// The temporary file's path, for error messages.
    pub fn tmp_path(&self) -> &Path {
        &self.tmp
    }

    /// Flushes, fsyncs and renames the file into place.
    pub fn commit(mut self) -> Result<()> {
        let mut out = self.out.take().expect("an uncommitted file has its writer");
        let synced = out.flush().and_then(|()| out.get_ref().sync_all());
        drop(out);
        if let Err(e) = synced {
            let _ = std::fs::remove_file(&self.tmp);
            return Err(Error::io(&self.tmp, e));
        }
        std::fs::rename(&self.tmp, &self.path).map_err(|e| {
            let _ = std::fs::remove_file(&self.tmp);
            Error::io(&self.path, e)
        })
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.out.as_mut().expect("uncommitted").write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.out.as_mut().expect("uncommitted").flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.out.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Writes `bytes` to `path` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut file = AtomicFile::create(path)?;
    file.write_all(bytes)
        .map_err(|e| Error::io(file.tmp_path(), e))?;
    file.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_committed_file_replaces_the_old_one_and_an_abandoned_one_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        write_atomic(&path, b"old").unwrap();
        {
            let mut file = AtomicFile::create(&path).unwrap();
            file.write_all(b"half").unwrap();
            assert_eq!(
                std::fs::read(&path).unwrap(),
                b"old",
                "not visible before commit"
            );
        }
        assert!(
            !partial_path(&path).exists(),
            "an abandoned write is removed"
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        write_atomic(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert!(!partial_path(&path).exists());
    }
}

//! The one way this crate writes a file a reader may open at any moment (results, reports, saved filters,
//! generated URL files): into a temporary sibling created exclusively under a fresh random name in the
//! target's folder (`.NAME.XXXXXX.partial`: never an existing file or a link, never shared by two writers),
//! flushed and fsynced, then renamed over `NAME` and the folder fsynced. Invariant: `NAME` is either
//! absent, its old content, or one writer's complete new content (two writers at once leave one of their
//! files whole); a failed or abandoned write removes its temporary file. The temporary file comes from
//! the `tempfile` crate (`O_CREAT | O_EXCL`, random suffix), the one piece not written here.

use crate::{Error, Result};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Who may read a file once it is in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Readers {
    /// The owner only (mode 0600): saved filters hold their hash seed, which must stay private.
    Owner,
    /// Everyone the umask allows (mode 0666 before it, as `File::create` gives): results and reports.
    Anyone,
}

/// The folder a write to `path` creates its temporary file in.
fn folder_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Whether a write to `path` could be made now: its folder exists and takes a new file. Creates and
/// removes one temporary file there; a caller checks this before it reads any input.
pub fn check_writable(path: &Path) -> Result<()> {
    let folder = folder_of(path);
    tempfile::Builder::new()
        .prefix(".dedupbench-check.")
        .tempfile_in(folder)
        .map(drop)
        .map_err(|e| Error::io(folder, e))
}

/// A file being written; [`AtomicFile::commit`] publishes it, dropping it uncommitted removes it.
pub struct AtomicFile {
    path: PathBuf,
    /// The temporary file's name: removed when dropped, unless persisted.
    tmp: Option<tempfile::TempPath>,
    /// Written as a plain file, so write errors carry no path of their own (the caller names it once).
    out: Option<BufWriter<std::fs::File>>,
}

impl AtomicFile {
    /// Starts writing `path` for [`Readers::Anyone`] (nothing is visible under `path` until
    /// [`AtomicFile::commit`]).
    pub fn create(path: &Path) -> Result<Self> {
        AtomicFile::create_for(path, Readers::Anyone)
    }

    /// Starts writing `path`, readable by `readers` once in place.
    pub fn create_for(path: &Path, readers: Readers) -> Result<Self> {
        use std::os::unix::fs::PermissionsExt;
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let mode = match readers {
            Readers::Owner => 0o600,
            Readers::Anyone => 0o666,
        };
        let folder = folder_of(path);
        let file = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".partial")
            .permissions(std::fs::Permissions::from_mode(mode))
            .tempfile_in(folder)
            .map_err(|e| Error::io(folder, e))?;
        let (file, tmp) = file.into_parts();
        Ok(AtomicFile {
            path: path.to_path_buf(),
            tmp: Some(tmp),
            out: Some(BufWriter::with_capacity(1 << 20, file)),
        })
    }

    /// The temporary file's path, for error messages.
    pub fn tmp_path(&self) -> &Path {
        self.tmp.as_deref().unwrap_or(&self.path)
    }

    /// Flushes, fsyncs and renames the file into place, then fsyncs the folder so the rename lasts.
    pub fn commit(mut self) -> Result<()> {
        let out = self.out.take().expect("an uncommitted file has its writer");
        let tmp = self.tmp.take().expect("an uncommitted file has its name");
        let file = out
            .into_inner()
            .map_err(|e| Error::io(&tmp, e.into_error()))?;
        file.sync_all().map_err(|e| Error::io(&tmp, e))?;
        drop(file);
        // On an error the temporary path comes back in the error and is removed when it drops.
        tmp.persist(&self.path)
            .map_err(|e| Error::io(&self.path, e.error))?;
        if let Ok(folder) = std::fs::File::open(folder_of(&self.path)) {
            let _ = folder.sync_all();
        }
        Ok(())
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

/// Writes `bytes` to `path` atomically, for [`Readers::Anyone`].
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut file = AtomicFile::create(path)?;
    file.write_all(bytes)
        .map_err(|e| Error::io(file.tmp_path(), e))?;
    file.commit()
}

/// Temporary files of writes to `path` that were never committed nor removed (a process killed mid-write).
#[cfg(test)]
pub fn leftovers(path: &Path) -> Vec<PathBuf> {
    let name = format!(
        ".{}.",
        path.file_name().unwrap_or_default().to_string_lossy()
    );
    std::fs::read_dir(folder_of(path))
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| {
                    let file = p.file_name().unwrap_or_default().to_string_lossy();
                    file.starts_with(&name) && file.ends_with(".partial")
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

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
        assert!(leftovers(&path).is_empty(), "an abandoned write is removed");
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        write_atomic(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert!(leftovers(&path).is_empty());
    }

    /// A link planted where the old scheme put its temporary file (`NAME.partial`) is neither followed
    /// nor replaced: the write goes to a fresh file of its own, and the link's target is untouched.
    #[test]
    fn a_planted_link_is_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim.txt");
        std::fs::write(&victim, b"precious").unwrap();
        let path = dir.path().join("seen.filter");
        std::os::unix::fs::symlink(&victim, dir.path().join("seen.filter.partial")).unwrap();
        write_atomic(&path, b"filter").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert_eq!(std::fs::read(&path).unwrap(), b"filter");
        assert!(!std::fs::symlink_metadata(&path)
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[test]
    fn private_files_are_the_owners_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("seen.filter");
        let mut file = AtomicFile::create_for(&path, Readers::Owner).unwrap();
        file.write_all(b"seed inside").unwrap();
        file.commit().unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert!(check_writable(&path).is_ok());
        assert!(check_writable(&dir.path().join("missing/seen.filter")).is_err());
    }

    /// Writers racing on one path each leave a whole file; the last rename wins, never a mix.
    #[test]
    fn concurrent_writers_leave_one_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.filter");
        for round in 0..50 {
            std::thread::scope(|scope| {
                for writer in 0..4u8 {
                    let path = &path;
                    scope.spawn(move || {
                        let body = vec![writer; 256 * 1024 + round];
                        write_atomic(path, &body).unwrap();
                    });
                }
            });
            let got = std::fs::read(&path).unwrap();
            assert_eq!(got.len(), 256 * 1024 + round);
            assert!(got.iter().all(|b| *b == got[0]), "a mix of writers");
            assert!(leftovers(&path).is_empty());
        }
    }
}

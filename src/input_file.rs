//! Opening the files the tool reads whole or more than once (saved filters, results, profiles, URL files
//! for `bench`): regular files only, decided on the opened file (a device such as `/dev/zero`, a FIFO or a
//! folder is refused by its type, with what is allowed), and files read whole are bounded before
//! anything is allocated for them.

use crate::{Error, Result};
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// `path` opened, if it is a regular file; `what` names it in errors (a flag, or "results file").
pub fn open_regular(path: &Path, what: &str, why: &str) -> Result<File> {
    // Opened without blocking (opening a FIFO for reading otherwise waits for a writer), then judged on
    // the opened file; reading a regular file ignores the flag.
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    let kind = file.metadata().map_err(|e| Error::io(path, e))?.file_type();
    if kind.is_file() {
        return Ok(file);
    }
    let is = if kind.is_dir() {
        "a directory"
    } else if std::os::unix::fs::FileTypeExt::is_fifo(&kind) {
        "a FIFO"
    } else if std::os::unix::fs::FileTypeExt::is_char_device(&kind)
        || std::os::unix::fs::FileTypeExt::is_block_device(&kind)
    {
        "a device"
    } else {
        "not a regular file"
    };
    Err(Error::invalid(
        what,
        format!(
            "{} is {is}; expected a regular file ({why})",
            path.display()
        ),
    ))
}

/// The bytes of the regular file `path`, refused past `max_bytes` before they are read.
pub fn read_bounded(path: &Path, what: &str, max_bytes: u64) -> Result<Vec<u8>> {
    let file = open_regular(path, what, "it is read whole")?;
    let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    if len > max_bytes {
        return Err(Error::invalid(
            what,
            format!(
                "{} holds {}, more than the {} this may read",
                path.display(),
                crate::units::human_bytes(len as f64),
                crate::units::human_bytes(max_bytes as f64)
            ),
        ));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    // Bounded again while reading: a file that grows meanwhile stops at the limit, plus one byte to see it.
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > max_bytes {
        return Err(Error::invalid(
            what,
            format!("{} grew past the limit while read", path.display()),
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_fifos_and_folders_are_refused_by_type() {
        let dir = tempfile::tempdir().unwrap();
        let e = open_regular(Path::new("/dev/zero"), "--load", "x").unwrap_err();
        assert!(e.to_string().contains("is a device"), "{e}");
        let e = open_regular(dir.path(), "--load", "x").unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
        let fifo = dir.path().join("f");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo(3) on a NUL-terminated path inside a fresh temporary folder.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // Refused without waiting for a writer.
        let e = open_regular(&fifo, "--input", "x").unwrap_err();
        assert!(e.to_string().contains("is a FIFO"), "{e}");
        let file = dir.path().join("ok");
        std::fs::write(&file, b"12345").unwrap();
        assert_eq!(read_bounded(&file, "--load", 5).unwrap(), b"12345");
        let e = read_bounded(&file, "--load", 4).unwrap_err();
        assert!(e.to_string().contains("more than"), "{e}");
    }
}

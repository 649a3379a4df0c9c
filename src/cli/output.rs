//! Standard output for every command, through writes that cannot panic (`std`'s `println!` panics when
//! its write fails, e.g. on the closed pipe of `dedupbench size | head -1`). The first failed write is
//! kept and ends the output; [`finish`] hands it to `cli::main`, which treats a closed pipe as success and
//! any other failure (a full disk) as an error.

use std::io::Write;
use std::sync::{Mutex, PoisonError};

/// The first write to stdout that failed; once set, nothing more is written.
static FAILED: Mutex<Option<std::io::Error>> = Mutex::new(None);

/// Writes `args` to stdout, unless an earlier write failed; a failure is kept for [`finish`].
pub fn print(args: std::fmt::Arguments) {
    let mut failed = FAILED.lock().unwrap_or_else(PoisonError::into_inner);
    if failed.is_some() {
        return;
    }
    if let Err(e) = std::io::stdout().lock().write_fmt(args) {
        *failed = Some(e);
    }
}

/// Flushes stdout; the first write that failed, if any.
pub fn finish() -> std::io::Result<()> {
    let mut failed = FAILED.lock().unwrap_or_else(PoisonError::into_inner);
    if failed.is_none() {
        if let Err(e) = std::io::stdout().lock().flush() {
            *failed = Some(e);
        }
    }
    match failed.take() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

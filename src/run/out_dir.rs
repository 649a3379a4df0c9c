//! The folder a run writes into: created before any work, refused when it already holds results, and
//! `reports/latest` pointed at it when the default location is used.

use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Where reports go when no folder is given.
pub const REPORTS_DIR: &str = "reports";

/// Creates the output folder (`out`, or `reports/<UTC timestamp>`), checks it is writable and holds no
/// results yet, and points `reports/latest` at it when `out` is `None`.
pub fn prepare(out: Option<&Path>) -> Result<PathBuf> {
    let dir = match out {
        Some(dir) => dir.to_path_buf(),
        None => Path::new(REPORTS_DIR).join(utc_timestamp(SystemTime::now())),
    };
    if dir.exists() && !dir.is_dir() {
        return Err(Error::invalid(
            "--out",
            format!("{} exists and is not a directory", dir.display()),
        ));
    }
    if dir.join("results.jsonl").exists() {
        return Err(Error::invalid(
            "--out",
            format!(
                "{} already holds results.jsonl; choose another folder",
                dir.display()
            ),
        ));
    }
    let refused = |what: &str, e: std::io::Error| {
        Error::invalid("--out", format!("{what} {}: {e}", dir.display()))
    };
    std::fs::create_dir_all(&dir).map_err(|e| refused("cannot create", e))?;
    let probe = dir.join(".write-test");
    std::fs::write(&probe, b"").map_err(|e| refused("cannot write into", e))?;
    let _ = std::fs::remove_file(probe);
    if out.is_none() {
        point_latest_at(&dir);
    }
    Ok(dir)
}

/// Replaces `reports/latest` by a link to `dir`, atomically; a failure leaves the old link.
fn point_latest_at(dir: &Path) {
    let latest = Path::new(REPORTS_DIR).join("latest");
    let tmp = Path::new(REPORTS_DIR).join(".latest.tmp");
    let _ = std::fs::remove_file(&tmp);
    #[cfg(unix)]
    if std::os::unix::fs::symlink(dir.file_name().unwrap_or_default(), &tmp).is_ok() {
        let _ = std::fs::rename(&tmp, &latest);
    }
}

/// `YYYYMMDD-HHMMSS` in UTC (from RFC 3339, without separators, so folders sort by time).
pub fn utc_timestamp(at: SystemTime) -> String {
    let rfc3339 = humantime::format_rfc3339_seconds(at).to_string();
    let digits: String = rfc3339.chars().filter(char::is_ascii_digit).collect();
    format!("{}-{}", &digits[..8], &digits[8..14])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn timestamps_are_utc_and_sortable() {
        assert_eq!(utc_timestamp(UNIX_EPOCH), "19700101-000000");
        // 2026-12-04 03:29:19 UTC.
        let at = UNIX_EPOCH + Duration::from_secs(1_796_354_959);
        assert_eq!(utc_timestamp(at), "20261204-032919");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(utc_timestamp(leap), "20000229-000000");
    }
}

//! `summary.png`: the report's first screen (1280 × 900 px) as headless Chromium renders it, for pasting
//! into a design review. Chromium is an optional tool here: without it the report is complete and the
//! caller says how to get the picture. Chromium has no library interface worth a dependency for one
//! screenshot, so it is started as a process with a time limit, writing beside the target and renamed
//! into place (nothing half-written). No `--virtual-time-budget`: with it, headless Chromium painted the
//! first screen only down to the first image, leaving the regime map out.

use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The picture's file name in the run folder.
pub const FILE: &str = "summary.png";
/// Width and height of the first screen.
pub const SCREEN_PX: (u32, u32) = (1280, 900);
/// Environment variable naming the Chromium binary, overriding the search of PATH.
pub const CHROMIUM_VAR: &str = "DEDUPBENCH_CHROMIUM";
/// How long Chromium may take.
const TIME_LIMIT: Duration = Duration::from_secs(90);

/// The Chromium binary: `$DEDUPBENCH_CHROMIUM`, else the first of chromium, chromium-browser,
/// google-chrome on PATH.
pub fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(CHROMIUM_VAR) {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).find_map(|dir| {
        ["chromium", "chromium-browser", "google-chrome"]
            .iter()
            .map(|name| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// Writes `dir/summary.png` from `dir/index.html` with `browser`.
pub fn write_summary(dir: &Path, browser: &Path) -> Result<PathBuf> {
    let dir = dir
        .canonicalize()
        .map_err(|e| Error::io(dir.to_path_buf(), e))?;
    let target = dir.join(FILE);
    let partial = dir.join(format!(".{FILE}.partial.png"));
    let profile = dir.join(".summary-chromium-profile");
    let failed = |message: String| Error::Chart {
        chart: FILE.into(),
        message,
    };
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
        ])
        .arg(format!("--window-size={},{}", SCREEN_PX.0, SCREEN_PX.1))
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", partial.display()))
        .arg(file_url(&dir.join("index.html")))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| failed(format!("cannot start {}: {e}", browser.display())))?;
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > TIME_LIMIT => {
                let _ = child.kill();
                let _ = child.wait();
                let _ = std::fs::remove_dir_all(&profile);
                let _ = std::fs::remove_file(&partial);
                return Err(failed(format!(
                    "{} took more than {} s",
                    browser.display(),
                    TIME_LIMIT.as_secs()
                )));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(failed(format!("waiting for {}: {e}", browser.display()))),
        }
    };
    let _ = std::fs::remove_dir_all(&profile);
    let stderr = child
        .stderr
        .take()
        .map(|mut s| {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut s, &mut text);
            text
        })
        .unwrap_or_default();
    if !status.success() || !partial.is_file() {
        let _ = std::fs::remove_file(&partial);
        let tail: String = stderr.lines().rev().take(3).collect::<Vec<_>>().join(" | ");
        return Err(failed(format!(
            "{} exited with {status} and wrote no picture: {tail}",
            browser.display()
        )));
    }
    std::fs::rename(&partial, &target).map_err(|e| Error::io(target.clone(), e))?;
    Ok(target)
}

/// A `file://` URL for an absolute path, with the characters a URL gives meaning to percent-encoded.
fn file_url(path: &Path) -> String {
    let mut url = String::from("file://");
    for byte in path.to_string_lossy().bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                url.push(byte as char)
            }
            other => url.push_str(&format!("%{other:02X}")),
        }
    }
    url
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_path_with_url_characters_becomes_a_file_url() {
        let url = super::file_url(std::path::Path::new("/tmp/run #1?/index.html"));
        assert_eq!(url, "file:///tmp/run%20%231%3F/index.html");
    }
}

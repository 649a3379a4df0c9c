//! `summary.png`: the report's first screen (1280 × 900 px) as headless Chromium renders it, for pasting
//! into a design review. Chromium is an optional tool here: without it the report is complete and the
//! caller says how to get the picture. Chromium has no library interface worth a dependency for one
//! screenshot, so it is started as a process with a time limit, writing a capture beside the target; the
//! picture is cut from it and written through [`crate::atomic_file`] (nothing half-written).
//!
//! The window is [`WINDOW_HEIGHT_SCREENS`] screens tall and the picture is its top screen: on a busy
//! machine headless Chromium sometimes captures before the window's last rows of tiles are rastered, and
//! those rows come out white. Flags meant to make it wait for raster did not (docs/notes.md,
//! 2026-12-06, give the counts).

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
/// The window's height, in screens: the captured rows past the first screen are a margin for raster
/// that lags behind the capture, cropped away.
const WINDOW_HEIGHT_SCREENS: u32 = 2;
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
        .arg(format!(
            "--window-size={},{}",
            SCREEN_PX.0,
            WINDOW_HEIGHT_SCREENS * SCREEN_PX.1
        ))
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
    let picture = top_screen(&partial).map_err(|e| failed(format!("{}: {e}", partial.display())));
    let _ = std::fs::remove_file(&partial);
    crate::atomic_file::write_atomic(&target, &picture?)?;
    Ok(target)
}

/// The PNG at `path` cut to its top [`SCREEN_PX`], encoded again as a PNG.
fn top_screen(path: &Path) -> std::result::Result<Vec<u8>, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
    // Palette and sub-byte pictures are expanded: rows are whole bytes and the encoder needs no palette.
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().map_err(|e| e.to_string())?;
    let size = reader
        .output_buffer_size()
        .ok_or("the capture is too large to decode in memory")?;
    let mut pixels = vec![0; size];
    let frame = reader.next_frame(&mut pixels).map_err(|e| e.to_string())?;
    // A Chromium that shortens the window (to its screen's height) still gives the first screen.
    if frame.width != SCREEN_PX.0 || frame.height < SCREEN_PX.1 {
        let (width, screen) = SCREEN_PX;
        return Err(format!(
            "the capture is {} × {} px: a first screen of {width} × {screen} px needs a width of {width} \
             px and a height of at least {screen} px",
            frame.width, frame.height
        ));
    }
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, SCREEN_PX.0, SCREEN_PX.1);
    encoder.set_color(frame.color_type);
    encoder.set_depth(frame.bit_depth);
    // A text page: per-row filter choice and the strongest deflate keep it near Chromium's own size.
    encoder.set_filter(png::Filter::Adaptive);
    encoder.set_compression(png::Compression::High);
    let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
    writer
        .write_image_data(&pixels[..SCREEN_PX.1 as usize * frame.line_size])
        .map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    Ok(out)
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
    use super::*;

    /// A `width` × `height` RGB picture, white above row `split` and black from it, written to `path`.
    fn write_picture(path: &Path, width: u32, height: u32, split: u32) {
        let mut pixels = vec![255u8; (width * height * 3) as usize];
        pixels[(split * width * 3) as usize..].fill(0);
        let mut encoder = png::Encoder::new(std::fs::File::create(path).unwrap(), width, height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder
            .write_header()
            .unwrap()
            .write_image_data(&pixels)
            .unwrap();
    }

    #[test]
    fn the_picture_is_the_captures_top_screen() {
        let dir = tempfile::tempdir().unwrap();
        let capture = dir.path().join("capture.png");
        let (width, screen) = SCREEN_PX;
        // Black from the first screen's last row on: the cut must keep that row and nothing after it.
        write_picture(&capture, width, WINDOW_HEIGHT_SCREENS * screen, screen - 1);
        let bytes = top_screen(&capture).unwrap();
        let mut reader = png::Decoder::new(std::io::Cursor::new(bytes.as_slice()))
            .read_info()
            .unwrap();
        let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
        let frame = reader.next_frame(&mut pixels).unwrap();
        assert_eq!((frame.width, frame.height), SCREEN_PX);
        let row = frame.line_size;
        let black_rows: Vec<usize> = (0..screen as usize)
            .filter(|y| pixels[y * row..(y + 1) * row].iter().all(|v| *v == 0))
            .collect();
        assert_eq!(black_rows, [screen as usize - 1]);
    }

    #[test]
    fn a_capture_too_narrow_wide_or_short_is_refused_and_a_shorter_window_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        let capture = dir.path().join("capture.png");
        for (width, height) in [
            (2 * SCREEN_PX.0, 2 * SCREEN_PX.1),
            (SCREEN_PX.0, SCREEN_PX.1 - 1),
        ] {
            write_picture(&capture, width, height, 0);
            let message = top_screen(&capture).unwrap_err();
            assert!(
                message.contains(&format!("the capture is {width} × {height} px"))
                    && message.contains("a height of at least 900 px"),
                "{message}"
            );
        }
        write_picture(&capture, SCREEN_PX.0, SCREEN_PX.1, SCREEN_PX.1);
        assert!(top_screen(&capture).is_ok());
    }

    #[test]
    fn a_path_with_url_characters_becomes_a_file_url() {
        let url = file_url(std::path::Path::new("/tmp/run #1?/index.html"));
        assert_eq!(url, "file:///tmp/run%20%231%3F/index.html");
    }
}

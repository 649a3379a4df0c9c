//! The report in a real browser: Debian's headless Chromium loads the page, 1280 px wide, in an iframe of
//! a wrapper page whose script reads the page's DOM once it has loaded (images decoded or failed) and
//! prints what it found into the DOM that `--dump-dom` writes out. Every image must load and nothing may
//! stick out past 1280 px. Two broken pages (an image removed, a too-wide block added) show the check
//! can fail. The first screen (1280 × 900 px) must show the answer's regime ladder and not the run's own
//! missed targets (they come after the answer), and `report` must have written `summary.png`, a picture
//! of that screen. Every `<details>` fold is opened before the width
//! check, so a wide folded table counts. Needs `chromium` (`apt-get install -y chromium`); without it the test prints
//! `*** SKIPPED … ***` and passes, unless DEDUPBENCH_REQUIRE_BROWSER=1 (CI sets it).

use std::path::{Path, PathBuf};
use std::process::Command;

const REQUIRE_VAR: &str = "DEDUPBENCH_REQUIRE_BROWSER";
const CHROMIUM: &str = "/usr/bin/chromium";
const WIDTH_PX: u32 = 1280;

/// What the wrapper's script read off the page.
#[derive(Debug, serde::Deserialize)]
struct Seen {
    images: usize,
    broken: Vec<String>,
    scroll_width: u32,
    /// The page's visible width (the iframe's, less a vertical scrollbar).
    client_width: u32,
    /// Elements whose right edge lies past the page's width.
    wide: Vec<String>,
    /// Rungs of the answer's regime ladder (`#ladder li`), and the ladder's bottom edge in px (-1: none).
    ladder_rungs: usize,
    ladder_bottom: f64,
    /// The top edge in px of the run's own missed targets (`#missed`; -1: none on the page).
    missed_top: f64,
}

/// Height of the first screen, px.
const SCREEN_HEIGHT_PX: f64 = 900.0;

fn wrapper(page: &Path) -> String {
    format!(
        r#"<!doctype html><html><body>
<iframe id="page" src="file://{page}" style="width:{WIDTH_PX}px;height:900px;border:0"></iframe>
<pre id="seen">not loaded</pre>
<script>
const frame = document.getElementById('page');
frame.addEventListener('load', () => {{
  const d = frame.contentDocument;
  const images = [...d.images];
  const ladder = d.getElementById('ladder');
  const ladderBottom = ladder ? ladder.getBoundingClientRect().bottom : -1;
  const missed = d.getElementById('missed');
  const missedTop = missed ? missed.getBoundingClientRect().top : -1;
  // Folded tables count for the width check: open every fold before measuring.
  d.querySelectorAll('details').forEach(f => {{ f.open = true; }});
  document.getElementById('seen').textContent = JSON.stringify({{
    images: images.length,
    broken: images.filter(i => !i.complete || i.naturalWidth === 0).map(i => i.getAttribute('src')),
    scroll_width: d.documentElement.scrollWidth,
    client_width: d.documentElement.clientWidth,
    wide: [...d.querySelectorAll('body *')]
      .filter(e => e.getBoundingClientRect().right > d.documentElement.clientWidth + 1)
      .slice(0, 5)
      .map(e => e.tagName + ' ' + (e.id || e.className || '') + ' ' + Math.round(e.getBoundingClientRect().right)),
    ladder_rungs: ladder ? ladder.querySelectorAll('li').length : 0,
    ladder_bottom: ladderBottom,
    missed_top: missedTop,
  }});
}});
</script></body></html>"#,
        page = page.display()
    )
}

/// Opens `page` in headless Chromium and returns what the wrapper saw.
fn look(page: &Path, dir: &Path) -> Seen {
    let wrapper_path = dir.join(format!(
        "wrapper-{}.html",
        page.parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
    ));
    std::fs::write(&wrapper_path, wrapper(page)).unwrap();
    let out = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--allow-file-access-from-files",
            "--virtual-time-budget=10000",
            "--window-size=1400,1000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg(format!("file://{}", wrapper_path.display()))
        .output()
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&out.stdout);
    let seen = dom
        .split("<pre id=\"seen\">")
        .nth(1)
        .and_then(|rest| rest.split("</pre>").next())
        .unwrap_or_else(|| panic!("no result in the dumped DOM: {dom:.400}"));
    serde_json::from_str(&seen.replace("&quot;", "\"")).unwrap_or_else(|e| {
        panic!(
            "the wrapper read nothing usable ({e}): {seen:.200}; chromium exited with {}: {:.600}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn chromium_missing() -> bool {
    if Path::new(CHROMIUM).is_file() {
        return false;
    }
    let required = std::env::var(REQUIRE_VAR).is_ok_and(|v| v == "1");
    assert!(!required, "{REQUIRE_VAR}=1 but {CHROMIUM} is missing");
    eprintln!(
        "\n*** SKIPPED: no {CHROMIUM} (apt-get install -y chromium); set {REQUIRE_VAR}=1 to make this a failure ***\n"
    );
    true
}

/// The committed reference run, reported into a fresh folder.
fn reported(dir: &Path, name: &str) -> PathBuf {
    let run = dir.join(name);
    std::fs::create_dir_all(&run).unwrap();
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/reports/reference/results.jsonl"
        ),
        run.join("results.jsonl"),
    )
    .unwrap();
    written(&["report"], &run)
}

/// Every `<img>` the page names loaded, and nothing sticks out past the page's width.
fn check_fits(page: &Path, dir: &Path) {
    let seen = look(page, dir);
    let named = std::fs::read_to_string(page)
        .unwrap()
        .matches("<img ")
        .count();
    assert!(
        named >= 9 && seen.images == named,
        "{named} images named: {seen:?}"
    );
    assert!(seen.broken.is_empty(), "images that did not load: {seen:?}");
    assert!(
        seen.ladder_rungs >= 2
            && seen.ladder_bottom > 0.0
            && seen.ladder_bottom <= SCREEN_HEIGHT_PX,
        "the first screen lacks the regime ladder: {seen:?}"
    );
    // The first screen holds the answer only: the run's own targets come later.
    assert!(
        seen.missed_top > SCREEN_HEIGHT_PX,
        "the run's missed targets are on the first screen: {seen:?}"
    );
    check_summary_picture(page);
    assert!(
        seen.client_width <= WIDTH_PX
            && seen.scroll_width <= seen.client_width
            && seen.wide.is_empty(),
        "the page overflows: {seen:?}"
    );
}

/// `summary.png` beside the page: a PNG of the first screen, 1280 × 900 px, painted to its bottom (a
/// Chromium flag once left everything below the first image white: the regime map was missing).
fn check_summary_picture(page: &Path) {
    let picture = page.with_file_name("summary.png");
    let file = std::fs::File::open(&picture)
        .unwrap_or_else(|e| panic!("{} was not written: {e}", picture.display()));
    let mut reader = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .expect("a PNG");
    let mut pixels = vec![0; reader.output_buffer_size().expect("a PNG that fits memory")];
    let frame = reader.next_frame(&mut pixels).expect("a PNG frame");
    assert_eq!(
        (frame.width, frame.height),
        (WIDTH_PX, SCREEN_HEIGHT_PX as u32)
    );
    let channels = frame.color_type.samples();
    let row_bytes = frame.line_size;
    // The bottom 100 rows: the top of the regime map, so far from blank.
    let bottom =
        &pixels[(frame.height as usize - 100) * row_bytes..frame.height as usize * row_bytes];
    let coloured = bottom
        .chunks(channels)
        .filter(|p| p.iter().take(3).any(|v| *v < 200))
        .count();
    assert!(
        coloured > 5_000,
        "the picture's last 100 rows are nearly blank ({coloured} coloured pixels): the first screen was not painted"
    );
}

/// A run with the sections the reference lacks: the external rows, measured, and capped (the pure-Python
/// filters at 2·10⁶) or unavailable, reported into a fresh folder.
fn external_run(dir: &Path) -> PathBuf {
    written(
        &[
            "bench",
            "--scales",
            "1e4,2e6",
            "--structures",
            "external,bloom,blocked,hashset",
            "--reps",
            "1",
            "--no-experiments",
            "--quiet",
            "--out",
        ],
        &dir.join("external"),
    )
}

/// Runs `dedupbench ARGS RUN` to success; the page it wrote.
fn written(args: &[&str], run: &Path) -> PathBuf {
    let out = Command::new(env!("CARGO_BIN_EXE_dedupbench"))
        .args(args)
        .arg(run)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "dedupbench {args:?} exited with {}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    run.join("index.html")
}

#[test]
fn the_reference_report_loads_every_image_and_fits_1280_px() {
    if chromium_missing() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let page = reported(dir.path(), "reference");
    check_fits(&page, dir.path());
    // The external section's wide table, and its rows capped (pure Python at 2·10⁶) or not run.
    check_fits(&external_run(dir.path()), dir.path());

    // The check can fail: an image gone, and a block wider than the page.
    let broken = reported(dir.path(), "broken");
    std::fs::remove_file(broken.parent().unwrap().join("bytes_vs_n.png")).unwrap();
    let html = std::fs::read_to_string(&broken).unwrap();
    std::fs::write(
        &broken,
        html.replacen(
            "<body>",
            "<body><div id=\"too-wide\" style=\"width:2000px;height:1000px\">x</div>",
            1,
        ),
    )
    .unwrap();
    let seen = look(&broken, dir.path());
    assert_eq!(seen.broken, vec!["bytes_vs_n.png".to_string()], "{seen:?}");
    assert!(seen.scroll_width > WIDTH_PX, "{seen:?}");
    assert!(seen.wide.iter().any(|w| w.contains("too-wide")), "{seen:?}");
    assert!(
        seen.ladder_bottom > SCREEN_HEIGHT_PX,
        "the ladder pushed below the first screen: {seen:?}"
    );
    // And a page without the ladder, whose missed targets moved up to the top.
    let bare = reported(dir.path(), "bare");
    let html = std::fs::read_to_string(&bare).unwrap();
    let html = html
        .replace("id=\"ladder\"", "id=\"gone\"")
        .replace("id=\"missed\"", "id=\"was-missed\"")
        .replacen("<body>", "<body><p id=\"missed\">targets</p>", 1);
    std::fs::write(&bare, html).unwrap();
    let seen = look(&bare, dir.path());
    assert_eq!(seen.ladder_rungs, 0);
    assert!(
        seen.missed_top >= 0.0 && seen.missed_top < SCREEN_HEIGHT_PX,
        "{seen:?}"
    );
}

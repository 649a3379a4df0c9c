//! The report is a pure function of the results file: `dedupbench report` on a folder holding only a
//! `results.jsonl` must write `analysis.json`, `index.html`, `results.csv` and every SVG chart byte for
//! byte as they are committed. A refactor that changes what a user reads fails here.
//!
//! Two fixtures: `reports/reference` (a quick run with peers) and `tests/fixtures/skips-and-scenario`
//! (skipped cells and experiments, the deletion and growth experiments, and a 6·10⁹-scenario record).
//! The expected files were first written by the report of dedupbench 0.1 (commit 75541b9) and passed
//! unchanged through the redesign; since then they change only with a wording change made on purpose,
//! rewritten by `dedupbench report` on the fixture and the diff read in the same commit.

use std::path::Path;
use std::process::Command;

/// Reports `fixture`'s results into a fresh folder and compares every checked file with the fixture's.
fn report_matches(fixture: &Path, min_charts: usize) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixture.join("results.jsonl"),
        dir.path().join("results.jsonl"),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_dedupbench"))
        .arg("report")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "report failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut compared = Vec::new();
    for entry in std::fs::read_dir(fixture).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let checked = name == "index.html"
            || name == "results.csv"
            || name == "analysis.json"
            || name.ends_with(".svg");
        if !checked {
            continue;
        }
        let want = std::fs::read(fixture.join(&name)).unwrap();
        let got = std::fs::read(dir.path().join(&name))
            .unwrap_or_else(|e| panic!("report did not write {name}: {e}"));
        assert!(
            want == got,
            "{name} differs from {}",
            fixture.join(&name).display()
        );
        compared.push(name);
    }
    assert!(compared.contains(&"index.html".to_string()));
    assert!(compared.contains(&"results.csv".to_string()));
    assert!(compared.contains(&"analysis.json".to_string()));
    assert!(
        compared.iter().filter(|n| n.ends_with(".svg")).count() >= min_charts,
        "expected the fixture's charts, compared {compared:?}"
    );
}

#[test]
fn report_on_the_reference_results_is_byte_identical() {
    report_matches(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/reference"),
        10,
    );
}

#[test]
fn report_on_skips_and_a_scenario_is_byte_identical() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/skips-and-scenario");
    report_matches(&fixture, 10);
    let html = std::fs::read_to_string(fixture.join("index.html")).unwrap();
    // The fixture exercises what the reference does not.
    assert!(
        html.contains("The 6-billion-URL scenario"),
        "no scenario section"
    );
    assert!(html.contains("skipped"), "no skipped cell");
}

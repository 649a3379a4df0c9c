//! The report is a pure function of the results file: `dedupbench report` on a copy of
//! `reports/reference` holding only `results.jsonl` must write `index.html`, `results.csv` and every SVG
//! chart byte for byte as they are committed. A refactor that changes what a user reads fails here.

use std::path::Path;
use std::process::Command;

#[test]
fn report_on_the_reference_results_is_byte_identical() {
    let reference = Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/reference");
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        reference.join("results.jsonl"),
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
    for entry in std::fs::read_dir(&reference).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let checked = name == "index.html" || name == "results.csv" || name.ends_with(".svg");
        if !checked {
            continue;
        }
        let want = std::fs::read(reference.join(&name)).unwrap();
        let got = std::fs::read(dir.path().join(&name))
            .unwrap_or_else(|e| panic!("report did not write {name}: {e}"));
        assert!(want == got, "{name} differs from reports/reference/{name}");
        compared.push(name);
    }
    compared.sort();
    assert!(compared.contains(&"index.html".to_string()));
    assert!(compared.contains(&"results.csv".to_string()));
    assert!(
        compared.iter().filter(|n| n.ends_with(".svg")).count() >= 10,
        "expected the reference's charts, compared {compared:?}"
    );
}

//! The external rows (the Python and Java tools the articles' readers use) through the real binary, on
//! the harness's own keys. They need `bash scripts/setup-external.sh --install`; without it these tests
//! print `*** SKIPPED … ***` and pass, unless DEDUPBENCH_REQUIRE_EXTERNAL=1 (CI sets it), where a
//! missing piece fails.

use dedupbench::external::process::missing;
use dedupbench::kind::Language;
use dedupbench::results::{CellRecord, SkipCause};
use dedupbench::run::REQUIRE_EXTERNAL_VAR;
use dedupbench::stats::wilson;
use std::process::Command;

/// Whether the tests must be skipped (set-up missing, not required); panics when it is required.
fn not_set_up() -> bool {
    let why: Vec<String> = [Language::Python, Language::Java]
        .into_iter()
        .filter_map(missing)
        .collect();
    if why.is_empty() {
        return false;
    }
    let required = std::env::var(REQUIRE_EXTERNAL_VAR).is_ok_and(|v| v == "1");
    assert!(!required, "{REQUIRE_EXTERNAL_VAR}=1 but {}", why.join("; "));
    eprintln!(
        "\n*** SKIPPED: {}; set {REQUIRE_EXTERNAL_VAR}=1 to make this a failure ***\n",
        why.join("; ")
    );
    true
}

const ROWS: [&str; 6] = [
    "py-set",
    "py-article-bloom",
    "pybloom-live",
    "pybloom-live-scalable",
    "rbloom",
    "guava",
];

/// Every external row at 10⁴ and 10⁵ keys beside ours: no false negative, its observed rate inside the
/// 99.9% interval of its own theory (at its own m, k and fill), bytes per key in the range its structure
/// implies, the unavailable row named, and the report's section written.
#[test]
fn external_rows_run_on_the_harness_keys_and_keep_their_own_theory() {
    if not_set_up() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let status = Command::new(env!("CARGO_BIN_EXE_dedupbench"))
        .args([
            "bench",
            "--scales",
            "1e4,1e5",
            "--structures",
            "external,bloom",
            "--reps",
            "1",
            "--no-experiments",
            "--quiet",
            "--out",
        ])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success(), "bench exited with {status}");
    let results = dedupbench::results::read_results(&out).unwrap();
    let cell = |id: &str, n: u64| -> &CellRecord {
        results
            .cells
            .iter()
            .find(|c| c.structure == id && c.n == n)
            .unwrap_or_else(|| panic!("no {id} cell at {n}"))
    };
    for id in ROWS {
        for n in [10_000, 100_000] {
            let c = cell(id, n);
            let what = format!("{id} at {n}");
            assert_eq!(c.false_negatives, 0, "{what}");
            assert_eq!((c.n_member_queries, c.n_distinct), (n, n), "{what}");
            assert!(c.n_non_member_queries >= 100_000, "{what}");
            let interval = wilson(
                c.n_false_positives,
                c.n_non_member_queries,
                dedupbench::stats::CHECK_CONFIDENCE,
            );
            assert!(
                interval.contains(c.expected_fpr),
                "{what}: {} false positives of {} against its theory {}",
                c.n_false_positives,
                c.n_non_member_queries,
                c.expected_fpr
            );
            assert!(c.external.is_some() && c.peer, "{what}");
            assert!(
                c.insert_ns_per_key.median > 0.0 && c.rss_peak_bytes > 0,
                "{what}"
            );
            let bytes_per_key = c.heap_footprint_bytes as f64 / n as f64;
            let (low, high) = match id {
                // 49 + 77 bytes of str, and the set's table (calibration: 152-159 B at 10⁷).
                "py-set" => (126.0, 260.0),
                // Filters of 100, 400, 1600… keys at tightening rates: 4.5 B at 10⁴, 1.9 at 10⁵ here.
                "pybloom-live-scalable" => (1.5, 5.0),
                // 9.59 bits per key (pybloom-live's k slices: 9.59 too, at k = 7).
                _ => (1.15, 1.30),
            };
            assert!(
                (low..=high).contains(&bytes_per_key),
                "{what}: {bytes_per_key} bytes per key, outside {low}..{high}"
            );
        }
    }
    // m and k as each library sets them at 10⁵ keys and 1%, read off the tools by their programs:
    // pybloom-live's 7 slices of ⌈10⁵·|ln p|/(7 ln² 2)⌉ = 136,930 bits; Guava's ⌊−n ln p/ln² 2⌋ bits in
    // whole longs with k = round((m/n) ln 2) = 7; rbloom truncates (m/n) ln 2 = 6.64 to k = 6.
    let geometry = |id: &str| cell(id, 100_000).geometry;
    assert_eq!(
        (
            geometry("pybloom-live").bits,
            geometry("pybloom-live").hashes
        ),
        (Some(7 * 136_930), Some(7))
    );
    assert_eq!(
        (geometry("guava").bits, geometry("guava").hashes),
        (Some(958_528), Some(7))
    );
    assert_eq!(geometry("rbloom").hashes, Some(6));
    let guava = cell("guava", 100_000);
    let created = guava.external.as_ref().unwrap().heap_delta_bytes.unwrap();
    assert!(
        (958_528 / 8..958_528 / 8 + 4096).contains(&created),
        "creating a Guava filter allocated {created} bytes"
    );
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert!(csv.contains("guava,100000,measured-external,"));
    assert!(csv.contains("commons-collections,100000,unavailable,"));
    // The set's size model (str objects and a power-of-two table kept at most 60% full) against
    // tracemalloc: within 3% at both n.
    for n in [10_000, 100_000] {
        let c = cell("py-set", n);
        let ratio = c.heap_footprint_bytes as f64 / c.model_footprint_bytes;
        assert!(
            (ratio - 1.0).abs() < 0.03,
            "py-set at {n}: measured / model = {ratio}"
        );
    }
    assert_eq!(cell("py-set", 100_000).n_false_positives, 0);
    assert_eq!(cell("py-set", 100_000).n_reported_new, 100_000);
    let unavailable = results
        .skipped
        .iter()
        .find(|s| s.subject.cell() == Some("commons-collections"))
        .expect("the unavailable row is recorded");
    assert_eq!(unavailable.cause, SkipCause::Unavailable);
    assert!(unavailable.reason.contains("4.5"));
    // Asked for 1%, pybloom-live's scalable filter (tightening 0.9 from 100 keys) keeps well above it.
    let scalable = cell("pybloom-live-scalable", 100_000);
    assert!(scalable.observed_fpr_wilson95.low > 0.0102, "{scalable:?}");
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    // advise shows the measured tool beside its advice, projected to the workload's n.
    let advice = Command::new(env!("CARGO_BIN_EXE_dedupbench"))
        .args([
            "advise",
            "--n",
            "50M",
            "--memory",
            "1GiB",
            "--current",
            "py-set",
            "--results",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&advice.stdout);
    assert!(advice.status.success(), "{text}");
    assert!(
        text.contains("Your current tool, py-set: measured at n = 100k")
            && text.contains("over the 1.00 GiB budget"),
        "{text}"
    );
    let unmeasured = Command::new(env!("CARGO_BIN_EXE_dedupbench"))
        .args(["advise", "--n", "50M", "--current", "hashset", "--results"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(unmeasured.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unmeasured.stderr).contains("bench --structures hashset"));
    for piece in [
        "The articles' own tools",
        "What your Python default costs",
        "What your Java default costs",
        "pybloom-live-scalable at n = 100k measured",
        "commons-collections",
    ] {
        assert!(page.contains(piece), "the report lacks {piece:?}");
    }
}

/// `--structures` takes the group name and the ids, and an external row refuses `dedup`.
#[test]
fn external_rows_are_selected_by_group_and_are_not_dedup_structures() {
    let kinds = dedupbench::registry::parse_list("external").unwrap();
    let ids: Vec<&str> = kinds.iter().map(|k| k.id()).collect();
    assert_eq!(&ids[..6], ROWS);
    assert_eq!(ids[6], "commons-collections");
    let out = Command::new(env!("CARGO_BIN_EXE_dedupbench"))
        .args(["dedup", "--structure", "guava", "--expected", "10"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("separate process"));
}

/// A tool's process is killed at once on a stop request (Ctrl-C), and past its time limit; either way
/// the cell is an error that says why, never a record.
#[test]
fn a_stop_request_or_the_time_limit_kills_the_tool() {
    use dedupbench::external::process::{run, Request};
    use dedupbench::keys::{KeyPipeline, Profile, UrlGenerator};
    use std::sync::atomic::AtomicBool;
    use std::time::{Duration, Instant};
    if not_set_up() {
        return;
    }
    let g = UrlGenerator::new(Profile::default_profile(), 1);
    let request = Request {
        id: "py-set",
        language: Language::Python,
        n: 2_000_000,
        queries: 10,
        fpr: 0.01,
        seed: 1,
        heap_limit_bytes: 1 << 30,
    };
    for (stop, limit, says) in [
        (true, Duration::from_secs(600), "interrupted"),
        (false, Duration::from_millis(500), "over its time limit"),
    ] {
        let started = Instant::now();
        let error = run(
            &request,
            KeyPipeline::members(&g, 0..2_000_000),
            KeyPipeline::non_members(&g, 0..10),
            &AtomicBool::new(stop),
            limit,
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains(says), "{error}");
        // The whole cell takes ≈ 6 s here; killed, it ends within about a second of the request.
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
    }
}

//! Interrupted runs: Ctrl-C keeps completed cells and writes a report; `kill -9` leaves only complete lines
//! (a torn last line is ignored with a warning) and `bench --resume` finishes the run with the same counts
//! as an uninterrupted run with the same seed.

mod common;

use common::wait_exit;
use dedupbench::results::{read_results, Results};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const ARGS: &[&str] = &[
    "bench",
    "--scales",
    "3000,30000,300000,1000000",
    "--reps",
    "2",
    "--quiet",
];

/// Every in-process structure and the two fast external rows (a Python process each): what the runs
/// below bench. The pure-Python filters (seconds at 10⁶ keys) and Guava's JVM are left to
/// tests/external.rs, which keeps this file's three runs within a minute or so.
fn structures() -> String {
    dedupbench::registry::local_kinds()
        .map(|k| k.id())
        .chain(["py-set", "rbloom"])
        .collect::<Vec<_>>()
        .join(",")
}

fn spawn(out: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_dedupbench"))
        .args(ARGS)
        .args(["--structures", &structures()])
        .arg("--out")
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Waits until results.jsonl holds at least `lines` complete lines.
fn wait_for_lines(out: &Path, lines: usize, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let text = std::fs::read_to_string(out.join("results.jsonl")).unwrap_or_default();
        if text.matches('\n').count() >= lines {
            return;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "bench ended before it could be interrupted"
        );
        assert!(Instant::now() < deadline, "bench wrote too slowly");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What must not depend on timing: every cell's counts and every experiment's counts.
fn counts(r: &Results) -> Vec<String> {
    // The xorf BinaryFuse peers build differently from one process to the next (their false-positive
    // counts vary between two fresh uninterrupted runs too), and the cuckoofilter peer kicks with the
    // thread's random generator, so their counts are left out; every other structure is deterministic in
    // the seed.
    let mut rows: Vec<String> = r
        .cells
        .iter()
        .filter(|c| {
            !["binary-fuse8", "binary-fuse16", "cuckoofilter"].contains(&c.structure.as_str())
        })
        .map(|c| {
            format!(
                "{} {} {} {} {} {}",
                c.structure,
                c.n,
                c.n_false_positives,
                c.n_non_member_queries,
                c.false_negatives,
                c.bytes_held
            )
        })
        .chain(
            r.skipped
                .iter()
                .map(|s| format!("skipped {} {}", s.subject, s.n)),
        )
        .chain(
            r.saturation
                .iter()
                .chain(&r.growth)
                .chain(&r.bitmap_claim)
                .map(|p| {
                    format!(
                        "{} {} {} {} {}",
                        p.structure, p.n_inserted, p.bits, p.n_queries, p.n_false_positives
                    )
                }),
        )
        .chain(r.deletion.iter().map(|d| {
            format!(
                "deletion {} {} {}",
                d.false_positives_before, d.false_positives_after, d.removed_still_present
            )
        }))
        // A speed group is one record, timed whole: a resumed run holds each exactly once, with every
        // series of every round.
        .chain(r.speed_groups.iter().map(|g| {
            let rounds: Vec<usize> = g.series.iter().map(|s| s.ns_per_key.len()).collect();
            format!(
                "speed group {} {:?} {} series, rounds {:?}",
                g.n,
                g.structures,
                g.series.len(),
                rounds.iter().min()..=rounds.iter().max()
            )
        }))
        .collect();
    rows.sort();
    rows
}

#[test]
fn ctrl_c_keeps_completed_cells_and_writes_a_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let mut child = spawn(&out);
    wait_for_lines(&out, 4, &mut child);
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let code = wait_exit(&mut child, Duration::from_secs(10));
    assert_eq!(code, Some(130));
    let results = read_results(&out).unwrap();
    assert!(
        results.warnings.is_empty(),
        "every line is complete: {:?}",
        results.warnings
    );
    assert!(results.cells.len() >= 3);
    assert!(
        results.cells.len() < 4 * dedupbench::registry::ids().len(),
        "the run stopped early"
    );
    assert!(out.join("index.html").exists() && out.join("bytes_vs_n.png").exists());
}

#[test]
fn kill_9_then_resume_gives_the_uninterrupted_counts() {
    let dir = tempfile::tempdir().unwrap();
    let reference = dir.path().join("reference");
    let status = Command::new(env!("CARGO_BIN_EXE_dedupbench"))
        .args(ARGS)
        .args(["--structures", &structures()])
        .arg("--out")
        .arg(&reference)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());

    let out = dir.path().join("killed");
    let mut child = spawn(&out);
    wait_for_lines(&out, 6, &mut child);
    child.kill().unwrap(); // SIGKILL
    let _ = child.wait();
    // A write cut in half by the kill: the reader must ignore it, with a warning.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(out.join("results.jsonl"))
        .unwrap();
    std::io::Write::write_all(&mut file, br#"{"schema_version":1,"record":"cell","struct"#)
        .unwrap();
    drop(file);
    let torn = read_results(&out).unwrap();
    assert_eq!(torn.warnings.len(), 1, "{:?}", torn.warnings);

    let status = Command::new(env!("CARGO_BIN_EXE_dedupbench"))
        .args(["bench", "--quiet", "--resume"])
        .arg(&out)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let resumed = read_results(&out).unwrap();
    assert!(resumed.warnings.is_empty(), "{:?}", resumed.warnings);
    let expected = read_results(&reference).unwrap();
    assert_eq!(counts(&resumed), counts(&expected));
    assert!(out.join("index.html").exists());
}

#[test]
fn resume_refuses_other_parameters_and_missing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_dedupbench"))
            .args(args)
            .output()
            .unwrap()
    };
    let missing = dir.path().join("nothing");
    let out = run(&["bench", "--resume", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--resume"));
    // A real, finished run: resuming it with other parameters is refused by the argument parser.
    let done = dir.path().join("done");
    let status = Command::new(env!("CARGO_BIN_EXE_dedupbench"))
        .args([
            "bench",
            "--scales",
            "1000",
            "--structures",
            "bloom",
            "--reps",
            "1",
            "--no-experiments",
            "--quiet",
            "--out",
        ])
        .arg(&done)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let out = run(&["bench", "--resume", done.to_str().unwrap(), "--seed", "3"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot be used with"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // How long to wait for a server is given again on resume, and checked against the run: this one has
    // no sweep to wait in.
    let out = run(&[
        "bench",
        "--resume",
        done.to_str().unwrap(),
        "--redis-retry-secs",
        "5",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--redis-retry-secs") && stderr.contains("applies to a sweep"),
        "{stderr}"
    );
    // Resuming a finished run has nothing to do and succeeds.
    let out = run(&["bench", "--quiet", "--resume", done.to_str().unwrap()]);
    assert!(out.status.success());
}

//! Helpers shared by the integration tests: the binary and a run with piped input, the generated keys,
//! and the rate check against theory.
#![allow(dead_code)]

use dedupbench::hash::KeyHasher;
use dedupbench::keys::{KeyBatch, Profile, UrlGenerator};
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

pub const SEED: u64 = 42;

pub fn dedupbench() -> Command {
    Command::new(env!("CARGO_BIN_EXE_dedupbench"))
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The expected rate is consistent with what was observed, at a false alarm of 10⁻⁹ each way, on enough
/// trials to see a rate 20% off ([`dedupbench::stats::check_rate`]).
pub fn assert_rate(what: &str, hits: u64, trials: u64, expected: f64) {
    if let Err(e) = dedupbench::stats::check_rate(hits, trials, expected) {
        panic!("{what}: {e}");
    }
}

pub fn generator() -> UrlGenerator {
    UrlGenerator::new(Profile::load("crawl-frontier").unwrap(), SEED)
}

/// Members `from..to`, hashed with the default hash under [`SEED`] (a structure built with [`SEED`]'s).
pub fn members(from: u64, to: u64) -> KeyBatch {
    let mut batch = KeyBatch::with_capacity((to - from) as usize, 96);
    generator().fill_members(from..to, &mut batch);
    batch.hash_all(KeyHasher::default_with_seed(SEED));
    batch
}

/// Non-members `from..to`, hashed as [`members`] are.
pub fn non_members(from: u64, to: u64) -> KeyBatch {
    let mut batch = KeyBatch::with_capacity((to - from) as usize, 96);
    generator().fill_non_members(from..to, &mut batch);
    batch.hash_all(KeyHasher::default_with_seed(SEED));
    batch
}

/// Waits until a sweep in `out` has recorded its in-process reference points (its Redis inserts begin
/// next), then half a second more.
pub fn wait_for_reference_points(out: &Path) {
    let results = out.join("results.jsonl");
    let started = Instant::now();
    while !std::fs::read_to_string(&results)
        .unwrap_or_default()
        .contains("\"series\":\"scalable (in-process)\"")
    {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the reference points never completed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
}

/// Members `0..n` as URL strings.
pub fn member_urls(n: u64) -> Vec<String> {
    let generator = generator();
    let mut buf = Vec::new();
    (0..n)
        .map(|i| {
            buf.clear();
            generator.member(i, &mut buf);
            String::from_utf8(buf.clone()).unwrap()
        })
        .collect()
}

/// Runs the binary with `args`, writes `input` to its stdin from a thread (so a child that writes while
/// it reads cannot deadlock on a full pipe) and waits for its output. A child that refuses its arguments
/// may exit before it reads stdin: the broken pipe that leaves is allowed only when the child failed (when
/// a child that succeeded left the pipe, the test fails here).
pub fn run_piped(args: &[&str], input: &[u8]) -> Output {
    use std::io::Write;
    let mut child = dedupbench()
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    match writer.join().unwrap() {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe && !out.status.success() => {}
        Err(e) => panic!("writing stdin of {args:?}: {e}; stderr: {}", stderr(&out)),
    }
    out
}

/// `dedupbench dedup ARGS` with stdin, stdout and stderr piped.
pub fn dedup_worker(args: &[&str]) -> std::process::Child {
    dedupbench()
        .arg("dedup")
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Writes members `0..n` to the worker's stdin, one per line, from a thread; stops quietly when the
/// worker stops reading (the test's assertions say whether it should have).
pub fn feed_members(child: &mut std::process::Child, n: u64) -> std::thread::JoinHandle<()> {
    use std::io::Write;
    let mut stdin = child.stdin.take().unwrap();
    std::thread::spawn(move || {
        let generator = generator();
        let mut buf = Vec::new();
        for i in 0..n {
            buf.clear();
            generator.member(i, &mut buf);
            buf.push(b'\n');
            if stdin.write_all(&buf).is_err() {
                return;
            }
        }
    })
}

/// After a sweep whose server was lost at point `failed`: only the in-process reference points are kept,
/// `failed` is recorded as failed with a reason naming `where_`, and the report of what completed exists.
pub fn assert_failed_point_and_references_kept(out: &Path, failed: &str, where_: &str) {
    let r = dedupbench::results::read_results(out).unwrap();
    let kept: Vec<String> = r.sweep.iter().map(|p| p.series.to_string()).collect();
    assert_eq!(
        kept,
        ["bloom (in-process)", "scalable (in-process)"],
        "only the completed points are kept"
    );
    let record = r
        .sweep_skipped
        .iter()
        .find(|s| s.subject.to_string() == failed)
        .expect("a failed record");
    assert!(
        record.reason.contains("failed") && record.reason.contains(where_),
        "{}",
        record.reason
    );
    assert!(
        out.join("index.html").is_file(),
        "the report of what completed is written"
    );
}

/// Waits at most `limit` for `child` to exit; its exit code (`None` when a signal ended it).
pub fn wait_exit(child: &mut std::process::Child, limit: Duration) -> Option<i32> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        assert!(
            Instant::now() < deadline,
            "the child did not stop within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

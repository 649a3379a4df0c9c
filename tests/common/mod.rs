//! Helpers shared by the tests on real Redis servers (`tests/redis.rs`, `tests/cluster.rs`): the binary,
//! the generated keys, and the rate check against theory.
#![allow(dead_code)]

use dedupbench::keys::{KeyBatch, Profile, UrlGenerator};
use dedupbench::stats::wilson;
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

/// The expected rate lies in the 99.9% Wilson interval of what was observed.
pub fn assert_rate(what: &str, hits: u64, trials: u64, expected: f64) {
    let interval = wilson(hits, trials, 0.999);
    assert!(
        interval.contains(expected),
        "{what}: {hits} of {trials} ({:.4}%) vs theory {:.4}%, 99.9% interval {:.4}–{:.4}%",
        100.0 * hits as f64 / trials as f64,
        100.0 * expected,
        100.0 * interval.low,
        100.0 * interval.high
    );
}

pub fn generator() -> UrlGenerator {
    UrlGenerator::new(Profile::load("crawl-frontier").unwrap(), SEED)
}

/// Members `from..to`, hashed with [`SEED`].
pub fn members(from: u64, to: u64) -> KeyBatch {
    let mut batch = KeyBatch::with_capacity((to - from) as usize, 96);
    generator().fill_members(from..to, &mut batch);
    batch.hash_all(SEED);
    batch
}

/// Non-members `from..to`, hashed with [`SEED`].
pub fn non_members(from: u64, to: u64) -> KeyBatch {
    let mut batch = KeyBatch::with_capacity((to - from) as usize, 96);
    generator().fill_non_members(from..to, &mut batch);
    batch.hash_all(SEED);
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

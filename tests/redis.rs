//! The Redis backends on a real server: each test starts its own `redis-server` (free loopback port,
//! temporary directory, killed at the end). Without `redis-server` (or the RedisBloom module) the tests
//! say so loudly and skip; CI sets `DEDUPBENCH_REQUIRE_REDIS=1`, which turns a skip into a failure.

mod common;
use common::*;

use dedupbench::kind::BuildConfig;
use dedupbench::redis::server::{server_for_test, RefusingPort, Server};
use dedupbench::redis::BitmapMode;
use dedupbench::redis::{Endpoint, RedisUrl, RemoteConfig};
use dedupbench::registry::find;
use dedupbench::results::{read_results, SweepRecord};
use std::path::Path;
use std::process::{Output, Stdio};

fn run(args: &[&str]) -> Output {
    dedupbench().args(args).output().unwrap()
}

/// A plain connection for reading what the server holds.
fn connect(url: &RedisUrl) -> redis::Connection {
    redis::Client::open(url.connection_text())
        .unwrap()
        .get_connection()
        .unwrap()
}

#[test]
fn the_sweep_runs_every_backend_at_every_batch_size_with_rates_in_theory() {
    let Some(server) = server_for_test(true) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let url = server.url().to_string();
    let o = run(&[
        "bench",
        "--suite",
        "redis",
        "--redis",
        &url,
        "--redis-keys",
        "20000",
        "--redis-batches",
        "8,512",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let results = read_results(&out).unwrap();
    assert!(results.cells.is_empty(), "the redis suite runs no grid");
    assert!(
        results.skipped.is_empty() && results.sweep_skipped.is_empty(),
        "{:?}",
        results.sweep_skipped
    );
    let series = [
        "redis-bloom",
        "redis-bloom-scaling",
        "redis-bitmap/bitfield",
        "redis-bitmap/setbit",
        "redis-bitmap/script",
        "redis-set",
        "redis-set-fp",
    ];
    let find_point = |s: &str, b: u64| -> &SweepRecord {
        results
            .sweep
            .iter()
            .find(|r| r.series == s && r.batch_keys == b)
            .unwrap_or_else(|| panic!("no point for {s} at batch {b}"))
    };
    let reference = find_point("bloom (in-process)", 0);
    for s in series {
        for b in [8, 512] {
            let r = find_point(s, b);
            assert_eq!(r.false_negatives, 0, "{s} batch {b}");
            assert_eq!(r.n_member_queries, 20_000);
            assert!(r.insert_keys_per_s > 0.0 && r.non_member_query_keys_per_s > 0.0);
            assert!(r.server_bytes > 0, "{s}: MEMORY USAGE gave nothing");
            assert_rate(
                &format!("{s} batch {b}"),
                r.n_false_positives,
                r.n_non_member_queries,
                r.expected_fpr,
            );
            if s.starts_with("redis-bitmap") {
                // The same m, k, hash and keys as the in-process filter: the same answers.
                assert_eq!(r.geometry, reference.geometry, "{s}");
                if r.n_non_member_queries == reference.n_non_member_queries {
                    assert_eq!(r.n_false_positives, reference.n_false_positives, "{s}");
                }
                assert!(r.bytes_per_key * 8.0 >= r.geometry.bits.unwrap() as f64 / 20_000.0);
            }
            if s == "redis-bloom" {
                assert!(r.raw_insert_keys_per_s.is_some_and(|k| k > 0.0));
            }
        }
    }
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        html.contains("Shared filter"),
        "the report has no Shared filter section"
    );
}

/// Inserts through one worker process; returns its JSON answer.
fn worker(url: &str, structure: &str, name: &str, op: &str, range: &str) -> std::process::Child {
    dedupbench()
        .args([
            "shared",
            "--redis",
            url,
            "--structure",
            structure,
            "--name",
            name,
            "--expected",
            "100000",
            op,
            range,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn answer(child: std::process::Child) -> serde_json::Value {
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "worker failed: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn two_workers_share_one_filter_without_false_negatives() {
    let Some(server) = server_for_test(true) else {
        return;
    };
    let url = server.url().to_string();
    for structure in ["redis-bitmap", "redis-bloom", "redis-set-fp"] {
        let name = format!("shared:{structure}");
        // Both halves at once, from two processes.
        let a = worker(&url, structure, &name, "--insert", "0..50000");
        let b = worker(&url, structure, &name, "--insert", "50000..100000");
        let (a, b) = (answer(a), answer(b));
        assert_eq!(a["keys"], 50_000);
        assert_eq!(b["keys"], 50_000);
        // Each worker finds every key of the other.
        let found_by_a = answer(worker(&url, structure, &name, "--check", "50000..100000"));
        let found_by_b = answer(worker(&url, structure, &name, "--check", "0..50000"));
        assert_eq!(found_by_a["answered"], 50_000, "{structure}");
        assert_eq!(found_by_b["answered"], 50_000, "{structure}");
        // Every worker's keys as the server counts them: RedisBloom's items (a key taken for seen is
        // not added), a bitmap's estimate from its fill, a set's members.
        let held = found_by_a["keys_held"].as_u64();
        match structure {
            "redis-bloom" => assert!(
                held.is_some_and(|h| (98_000..=100_000).contains(&h)),
                "{held:?}"
            ),
            // The fill estimate's sd here is ≈ 65 keys (m ≈ 9.6·10⁵ bits, k = 7, half the bits set:
            // sd(X) ≈ 210 bits, dn/dX ≈ 1/(k·(1 − X/m)) ≈ 0.3); ±1% is 15 sd.
            "redis-bitmap" => assert!(
                held.is_some_and(|h| (99_000..=101_000).contains(&h)),
                "{held:?}"
            ),
            _ => assert_eq!(held, Some(100_000), "{structure}: SCARD"),
        }
        let probe = answer(worker(&url, structure, &name, "--non-members", "0..200000"));
        let fp = probe["answered"].as_u64().unwrap();
        let expected = probe["expected_fpr"].as_f64().unwrap();
        assert_rate(structure, fp, 200_000, expected);
        if structure == "redis-bitmap" {
            let bits = probe["bits"].as_u64().unwrap();
            let k = probe["hashes"].as_u64().unwrap() as u32;
            assert_eq!(expected, dedupbench::theory::bloom_fpr(bits, k, 100_000));
        }
    }
}

#[test]
fn a_worker_with_other_parameters_is_refused() {
    let Some(server) = server_for_test(false) else {
        return;
    };
    let url = server.url().to_string();
    let first = answer(worker(
        &url,
        "redis-bitmap",
        "params",
        "--insert",
        "0..1000",
    ));
    assert_eq!(first["keys"], 1000);
    let o = run(&[
        "shared",
        "--redis",
        &url,
        "--name",
        "params",
        "--expected",
        "100000",
        "--fpr",
        "0.001",
        "--check",
        "0..10",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("was created with") && e.contains(&server.url().addr()),
        "{e}"
    );
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    // A worker that only reads never creates a filter: a misspelt name is an error, not "found 0".
    let o = run(&[
        "shared",
        "--redis",
        &url,
        "--name",
        "paramz",
        "--expected",
        "100000",
        "--check",
        "0..10",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no shared filter named 'paramz'"),
        "{}",
        stderr(&o)
    );
    // Deleting removes bits and parameters: the name is then unknown to readers, free for inserters.
    let o = run(&[
        "shared",
        "--redis",
        &url,
        "--name",
        "params",
        "--expected",
        "100000",
        "--delete",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&[
        "shared",
        "--redis",
        &url,
        "--name",
        "params",
        "--expected",
        "100000",
        "--check",
        "0..10",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let again = answer(worker(
        &url,
        "redis-bitmap",
        "params",
        "--insert",
        "0..1000",
    ));
    assert!(again["answered"].as_u64().unwrap() > 900, "{again}");
    // The parameters name the hash: a worker hashing with another is refused, and told which.
    let with_hash = |name: &str, hash: Option<&str>, op: &str| {
        let mut args = vec![
            "shared",
            "--redis",
            &url,
            "--name",
            name,
            "--expected",
            "100000",
            op,
            "0..1000",
        ];
        if let Some(h) = hash {
            args.extend(["--hash", h]);
        }
        run(&args)
    };
    let o = with_hash("params", Some("xxh3-128"), "--check");
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("hash=xxh3-64") && e.contains("hash=xxh3-128") && e.contains("--hash"),
        "{e}"
    );
    // A filter made before xxh3-64 was the default said hash=xxh3-128 in the same place: workers
    // join it with --hash xxh3-128 and find every key, and are refused without it.
    let o = with_hash("old-hash", Some("xxh3-128"), "--insert");
    assert!(o.status.success(), "{}", stderr(&o));
    let stored: String = redis::cmd("GET")
        .arg("old-hash:params")
        .query(&mut connect(&server.url()))
        .unwrap();
    assert!(
        stored
            .starts_with("dedupbench-bloom-v1 m=958506 k=7 hash=xxh3-128 seed=42 bits_per_string="),
        "the parameters of before: {stored}"
    );
    let o = with_hash("old-hash", Some("xxh3-128"), "--check");
    let found: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(found["answered"], 1000, "{found}");
    let o = with_hash("old-hash", None, "--check");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // Fingerprint sets depend on the seed: a worker with another seed is refused too. Their fingerprints
    // are 128-bit xxh3 whatever the run's hash, in the parameters' words of before the hash was a choice.
    let _ = answer(worker(&url, "redis-set-fp", "fp", "--insert", "0..100"));
    let stored: String = redis::cmd("GET")
        .arg("fp:params")
        .query(&mut connect(&server.url()))
        .unwrap();
    assert_eq!(stored, "redis-set-fp v1 member=xxh3-128 seed=42");
    let o = run(&[
        "shared",
        "--redis",
        &url,
        "--structure",
        "redis-set-fp",
        "--name",
        "fp",
        "--expected",
        "100000",
        "--seed",
        "7",
        "--check",
        "0..10",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("was created with"), "{}", stderr(&o));
}

#[test]
fn a_bitmap_split_over_strings_holds_exactly_the_bits_of_the_in_process_bloom() {
    let Some(server) = server_for_test(false) else {
        return;
    };
    let n = 3000;
    let batch = members(0, n);
    let config = BuildConfig::new(n, 0.01, SEED);
    let mut local = find("bloom").unwrap().build(&config).unwrap();
    local.insert_batch(&batch);
    let mut want = Vec::new();
    if let Some(parts) = local.saved_parts() {
        if let dedupbench::persist::Payload::Words(words) = &parts.payload[0] {
            for (w, word) in words.iter().enumerate() {
                for b in 0..64 {
                    if word >> b & 1 == 1 {
                        want.push(w as u64 * 64 + b);
                    }
                }
            }
        }
    }
    let m = local.geometry().bits.unwrap();
    let per_string = 4096u64;
    for mode in BitmapMode::ALL {
        let mut remote = RemoteConfig::new(
            Endpoint::Server(server.url()),
            format!("split:{}", mode.name()),
        );
        remote.bitmap.bits_per_string = per_string;
        remote.bitmap.mode = mode;
        remote.batch_keys = 100;
        let mut config = config.clone();
        config.remote = Some(remote);
        let mut shared = find("redis-bitmap").unwrap().build(&config).unwrap();
        let new = shared.insert_batch(&batch);
        assert!(shared.failure().is_none(), "{:?}", shared.failure());
        assert_eq!(
            shared.geometry().slices,
            Some(m.div_ceil(per_string) as u32)
        );
        assert_eq!(
            shared.contains_batch(&batch),
            n,
            "{}: false negatives",
            mode.name()
        );
        // At most a rate of p = 1% of keys can look seen while the filter fills: new ≥ n(1 − 1.2p).
        assert!(new >= n - n * 12 / 1000, "{}: {new} new", mode.name());
        // Read the strings back: bit p of the filter is bit (7 − p mod 8) of byte ⌊p/8⌋ of string ⌊p/S⌋.
        let mut client = connect(&server.url());
        let mut got = Vec::new();
        for s in 0..m.div_ceil(per_string) {
            let key = format!("split:{}:bits:{s}", mode.name());
            let bytes: Vec<u8> = redis::cmd("GET").arg(&key).query(&mut client).unwrap();
            assert!(!bytes.is_empty(), "{key} missing");
            assert_eq!(
                bytes.len() as u64,
                (m - s * per_string).min(per_string).div_ceil(8)
            );
            for (i, byte) in bytes.iter().enumerate() {
                for b in 0..8 {
                    if byte >> (7 - b) & 1 == 1 {
                        got.push(s * per_string + i as u64 * 8 + b);
                    }
                }
            }
        }
        assert_eq!(
            got,
            want,
            "{}: the server's bits differ from the in-process filter's",
            mode.name()
        );
    }
}

#[test]
fn a_server_killed_mid_insert_fails_that_point_and_keeps_the_completed_ones() {
    let Some(mut server) = server_for_test(false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let url = server.url().to_string();
    let child = dedupbench()
        .args([
            "bench",
            "--suite",
            "redis",
            "--redis",
            &url,
            "--structures",
            "redis-set",
            "--redis-keys",
            "3000000",
            "--redis-batches",
            "16",
            "--redis-retry-secs",
            "3",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The in-process references are recorded and the Redis inserts have begun.
    wait_for_reference_points(&out);
    server.kill();
    let o = child.wait_with_output().unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    let addr = server.url().addr();
    assert!(e.contains(&addr) && e.contains("redis-set batch=16"), "{e}");
    assert_failed_point_and_references_kept(&out, "redis-set batch=16", &addr);
}

#[test]
fn a_server_without_the_module_skips_redis_bloom_with_the_reason() {
    let Some(server) = server_for_test(false) else {
        return;
    };
    assert!(!server.has_module());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let url = server.url().to_string();
    let o = run(&[
        "bench",
        "--suite",
        "redis",
        "--redis",
        &url,
        "--structures",
        "redis-bloom,redis-set",
        "--redis-keys",
        "2000",
        "--redis-batches",
        "64",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_results(&out).unwrap();
    let skipped = r
        .sweep_skipped
        .iter()
        .find(|s| s.subject.to_string() == "redis-bloom batch=64")
        .unwrap();
    assert!(
        skipped.reason.contains("no RedisBloom module"),
        "{}",
        skipped.reason
    );
    assert!(r.sweep.iter().any(|s| s.series == "redis-set"));
}

#[test]
fn a_refused_connection_is_one_line_exit_2_and_nothing_written() {
    let refusing = RefusingPort::new().unwrap();
    let port = refusing.port();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let url = format!("redis://127.0.0.1:{port}");
    let o = run(&[
        "bench",
        "--suite",
        "redis",
        "--redis",
        &url,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains(&format!("127.0.0.1:{port}")) && e.contains("cannot connect"),
        "{e}"
    );
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(!Path::new(&out).exists(), "nothing may be written");
    for args in [
        vec!["bench", "--suite", "redis"],
        vec!["bench", "--structures", "redis-bloom"],
        vec!["bench", "--redis", "http://x:1"],
        vec!["bench", "--redis-keys", "1000"],
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(
            stderr(&o).trim().lines().count(),
            1,
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn the_test_server_starts_and_leaves_nothing_behind() {
    let Some(server) = server_for_test(false) else {
        return;
    };
    let url = server.url();
    let mut c = connect(&url);
    let pong: String = redis::cmd("PING").query(&mut c).unwrap();
    assert_eq!(pong, "PONG");
    drop(c);
    drop(server);
    assert!(
        redis::Client::open(url.connection_text())
            .unwrap()
            .get_connection()
            .is_err(),
        "the server outlived its handle"
    );
    let _ = Server::start; // the handle type is public for benches and tools
}

#[test]
fn answers_kept_on_the_server_are_given_again_to_a_resent_command() {
    let Some(server) = server_for_test(true) else {
        return;
    };
    let mut c = connect(&server.url());
    redis::cmd("BF.RESERVE")
        .arg("once-bf")
        .arg(0.01)
        .arg(1000)
        .query::<()>(&mut c)
        .unwrap();
    for (script, filter) in [
        (&*dedupbench::remote::once::BLOOM_ADD, "once-bf"),
        (&*dedupbench::remote::once::SET_ADD, "once-set"),
    ] {
        let ack = format!("{filter}:ack:w1");
        let add = |c: &mut redis::Connection, token: u64, keys: &[&str]| -> Vec<i64> {
            redis::cmd("EVAL")
                .arg(script)
                .arg(2)
                .arg(filter)
                .arg(&ack)
                .arg(token)
                .arg(keys)
                .query(c)
                .unwrap()
        };
        assert_eq!(add(&mut c, 5, &["a", "b"]), [1, 1], "{filter}");
        // The same command again (a resend after a lost reply): the first answers, not [0, 0].
        assert_eq!(add(&mut c, 5, &["a", "b"]), [1, 1], "{filter}");
        // The next command answers afresh.
        assert_eq!(add(&mut c, 6, &["a", "c"]), [0, 1], "{filter}");
        assert_eq!(add(&mut c, 6, &["a", "c"]), [0, 1], "{filter}");
        // Kept longer than the longest --retry-secs (an hour) plus a reply timeout.
        let ttl: i64 = redis::cmd("TTL").arg(&ack).query(&mut c).unwrap();
        assert!(ttl > 3600 && ttl <= 10800, "{filter}: ttl {ttl}");
    }
    // A full NONSCALING filter's per-key error is the script's error, not a broken answer.
    redis::cmd("BF.RESERVE")
        .arg("once-full")
        .arg(0.01)
        .arg(2)
        .arg("NONSCALING")
        .query::<()>(&mut c)
        .unwrap();
    let full = redis::cmd("EVAL")
        .arg(&*dedupbench::remote::once::BLOOM_ADD)
        .arg(2)
        .arg("once-full")
        .arg("once-full:ack:w1")
        .arg(1)
        .arg(&["a", "b", "c", "d", "e"])
        .query::<Vec<i64>>(&mut c)
        .unwrap_err()
        .to_string();
    assert!(full.contains("full"), "{full}");
}

/// The first `n` generated member URLs as a stream, one per line.
fn url_lines(n: u64) -> Vec<u8> {
    member_urls(n)
        .iter()
        .flat_map(|u| [u.as_bytes(), b"\n"].concat())
        .collect()
}

/// Past its capacity a fixed shared filter stops the stream: the error's counts are exact (the URLs
/// written out are the lines on stdout, every one of them distinct), with a round trip in flight.
#[test]
fn a_full_shared_filter_stops_with_exact_counts() {
    let Some(server) = server_for_test(true) else {
        return;
    };
    let url = server.url().to_string();
    let input = url_lines(15_000);
    let o = run_piped(
        &[
            "dedup",
            "--redis",
            &url,
            "--name",
            "full",
            "--expected",
            "10000",
            "--batch",
            "1024",
        ],
        &input,
    );
    let e = stderr(&o);
    assert_ne!(o.status.code(), Some(0), "{e}");
    assert!(e.contains("full"), "{e}");
    let written = o
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .count();
    assert!(written > 9_000 && written < 15_000, "{written}: {e}");
    assert!(
        e.contains(&format!(
            "({written} written out, each of them in the filter"
        )),
        "{written} lines on stdout: {e}"
    );
}

/// A shared filter fed past its plan is reported on stderr while the stream runs, with every worker's keys
/// as the server counts them (RedisBloom's items; a bitmap's load from its fill), and the closing rate
/// says what it was computed from.
#[test]
fn a_shared_filter_past_its_plan_is_reported_by_its_server_count() {
    let Some(server) = server_for_test(true) else {
        return;
    };
    let url = server.url().to_string();
    let input = url_lines(3_000);
    for (structure, says, basis) in [
        (
            "redis-bitmap",
            "rising with every key",
            "(from the filter's fill)",
        ),
        (
            "redis-bloom-scaling",
            "goes on adding sub-filters",
            "(theory at the keys its server counts, every worker's)",
        ),
    ] {
        let args = [
            "dedup",
            "--redis",
            &url,
            "--name",
            structure,
            "--structure",
            structure,
            "--expected",
            "1000",
            "--batch",
            "256",
        ];
        let o = run_piped(&args, &input);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(0), "{structure}: {e}");
        let warning = e
            .lines()
            .find(|l| l.starts_with("dedup: warning: the filter holds"))
            .unwrap_or_else(|| panic!("{structure}: no warning: {e}"));
        assert!(
            warning.contains("(every worker's, as its server counts them), past the 1000")
                && warning.contains(says),
            "{structure}: {warning}"
        );
        // The held count is the server's: above the plan and not above the distinct URLs (a bitmap's
        // estimate within a few percent of them).
        let held: u64 = warning
            .split_whitespace()
            .nth(5)
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{warning}"));
        assert!(held > 1000 && held <= 3_100, "{structure}: {warning}");
        assert!(e.contains(basis), "{structure}: {e}");
        // `shared` says the same after its inserts (a filter of its own: its seed is --seed's).
        let name = format!("{structure}-shared");
        let o = run(&[
            "shared",
            "--redis",
            &url,
            "--name",
            &name,
            "--structure",
            structure,
            "--expected",
            "1000",
            "--insert",
            "0..3000",
        ]);
        let e = stderr(&o);
        assert!(o.status.success(), "{e}");
        assert!(
            e.contains("past the 1000 it was planned for")
                && e.contains(says.split(' ').next().unwrap()),
            "{structure}: {e}"
        );
    }
}

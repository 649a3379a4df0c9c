//! The shared filter split over a real Redis Cluster: each test starts its own 3-master loopback cluster
//! (`redis-server --cluster-enabled yes` processes joined by `redis-cli --cluster create`), killed at the
//! end. Without Redis (or the module) the tests say so loudly and skip; CI sets
//! `DEDUPBENCH_REQUIRE_REDIS=1`, which turns a skip into a failure.
//!
//! Faults are real: a node killed with SIGKILL and restarted from its append-only file
//! (`appendfsync always`), a node that stays down, slots resharded with `redis-cli --cluster reshard`
//! while a worker inserts.

mod common;
use common::*;

use dedupbench::hash::HashFn;
use dedupbench::kind::BuildConfig;
use dedupbench::membership::Membership;
use dedupbench::redis::cluster::{cluster_for_test, Cluster};
use dedupbench::redis::server::{Server, ServerOptions};
use dedupbench::redis::{Conn, Endpoint, RemoteConfig, WaitReplicas};
use dedupbench::registry::find;
use dedupbench::remote::shards::slot_of;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Waits until `acked` reaches `keys`, failing if the inserting thread ended first or 60 s pass.
fn wait_for(acked: &AtomicU64, keys: u64, handle: &std::thread::JoinHandle<Option<String>>) {
    let started = std::time::Instant::now();
    while acked.load(Ordering::SeqCst) < keys {
        assert!(!handle.is_finished(), "the inserting thread ended early");
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{keys} keys were not acknowledged within 60 s"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Waits until some shard of the 9-shard `redis-bloom` filter `name` holds keys (a worker is under way).
fn wait_until_inserting(cluster: &Cluster, name: &str) {
    let mut conn = Conn::connect(&endpoint(cluster)).unwrap();
    let shards = dedupbench::remote::shards::Shards::spread(name, 9).unwrap();
    let started = std::time::Instant::now();
    let empty = |conn: &mut Conn| {
        shards
            .prefixes()
            .iter()
            .all(|p| conn.query::<u64>(redis::cmd("BF.CARD").arg(p)).unwrap_or(0) == 0)
    };
    while empty(&mut conn) {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the worker never inserted"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn endpoint(cluster: &Cluster) -> Endpoint {
    Endpoint::Cluster(cluster.urls())
}

/// A shared structure on `endpoint`, joined (not replaced) so several handles can use it.
fn open(
    structure: &str,
    endpoint: Endpoint,
    name: &str,
    expected: u64,
    retry_s: u64,
) -> Box<dyn Membership> {
    open_waiting(structure, endpoint, name, expected, retry_s, None)
}

/// [`open`], its round trips acknowledged only once `wait`'s replicas hold them.
fn open_waiting(
    structure: &str,
    endpoint: Endpoint,
    name: &str,
    expected: u64,
    retry_s: u64,
    wait: Option<WaitReplicas>,
) -> Box<dyn Membership> {
    let mut remote = RemoteConfig::new(endpoint, name);
    remote.join_existing = true;
    remote.retry_for = Duration::from_secs(retry_s);
    remote.wait = wait;
    let mut config = BuildConfig::new(expected, 0.01, SEED);
    config.remote = Some(remote);
    find(structure).unwrap().build(&config).unwrap()
}

#[test]
fn a_filter_split_over_a_cluster_answers_as_its_theory_from_each_shards_load() {
    let Some(cluster) = cluster_for_test(3, true, false) else {
        return;
    };
    let n = 50_000;
    let queries = 200_000;
    let (mut batch, mut probes) = (members(0, n), non_members(0, queries));
    // The shards' tags land where Redis puts them, three per master.
    let mut conn = Conn::connect(&endpoint(&cluster)).unwrap();
    let shards = dedupbench::remote::shards::Shards::spread("tags", 9).unwrap();
    for prefix in shards.prefixes() {
        let slot: u16 = conn
            .query(redis::cmd("CLUSTER").arg("KEYSLOT").arg(prefix))
            .unwrap();
        let tag = prefix.trim_start_matches('{').trim_end_matches('}');
        assert_eq!(slot, slot_of(tag.as_bytes()), "{prefix}");
    }
    assert_eq!(conn.masters().len(), 3);
    for m in conn.masters() {
        let mine = shards
            .prefixes()
            .iter()
            .filter(|p| m.serves(slot_of(p.trim_matches(['{', '}']).as_bytes())))
            .count();
        assert_eq!(mine, 3, "{} serves {mine} shards", m.addr());
    }
    for structure in ["redis-bloom", "redis-bitmap", "redis-set-fp"] {
        let mut filter = open(structure, endpoint(&cluster), structure, n, 30);
        // A batch comes hashed with its filter's hash: the default, but redis-set-fp keeps 128-bit xxh3
        // fingerprints (a 64-bit hash's second half adds no bits).
        let expected_hash = if structure == "redis-set-fp" {
            HashFn::Xxh3_128
        } else {
            HashFn::DEFAULT
        };
        assert_eq!(filter.hasher().func(), expected_hash, "{structure}");
        batch.hash_all(filter.hasher());
        probes.hash_all(filter.hasher());
        let new = filter.insert_batch(&batch);
        assert!(filter.failure().is_none(), "{:?}", filter.failure());
        // Keys reported seen on their first insert are false positives of the filter as it filled: a
        // count inside the 99.9% interval, shared by the two filters, of what its geometry predicts (none
        // for fingerprints).
        let first_time_fp = n - new;
        if structure == "redis-set-fp" {
            assert_eq!(first_time_fp, 0, "{structure}");
        } else {
            let g = filter.geometry();
            let (bits, hashes) = (g.bits.unwrap() / 9, g.hashes.unwrap());
            let mean = expected_first_time_false_positives(n, 9, bits, hashes);
            let half = poisson_half_width(mean, dedupbench::stats::CHECK_CONFIDENCE, 2);
            assert!(
                (first_time_fp as f64 - mean).abs() <= half,
                "{structure}: {first_time_fp} keys seen on first insert, expected {mean:.1} ± {half:.1}"
            );
        }
        assert_eq!(
            filter.contains_batch(&batch),
            n,
            "{structure}: false negatives"
        );
        let loads = filter.shard_loads().expect("split over shards");
        assert_eq!(loads.len(), 9, "{structure}");
        // A shard holds binomial(n, 1/9) keys, less those it reported seen on their first insert (at
        // most all `first_time_fp` of them): the 99.9% level shared by 9 shards.
        let (share, sigma) = (
            n as f64 / 9.0,
            (n as f64 * (1.0 / 9.0) * (8.0 / 9.0)).sqrt(),
        );
        let z = dedupbench::stats::normal_quantile(1.0 - 0.001 / (2.0 * 9.0));
        let (low, high) = (
            (share - z * sigma).floor() as u64,
            (share + z * sigma).ceil() as u64,
        );
        for &load in &loads {
            assert!(
                (low - first_time_fp..=high).contains(&load),
                "{structure}: {loads:?} outside {low}–{high}"
            );
        }
        let fp = filter.contains_batch(&probes);
        let expected = filter.expected_fpr(n);
        if structure == "redis-set-fp" {
            assert_eq!(fp, 0, "{structure}");
            assert_eq!(loads.iter().sum::<u64>(), n, "{structure}");
        } else {
            assert!(
                expected > 0.003 && expected < 0.012,
                "{structure}: {expected}"
            );
            assert_rate(structure, fp, queries, expected);
        }
    }
}

/// Runs `dedup` workers at once on overlapping slices of one stream; returns each one's output lines.
fn dedup_workers(
    batch: &str,
    target: &[&str],
    structure: &str,
    name: &str,
    streams: &[Vec<String>],
) -> Vec<Vec<String>> {
    let children: Vec<_> = streams
        .iter()
        .map(|lines| {
            let mut args = vec!["--structure", structure, "--name", name];
            args.extend(["--expected", "40000", "--seed", "7", "--batch", batch]);
            args.extend(target);
            let mut child = dedup_worker(&args);
            let mut stdin = child.stdin.take().unwrap();
            let text = lines.join("\n") + "\n";
            std::thread::spawn(move || {
                use std::io::Write;
                stdin.write_all(text.as_bytes()).unwrap();
            });
            child
        })
        .collect();
    // Each worker's output drained on its own thread: all of them run to the end at once.
    let waiting: Vec<_> = children
        .into_iter()
        .map(|c| std::thread::spawn(move || c.wait_with_output().unwrap()))
        .collect();
    waiting
        .into_iter()
        .map(|w| {
            let o = w.join().unwrap();
            assert!(o.status.success(), "worker failed: {}", stderr(&o));
            String::from_utf8(o.stdout)
                .unwrap()
                .lines()
                .map(str::to_string)
                .collect()
        })
        .collect()
}

/// `workers` streams over 40 000 distinct URLs: worker w reads URLs [w·s, w·s + 2s) of a ring (s = 40 000 /
/// workers), so every URL is in two streams, read at about the same time by two workers.
fn overlapping_streams(workers: usize) -> (Vec<String>, Vec<Vec<String>>) {
    let n = 40_000usize;
    let urls = member_urls(n as u64);
    let share = n / workers;
    let streams = (0..workers)
        .map(|w| {
            (0..2 * share)
                .map(|j| urls[(w * share + j) % n].clone())
                .collect()
        })
        .collect();
    (urls, streams)
}

/// Half the width of the normal approximation's interval of a Poisson count of `mean`, at `level` shared
/// by `checks` two-sided checks, with a continuity correction.
fn poisson_half_width(mean: f64, level: f64, checks: u32) -> f64 {
    let z = dedupbench::stats::normal_quantile(1.0 - (1.0 - level) / (2.0 * checks as f64));
    z * mean.sqrt() + 0.5
}

/// The false positives a filter is expected to give while `n` distinct keys go in, spread evenly over its
/// shards: Σ over each shard's i-th key of the rate with i keys in it, `bits` and `hashes` per shard.
fn expected_first_time_false_positives(n: u64, shards: u64, bits: u64, hashes: u32) -> f64 {
    let per_shard = n / shards;
    (0..per_shard)
        .map(|i| dedupbench::theory::bloom_fpr(bits, hashes, i))
        .sum::<f64>()
        * shards as f64
}

/// Every URL reaches at most one worker's output; the ones no worker passed are false positives of the
/// filter on their first arrival (none for the exact set): a count inside the 99.99% interval (Poisson,
/// normal approximation) of what the filter's geometry predicts. 99.99%, not 99.9%: the workers' order is
/// not seeded, and the test makes eight such checks.
fn check_workers(structure: &str, target: &[&str], name: &str, workers: usize) {
    let (urls, streams) = overlapping_streams(workers);
    // 2 workers send 10 000 lines per round trip (past the script's 4000-member chunks), 4 workers 256.
    let batch = if workers == 2 { "10000" } else { "256" };
    let outputs = dedup_workers(batch, target, structure, name, &streams);
    let mut seen = std::collections::HashMap::new();
    for (w, out) in outputs.iter().enumerate() {
        for line in out {
            if let Some(first) = seen.insert(line.clone(), w) {
                panic!("{structure} ×{workers}: {line} passed by workers {first} and {w}");
            }
        }
    }
    let input: std::collections::HashSet<&String> = urls.iter().collect();
    assert!(
        seen.keys().all(|u| input.contains(u)),
        "a line that was not input"
    );
    let lost = urls.iter().filter(|u| !seen.contains_key(*u)).count() as u64;
    if structure == "redis-set" {
        assert_eq!(lost, 0, "{structure} ×{workers}: {lost} URLs lost");
        return;
    }
    // The filter's geometry, read by joining it with the workers' parameters.
    let cluster = target[0] == "--redis-cluster";
    let endpoint = if cluster {
        Endpoint::cluster(target[1]).unwrap()
    } else {
        Endpoint::Server(dedupbench::redis::RedisUrl::parse(target[1]).unwrap())
    };
    let mut remote = RemoteConfig::new(endpoint, name);
    remote.join_existing = true;
    let mut config = BuildConfig::new(40_000, 0.01, 7);
    config.remote = Some(remote);
    let filter = find(structure).unwrap().build(&config).unwrap();
    let g = filter.geometry();
    let shards = filter.shard_loads().map(|l| l.len() as u64).unwrap_or(1);
    let (bits, hashes) = (g.bits.unwrap() / shards, g.hashes.unwrap());
    let mean = expected_first_time_false_positives(urls.len() as u64, shards, bits, hashes);
    let half = poisson_half_width(mean, dedupbench::stats::CHECK_CONFIDENCE, 1);
    assert!(
        (lost as f64 - mean).abs() <= half,
        "{structure} ×{workers}: {lost} URLs lost, expected {mean:.1} ± {half:.1} false positives"
    );
}

#[test]
fn dedup_workers_on_one_server_and_on_a_cluster_pass_each_url_once() {
    let Some(cluster) = cluster_for_test(3, true, false) else {
        return;
    };
    let server = Server::start(true).unwrap();
    let server_url = server.url().to_string();
    let cluster_urls = cluster.flag();
    let targets: [(&str, Vec<&str>); 2] = [
        ("server", vec!["--redis", &server_url]),
        ("cluster", vec!["--redis-cluster", &cluster_urls]),
    ];
    for (where_, target) in &targets {
        for workers in [2, 4] {
            for structure in ["redis-bloom", "redis-set", "redis-bitmap"] {
                let name = format!("dedup-{where_}-{structure}-{workers}");
                check_workers(structure, target, &name, workers);
            }
        }
    }
}

/// Inserts `batches` batches of `per` keys from a thread, counting the keys acknowledged.
fn inserting(
    structure: &'static str,
    endpoint: Endpoint,
    name: &'static str,
    batches: u64,
    per: u64,
) -> (std::thread::JoinHandle<Option<String>>, Arc<AtomicU64>) {
    inserting_with(structure, endpoint, name, batches, per, None)
}

/// [`inserting`], each round trip acknowledged only once `wait`'s replicas hold it.
fn inserting_with(
    structure: &'static str,
    endpoint: Endpoint,
    name: &'static str,
    batches: u64,
    per: u64,
    wait: Option<WaitReplicas>,
) -> (std::thread::JoinHandle<Option<String>>, Arc<AtomicU64>) {
    let acked = Arc::new(AtomicU64::new(0));
    let counter = acked.clone();
    let handle = std::thread::spawn(move || {
        let mut filter = open_waiting(structure, endpoint, name, batches * per, 60, wait);
        for b in 0..batches {
            filter.insert_batch(&members(b * per, (b + 1) * per));
            if filter.failure().is_some() {
                return filter.failure();
            }
            counter.store((b + 1) * per, Ordering::SeqCst);
        }
        None
    });
    (handle, acked)
}

/// How many of the first `acked` keys (all acknowledged) the filter no longer has.
fn acknowledged_lost(
    structure: &str,
    endpoint: Endpoint,
    name: &str,
    expected: u64,
    acked: u64,
) -> u64 {
    let filter = open(structure, endpoint, name, expected, 30);
    let found = filter.contains_batch(&members(0, acked));
    assert!(filter.failure().is_none(), "{:?}", filter.failure());
    acked - found
}

/// Every acknowledged key is found afterwards.
fn check_acknowledged(structure: &str, endpoint: Endpoint, name: &str, expected: u64, acked: u64) {
    let lost = acknowledged_lost(structure, endpoint, name, expected, acked);
    assert_eq!(lost, 0, "{structure}: {lost} acknowledged keys lost");
}

#[test]
fn a_node_killed_mid_insert_and_restarted_loses_no_acknowledged_key() {
    let Some(mut cluster) = cluster_for_test(3, true, true) else {
        return;
    };
    let (handle, acked) = inserting("redis-bloom", endpoint(&cluster), "restart", 60, 2000);
    wait_for(&acked, 20_000, &handle);
    cluster.kill(1);
    std::thread::sleep(Duration::from_secs(3));
    let during = acked.load(Ordering::SeqCst);
    cluster.restart(1).unwrap();
    assert_eq!(handle.join().unwrap(), None, "the worker gave up");
    let acked = acked.load(Ordering::SeqCst);
    assert_eq!(acked, 120_000);
    assert!(
        during < acked,
        "the node came back before the inserts ended"
    );
    check_acknowledged("redis-bloom", endpoint(&cluster), "restart", 120_000, acked);

    // One server, the same fault.
    let mut server = Server::start_with(ServerOptions {
        module: true,
        durable: true,
        cluster: false,
    })
    .unwrap();
    let single = Endpoint::Server(server.url());
    let (handle, acked) = inserting("redis-set", single.clone(), "restart-one", 60, 2000);
    wait_for(&acked, 20_000, &handle);
    server.kill();
    std::thread::sleep(Duration::from_secs(1));
    server.restart().unwrap();
    assert_eq!(handle.join().unwrap(), None, "the worker gave up");
    check_acknowledged(
        "redis-set",
        single,
        "restart-one",
        120_000,
        acked.load(Ordering::SeqCst),
    );
}

/// A master of a 3+3 cluster killed mid-insert (SIGKILL) fails over to its replica, the client follows
/// the new topology, and the old master comes back as the new one's replica. With every round trip
/// acknowledged only once a replica holds it (`WAIT 1`), no acknowledged key is lost; without, the keys
/// lost are counted and printed (Redis replicates asynchronously: a loss is possible, not certain).
#[test]
fn a_master_failed_over_mid_insert_loses_no_key_acknowledged_by_a_replica() {
    let Some(probe) = cluster_for_test(3, true, false) else {
        return;
    };
    drop(probe);
    let options = ServerOptions {
        module: true,
        durable: false,
        cluster: true,
    };
    for wait in [
        Some(WaitReplicas {
            replicas: 1,
            timeout_ms: 1000,
        }),
        None,
    ] {
        let mut cluster = Cluster::start(3, 1, options).unwrap();
        let name = "failover";
        let (handle, acked) =
            inserting_with("redis-bloom", endpoint(&cluster), name, 60, 2000, wait);
        wait_for(&acked, 20_000, &handle);
        cluster.kill(1);
        // Past the node timeout (2 s) the replica is elected; the client waits it out.
        let killed = cluster.node(1).port();
        let started = std::time::Instant::now();
        loop {
            let promoted = Conn::connect(&endpoint(&cluster)).is_ok_and(|c| {
                c.masters().len() == 3 && c.masters().iter().all(|m| m.port != killed)
            });
            if promoted {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "no replica was promoted"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        std::thread::sleep(Duration::from_secs(1));
        let during = acked.load(Ordering::SeqCst);
        cluster.restart(1).unwrap();
        assert_eq!(handle.join().unwrap(), None, "the worker gave up");
        let acked = acked.load(Ordering::SeqCst);
        assert_eq!(acked, 120_000);
        // With WAIT the promoted master, replica-less until the old one rejoins, acknowledges nothing.
        assert!(
            wait.is_none() || during < acked,
            "acknowledged by a replica that was not there"
        );
        let lost = acknowledged_lost("redis-bloom", endpoint(&cluster), name, 120_000, acked);
        eprintln!("failover with WAIT {wait:?}: {lost} of {acked} acknowledged keys lost");
        if wait.is_some() {
            assert_eq!(lost, 0, "acknowledged by a replica, then lost");
        }
    }
}

#[test]
fn a_node_that_stays_down_is_named_with_its_slots_and_exit_1() {
    let Some(mut cluster) = cluster_for_test(3, true, false) else {
        return;
    };
    let port = cluster.node(2).port();
    let child = dedupbench()
        .args([
            "shared",
            "--redis-cluster",
            &cluster.flag(),
            "--structure",
            "redis-bloom",
        ])
        .args([
            "--name",
            "down",
            "--expected",
            "3000000",
            "--retry-secs",
            "3",
        ])
        .args(["--insert", "0..3000000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The node goes away once the worker is under way.
    wait_until_inserting(&cluster, "down");
    cluster.kill(2);
    let o = child.wait_with_output().unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        o.stdout.is_empty(),
        "a number from a partial filter: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(
        e.contains(&format!("127.0.0.1:{port} (slots 10923-16383)"))
            && e.contains("does not answer"),
        "{e}"
    );
}

/// Inserts batches of `per` keys from a thread until `stop` is set (then two more batches), counting the
/// keys acknowledged.
fn inserting_until(
    structure: &'static str,
    endpoint: Endpoint,
    name: &'static str,
    per: u64,
    stop: Arc<std::sync::atomic::AtomicBool>,
) -> (std::thread::JoinHandle<Option<String>>, Arc<AtomicU64>) {
    let acked = Arc::new(AtomicU64::new(0));
    let counter = acked.clone();
    let handle = std::thread::spawn(move || {
        let mut filter = open(structure, endpoint, name, 2_000_000, 60);
        let mut after_stop = 0;
        for b in 0..2_000_000 / per {
            filter.insert_batch(&members(b * per, (b + 1) * per));
            if filter.failure().is_some() {
                return filter.failure();
            }
            counter.store((b + 1) * per, Ordering::SeqCst);
            if stop.load(Ordering::SeqCst) {
                after_stop += 1;
                if after_stop == 2 {
                    return None;
                }
            }
        }
        Some("the reshard outlasted 2·10⁶ inserts".to_string())
    });
    (handle, acked)
}

#[test]
fn slots_resharded_while_inserting_leave_no_false_negative() {
    let Some(cluster) = cluster_for_test(3, true, false) else {
        return;
    };
    for structure in ["redis-bloom", "redis-set"] {
        let name: &'static str = if structure == "redis-bloom" {
            "moving-bf"
        } else {
            "moving-set"
        };
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (handle, acked) =
            inserting_until(structure, endpoint(&cluster), name, 1000, stop.clone());
        wait_for(&acked, 10_000, &handle);
        // Move a third of node 0's slots (shard 0's among them) to node 1, keys and all, while the
        // worker writes.
        cluster.reshard(0, 1, 1800).unwrap();
        stop.store(true, Ordering::SeqCst);
        assert_eq!(
            handle.join().unwrap(),
            None,
            "{structure}: the worker gave up"
        );
        check_acknowledged(
            structure,
            endpoint(&cluster),
            name,
            2_000_000,
            acked.load(Ordering::SeqCst),
        );
        // Give the slots back for the next structure.
        cluster.reshard(1, 0, 1800).unwrap();
    }
}

#[test]
fn the_sweep_measures_the_cluster_beside_one_node() {
    let Some(cluster) = cluster_for_test(3, true, false) else {
        return;
    };
    let server = Server::start(true).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let n = 20_000u64;
    let o = dedupbench()
        .args(["bench", "--suite", "redis", "--quiet"])
        .args(["--redis", &server.url().to_string()])
        .args(["--redis-cluster", &cluster.flag()])
        .args(["--structures", "redis-bloom,redis-bitmap,redis-set"])
        .args(["--redis-keys", &n.to_string(), "--redis-batches", "1024"])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let r = dedupbench::results::read_results(&out).unwrap();
    let on_cluster: Vec<_> = r.sweep.iter().filter(|p| p.masters > 1).collect();
    let series: Vec<String> = on_cluster.iter().map(|p| p.series.to_string()).collect();
    assert_eq!(
        series,
        [
            "redis-bloom@cluster",
            "redis-bitmap/bitfield@cluster",
            "redis-set@cluster"
        ]
    );
    for p in on_cluster {
        assert_eq!(p.masters, 3, "{}", p.series);
        assert_eq!(p.shard_loads.len(), 9, "{}", p.series);
        assert_eq!(p.false_negatives, 0, "{}", p.series);
        if p.structure == "redis-set" {
            assert_eq!(p.shard_loads.iter().sum::<u64>(), n);
            assert_eq!(p.n_false_positives, 0);
        } else {
            assert_rate(
                &p.series.to_string(),
                p.n_false_positives,
                p.n_non_member_queries,
                p.expected_fpr,
            );
        }
        let one = r
            .sweep
            .iter()
            .find(|q| {
                Some(&q.series) == p.series.one_node().as_ref() && q.batch_keys == p.batch_keys
            })
            .expect("the same backend on one node, at the same batch size");
        assert_eq!(one.masters, 1);
        // The report's cluster/one-node ratio is computed from these two points.
        if p.series == "redis-bloom@cluster" {
            let ratio = dedupbench::analysis::sweep::cluster_ratio(&r, p.batch_keys)
                .expect("both points of redis-bloom");
            assert_eq!(ratio, p.insert_keys_per_s / one.insert_keys_per_s);
        }
        assert!(p.insert_keys_per_s.is_finite() && p.insert_keys_per_s > 0.0);
    }
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        html.contains("Over a Redis Cluster"),
        "the report's cluster table"
    );
}

#[test]
fn a_dedup_worker_whose_node_stays_down_stops_with_exit_1_naming_it() {
    let Some(mut cluster) = cluster_for_test(3, true, false) else {
        return;
    };
    let port = cluster.node(0).port();
    let flag = cluster.flag();
    let mut child = dedup_worker(&[
        "--redis-cluster",
        &flag,
        "--name",
        "down-dedup",
        "--expected",
        "2000000",
        "--seed",
        "7",
        "--retry-secs",
        "3",
    ]);
    let feeder = feed_members(&mut child, 2_000_000);
    // The node goes away once the worker is under way.
    wait_until_inserting(&cluster, "down-dedup");
    cluster.kill(0);
    let o = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains(&format!("127.0.0.1:{port} (slots 0-5460)"))
            && e.contains("dedup stopped after"),
        "{e}"
    );
}

#[test]
fn a_sweep_whose_node_stays_down_fails_that_point_and_keeps_the_completed_ones() {
    let Some(mut cluster) = cluster_for_test(3, true, false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let child = dedupbench()
        .args(["bench", "--suite", "redis", "--quiet"])
        .args(["--redis-cluster", &cluster.flag()])
        .args(["--structures", "redis-set", "--redis-keys", "3000000"])
        .args(["--redis-batches", "16", "--redis-retry-secs", "3"])
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The in-process references are recorded and the Redis inserts have begun.
    wait_for_reference_points(&out);
    let port = cluster.node(1).port();
    cluster.kill(1);
    let o = child.wait_with_output().unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    let node = format!("127.0.0.1:{port} (slots 5461-10922)");
    assert!(
        e.contains(&node) && e.contains("redis-set@cluster batch=16"),
        "{e}"
    );
    assert_failed_point_and_references_kept(&out, "redis-set@cluster batch=16", &node);
}

#[test]
fn a_dedup_worker_whose_server_restarts_passes_every_url_exactly_once() {
    let Some(probe) = dedupbench::redis::server::server_for_test(true) else {
        return;
    };
    drop(probe);
    let mut server = Server::start_with(ServerOptions {
        module: true,
        durable: true,
        cluster: false,
    })
    .unwrap();
    let n = 300_000u64;
    let url = server.url().to_string();
    let mut child = dedup_worker(&[
        "--redis",
        &url,
        "--structure",
        "redis-set",
        "--name",
        "restarting",
        "--expected",
        "400000",
        "--seed",
        "7",
        "--batch",
        "1024",
    ]);
    let feeder = feed_members(&mut child, n);
    // The output is read as it comes, or the worker would block on a full pipe.
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut out).unwrap();
        out
    });
    // Kill the server once a sixth of the URLs are in, restart it from its append-only file a second
    // later; the worker resends what was not acknowledged.
    let started = std::time::Instant::now();
    loop {
        let held = redis::Client::open(server.url().connection_text())
            .and_then(|c| c.get_connection())
            .and_then(|mut c| redis::cmd("SCARD").arg("restarting").query::<u64>(&mut c))
            .unwrap_or(0);
        if held >= n / 6 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the worker never inserted"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    server.kill();
    std::thread::sleep(Duration::from_secs(1));
    server.restart().unwrap();
    feeder.join().unwrap();
    let o = child.wait_with_output().unwrap();
    let e = stderr(&o);
    assert!(o.status.success(), "{e}");
    assert!(e.contains("sent again"), "no round trip was resent: {e}");
    // The exact set and answers kept for a resend: every URL once, none lost, none twice.
    let out = reader.join().unwrap();
    let lines: Vec<&str> = out.lines().collect();
    let distinct: std::collections::HashSet<&str> = lines.iter().copied().collect();
    assert_eq!(distinct.len(), lines.len(), "a URL passed twice");
    assert_eq!(lines.len() as u64, n, "URLs lost across the restart: {e}");
}

/// A loopback proxy to the server on `target` whose first connection is cut once `cut_after` bytes of
/// replies have passed: the server has run the command whose reply is lost. Later connections pass.
fn cutting_proxy(target: u16, cut_after: usize) -> u16 {
    use std::io::{Read, Write};
    use std::net::{Shutdown, TcpListener, TcpStream};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for (n, client) in listener.incoming().enumerate() {
            let Ok(client) = client else { break };
            let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
                continue;
            };
            let cut = (n == 0).then_some(cut_after);
            let (mut from_client, mut to_server) =
                (client.try_clone().unwrap(), server.try_clone().unwrap());
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut from_client, &mut to_server);
            });
            std::thread::spawn(move || {
                let (mut from_server, mut to_client) = (server, client);
                let mut buf = [0u8; 4096];
                let mut passed = 0;
                while let Ok(got) = from_server.read(&mut buf) {
                    if got == 0 || cut.is_some_and(|limit| passed + got > limit) {
                        let _ = to_client.shutdown(Shutdown::Both);
                        let _ = from_server.shutdown(Shutdown::Both);
                        break;
                    }
                    passed += got;
                    if to_client.write_all(&buf[..got]).is_err() {
                        break;
                    }
                }
            });
        }
    });
    port
}

#[test]
fn a_reply_lost_after_the_server_ran_the_command_drops_no_url() {
    let Some(server) = dedupbench::redis::server::server_for_test(true) else {
        return;
    };
    let n = 100_000u64;
    // redis-bloom sized for 10⁷ holds 10⁵ keys at a rate near 10⁻¹⁵: a lost URL is a lost answer.
    for (structure, expected) in [("redis-set", "200000"), ("redis-bloom", "10000000")] {
        let proxy = cutting_proxy(server.port(), 60_000);
        let url = format!("redis://127.0.0.1:{proxy}");
        let mut child = dedup_worker(&[
            "--redis",
            &url,
            "--structure",
            structure,
            "--name",
            structure,
            "--expected",
            expected,
            "--seed",
            "7",
        ]);
        let feeder = feed_members(&mut child, n);
        let o = child.wait_with_output().unwrap();
        feeder.join().unwrap();
        let e = stderr(&o);
        assert!(o.status.success(), "{structure}: {e}");
        assert!(
            e.contains("sent again"),
            "{structure}: the cut was not seen: {e}"
        );
        let out = String::from_utf8(o.stdout).unwrap();
        assert_eq!(
            out.lines().count() as u64,
            n,
            "{structure}: URLs lost with the lost reply: {e}"
        );
    }
}

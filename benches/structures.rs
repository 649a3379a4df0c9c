//! Criterion micro-benchmarks: insert and contains per registered structure at a cache-resident (10⁵) and a
//! DRAM-resident (10⁷) size, hashing alone and generating alone (and generating between writes that evict
//! the caches, as a build's inserts do). Keys are prepared outside the timed loops;
//! lookups cycle through min(n, 2^20) distinct members spread over the whole key range, so at 10⁷ keys
//! they touch far more cache lines than the caches hold.
//!
//! The `targets` group puts the compared structures side by side at 10⁷ keys, p = 1%, each on its
//! best path (batched, hashing included, the same default hash for all), and prints the target ratios from
//! criterion's own estimates when the run ends.

use criterion::{criterion_group, BatchSize, Criterion, Throughput};
use dedupbench::hash::{HashFn, KeyHasher};
use dedupbench::keys::{KeyBatch, Profile, UrlGenerator};
use dedupbench::kind::BuildConfig;
use dedupbench::membership::Op;
use dedupbench::registry::local_kinds;
use dedupbench::registry::speed_targets;
use std::hint::black_box;

const LOOKUP_KEYS: u64 = 4096;
const MAX_LOOKUP_POOL: u64 = 1 << 20;
const SEED: u64 = 42;

fn members(g: &UrlGenerator, indices: impl Iterator<Item = u64>) -> KeyBatch {
    let mut batch = KeyBatch::with_capacity(4096, 80);
    for i in indices {
        batch.push_with(|buf| g.append_member(i, buf));
    }
    batch
}

fn structures(c: &mut Criterion) {
    let g = UrlGenerator::new(Profile::default_profile(), SEED);
    for n in [100_000u64, 10_000_000] {
        let all = members(&g, 0..n);
        let pool = n.min(MAX_LOOKUP_POOL);
        let lookups = members(&g, (0..pool).map(|i| i * (n / pool)));
        let mut group = c.benchmark_group(format!("n={n}"));
        group.sample_size(10);
        for kind in local_kinds() {
            let config = BuildConfig::new(n, 0.01, SEED);
            group.throughput(Throughput::Elements(n));
            group.bench_function(format!("{}/insert", kind.id()), |b| {
                b.iter_batched(
                    || kind.build(&config).expect("builds"),
                    |mut s| {
                        for i in 0..all.len() {
                            s.insert(all.key(i));
                        }
                        s.finish_build();
                        s
                    },
                    BatchSize::PerIteration,
                )
            });
            let mut built = kind.build(&config).expect("builds");
            for i in 0..all.len() {
                built.insert(all.key(i));
            }
            built.finish_build();
            group.throughput(Throughput::Elements(LOOKUP_KEYS));
            let mut next = 0usize;
            group.bench_function(format!("{}/contains", kind.id()), |b| {
                b.iter(|| {
                    let mut found = 0u32;
                    for _ in 0..LOOKUP_KEYS {
                        found += built.contains(black_box(lookups.key(next))) as u32;
                        next = (next + 1) % lookups.len();
                    }
                    assert_eq!(found as u64, LOOKUP_KEYS);
                    found
                })
            });
        }
        group.finish();
    }
}

fn hashing_and_generating(c: &mut Criterion) {
    let g = UrlGenerator::new(Profile::default_profile(), SEED);
    let mut batch = members(&g, 0..LOOKUP_KEYS);
    let mut group = c.benchmark_group("keys");
    group.throughput(Throughput::Elements(LOOKUP_KEYS));
    // Each hash on the profile's URLs, through the batch loop every structure hashes with.
    for h in HashFn::ALL {
        group.bench_function(format!("hash {} urls", h.id()), |b| {
            b.iter(|| batch.hash_all(black_box(KeyHasher::new(h, SEED))))
        });
    }
    // The hash study's candidates on the keys `bench` times them on (src/run/hash_study.rs).
    for bytes in [40usize, 77, 200] {
        let keys = g.keys_of_length(LOOKUP_KEYS, bytes);
        for h in HashFn::ALL {
            group.bench_function(format!("hash {} {bytes}B", h.id()), |b| {
                b.iter(|| {
                    keys.iter()
                        .fold(0u64, |acc, k| acc ^ h.hash(SEED, black_box(k)).h1)
                })
            });
        }
    }
    let mut out = KeyBatch::with_capacity(4096, 80);
    let mut start = 0u64;
    group.bench_function("generate", |b| {
        b.iter(|| {
            out.clear();
            g.fill_members(start..start + LOOKUP_KEYS, &mut out);
            start += LOOKUP_KEYS;
            out.key_bytes()
        })
    });
    // The same, each batch made after writes that evict the core's caches, a stand-in for a build's
    // inserts between two batches: three random 8-byte writes per URL into 1 GiB (untimed), then the batch
    // (timed). The gap to `generate` is what a build's generator pays for the company it keeps.
    let mut table: Vec<u64> = Vec::new();
    let mut state = SEED;
    group.bench_function("generate after inserts", |b| {
        if table.is_empty() {
            // Written once, so that no page is first touched (and faulted in) while the bench runs.
            table = vec![1; EVICT_TABLE_BYTES / 8];
        }
        b.iter_custom(|iters| {
            let mut timed = std::time::Duration::ZERO;
            for _ in 0..iters {
                for _ in 0..3 * LOOKUP_KEYS {
                    let i = dedupbench::hash::splitmix64(&mut state) as usize & (table.len() - 1);
                    table[i] = table[i].wrapping_add(1);
                }
                let t0 = std::time::Instant::now();
                out.clear();
                g.fill_members(start..start + LOOKUP_KEYS, &mut out);
                timed += t0.elapsed();
                start += LOOKUP_KEYS;
                black_box(out.key_bytes());
                black_box(&mut table);
            }
            timed
        })
    });
    group.finish();
}

/// The table `generate after inserts` writes into between batches (a power of two): far past the caches.
const EVICT_TABLE_BYTES: usize = 1 << 30;

/// Keys of the targets group: the size the registry's speed targets are judged at.
const TARGET_N: u64 = dedupbench::analysis::TARGET_N;

/// The structures the registry's speed targets compare: every peer with targets and ours they name.
fn target_ids() -> Vec<&'static str> {
    let mut ids = Vec::new();
    for t in speed_targets() {
        for id in [t.ours, t.peer] {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    ids
}

/// Batches of 4096 keys: members spread over [0, n), or non-members.
fn lookup_batches(g: &UrlGenerator, n: u64, non_members: bool) -> Vec<KeyBatch> {
    let pool = n.min(MAX_LOOKUP_POOL);
    (0..pool / LOOKUP_KEYS)
        .map(|b| {
            let mut batch = KeyBatch::with_capacity(LOOKUP_KEYS as usize, 80);
            for i in b * LOOKUP_KEYS..(b + 1) * LOOKUP_KEYS {
                if non_members {
                    batch.push_with(|buf| g.append_non_member(i, buf));
                } else {
                    batch.push_with(|buf| g.append_member(i * (n / pool), buf));
                }
            }
            batch
        })
        .collect()
}

/// Both paths of every structure the targets name: `<id>-<op>-per-key` (one call per key) for all, and
/// `<id>-<op>-batched` (the batch API) for those that have one of their own.
fn targets(c: &mut Criterion) {
    let g = UrlGenerator::new(Profile::default_profile(), SEED);
    let n = TARGET_N;
    let mut inserts: Vec<KeyBatch> = (0..n.div_ceil(LOOKUP_KEYS))
        .map(|b| members(&g, b * LOOKUP_KEYS..((b + 1) * LOOKUP_KEYS).min(n)))
        .collect();
    let mut member_batches = lookup_batches(&g, n, false);
    let mut non_member_batches = lookup_batches(&g, n, true);
    let mut group = c.benchmark_group("targets");
    group.sample_size(10);
    for id in target_ids() {
        let Ok(kind) = dedupbench::registry::find(id) else {
            continue;
        };
        let config = BuildConfig::new(n, 0.01, SEED);
        // Keys are hashed as the structures built from `config` hash them: ours and the peers alike.
        let hasher = config.hasher();
        let has_batch_path = kind.build(&config).expect("builds").batch_path();
        let paths: &[(&str, bool)] = if has_batch_path {
            &[("per-key", false), ("batched", true)]
        } else {
            &[("per-key", false)]
        };
        for &(path, batched) in paths {
            group.throughput(Throughput::Elements(n));
            group.bench_function(format!("{id}-{}-{path}", Op::Insert.bench_name()), |b| {
                b.iter_batched(
                    || kind.build(&config).expect("builds"),
                    |mut s| {
                        for batch in inserts.iter_mut() {
                            batch.hash_all(hasher);
                            if batched {
                                s.insert_batch(batch);
                            } else {
                                for (key, hash) in batch.iter() {
                                    s.insert_hashed(key, hash);
                                }
                            }
                        }
                        s
                    },
                    BatchSize::PerIteration,
                )
            });
        }
        let mut built = kind.build(&config).expect("builds");
        for batch in inserts.iter_mut() {
            batch.hash_all(hasher);
            built.insert_batch(batch);
        }
        for (name, batches) in [
            (Op::MemberQuery.bench_name(), &mut member_batches),
            (Op::NonMemberQuery.bench_name(), &mut non_member_batches),
        ] {
            for &(path, batched) in paths {
                group.throughput(Throughput::Elements(LOOKUP_KEYS));
                let mut next = 0usize;
                group.bench_function(format!("{id}-{name}-{path}"), |b| {
                    b.iter(|| {
                        let count = batches.len();
                        let batch = &mut batches[next];
                        next = (next + 1) % count;
                        batch.hash_all(hasher);
                        let batch = black_box(&*batch);
                        if batched {
                            built.contains_batch(batch)
                        } else {
                            batch
                                .iter()
                                .filter(|(key, hash)| built.contains_hashed(key, *hash))
                                .count() as u64
                        }
                    })
                });
            }
        }
    }
    group.finish();
}

/// Criterion's mean time of `targets/<bench>`, in ns per iteration, from its estimates file.
fn estimate_ns(bench: &str) -> Option<f64> {
    let root = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    let path = root
        .join("criterion/targets")
        .join(bench)
        .join("new/estimates.json");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    v["mean"]["point_estimate"].as_f64()
}

/// Prints the speed targets' verdicts. Criterion times each benchmark on its own, minutes apart, so its
/// means are printed as what they are (ns per key of each side, not paired); the ratios, intervals and
/// verdicts come from the latest bench run's `analysis.json` (interleaved rounds, computed once by the
/// analysis layer), which this printer only reads.
fn print_target_ratios() {
    println!("\nSpeed targets at n = 10^7, p = 1%: criterion's means of each side (timed apart, not paired):");
    for t in speed_targets() {
        let (peer, target) = (t.peer, t.target);
        for op in target.ops {
            let bench =
                |id: &str, path: &str| estimate_ns(&format!("{id}-{}-{path}", op.bench_name()));
            let per_key = |ns: Option<f64>, keys: u64| {
                ns.map(|v| format!("{:.1} ns", v / keys as f64))
                    .unwrap_or_else(|| "not measured".into())
            };
            let keys = if *op == Op::Insert {
                TARGET_N
            } else {
                LOOKUP_KEYS
            };
            println!(
                "  {:<10} {:<18} per key {:>12}, batched {:>12}   {peer}: per key {:>12}, batched {:>12}",
                t.ours,
                op.words(),
                per_key(bench(t.ours, "per-key"), keys),
                per_key(bench(t.ours, "batched"), keys),
                per_key(bench(peer, "per-key"), keys),
                per_key(bench(peer, "batched"), keys),
            );
        }
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/latest");
    match dedupbench::analysis::Analysis::read(&dir) {
        Ok(analysis) => {
            println!(
                "Verdicts from {} (interleaved rounds; peer time over ours, median [95% interval]):",
                dir.join(dedupbench::analysis::ANALYSIS_FILE).display()
            );
            for q in analysis.headline().filter(|q| q.n == TARGET_N) {
                println!(
                    "  {:<100} {:<20} {}{}",
                    q.label(),
                    q.figure(),
                    q.verdict.words(),
                    q.target
                        .map(|t| format!("; target {}", t.words()))
                        .unwrap_or_default()
                );
            }
        }
        Err(e) => println!(
            "No verdicts: {e}. `cargo run --release -- bench` times the pairs in interleaved rounds and writes them."
        ),
    }
}

criterion_group!(benches, hashing_and_generating, targets, structures);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    print_target_ratios();
}

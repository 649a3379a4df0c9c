//! Criterion micro-benchmarks: insert and contains per registered structure at a cache-resident (10⁵) and a
//! DRAM-resident (10⁷) size, hashing alone and generating alone. Keys are prepared outside the timed loops;
//! lookups cycle through min(n, 2^20) distinct members spread over the whole key range, so at 10⁷ keys
//! they touch far more cache lines than the caches hold.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use dedupbench::keys::{KeyBatch, Profile, UrlGenerator};
use dedupbench::structures::{local_kinds, BuildConfig};
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
    group.bench_function("hash xxh3-128", |b| {
        b.iter(|| batch.hash_all(black_box(SEED)))
    });
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
    group.finish();
}

criterion_group!(benches, hashing_and_generating, structures);
criterion_main!(benches);

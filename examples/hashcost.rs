use dedupbench::keys::{KeyBatch, Profile, UrlGenerator};
use std::time::Instant;
use xxhash_rust::xxh3::{xxh3_128_with_seed, xxh3_64_with_seed};
fn main() {
    let g = UrlGenerator::new(Profile::load("crawl-frontier").unwrap(), 42);
    let mut b = KeyBatch::with_capacity(1 << 20, 96);
    g.fill_members(0..1 << 20, &mut b);
    for _ in 0..3 {
        let t = Instant::now();
        let mut acc = 0u64;
        for i in 0..b.len() {
            acc = acc.wrapping_add(xxh3_128_with_seed(b.key(i), 7) as u64);
        }
        let a = t.elapsed().as_nanos() as f64 / b.len() as f64;
        let t = Instant::now();
        for i in 0..b.len() {
            acc = acc.wrapping_add(xxh3_64_with_seed(b.key(i), 7));
        }
        let c = t.elapsed().as_nanos() as f64 / b.len() as f64;
        println!("xxh3-128 {a:.1} ns, xxh3-64 {c:.1} ns {acc}");
    }
}

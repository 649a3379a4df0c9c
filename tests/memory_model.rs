//! Memory is measured, not estimated: each structure's own byte count and its model are checked against
//! a counting global allocator. One test in its own binary, so no other test allocates meanwhile.

use dedupbench::keys::{KeyBatch, KeyPipeline, Profile, UrlGenerator};
use dedupbench::kind::{BuildConfig, KeyLengths};
use dedupbench::measure::{heap_snapshot, CountingAllocator};
use dedupbench::registry::local_kinds;

#[global_allocator]
static COUNTING: CountingAllocator = CountingAllocator;

#[test]
fn bytes_held_matches_the_allocator_and_the_model() {
    let g = UrlGenerator::new(Profile::default_profile(), 42);
    let n = 300_000u64;
    let mut scratch = Vec::new();
    let lengths = KeyLengths::from_lengths((0..20_000).map(|i| {
        g.member(i, &mut scratch);
        scratch.len()
    }));
    let mut batch = KeyBatch::with_capacity(4096, 80);
    // Our own structures' accounting; peers' bytes come from their crates and are measured by the harness.
    for kind in local_kinds().filter(|k| !k.peer()) {
        let mut config = BuildConfig::new(n, 0.01, 7);
        config.key_lengths = lengths;
        let before = heap_snapshot();
        let mut s = kind.build(&config).unwrap();
        let mut members = KeyPipeline::members(&g, 0..n);
        while members.next_hashed(&mut batch, s.hasher()).unwrap() > 0 {
            s.insert_batch(&batch);
        }
        let after = heap_snapshot().since(&before);
        let measured = after.requested_bytes as f64;
        let held = s.bytes_held() as f64;
        let model = kind.predicted_memory(&config);
        // The structure's own accounting equals the allocator's count up to its small fixed header.
        assert!(
            (measured - held).abs() <= 512.0,
            "{}: measured {measured} held {held}",
            kind.id()
        );
        // The models are within 1% of the measurement (key lengths are a sample mean).
        assert!(
            (model.heap_bytes / measured - 1.0).abs() < 0.01,
            "{}: model {model:?} measured {measured}",
            kind.id()
        );
        let footprint = after.footprint_bytes as f64;
        assert!(
            (model.footprint_bytes / footprint - 1.0).abs() < 0.02,
            "{}: footprint model {} measured {footprint}",
            kind.id(),
            model.footprint_bytes
        );
        drop(s);
    }
}

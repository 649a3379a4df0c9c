//! Parallel and owner-writes builds give the array a single thread builds, bit for bit.

use super::*;

/// A structure's saved arrays as words (to compare builds bit for bit).
fn words(s: &dyn Membership) -> Vec<u64> {
    s.saved_parts()
        .unwrap()
        .payload
        .iter()
        .flat_map(|p| match p {
            dedupbench::persist::Payload::Words(w) => w.to_vec(),
            dedupbench::persist::Payload::Bytes(b) => b.iter().map(|x| *x as u64).collect(),
        })
        .collect()
}

/// Owner-writes builds (each of three threads sets, with plain stores, only the keys whose bits lie in its
/// part of the array) give the arrays and the new-key count of a one-thread build, for every structure
/// with parts: bitmap, blocked, and bloom with k = 1.
#[test]
fn owner_writes_builds_are_bit_identical_to_single_threaded_ones() {
    let g = generator();
    let n = 300_000u64;
    let mut one_probe = BuildConfig::new(n, 0.01, SEED);
    one_probe.array_bits = Some(n * 3 / 2);
    let mut cases: Vec<(&dyn Kind, BuildConfig)> = local_kinds()
        .map(|k| (k, BuildConfig::new(n, 0.01, SEED)))
        .collect();
    cases.push((find("bloom").unwrap(), one_probe));
    let mut with_parts = Vec::new();
    for (kind, config) in cases {
        let mut single = kind.build(&config).unwrap();
        let mut owned = kind.build(&config).unwrap();
        let Some(inserter) = owned.concurrent_inserter() else {
            continue;
        };
        let parts = 3;
        if inserter.part_of(Default::default(), parts).is_none() {
            continue;
        }
        with_parts.push(format!("{} k = {:?}", kind.id(), owned_k(&config, kind)));
        let single_new = insert_range(single.as_mut(), &g, 0, n);
        let new: u64 = std::thread::scope(|scope| {
            let (inserter, g) = (&inserter, &g);
            let workers: Vec<_> = (0..parts)
                .map(|part| {
                    scope.spawn(move || {
                        over_keys(
                            g,
                            KeyHasher::default_with_seed(SEED),
                            0,
                            n,
                            false,
                            |batch| {
                                // The split the harness routes by, checked key by key against part_of.
                                let mut by_part = vec![Vec::new(); parts];
                                assert!(inserter.split_by_part(batch.hashes(), &mut by_part));
                                for (p, hashes) in by_part.iter().enumerate() {
                                    assert!(hashes
                                        .iter()
                                        .all(|h| inserter.part_of(*h, parts) == Some(p)));
                                }
                                // SAFETY: each thread inserts only its own part, and nothing reads the
                                // filter until every thread is joined.
                                unsafe { inserter.insert_owned(&by_part[part]) }
                            },
                        )
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).sum()
        });
        drop(inserter);
        assert_eq!(
            words(single.as_ref()),
            words(owned.as_ref()),
            "{}",
            kind.id()
        );
        assert_eq!(new, single_new, "{}: new keys", kind.id());
    }
    assert_eq!(
        with_parts,
        [
            "bitmap k = Some(1)",
            "blocked k = Some(8)",
            "bloom k = Some(1)"
        ]
    );
}

/// The probes per key of a structure built from `config`.
fn owned_k(config: &BuildConfig, kind: &dyn Kind) -> Option<u32> {
    kind.build(config).unwrap().geometry().hashes
}

/// Builds with two threads through the shared (atomic bit-or) view and checks the arrays are bit for bit
/// those of a single-threaded build.
#[test]
fn parallel_builds_are_bit_identical_to_single_threaded_ones() {
    let g = generator();
    let n = 300_000u64;
    let mut checked = Vec::new();
    for kind in local_kinds() {
        let config = BuildConfig::new(n, 0.01, SEED);
        let mut single = kind.build(&config).unwrap();
        let mut shared = kind.build(&config).unwrap();
        let Some(inserter) = shared.concurrent_inserter() else {
            continue;
        };
        checked.push(kind.id());
        insert_range(single.as_mut(), &g, 0, n);
        let new: u64 = std::thread::scope(|scope| {
            let inserter = &inserter;
            let g = &g;
            let workers: Vec<_> = (0..2u64)
                .map(|t| {
                    scope.spawn(move || {
                        over_keys(
                            g,
                            KeyHasher::default_with_seed(SEED),
                            t * n / 2,
                            (t + 1) * n / 2,
                            false,
                            |batch| inserter.insert_batch(batch),
                        )
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).sum()
        });
        drop(inserter);
        shared.add_inserted(new);
        assert_eq!(
            words(single.as_ref()),
            words(shared.as_ref()),
            "{}",
            kind.id()
        );
        let (low, high) = new_keys_band(kind, shared.as_ref(), &config);
        assert!(
            (low..=high).contains(&new),
            "{}: {new} new of {n}, expected {low}..={high}",
            kind.id()
        );
        assert_eq!(
            count_present(shared.as_ref(), &g, 0, n, false),
            n,
            "{}",
            kind.id()
        );
    }
    // The kinds with a concurrent inserter, every one of them checked (none skipped).
    assert_eq!(checked, ["bitmap", "bloom", "blocked"]);
}

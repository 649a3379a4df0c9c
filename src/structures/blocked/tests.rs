//! `blocked`'s tests: the remembered sizing, the vector kernels against the scalar path, the salted layout
//! of older files, and the rate of real filters against [`theory::blocked_sector_fpr`] (and against the
//! mean-fill shortcut it replaced).

use super::*;
use crate::hash::hash_key;

#[test]
fn remembered_sizing_is_the_solved_one() {
    for (n, p) in [
        (10_000, 0.01),
        (1_000_000, 0.01),
        (10_000, 0.001),
        (10_000, 0.01),
    ] {
        assert_eq!(
            solved_sizing(n, p),
            theory::blocked_sizing(n, p),
            "n={n} p={p}"
        );
    }
}

fn batch(from: u64, to: u64) -> KeyBatch {
    let mut batch = KeyBatch::default();
    for i in from..to {
        batch.push(format!("https://h{}.example/p/{i}", i % 97).as_bytes());
    }
    batch.hash_all(KeyHasher::default_with_seed(7));
    batch
}

/// The vector kernels (batched and per key) build the same bits and give the same answers as the scalar
/// path, for every k.
#[test]
fn vector_and_scalar_paths_agree_bit_for_bit() {
    if split_kernel() != Kernel::Vector {
        // The kernels never run on such a CPU; a run that means to skip them says so explicitly.
        assert!(
            std::env::var_os(NO_AVX2_OPT_OUT).is_some(),
            "this CPU has no AVX2, so the vector kernels cannot be checked here; set \
             {NO_AVX2_OPT_OUT}=1 to accept that (the scalar path, the only one used here, is tested)"
        );
        eprintln!("not checked: no AVX2 on this CPU and {NO_AVX2_OPT_OUT} is set");
        return;
    }
    let members = batch(0, 20_000);
    let others = batch(1_000_000, 1_020_000);
    for k in 1..=MAX_HASHES {
        let mut h = hash_key(k as u64, b"x");
        for _ in 0..1000 {
            h = hash_key(h.h1, &h.h2.to_le_bytes());
            assert_eq!(
                masks_of(h, k, Kernel::Vector),
                masks_of(h, k, Kernel::Scalar),
                "k = {k}"
            );
        }
        let (mut vector, mut scalar) = (
            Blocked::new(3000, k, KeyHasher::default_with_seed(7)),
            Blocked::new(3000, k, KeyHasher::default_with_seed(7)),
        );
        scalar.kernel = Kernel::Scalar;
        assert_eq!(vector.insert_batch(&members), scalar.insert_batch(&members));
        assert_eq!(vector.body(), scalar.body(), "k = {k}");
        assert_eq!(vector.inserted, scalar.inserted);
        for probe in [&members, &others] {
            let found = vector.contains_batch(probe);
            assert_eq!(found, scalar.contains_batch(probe), "k = {k}");
            let one_by_one = probe
                .iter()
                .filter(|(key, h)| scalar.contains_hashed(key, *h));
            assert_eq!(found, one_by_one.count() as u64, "k = {k}");
        }
        assert_eq!(vector.contains_batch(&members), members.len() as u64);
        // The per-key kernels: inserts one by one build the scalar path's bits and answer as it does.
        let mut per_key = Blocked::new(3000, k, KeyHasher::default_with_seed(7));
        let new = members
            .iter()
            .filter(|(key, h)| per_key.insert_hashed(key, *h))
            .count() as u64;
        assert_eq!(
            (new, per_key.body()),
            (scalar.inserted, scalar.body()),
            "k = {k}"
        );
        // The owner-writes path (one thread owning every block), vector kernel and scalar stores.
        let (mut owned_vector, mut owned_scalar) = (
            Blocked::new(3000, k, KeyHasher::default_with_seed(7)),
            Blocked::new(3000, k, KeyHasher::default_with_seed(7)),
        );
        owned_scalar.kernel = Kernel::Scalar;
        for f in [&mut owned_vector, &mut owned_scalar] {
            let inserter = f
                .concurrent_inserter()
                .expect("blocked inserts concurrently");
            // SAFETY: this thread alone touches the filter, so it owns every block.
            let new = unsafe { inserter.insert_owned(members.hashes()) };
            assert_eq!(new, scalar.inserted, "k = {k}");
        }
        assert_eq!(owned_vector.body(), scalar.body(), "k = {k}");
        assert_eq!(owned_scalar.body(), scalar.body(), "k = {k}");
        for probe in [&members, &others] {
            let answers = |f: &Blocked| -> Vec<bool> {
                probe
                    .iter()
                    .map(|(key, h)| f.contains_hashed(key, h))
                    .collect()
            };
            let (a, b) = (answers(&per_key), answers(&scalar));
            let first_difference = a.iter().zip(&b).position(|(x, y)| x != y);
            assert_eq!(first_difference, None, "k = {k}: first different answer");
        }
    }
}

/// The environment variable that lets the vector-kernel test pass on a CPU without AVX2.
const NO_AVX2_OPT_OUT: &str = "DEDUPBENCH_ALLOW_NO_AVX2";

/// The split layout's masks are the ones its definition gives (probe 8r + j: 6 bits of round r's source at
/// SHIFTS[j], in word j), the bits of k probes are at most k and at least one, and the salted layout of older
/// files is still the one they were saved with (a fixture in tests/cli.rs checks whole files).
#[test]
fn masks_follow_their_layouts() {
    let (h1, h2) = (0xfedc_ba98_7654_3210u64, 0x0123_4567_89ab_cdefu64);
    for k in 1..=MAX_HASHES {
        let masks = split_masks(h1, k);
        let mut expected = [0u64; 8];
        for i in 0..k {
            let src = source(h1, i / 8);
            let shift = 58 - 6 * (i % 8);
            expected[(i % 8) as usize] |= 1 << ((src >> shift) & 63);
        }
        assert_eq!(masks, expected, "k = {k}");
        let bits: u32 = masks.iter().map(|m| m.count_ones()).sum();
        assert!((1..=k).contains(&bits), "k = {k}: {bits} bits");
        // The split layout reads h1 alone.
        assert_eq!(masks_of(KeyHash { h1, h2: !h2 }, k, Kernel::Scalar), masks);
    }
    assert_eq!(source(h1, 0), h1.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    assert_ne!(source(h1, 1), source(h1, 2));
    // The salted layout: probe i at the top 6 bits of h2 times its salt.
    let salted = salted_masks(h2, 9);
    assert_eq!(
        salted[0],
        (1 << (h2.wrapping_mul(SALTS[0]) >> 58)) | (1 << (h2.wrapping_mul(SALTS[8]) >> 58))
    );
    assert_eq!(masks_of(KeyHash { h1, h2 }, 9, Kernel::Salted), salted);
}

/// A salted filter (as loaded from an older file) answers with its own probes on every path, and saves
/// without a layout, so it loads again as salted; a new filter saves the split layout and loads as it.
#[test]
fn salted_filters_keep_their_probes_through_every_path_and_a_save() {
    let members = batch(0, 5_000);
    let others = batch(1_000_000, 1_005_000);
    let mut salted = Blocked::new(1000, 7, KeyHasher::default_with_seed(7));
    salted.kernel = Kernel::Salted;
    assert!(salted.insert_batch(&members) > 4_900);
    assert_eq!(salted.contains_batch(&members), 5_000);
    let per_key = others
        .iter()
        .filter(|(k, h)| salted.contains_hashed(k, *h))
        .count() as u64;
    assert_eq!(per_key, salted.contains_batch(&others));
    let mut split = Blocked::new(1000, 7, KeyHasher::default_with_seed(7));
    split.insert_batch(&members);
    assert_ne!(
        salted.body(),
        split.body(),
        "the two layouts set different bits"
    );
    for (filter, params_bytes) in [(&salted, 12), (&split, 16)] {
        let parts = filter.saved_parts().expect("savable");
        assert_eq!(parts.params.len(), params_bytes);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.dbf");
        let header = crate::persist::Header {
            kind_id: ID,
            hasher: filter.hasher,
            inserted: filter.inserted,
        };
        crate::persist::write(&path, &header, &parts).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let (_, loaded) = crate::persist::decode(&bytes).unwrap();
        let loaded = Blocked::from_saved(loaded).unwrap();
        assert_eq!(
            loaded.kernel == Kernel::Salted,
            filter.kernel == Kernel::Salted
        );
        assert_eq!(loaded.body(), filter.body());
        assert_eq!(loaded.contains_batch(&members), 5_000);
        assert_eq!(
            loaded.contains_batch(&others),
            filter.contains_batch(&others)
        );
    }
}

/// The sectorised rate with the mean-fill shortcut, (1 − (1 − 1/64)^(c·i))^c per word: what the theory
/// used before, kept here to show the test tells the two apart.
fn mean_fill_fpr(m: u64, k: u32, n: u64) -> f64 {
    let lambda = theory::BLOCK_BITS as f64 * n as f64 / m as f64;
    theory::poisson_mixture(lambda, |i| {
        (0..8u32)
            .map(|w| {
                let c = k / 8 + u32::from(w < k % 8);
                theory::bit_set_probability(64, (c as u64 * i) as f64).powi(c as i32)
            })
            .product()
    })
}

struct SplitMix(u64);

impl SplitMix {
    fn hash(&mut self) -> KeyHash {
        let mut next = || {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        KeyHash {
            h1: next(),
            h2: next(),
        }
    }
}

/// Real filters sized for p = 10⁻³, 10⁻⁴ and 10⁻⁵, filled with their n keys (2²¹ blocks each):
/// - the rate every possible query sees on the filter, averaged over its blocks (a block's rate is
///   Π_w (set bits of word w / 64)^c_w), lies within the normal interval (false alarm 10⁻⁹ each way) of that mean (from the
///   blocks' own spread) around [`theory::blocked_sector_fpr`], and where two probes share a word
///   (k = 16 at 10⁻⁴ and 10⁻⁵) the mean-fill shortcut lies outside it (≈ 3% low, the interval ≈ ±2%);
/// - sampled non-member queries through the real probe path fall inside the Wilson interval (10⁻⁹ each way) of that
///   filter's own rate.
#[test]
fn blocked_rate_matches_its_theory_on_real_filters() {
    const BLOCKS: u64 = 1 << 21;
    const QUERIES: u64 = 4_000_000;
    let mut rng = SplitMix(20261204);
    for p in [1e-3, 1e-4, 1e-5] {
        let (_, k) = theory::blocked_sizing(1_000_000, p);
        let bits_per_key = theory::blocked_sizing(1_000_000, p).0 as f64 * 512.0 / 1e6;
        let n = (BLOCKS as f64 * 512.0 / bits_per_key) as u64;
        let m = BLOCKS * theory::BLOCK_BITS;
        let mut filter = Blocked::new(BLOCKS, k, KeyHasher::default_with_seed(0));
        for _ in 0..n {
            filter.insert_hashed(b"", rng.hash());
        }
        let per_word = |w: usize| k / 8 + u32::from((w as u32) < k % 8);
        let (mut sum, mut sum_squares) = (0.0f64, 0.0f64);
        for block in filter.body().chunks_exact(8) {
            let rate: f64 = block
                .iter()
                .enumerate()
                .map(|(w, word)| (word.count_ones() as f64 / 64.0).powi(per_word(w) as i32))
                .product();
            sum += rate;
            sum_squares += rate * rate;
        }
        let mean = sum / BLOCKS as f64;
        let spread = ((sum_squares / BLOCKS as f64 - mean * mean) / BLOCKS as f64).sqrt();
        let (low, high) = (mean - 6.0 * spread, mean + 6.0 * spread);
        let theory = theory::blocked_sector_fpr(m, k, n);
        assert!(
            (low..=high).contains(&theory),
            "p={p} k={k}: filter's rate {mean:.4e} in [{low:.4e}, {high:.4e}], theory {theory:.4e}"
        );
        let shortcut = mean_fill_fpr(m, k, n);
        if k > 8 {
            assert!(
                shortcut < low,
                "p={p} k={k}: the mean-fill shortcut {shortcut:.4e} should fall below [{low:.4e}, {high:.4e}]"
            );
        } else {
            assert!(
                (shortcut / theory - 1.0).abs() < 1e-9,
                "one probe per word: the two agree"
            );
        }
        let hits = (0..QUERIES)
            .filter(|_| filter.contains_hashed(b"", rng.hash()))
            .count() as u64;
        let interval = crate::stats::wilson(hits, QUERIES, crate::stats::CHECK_CONFIDENCE);
        assert!(
            interval.low <= mean && mean <= interval.high,
            "p={p} k={k}: {hits} of {QUERIES} sampled queries hit; the filter's rate is {mean:.4e}"
        );
    }
}

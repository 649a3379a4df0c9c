//! Hostile keys: an attacker who knows the hash (here: seed 0) and the filter's public parameters can pick
//! URLs that a filter reports as "already seen" (so a crawler skips them) without ever inserting them.
//! Keying the hash with a secret seed defeats it: against a keyed filter the same URLs behave like any
//! non-members.
//!
//! The attacker works on a replica (built in this process from the URLs they know the crawler has seen);
//! the victims are the real `dedup` tool, fed those URLs and then the attack, once with `--seed 0` and once
//! with a secret seed. Neither outcome holds by construction: a victim that hashed differently from the
//! replica would pass attack URLs, and one that ignored its seed would drop them all.

mod common;

use dedupbench::keys::{Profile, UrlGenerator};
use dedupbench::kind::BuildConfig;
use dedupbench::registry::find;
use dedupbench::stats::wilson;

const N: u64 = 100_000;
const FPR: f64 = 0.01;

/// Runs `dedup` on `input` with `args`; returns the lines it passed.
fn dedup(args: &[&str], input: &[u8]) -> Vec<Vec<u8>> {
    let args: Vec<&str> = std::iter::once("dedup")
        .chain(args.iter().copied())
        .collect();
    let out = common::run_piped(&args, input);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

#[test]
fn a_secret_seed_defeats_keys_chosen_against_the_unkeyed_hash() {
    let g = UrlGenerator::new(Profile::default_profile(), 11);
    let mut members = Vec::new();
    let mut buf = Vec::new();
    for i in 0..N {
        g.member(i, &mut buf);
        members.extend_from_slice(&buf);
        members.push(b'\n');
    }
    // The attacker's replica: the crawler's public parameters (n, p, the default structure) and seed 0.
    let mut replica = find("bloom")
        .unwrap()
        .build(&BuildConfig::new(N, FPR, 0))
        .unwrap();
    for line in members.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        replica.insert(line);
    }
    let mut attack = Vec::new();
    let mut chosen = 0u64;
    let mut j = 0;
    while chosen < 5_000 {
        g.non_member(j, &mut buf);
        if replica.contains(&buf) {
            attack.extend_from_slice(&buf);
            attack.push(b'\n');
            chosen += 1;
        }
        j += 1;
    }

    let dir = tempfile::tempdir().unwrap();
    let n = N.to_string();
    for (seed, unkeyed) in [("0", true), ("24011873993965", false)] {
        let saved = dir.path().join(format!("seed-{seed}.filter"));
        let saved = saved.to_str().unwrap();
        let args = ["--structure", "bloom", "--expected", &n, "--seed", seed];
        dedup(&[&args[..], &["--save", saved]].concat(), &members);
        let passed = dedup(&["--load", saved], &attack).len() as u64;
        let seen = chosen - passed;
        if unkeyed {
            assert_eq!(
                passed, 0,
                "against the unkeyed crawler every chosen URL should be 'seen'"
            );
        } else {
            let interval = wilson(seen, chosen, dedupbench::stats::CHECK_CONFIDENCE);
            // `dedup` inserts every URL it passes (one it drops sets no new bit), so when chosen URL i
            // arrives the filter holds the bits of N + the URLs passed so far, ≈ N + 0.99·i: the theory is
            // the mean rate over fills of N + i, not the rate at N (1.00% at N, 1.26% at N + 5000: a mean
            // of 1.130%; counting only the passed URLs gives 1.128%).
            let theory = (0..chosen)
                .map(|i| replica.expected_fpr(N + i))
                .sum::<f64>()
                / chosen as f64;
            assert!(
                interval.contains(theory),
                "keyed crawler: {seen}/{chosen} chosen URLs dropped as seen, 99.9% interval [{:.4}, {:.4}], theory {theory:.4}",
                interval.low,
                interval.high
            );
        }
    }
}

//! Hostile keys: an attacker who knows the hash (here: seed 0) can pick URLs that a filter reports as
//! "already seen" (so a crawler skips them) without ever inserting them. Keying the hash with a secret seed
//! defeats it: against a keyed filter the same URLs behave like any non-members.

use dedupbench::keys::{Profile, UrlGenerator};
use dedupbench::registry::find;
use dedupbench::stats::wilson;
use dedupbench::structures::{BuildConfig, Membership};

fn filter(seed: u64, members: &UrlGenerator, n: u64) -> Box<dyn Membership> {
    let mut s = find("bloom")
        .unwrap()
        .build(&BuildConfig::new(n, 0.01, seed))
        .unwrap();
    let mut buf = Vec::new();
    for i in 0..n {
        members.member(i, &mut buf);
        s.insert(&buf);
    }
    s
}

#[test]
fn a_secret_seed_defeats_keys_chosen_against_the_unkeyed_hash() {
    let g = UrlGenerator::new(Profile::default_profile(), 11);
    let n = 100_000;
    let unkeyed = filter(0, &g, n);
    // The attack: search URLs the unkeyed filter already "knows", without inserting any of them.
    let mut attack = Vec::new();
    let mut buf = Vec::new();
    let mut j = 0;
    while attack.len() < 5_000 {
        g.non_member(j, &mut buf);
        if unkeyed.contains(&buf) {
            attack.push(buf.clone());
        }
        j += 1;
    }
    assert!(
        attack.iter().all(|k| unkeyed.contains(k)),
        "against the unkeyed filter every chosen URL is 'seen'"
    );

    let keyed = filter(0x005E_C2E7_5EED, &g, n);
    let hits = attack.iter().filter(|k| keyed.contains(k)).count() as u64;
    let theory = keyed.expected_fpr(n);
    let interval = wilson(hits, attack.len() as u64, 0.999);
    assert!(
        interval.contains(theory),
        "keyed filter: {hits}/{} chosen URLs reported seen, 99.9% interval [{:.4}, {:.4}], theory {theory:.4}",
        attack.len(),
        interval.low,
        interval.high
    );
}

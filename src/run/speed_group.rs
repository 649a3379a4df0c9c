//! Interleaved, paired timing of the structures the registry's speed targets compare, so that a ratio
//! between two of them survives a machine whose speed drifts by up to 2× within minutes.
//!
//! At one n every compared structure is built side by side, once per path it has (one call per key; its
//! batch API where it has its own), and timed in R rounds. A round inserts its share of the members into
//! every (structure, path), then runs its slice of every lookup (0%, 25%, 50%, 75% and 100% members),
//! each on the same keys for every (structure, path), in an order shuffled per round and lookup (seeded).
//! Drift between rounds then moves both sides of a ratio alike, and the per-round ratios are paired draws
//! (`crate::analysis::speed`).
//!
//! Each round has a fresh build of its own (then its share of the members is all n) wherever the keys
//! allow ([`BUILD_KEYS_BUDGET`]): where a build's arrays land in memory (huge pages granted or not, cache
//! sets) holds for that build and changes from run to run, so rounds that shared one build would share
//! that luck and give an interval too narrow for a rerun. Above the budget the rounds share fewer builds,
//! each inserting n over its rounds, and the record says how many. Keys are made and hashed untimed
//! before a slice is timed, with the one hasher every structure of the run shares, so a ratio compares
//! the structures' calls alone ([`SpeedTiming::ProbeOnly`]); the hash's own cost on each lookup slice is
//! timed apart and recorded beside them.
//!
//! Invariants: every (structure, path) sees the same keys in the same round; a member lookup finds every
//! member (a false negative is a failure of the run); the two builds of a structure call the same number
//! of keys new. Memory: the group holds every structure twice at most, plus one chunk of keys; where that
//! does not fit, the structures that fit with a partner are timed and the rest are named in the record.

use super::pass::{insert_hashed_batch, query_hashed_batch};
use super::*;
use crate::hash::KeyHasher;
use crate::keys::KeyPipeline;
use crate::membership::{CallPath, Op};
use crate::results::{LeftOut, RoundSeries, SpeedGroupRecord, SpeedTiming};
use rand::seq::SliceRandom;
use rand::SeedableRng;

/// Keys of each lookup in each round: long enough (a few ms per slice) that the clock's resolution and a
/// stray interrupt weigh little against it, short enough that a round takes well under a second.
pub const LOOKUP_KEYS_PER_ROUND: u64 = 1 << 17;

/// Keys each structure of a group may take over all its builds: up to 1.5·10⁸ keys every round has a
/// build of its own (15 rounds at 10⁷); above, the rounds share fewer builds (one from 1.5·10⁸ keys), so a
/// 10⁹-key group costs one build, not fifteen.
const BUILD_KEYS_BUDGET: u64 = 150_000_000;

/// A build's first n / this many members are inserted untimed: enough that every 4 KiB page of the
/// arrays has been written (a split-block filter at 10 bits per key touches one page per key, so its
/// p pages take ≈ p·ln p keys: 2.6·10⁴ of the 1.6·10⁵ at 10⁷ keys).
const WARM_FRACTION: u64 = 64;

/// Members made and held at once while inserting: a round's slice is timed a chunk at a time, so a
/// slice of 10⁹/R members never has to be held whole.
const CHUNK_KEYS: u64 = 1 << 18;

/// The in-process kinds of `kinds` that are one side of a speed target whose other side is in `kinds`
/// too, in `kinds`' order.
pub fn compared_kinds(kinds: &[&'static dyn Kind]) -> Vec<&'static dyn Kind> {
    let present = |id: &str| kinds.iter().any(|k| k.id() == id);
    kinds
        .iter()
        .copied()
        .filter(|k| k.external().is_none() && !k.remote())
        .filter(|k| {
            crate::registry::speed_targets().any(|t| {
                (t.ours == k.id() && present(t.peer)) || (t.peer == k.id() && present(t.ours))
            })
        })
        .collect()
}

/// Whether `ids` holds both sides of some speed target.
fn has_a_pair(ids: &[&str]) -> bool {
    crate::registry::speed_targets().any(|t| ids.contains(&t.peer) && ids.contains(&t.ours))
}

/// One (structure, path) of a group: its own build, and what it measured.
struct Unit {
    kind: usize,
    path: CallPath,
    structure: Box<dyn Membership>,
    new_keys: u64,
    ns_per_key: Vec<(Op, Vec<f64>)>,
    /// The first wrong answer it gave (a false negative, or an answer its other build did not give).
    failure: Option<String>,
}

impl Unit {
    fn new(kind: usize, path: CallPath, structure: Box<dyn Membership>) -> Self {
        Unit {
            kind,
            path,
            structure,
            new_keys: 0,
            ns_per_key: Vec::new(),
            failure: None,
        }
    }

    fn push(&mut self, op: Op, ns_per_key: f64) {
        match self.ns_per_key.iter_mut().find(|(o, _)| *o == op) {
            Some((_, v)) => v.push(ns_per_key),
            None => self.ns_per_key.push((op, vec![ns_per_key])),
        }
    }

    /// Inserts (or looks up) every key of `batches`, hashed already, on this unit's path; returns the
    /// nanoseconds taken and the keys called new (or found). Only the structure's calls are timed.
    fn time(&mut self, batches: &[KeyBatch], insert: bool) -> (u64, u64) {
        let mut ns = 0u64;
        let mut hits = 0u64;
        for batch in batches {
            // The keys and hashes were made on this core, but another unit may have pushed them out of
            // its cache (a structure that reads the key bytes, an exact set, reads them again).
            std::hint::black_box(batch.touch());
            std::hint::black_box(batch.hashes().iter().step_by(4).fold(0, |a, h| a ^ h.h1));
            let t0 = Instant::now();
            hits += if insert {
                insert_hashed_batch(self.structure.as_mut(), batch, self.path)
            } else {
                query_hashed_batch(self.structure.as_ref(), batch, self.path)
            };
            ns += t0.elapsed().as_nanos() as u64;
        }
        (ns, hits)
    }
}

/// Keys drawn in order from a source that is opened again when it runs out.
struct Cycle<'s> {
    open: Box<dyn Fn() -> Result<KeyPipeline<'s>> + 's>,
    pipe: KeyPipeline<'s>,
    scratch: KeyBatch,
}

impl<'s> Cycle<'s> {
    fn new(open: impl Fn() -> Result<KeyPipeline<'s>> + 's) -> Result<Self> {
        let pipe = open()?.with_batch_keys(BATCH_KEYS);
        Ok(Cycle {
            open: Box::new(open),
            pipe,
            scratch: KeyBatch::with_capacity(BATCH_KEYS, 96),
        })
    }

    /// The next `count` keys, appended to `out` (one batch of at most [`BATCH_KEYS`] keys each).
    fn take(&mut self, count: u64, out: &mut Vec<KeyBatch>) -> Result<()> {
        let mut left = count;
        let mut reopened = false;
        while left > 0 {
            self.pipe
                .set_batch_keys(left.min(BATCH_KEYS as u64) as usize);
            let made = self.pipe.make(&mut self.scratch)?;
            if made == 0 {
                if reopened {
                    return Err(Error::invalid("speed group", "a key source holds no key"));
                }
                self.pipe = (self.open)()?.with_batch_keys(BATCH_KEYS);
                reopened = true;
                continue;
            }
            reopened = false;
            out.push(self.scratch.clone());
            left -= made as u64;
        }
        Ok(())
    }
}

/// The keys of `batches`, in order.
fn keys_of(batches: &[KeyBatch]) -> impl Iterator<Item = &[u8]> {
    batches
        .iter()
        .flat_map(|b| (0..b.len()).map(move |i| b.key(i)))
}

/// One lookup's keys in batches of [`BATCH_KEYS`]: where `is_member` says, the next key of `members`,
/// elsewhere the next of `non_members` (each list long enough for its share).
fn mixed_batches(
    is_member: &[bool],
    members: &[KeyBatch],
    non_members: &[KeyBatch],
) -> Vec<KeyBatch> {
    let (mut from_members, mut from_non_members) = (keys_of(members), keys_of(non_members));
    let mut out: Vec<KeyBatch> = Vec::new();
    for member in is_member {
        // The lists hold exactly the members and non-members the mix asks for: a key short would
        // shrink the batch while the time is still divided by the mix's count.
        let key = if *member {
            from_members.next()
        } else {
            from_non_members.next()
        }
        .expect("the key lists hold as many keys as the mix takes");
        if out.last().is_none_or(|b| b.len() == BATCH_KEYS) {
            out.push(KeyBatch::with_capacity(BATCH_KEYS, 96));
        }
        if let Some(batch) = out.last_mut() {
            batch.push(key);
        }
    }
    out
}

/// How the group's R rounds fall into its builds: round r in build ⌊r·B/R⌋, so the total stays R.
fn rounds_of_build(rounds: u64, builds: u64, build: u64) -> u64 {
    (build + 1) * rounds / builds - build * rounds / builds
}

/// What the group needs in memory, and why it leaves a structure out.
struct Sizing {
    /// The keys of one chunk of members, or of one lookup held twice, whichever is larger.
    keys_bytes: f64,
    /// Each kind's bytes over its builds (two where it has a batch path of its own), allocator slack in.
    kind_bytes: Vec<f64>,
}

impl Sizing {
    fn total(&self, kept: &[usize]) -> f64 {
        self.keys_bytes + kept.iter().map(|i| self.kind_bytes[*i]).sum::<f64>()
    }
}

/// Which of `kinds` to time together within `limit` bytes, and the rest with why: the largest is left
/// out first, then whatever no longer has a partner.
fn fit_group(
    kinds: &[&'static dyn Kind],
    sizing: &Sizing,
    limit: f64,
) -> (Vec<usize>, Vec<LeftOut>) {
    let human = crate::units::human_bytes;
    let mut kept: Vec<usize> = (0..kinds.len()).collect();
    let mut left_out = Vec::new();
    if sizing.keys_bytes > limit {
        for i in kept.drain(..) {
            left_out.push(LeftOut {
                structure: kinds[i].id().to_string(),
                reason: format!(
                    "the keys of one round alone need ≈ {}, more than the {} available",
                    human(sizing.keys_bytes),
                    human(limit)
                ),
            });
        }
        return (kept, left_out);
    }
    while !kept.is_empty() && sizing.total(&kept) > limit {
        let need = sizing.total(&kept);
        let largest = kept
            .iter()
            .copied()
            .max_by(|a, b| sizing.kind_bytes[*a].total_cmp(&sizing.kind_bytes[*b]))
            .unwrap_or(kept[0]);
        kept.retain(|i| *i != largest);
        left_out.push(LeftOut {
            structure: kinds[largest].id().to_string(),
            reason: format!(
                "the group needs ≈ {} with it ({} its own), more than the {} available",
                human(need),
                human(sizing.kind_bytes[largest]),
                human(limit)
            ),
        });
        let still: Vec<&'static dyn Kind> = kept.iter().map(|i| kinds[*i]).collect();
        let partnered = compared_kinds(&still);
        let before = kept.clone();
        kept.retain(|i| partnered.iter().any(|k| k.id() == kinds[*i].id()));
        for i in before.into_iter().filter(|i| !kept.contains(i)) {
            left_out.push(LeftOut {
                structure: kinds[i].id().to_string(),
                reason: format!(
                    "no partner left in the group once {} was left out",
                    kinds[largest].id()
                ),
            });
        }
    }
    (kept, left_out)
}

impl Runner<'_> {
    /// Times the compared structures of the run at `n` in interleaved rounds and records the group
    /// (nothing when the run holds no pair of them).
    pub fn run_speed_group(&mut self, n: u64) -> Result<()> {
        let all = compared_kinds(&self.plan.kinds);
        if all.is_empty() {
            return Ok(());
        }
        let config = self.config(self.source.distinct_members(n));
        let rounds = self.plan.speed_rounds.max(super::RunPlan::MIN_SPEED_ROUNDS) as u64;
        // Fresh builds, so the rounds sample where each build's arrays landed in memory (pages, huge
        // pages, cache sets), which stays put through one build and differs from run to run.
        let builds = (BUILD_KEYS_BUDGET / n.max(1)).clamp(1, rounds);
        let mean_key_bytes = self.key_lengths.mean_bytes.max(1.0);
        // One chunk of members in batches (bytes, offsets, hashes), or one lookup's keys held twice (owned
        // keys of 24 bytes' header each, then the batches), whichever is larger.
        let keys_bytes = (CHUNK_KEYS as f64 * (mean_key_bytes + 4.0 + 16.0))
            .max(2.0 * LOOKUP_KEYS_PER_ROUND as f64 * (mean_key_bytes + 24.0 + 4.0 + 16.0));
        // Whether a kind has a batch path of its own (then it is built twice), from a build of 1000 keys.
        let small = self.config(1000);
        let mut kind_bytes = Vec::new();
        for k in &all {
            let paths = if k.build(&small)?.batch_path() {
                2.0
            } else {
                1.0
            };
            kind_bytes.push(paths * k.predicted_peak_bytes(&config) * 1.05);
        }
        let sizing = Sizing {
            keys_bytes,
            kind_bytes,
        };
        machine::release_free_heap();
        let (kept, left_out) = fit_group(&all, &sizing, self.memory_limit() as f64);
        let kinds: Vec<&'static dyn Kind> = kept.iter().map(|i| all[*i]).collect();
        let ids: Vec<&str> = kinds.iter().map(|k| k.id()).collect();
        let mut record = SpeedGroupRecord {
            n,
            rounds: rounds as u32,
            builds: builds as u32,
            insert_keys_per_round: n.div_ceil(rounds.div_ceil(builds)),
            lookup_keys_per_round: LOOKUP_KEYS_PER_ROUND,
            order_seed: self.plan.seed ^ n.rotate_left(17) ^ 0x5EED_0F0D,
            structures: ids.iter().map(|s| s.to_string()).collect(),
            left_out,
            predicted_peak_bytes: sizing.total(&kept),
            timed: SpeedTiming::ProbeOnly,
            hash_ns_per_key: Vec::new(),
            series: Vec::new(),
        };
        if !has_a_pair(&ids) {
            return self.record(Record::SpeedGroup(record));
        }
        let failures = self.time_group(&kinds, &config, n, builds, &mut record)?;
        self.failures.extend(failures);
        machine::release_free_heap();
        self.record(Record::SpeedGroup(record))
    }

    /// Builds and times `kinds` over the record's rounds and builds, appending every round's figure to
    /// the record's series; returns the failures found (false negatives, builds that disagree).
    fn time_group(
        &self,
        kinds: &[&'static dyn Kind],
        config: &BuildConfig,
        n: u64,
        builds: u64,
        record: &mut SpeedGroupRecord,
    ) -> Result<Vec<String>> {
        let rounds = record.rounds as u64;
        let mut rng = rand::rngs::StdRng::seed_from_u64(record.order_seed);
        let label = format!("speed group n={}", crate::units::human_count(n as f64));
        // One cursor of each kind of lookup key for the whole group: every round looks up new keys.
        let source = &self.source;
        let non_member_count = source.non_member_count(u64::MAX).min(1 << 40);
        let mut lookups = Lookups {
            members: Cycle::new(move || source.members(n))?,
            non_members: Cycle::new(move || source.non_members(non_member_count))?,
        };
        let mut failures = Vec::new();
        for build in 0..builds {
            let mut units = self.build_units(kinds, config, &mut rng)?;
            let hasher = units[0].structure.hasher();
            if units.iter().any(|u| u.structure.hasher() != hasher) {
                return Err(Error::invalid(
                    "speed group",
                    "the compared structures hash differently; a ratio between them would not be like for like",
                ));
            }
            let its_rounds = rounds_of_build(rounds, builds, build);
            let label = format!("{label}, build {}/{builds}", build + 1);
            self.interleave_inserts(&mut units, n, its_rounds, hasher, &mut rng, &label)?;
            self.interleave_lookups(
                &mut units,
                &mut lookups,
                (its_rounds, hasher),
                &mut record.hash_ns_per_key,
                &mut rng,
                &label,
            )?;
            for (i, kind) in kinds.iter().enumerate() {
                let mine: Vec<&Unit> = units.iter().filter(|u| u.kind == i).collect();
                if mine.iter().any(|u| u.new_keys != mine[0].new_keys) {
                    failures.push(format!(
                        "{} at n = {n}: in the speed group its builds called {:?} keys new (per path)",
                        kind.id(),
                        mine.iter().map(|u| u.new_keys).collect::<Vec<_>>()
                    ));
                }
                if let Some(failure) = mine.iter().find_map(|u| u.failure.as_ref()) {
                    failures.push(format!("{} at n = {n}: {failure}", kind.id()));
                }
            }
            for unit in units {
                let structure = kinds[unit.kind].id();
                for (op, ns_per_key) in unit.ns_per_key {
                    match record
                        .series
                        .iter_mut()
                        .find(|s| s.structure == structure && s.op == op && s.path == unit.path)
                    {
                        Some(series) => series.ns_per_key.extend(ns_per_key),
                        None => record.series.push(RoundSeries {
                            structure: structure.to_string(),
                            op,
                            path: unit.path,
                            ns_per_key,
                        }),
                    }
                }
            }
            machine::release_free_heap();
        }
        Ok(failures)
    }

    /// A fresh build of every kind on its per-key path, and another on its batch path where it has one,
    /// allocated in a shuffled order (so no kind always takes its memory first).
    fn build_units(
        &self,
        kinds: &[&'static dyn Kind],
        config: &BuildConfig,
        rng: &mut rand::rngs::StdRng,
    ) -> Result<Vec<Unit>> {
        let mut order: Vec<usize> = (0..kinds.len()).collect();
        order.shuffle(rng);
        let mut units = Vec::new();
        for i in order {
            let structure = kinds[i].build(config)?;
            let batched = structure.batch_path();
            units.push(Unit::new(i, CallPath::PerKey, structure));
            if batched {
                units.push(Unit::new(i, CallPath::Batched, kinds[i].build(config)?));
            }
        }
        units.sort_by_key(|u| (u.kind, u.path == CallPath::Batched));
        Ok(units)
    }

    /// Round r inserts members [n·r/R, n·(r+1)/R) into every unit, in an order shuffled per round. A
    /// build's first [`WARM_FRACTION`] of the members goes in untimed (interleaved alike): those keys
    /// fault the arrays' pages in, a one-time cost that depends on the kernel's state of the moment and
    /// on whether a structure asks for huge pages, not on how it inserts.
    fn interleave_inserts(
        &self,
        units: &mut [Unit],
        n: u64,
        rounds: u64,
        hasher: KeyHasher,
        rng: &mut rand::rngs::StdRng,
        label: &str,
    ) -> Result<()> {
        let mut members = self.source.members(n)?.with_batch_keys(BATCH_KEYS);
        let mut chunk: Vec<KeyBatch> = Vec::new();
        self.progress
            .start(&format!("{label}: insert rounds"), rounds);
        for r in 0..rounds {
            let slice = n * (r + 1) / rounds - n * r / rounds;
            let mut warm = if r == 0 {
                n.div_ceil(WARM_FRACTION).min(slice / 2)
            } else {
                0
            };
            let timed_keys = slice - warm;
            let mut order: Vec<usize> = (0..units.len()).collect();
            order.shuffle(rng);
            let mut ns = vec![0u64; units.len()];
            let mut left = slice;
            while left > 0 {
                chunk.clear();
                let in_warm_up = warm > 0;
                let mut want = if in_warm_up { warm } else { left }.min(CHUNK_KEYS);
                if in_warm_up {
                    warm -= want;
                }
                while want > 0 {
                    members.set_batch_keys(want.min(BATCH_KEYS as u64) as usize);
                    let mut batch = KeyBatch::with_capacity(BATCH_KEYS, 96);
                    let made = members.next_hashed(&mut batch, hasher)? as u64;
                    if made == 0 {
                        return Err(Error::invalid(
                            "speed group",
                            format!("the members ran out before n = {n}"),
                        ));
                    }
                    chunk.push(batch);
                    want -= made;
                    left -= made;
                }
                for &u in &order {
                    if self.stopped() {
                        self.progress.finish();
                        return Err(interrupted_error());
                    }
                    let (t, new) = units[u].time(&chunk, true);
                    if !in_warm_up {
                        ns[u] += t;
                    }
                    units[u].new_keys += new;
                }
            }
            if r + 1 == rounds {
                // Static filters build themselves once all keys are in: part of the last round's cost.
                for &u in &order {
                    let t0 = Instant::now();
                    units[u].structure.finish_build();
                    ns[u] += t0.elapsed().as_nanos() as u64;
                }
            }
            for (u, unit) in units.iter_mut().enumerate() {
                unit.push(Op::Insert, ns[u] as f64 / timed_keys.max(1) as f64);
            }
            self.progress.advance(1);
        }
        self.progress.finish();
        Ok(())
    }

    /// Each round runs a new slice of every lookup on every unit, each lookup in an order shuffled per
    /// round; a mixed lookup's members sit at seeded random positions among its non-members. A member
    /// lookup must find every member, and every build of a structure must answer alike.
    fn interleave_lookups(
        &self,
        units: &mut [Unit],
        lookups: &mut Lookups<'_>,
        (rounds, hasher): (u64, KeyHasher),
        hash_ns_per_key: &mut Vec<f64>,
        rng: &mut rand::rngs::StdRng,
        label: &str,
    ) -> Result<()> {
        let q = LOOKUP_KEYS_PER_ROUND;
        self.progress
            .start(&format!("{label}: lookup rounds"), rounds);
        for _ in 0..rounds {
            for op in Op::LOOKUPS {
                let percent = op.member_percent().unwrap_or(0) as u64;
                let member_keys = q * percent / 100;
                let mut is_member: Vec<bool> = (0..q).map(|i| i < member_keys).collect();
                is_member.shuffle(rng);
                let (mut members, mut non_members) = (Vec::new(), Vec::new());
                lookups.members.take(member_keys, &mut members)?;
                lookups
                    .non_members
                    .take(q - member_keys, &mut non_members)?;
                let mut batches = mixed_batches(&is_member, &members, &non_members);
                // Hashed once, timed apart: the units time their probes alone.
                for batch in &batches {
                    std::hint::black_box(batch.touch());
                }
                let t0 = Instant::now();
                for batch in &mut batches {
                    batch.hash_all(hasher);
                }
                hash_ns_per_key.push(t0.elapsed().as_nanos() as f64 / q as f64);
                let mut order: Vec<usize> = (0..units.len()).collect();
                order.shuffle(rng);
                let mut found = vec![0u64; units.len()];
                for &u in &order {
                    if self.stopped() {
                        self.progress.finish();
                        return Err(interrupted_error());
                    }
                    let (t, hits) = units[u].time(&batches, false);
                    units[u].push(op, t as f64 / q as f64);
                    found[u] = hits;
                }
                for (u, unit) in units.iter_mut().enumerate() {
                    // No false positive can hide a false negative when every key is a member.
                    let missed = if percent == 100 {
                        found[u] != member_keys
                    } else {
                        found[u] < member_keys
                    };
                    if missed && unit.failure.is_none() {
                        unit.failure = Some(format!(
                            "in the speed group, its {} ({}) found {} of {member_keys} members",
                            op.words(),
                            unit.path.key(),
                            found[u]
                        ));
                    }
                }
                for a in 0..units.len() {
                    for b in a + 1..units.len() {
                        if units[a].kind == units[b].kind
                            && found[a] != found[b]
                            && units[a].failure.is_none()
                        {
                            units[a].failure = Some(format!(
                                "in the speed group, its {} and {} builds found {} and {} of the same {} keys",
                                units[a].path.key(),
                                units[b].path.key(),
                                found[a],
                                found[b],
                                op.words()
                            ));
                        }
                    }
                }
            }
            self.progress.advance(1);
        }
        self.progress.finish();
        Ok(())
    }
}

/// The group's cursors of lookup keys.
struct Lookups<'s> {
    members: Cycle<'s>,
    non_members: Cycle<'s>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::find;

    #[test]
    fn the_compared_kinds_are_both_sides_of_a_target_present() {
        let kinds: Vec<&'static dyn Kind> = ["hashset", "bloom", "fastbloom", "blocked"]
            .iter()
            .map(|id| find(id).unwrap())
            .collect();
        let ids: Vec<&str> = compared_kinds(&kinds).iter().map(|k| k.id()).collect();
        // blocked's peers are fastbloom (present) and sbbf (absent): it stays, with fastbloom.
        assert_eq!(ids, ["bloom", "fastbloom", "blocked"]);
        let alone: Vec<&'static dyn Kind> = vec![find("bloom").unwrap(), find("sbbf").unwrap()];
        assert!(compared_kinds(&alone).is_empty());
        assert!(has_a_pair(&["blocked", "sbbf"]));
        assert!(!has_a_pair(&["bloom", "blocked"]));
    }

    #[test]
    fn rounds_fall_into_builds_without_changing_their_number() {
        for (rounds, builds) in [(15, 15), (15, 1), (16, 15), (1000, 7), (15, 4)] {
            let per: Vec<u64> = (0..builds)
                .map(|b| rounds_of_build(rounds, builds, b))
                .collect();
            assert_eq!(per.iter().sum::<u64>(), rounds, "{rounds} over {builds}");
            assert!(per.iter().all(|r| *r >= rounds / builds), "{per:?}");
        }
    }

    /// The largest goes first, and a structure left without a partner goes with it; keys that alone do
    /// not fit empty the group, saying so.
    #[test]
    fn a_group_over_memory_leaves_out_the_largest_and_the_partnerless() {
        let kinds: Vec<&'static dyn Kind> = ["bloom", "blocked", "fastbloom", "sbbf"]
            .iter()
            .map(|id| find(id).unwrap())
            .collect();
        let sizing = Sizing {
            keys_bytes: 10.0,
            kind_bytes: vec![40.0, 50.0, 20.0, 25.0],
        };
        let (kept, left) = fit_group(&kinds, &sizing, 1000.0);
        assert_eq!(kept, [0, 1, 2, 3]);
        assert!(left.is_empty());
        // Without blocked (the largest), sbbf has no partner; bloom and fastbloom fit in 70.
        let (kept, left) = fit_group(&kinds, &sizing, 100.0);
        assert_eq!(kept, [0, 2]);
        let names: Vec<&str> = left.iter().map(|l| l.structure.as_str()).collect();
        assert_eq!(names, ["blocked", "sbbf"]);
        assert!(left[0].reason.contains("the group needs"), "{left:?}");
        assert!(left[1].reason.contains("no partner left"), "{left:?}");
        let (kept, left) = fit_group(&kinds, &sizing, 5.0);
        assert!(kept.is_empty());
        assert_eq!(left.len(), 4);
        assert!(left
            .iter()
            .all(|l| l.reason.contains("keys of one round alone")));
    }

    #[test]
    fn a_mixed_lookup_takes_each_key_where_its_mask_says() {
        let batch = |keys: &[&[u8]]| {
            let mut b = KeyBatch::default();
            keys.iter().for_each(|k| b.push(k));
            b
        };
        let members = [batch(&[b"m0", b"m1"]), batch(&[b"m2"])];
        let non_members = [batch(&[b"n0", b"n1"])];
        let mask = [false, true, true, false, true];
        let out = mixed_batches(&mask, &members, &non_members);
        let got: Vec<&[u8]> = keys_of(&out).collect();
        assert_eq!(got, [&b"n0"[..], b"m0", b"m1", b"n1", b"m2"]);
    }
}

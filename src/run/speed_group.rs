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
//! each inserting n over its rounds, and the record says how many. Keys are made untimed before a slice is
//! timed; hashing is timed with the probe, as in the grid's cells, with the one hasher every structure of
//! the run shares.
//!
//! Invariants: every (structure, path) sees the same keys in the same round; a member lookup finds every
//! member (a false negative is a failure of the run); the two builds of a structure call the same number
//! of keys new. Memory: the group holds every structure twice at most, plus one chunk of keys; where that
//! does not fit, the structures that fit with a partner are timed and the rest are named in the record.

use super::*;
use crate::hash::KeyHasher;
use crate::keys::KeyPipeline;
use crate::results::{LeftOut, RoundSeries, SpeedGroupRecord};
use crate::structures::{CallPath, Op};
use rand::seq::SliceRandom;
use rand::SeedableRng;

/// Keys of each lookup in each round: long enough (a few ms per slice) that the clock's resolution and a
/// stray interrupt weigh little against it, short enough that a round takes well under a second.
pub const LOOKUP_KEYS_PER_ROUND: u64 = 1 << 17;

/// Keys each structure of a group may take over all its builds: up to 1.5·10⁸ keys every round has a
/// build of its own (15 rounds at 10⁷); above, the rounds share fewer builds (one from 1.5·10⁸ keys), so a
/// 10⁹-key group costs one build, not fifteen.
const BUILD_KEYS_BUDGET: u64 = 150_000_000;

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
            crate::peers::SPEED_TARGETS.iter().any(|(peer, targets)| {
                targets.iter().any(|t| {
                    (t.ours == k.id() && present(peer)) || (*peer == k.id() && present(t.ours))
                })
            })
        })
        .collect()
}

/// Whether `ids` holds both sides of some speed target.
fn has_a_pair(ids: &[&str]) -> bool {
    crate::peers::SPEED_TARGETS
        .iter()
        .any(|(peer, targets)| ids.contains(peer) && targets.iter().any(|t| ids.contains(&t.ours)))
}

/// One (structure, path) of a group: its own build, and what it measured.
struct Unit {
    kind: usize,
    path: CallPath,
    structure: Box<dyn Membership>,
    new_keys: u64,
    ns_per_key: Vec<(Op, Vec<f64>)>,
}

impl Unit {
    fn new(kind: usize, path: CallPath, structure: Box<dyn Membership>) -> Self {
        Unit {
            kind,
            path,
            structure,
            new_keys: 0,
            ns_per_key: Vec::new(),
        }
    }

    fn push(&mut self, op: Op, ns_per_key: f64) {
        match self.ns_per_key.iter_mut().find(|(o, _)| *o == op) {
            Some((_, v)) => v.push(ns_per_key),
            None => self.ns_per_key.push((op, vec![ns_per_key])),
        }
    }

    /// Hashes and inserts (or looks up) every key of `batches` on this unit's path; returns the
    /// nanoseconds taken and the keys called new (or found).
    fn time(&mut self, batches: &mut [KeyBatch], hasher: KeyHasher, insert: bool) -> (u64, u64) {
        let mut ns = 0u64;
        let mut hits = 0u64;
        for batch in batches.iter_mut() {
            // The keys were made on this core, but another unit may have pushed them out of its cache.
            std::hint::black_box(batch.touch());
            let t0 = Instant::now();
            batch.hash_all(hasher);
            hits += match (insert, self.path) {
                (true, CallPath::PerKey) => {
                    let s = self.structure.as_mut();
                    batch
                        .iter()
                        .filter(|(key, hash)| s.insert_hashed(key, *hash))
                        .count() as u64
                }
                (true, CallPath::Batched) => self.structure.insert_batch(batch),
                (false, CallPath::PerKey) => {
                    let s = self.structure.as_ref();
                    batch
                        .iter()
                        .filter(|(key, hash)| s.contains_hashed(key, *hash))
                        .count() as u64
                }
                (false, CallPath::Batched) => self.structure.contains_batch(batch),
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

    /// The next `count` keys as one flat list of owned keys.
    fn take_keys(&mut self, count: u64) -> Result<Vec<Vec<u8>>> {
        let mut batches = Vec::new();
        self.take(count, &mut batches)?;
        Ok(batches
            .iter()
            .flat_map(|b| (0..b.len()).map(move |i| b.key(i).to_vec()))
            .collect())
    }
}

/// `keys` back into batches of [`BATCH_KEYS`].
fn into_batches(keys: impl Iterator<Item = Vec<u8>>) -> Vec<KeyBatch> {
    let mut out: Vec<KeyBatch> = Vec::new();
    for key in keys {
        if out.last().is_none_or(|b| b.len() == BATCH_KEYS) {
            out.push(KeyBatch::with_capacity(BATCH_KEYS, 96));
        }
        if let Some(b) = out.last_mut() {
            b.push(&key);
        }
    }
    out
}

impl Runner<'_> {
    /// Times the compared structures of the run at `n` in interleaved rounds and records the group
    /// (nothing when the run holds no pair of them).
    pub fn run_speed_group(&mut self, n: u64) -> Result<()> {
        let mut kinds = compared_kinds(&self.plan.kinds);
        if kinds.is_empty() {
            return Ok(());
        }
        let config = self.config(self.source.distinct_members(n));
        let rounds = self.plan.speed_rounds.max(super::RunPlan::MIN_SPEED_ROUNDS) as u64;
        // Fresh builds, so the rounds sample where each build's arrays landed in memory (pages, huge
        // pages, cache sets), which stays put through one build and differs from run to run.
        let builds = (BUILD_KEYS_BUDGET / n.max(1)).clamp(1, rounds);
        let rounds_per_build = rounds.div_ceil(builds);
        let rounds = rounds_per_build * builds;
        let mean_key_bytes = self.key_lengths.mean_bytes.max(1.0);
        // One chunk of members in batches (bytes, offsets, hashes), or one lookup's keys held twice (owned
        // keys of 24 bytes' header each, then the batches), whichever is larger.
        let keys_bytes = (CHUNK_KEYS as f64 * (mean_key_bytes + 4.0 + 16.0))
            .max(2.0 * LOOKUP_KEYS_PER_ROUND as f64 * (mean_key_bytes + 24.0 + 4.0 + 16.0));
        // Two builds of each (per key and batched), 5% allocator slack.
        let need = |kinds: &[&'static dyn Kind]| {
            kinds
                .iter()
                .map(|k| 2.0 * k.predicted_peak_bytes(&config) * 1.05)
                .sum::<f64>()
                + keys_bytes
        };
        machine::release_free_heap();
        let limit = self.memory_limit() as f64;
        let mut left_out = Vec::new();
        while need(&kinds) > limit && !kinds.is_empty() {
            // Leave out the largest, then whatever no longer has a partner.
            let largest = (0..kinds.len())
                .max_by(|a, b| {
                    let bytes = |i: usize| kinds[i].predicted_peak_bytes(&config);
                    bytes(*a).total_cmp(&bytes(*b))
                })
                .unwrap_or(0);
            let k = kinds.remove(largest);
            left_out.push(LeftOut {
                structure: k.id().to_string(),
                reason: format!(
                    "the group needs ≈ {} with it, more than the {} available",
                    crate::units::human_bytes(need(&[&kinds[..], &[k]].concat())),
                    crate::units::human_bytes(limit)
                ),
            });
            let kept = compared_kinds(&kinds);
            for k in kinds
                .iter()
                .filter(|k| !kept.iter().any(|x| x.id() == k.id()))
            {
                left_out.push(LeftOut {
                    structure: k.id().to_string(),
                    reason: "no partner left in the group".into(),
                });
            }
            kinds = kept;
        }
        let ids: Vec<&str> = kinds.iter().map(|k| k.id()).collect();
        let mut record = SpeedGroupRecord {
            n,
            rounds: rounds as u32,
            builds: builds as u32,
            insert_keys_per_round: n.div_ceil(rounds_per_build),
            lookup_keys_per_round: LOOKUP_KEYS_PER_ROUND,
            order_seed: self.plan.seed ^ n.rotate_left(17) ^ 0x5EED_0F0D,
            structures: ids.iter().map(|s| s.to_string()).collect(),
            left_out,
            predicted_peak_bytes: need(&kinds),
            series: Vec::new(),
        };
        if !has_a_pair(&ids) {
            return self.record(Record::SpeedGroup(record));
        }
        let mut rng = rand::rngs::StdRng::seed_from_u64(record.order_seed);
        let label = format!("speed group n={}", crate::units::human_count(n as f64));
        for build in 0..builds {
            let mut units = self.build_units(&kinds, &config)?;
            let hasher = units[0].structure.hasher();
            if units.iter().any(|u| u.structure.hasher() != hasher) {
                return Err(Error::invalid(
                    "speed group",
                    "the compared structures hash differently; a ratio between them would not be like for like",
                ));
            }
            let label = format!("{label}, build {}/{builds}", build + 1);
            self.interleave_inserts(&mut units, n, rounds_per_build, hasher, &mut rng, &label)?;
            self.interleave_lookups(&mut units, n, rounds_per_build, hasher, &mut rng, &label)?;
            for unit in &units {
                let id = kinds[unit.kind].id();
                if let Some(other) = units
                    .iter()
                    .find(|u| u.kind == unit.kind && u.new_keys != unit.new_keys)
                {
                    self.failures.push(format!(
                        "{id} at n = {n}: in the speed group, the {} build called {} keys new, the {} build {}",
                        unit.path.key(),
                        unit.new_keys,
                        other.path.key(),
                        other.new_keys
                    ));
                    break;
                }
            }
            for unit in units {
                for (op, ns_per_key) in unit.ns_per_key {
                    let structure = kinds[unit.kind].id();
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
        machine::release_free_heap();
        self.record(Record::SpeedGroup(record))
    }

    /// A fresh build of every kind on its per-key path, and another on its batch path where it has one.
    fn build_units(&self, kinds: &[&'static dyn Kind], config: &BuildConfig) -> Result<Vec<Unit>> {
        let mut units = Vec::new();
        for (i, kind) in kinds.iter().enumerate() {
            let structure = kind.build(config)?;
            let batched = structure.batch_path();
            units.push(Unit::new(i, CallPath::PerKey, structure));
            if batched {
                units.push(Unit::new(i, CallPath::Batched, kind.build(config)?));
            }
        }
        Ok(units)
    }

    /// Round r inserts members [n·r/R, n·(r+1)/R) into every unit, in an order shuffled per round.
    fn interleave_inserts(
        &mut self,
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
            let mut order: Vec<usize> = (0..units.len()).collect();
            order.shuffle(rng);
            let mut ns = vec![0u64; units.len()];
            let mut left = slice;
            while left > 0 {
                chunk.clear();
                let mut want = left.min(CHUNK_KEYS);
                while want > 0 {
                    members.set_batch_keys(want.min(BATCH_KEYS as u64) as usize);
                    let mut batch = KeyBatch::with_capacity(BATCH_KEYS, 96);
                    let made = members.make(&mut batch)? as u64;
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
                    let (t, new) = units[u].time(&mut chunk, hasher, true);
                    ns[u] += t;
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
                unit.push(Op::Insert, ns[u] as f64 / slice.max(1) as f64);
            }
            self.progress.advance(1);
        }
        self.progress.finish();
        Ok(())
    }

    /// Round r runs the r-th slice of every lookup on every unit, each lookup in an order shuffled per
    /// round; a mixed lookup's members sit at seeded random positions among its non-members.
    fn interleave_lookups(
        &mut self,
        units: &mut [Unit],
        n: u64,
        rounds: u64,
        hasher: KeyHasher,
        rng: &mut rand::rngs::StdRng,
        label: &str,
    ) -> Result<()> {
        let source = &self.source;
        let non_member_count = source.non_member_count(u64::MAX).min(1 << 40);
        let mut members = Cycle::new(move || source.members(n))?;
        let mut non_members = Cycle::new(move || source.non_members(non_member_count))?;
        let q = LOOKUP_KEYS_PER_ROUND;
        let progress = self.progress;
        let stop = self.stop;
        let mut failures = Vec::new();
        progress.start(&format!("{label}: lookup rounds"), rounds);
        for _ in 0..rounds {
            for op in Op::LOOKUPS {
                let percent = op.member_percent().unwrap_or(0) as u64;
                let member_keys = q * percent / 100;
                let mut is_member: Vec<bool> = (0..q).map(|i| i < member_keys).collect();
                is_member.shuffle(rng);
                let mut from_members = members.take_keys(member_keys)?.into_iter();
                let mut from_non_members = non_members.take_keys(q - member_keys)?.into_iter();
                let mut batches = into_batches(is_member.iter().filter_map(|m| {
                    if *m {
                        from_members.next()
                    } else {
                        from_non_members.next()
                    }
                }));
                let mut order: Vec<usize> = (0..units.len()).collect();
                order.shuffle(rng);
                for &u in &order {
                    if stop.load(Ordering::Relaxed) {
                        progress.finish();
                        return Err(interrupted_error());
                    }
                    let (t, found) = units[u].time(&mut batches, hasher, false);
                    units[u].push(op, t as f64 / q as f64);
                    if found < member_keys {
                        failures.push(format!(
                            "{} at n = {n}: the speed group's {} ({}) found {found} of its {member_keys} members",
                            units[u].structure.id(),
                            op.words(),
                            units[u].path.key()
                        ));
                    }
                }
            }
            progress.advance(1);
        }
        progress.finish();
        self.failures.extend(failures);
        Ok(())
    }
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
}

//! The interface every membership structure offers the harness: insert and query (by key, by known hash,
//! by batch), its bytes, its stated rate, and the optional views (removal, concurrent inserts, saved
//! parts). Hashing is apart from probing: a key is hashed once with the structure's [`KeyHasher`] and the
//! `*_hashed` methods probe with that hash, so the harness can time the two apart. Batch methods are
//! default methods, monomorphised per structure: a timed loop makes one dynamic call per batch, not per key.

use crate::hash::{KeyHash, KeyHasher};
use crate::keys::KeyBatch;
use crate::persist;

/// A set-membership structure: exact or approximate, never with false negatives.
pub trait Membership: Send + Sync {
    /// The registry id of this structure's kind.
    fn id(&self) -> &'static str;
    /// The hash function and seed it hashes keys with.
    fn hasher(&self) -> KeyHasher;
    /// Inserts a key whose hash is already known; returns whether the key was new as far as it can tell.
    fn insert_hashed(&mut self, key: &[u8], hash: KeyHash) -> bool;
    /// For a caller asking "was it new?" of a stream with repeats: inserts the key only if it is not
    /// (as far as the structure can tell) present, and returns whether it was new. The same as
    /// [`Membership::insert_hashed`] for structures whose insert is idempotent; a counting filter
    /// would otherwise count every repeat (and pin its counters at the sticky maximum).
    fn insert_if_new(&mut self, key: &[u8], hash: KeyHash) -> bool {
        self.insert_hashed(key, hash)
    }
    /// Whether `insert_batch` / `contains_batch` are a path of their own (prefetching, vector kernels,
    /// pipelined round trips) rather than the default loop over keys; the harness times those structures
    /// on both paths.
    fn batch_path(&self) -> bool {
        false
    }
    /// Whether a key (with its hash) may be present: `false` is always right.
    fn contains_hashed(&self, key: &[u8], hash: KeyHash) -> bool;
    /// Bytes the structure holds on the heap (its own accounting; the allocator counts it independently).
    fn bytes_held(&self) -> u64;
    /// Inserts that reported a new key.
    fn n_inserted(&self) -> u64;
    /// Theoretical false-positive rate after `n_distinct` distinct keys were offered to `insert`.
    fn expected_fpr(&self, n_distinct: u64) -> f64;
    /// Geometry for reports: bits (or counters) and probes per key, where they apply.
    fn geometry(&self) -> Geometry;
    /// The rate of this very filter, from its actual fill (the share of bits set, to the power of the
    /// probes), where that is exact or close: it removes the filter-to-filter spread that the
    /// average-case theory of [`Membership::expected_fpr`] carries for small arrays.
    fn fill_fpr(&self) -> Option<f64> {
        None
    }
    /// Keys a shared structure holds now, every worker's, where the server can say (RedisBloom's own
    /// item count, or a bitmap's load estimated from its fill); one round trip per shard. `None` for a
    /// structure in this process, whose [`Membership::n_inserted`] is the whole count.
    fn keys_held_by_all(&self) -> Option<u64> {
        None
    }
    /// Round trips a structure on a server sent again after the server was lost.
    fn resent_round_trips(&self) -> u64 {
        0
    }
    /// Keys held by each shard of a structure split over a Redis Cluster (`None`: not split).
    fn shard_loads(&self) -> Option<Vec<u64>> {
        None
    }
    /// The first error that left it incomplete: a server went away, or a full table refused an insert
    /// (never a silent loss). The harness checks it after every pass and reports the cell as failed
    /// instead of measured.
    fn failure(&self) -> Option<String> {
        None
    }
    /// The removal interface, for structures that support it.
    fn as_removable(&mut self) -> Option<&mut dyn Removable> {
        None
    }

    /// A view that inserts from several threads at once (atomic bit-or), for kinds that support it. The
    /// result is bit-for-bit the array a single thread builds. Call [`Membership::add_inserted`] with the
    /// new-key counts afterwards.
    fn concurrent_inserter(&mut self) -> Option<Box<dyn ConcurrentInsert + '_>> {
        None
    }
    /// Called once after the last insert of a build (timed with it): static filters build themselves here.
    fn finish_build(&mut self) {}
    /// Adds inserts made through a [`ConcurrentInsert`] view to the count.
    fn add_inserted(&mut self, _new: u64) {}

    /// Parameters and arrays to save, for kinds that can be saved ([`persist`]).
    fn saved_parts(&self) -> Option<persist::SavedParts<'_>> {
        None
    }

    /// The whole state when it is one array of 64-bit words (the memory floor reads it); `None` for
    /// anything else (chains of slices, tables, peers).
    fn word_array(&self) -> Option<&[u64]> {
        match self.saved_parts()?.payload.as_slice() {
            [persist::Payload::Words(words)] => Some(*words),
            _ => None,
        }
    }

    /// Inserts a key, hashing it first.
    fn insert(&mut self, key: &[u8]) -> bool {
        let hash = self.hasher().hash(key);
        self.insert_hashed(key, hash)
    }
    /// Queries a key, hashing it first.
    fn contains(&self, key: &[u8]) -> bool {
        self.contains_hashed(key, self.hasher().hash(key))
    }
    /// Inserts every key of a hashed batch; returns how many were new.
    fn insert_batch(&mut self, batch: &KeyBatch) -> u64 {
        let mut new = 0;
        for (key, hash) in batch.iter() {
            new += self.insert_hashed(key, hash) as u64;
        }
        new
    }
    /// Inserts a hashed batch's keys in order, each as [`Membership::insert_if_new`] would, calling
    /// `each(i, was_new)` right after key i and stopping after the key for which it returns `false`;
    /// returns how many of the keys inserted were new. The answers are those of one `insert_if_new` per
    /// key in order (a key repeated within the batch is new at most once); structures with a batch path
    /// of their own prefetch ahead here too. What `dedup` calls, writing each new line from `each`.
    fn insert_batch_if_new(
        &mut self,
        batch: &KeyBatch,
        each: &mut dyn FnMut(usize, bool) -> bool,
    ) -> u64 {
        let mut count = 0;
        for (i, (key, hash)) in batch.iter().enumerate() {
            let was_new = self.insert_if_new(key, hash);
            count += u64::from(was_new);
            if !each(i, was_new) {
                break;
            }
        }
        count
    }
    /// Queries every key of a hashed batch; returns how many were reported present.
    fn contains_batch(&self, batch: &KeyBatch) -> u64 {
        let mut found = 0;
        for (key, hash) in batch.iter() {
            found += self.contains_hashed(key, hash) as u64;
        }
        found
    }
}

/// Concurrent inserts into a shared structure; one call per batch.
///
/// # Safety
/// An implementor promises that [`ConcurrentInsert::part_of`], [`ConcurrentInsert::split_by_part`] and
/// [`ConcurrentInsert::insert_owned`] agree: `insert_owned` given hashes that `split_by_part` put in part
/// p of `parts` writes only memory of part p, so threads that each insert only their own part's hashes
/// never touch the same memory.
pub unsafe trait ConcurrentInsert: Sync {
    /// Inserts keys by their hashes with atomic or-instructions; returns how many set a bit that was clear.
    fn insert_hashes(&self, hashes: &[KeyHash]) -> u64;
    /// Inserts every key of a hashed batch (see [`ConcurrentInsert::insert_hashes`]).
    fn insert_batch(&self, batch: &KeyBatch) -> u64 {
        self.insert_hashes(batch.hashes())
    }
    /// When all of a key's bits lie in one of `parts` equal word ranges of the array: that range. Threads
    /// that each own one range can then insert with [`ConcurrentInsert::insert_owned`], no locked instruction.
    fn part_of(&self, _hash: KeyHash, _parts: usize) -> Option<usize> {
        None
    }
    /// Appends each hash to `by_part[its part]` (of `by_part.len()` parts, as [`ConcurrentInsert::part_of`]
    /// says) and returns `true`; returns `false` and leaves every vector empty when a key has no part (the
    /// caller then inserts the batch with [`ConcurrentInsert::insert_hashes`]). One call per batch, so a
    /// structure can find the parts without a dynamic call or a division per key.
    fn split_by_part(&self, hashes: &[KeyHash], by_part: &mut [Vec<KeyHash>]) -> bool {
        let parts = by_part.len();
        for h in hashes {
            let Some(p) = self.part_of(*h, parts) else {
                by_part.iter_mut().for_each(Vec::clear);
                return false;
            };
            by_part[p].push(*h);
        }
        true
    }
    /// Inserts keys whose bits lie in a part only the calling thread touches, with plain loads and stores
    /// (`blocked` on a CPU with AVX2 writes each key's whole line with two vector stores). Without parts,
    /// the same as [`ConcurrentInsert::insert_hashes`].
    ///
    /// # Safety
    /// Every hash was put in one part p by [`ConcurrentInsert::split_by_part`] (same `parts` for every
    /// thread), and while this runs no other thread reads or writes part p: a line written by a plain store
    /// and touched by another thread at the same time is a data race.
    unsafe fn insert_owned(&self, hashes: &[KeyHash]) -> u64 {
        self.insert_hashes(hashes)
    }
}

/// Structures that can forget a key.
pub trait Removable {
    /// Removes a key with a known hash; returns `false` (and changes nothing) when it is not present.
    fn remove_hashed(&mut self, key: &[u8], hash: KeyHash) -> bool;
    /// Counters stuck at their maximum (they can no longer be decremented), for counter-based kinds.
    fn saturated_counters(&self) -> Option<u64> {
        None
    }
    /// Removes every key of a hashed batch; returns how many were removed.
    fn remove_batch(&mut self, batch: &KeyBatch) -> u64 {
        let mut removed = 0;
        for (key, hash) in batch.iter() {
            removed += self.remove_hashed(key, hash) as u64;
        }
        removed
    }
}

/// Size parameters a structure reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Geometry {
    /// Bits (or counters) of the array, summed over slices.
    pub bits: Option<u64>,
    /// Probes per key (of the newest slice, for the scalable filter).
    pub hashes: Option<u32>,
    /// Slices, for the scalable filter.
    pub slices: Option<u32>,
}

/// An operation timed per key. The mixed lookups (`Query25` … `Query75`: that share of members among
/// non-members, in a seeded random order) are the columns of fastfilter_cpp's and Boost.Bloom's
/// benchmarks: branch prediction makes a mix cost other than either end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Insert,
    MemberQuery,
    NonMemberQuery,
    #[serde(rename = "query_25")]
    Query25,
    #[serde(rename = "query_50")]
    Query50,
    #[serde(rename = "query_75")]
    Query75,
}

impl Op {
    /// The lookups the interleaved rounds time, in the order they run in a round.
    pub const LOOKUPS: [Op; 5] = [
        Op::NonMemberQuery,
        Op::Query25,
        Op::Query50,
        Op::Query75,
        Op::MemberQuery,
    ];

    /// Words for reports ("member query").
    pub fn words(self) -> &'static str {
        match self {
            Op::Insert => "insert",
            Op::MemberQuery => "member query",
            Op::NonMemberQuery => "non-member query",
            Op::Query25 => "query, 25% members",
            Op::Query50 => "query, 50% members",
            Op::Query75 => "query, 75% members",
        }
    }
    /// The criterion benchmark's suffix ("member-lookup").
    pub fn bench_name(self) -> &'static str {
        match self {
            Op::Insert => "insert",
            Op::MemberQuery => "member-lookup",
            Op::NonMemberQuery => "non-member-lookup",
            Op::Query25 => "lookup-25",
            Op::Query50 => "lookup-50",
            Op::Query75 => "lookup-75",
        }
    }
    /// Members among a lookup's keys, in percent (`None` for an insert).
    pub fn member_percent(self) -> Option<u32> {
        match self {
            Op::Insert => None,
            Op::NonMemberQuery => Some(0),
            Op::Query25 => Some(25),
            Op::Query50 => Some(50),
            Op::Query75 => Some(75),
            Op::MemberQuery => Some(100),
        }
    }
}

/// How keys reach a structure: one call per key, or its batch API.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallPath {
    /// One `insert_hashed` / `contains_hashed` call per key: every structure has it.
    PerKey,
    /// The structure's batch API (`insert_batch` / `contains_batch`): prefetching and vector paths where
    /// it has them, a loop over keys otherwise.
    Batched,
}

impl CallPath {
    /// The name in records and `analysis.json`.
    pub fn key(self) -> &'static str {
        match self {
            CallPath::PerKey => "per_key",
            CallPath::Batched => "batched",
        }
    }
}

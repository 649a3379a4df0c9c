//! Membership structures: one trait, one file per structure, one registry that names them all.
//!
//! Every structure hashes a key once with its own [`KeyHasher`] (hash function and seed) and then probes with
//! that hash, so the harness can time hashing and probing apart (`*_hashed` methods). Batch methods are
//! default methods, monomorphised per structure: a timed loop makes one dynamic call per batch, not per key.
//! Adding a structure: one new file with a unit struct implementing [`Kind`], its `pub mod` line here
//! and its line in [`crate::registry::REGISTRY`].

pub mod bitmap;
pub mod bits;
pub mod blocked;
pub mod bloom;
pub mod counting;
pub mod fingerprint;
pub mod hashset;
pub mod mem;
pub mod scalable;
pub mod windowed;

use crate::hash::{HashFn, KeyHash, KeyHasher};
use crate::keys::KeyBatch;
use crate::persist;
use crate::Result;

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
    /// Round trips a structure on a server sent again after the server was lost.
    fn resent_round_trips(&self) -> u64 {
        0
    }
    /// Keys held by each shard of a structure split over a Redis Cluster (`None`: not split).
    fn shard_loads(&self) -> Option<Vec<u64>> {
        None
    }
    /// For a structure on a server: the first error that left it incomplete (the server went away, say).
    /// The harness checks it after every pass and reports the cell as failed instead of measured.
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
    /// (`blocked` on a CPU with AVX-512 writes each key's whole line with one vector store). Without parts,
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

/// Lengths of the keys, for the exact set's memory model.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct KeyLengths {
    /// Mean key length in bytes.
    pub mean_bytes: f64,
    /// Mean heap footprint glibc gives one key allocation (see [`crate::theory::glibc_chunk_bytes`]).
    pub mean_chunk_bytes: f64,
}

impl KeyLengths {
    /// Statistics of a sample of key lengths.
    pub fn from_lengths(lengths: impl IntoIterator<Item = usize>) -> Self {
        let (mut n, mut sum, mut chunk) = (0u64, 0u64, 0u64);
        for len in lengths {
            n += 1;
            sum += len as u64;
            chunk += crate::theory::glibc_chunk_bytes(len as u64);
        }
        let n = n.max(1) as f64;
        KeyLengths {
            mean_bytes: sum as f64 / n,
            mean_chunk_bytes: chunk as f64 / n,
        }
    }
}

/// What a structure is built for.
#[derive(Clone, Debug, PartialEq)]
pub struct BuildConfig {
    /// Keys the structure is sized for.
    pub expected_keys: u64,
    /// Target false-positive rate.
    pub fpr: f64,
    /// Hash seed.
    pub seed: u64,
    /// Hash function ([`HashFn::DEFAULT`] unless asked otherwise).
    pub hash: HashFn,
    /// A fixed array size in bits instead of the kind's own sizing: the raw bitmap's m (default m = n), or
    /// the Bloom family's m instead of the rate-based size (k then chosen optimally for it; `blocked`
    /// rounds up to whole blocks).
    pub array_bits: Option<u64>,
    /// How the scalable filters grow (`scalable`, and RedisBloom's scaling filter); ignored by the others.
    pub growth: scalable::Growth,
    /// Key lengths, for the exact set's model.
    pub key_lengths: KeyLengths,
    /// The server and options of a shared (Redis) structure; `None` for in-process ones.
    pub remote: Option<crate::redis::RemoteConfig>,
    /// The sliding window of the windowed filter, in admitted keys (default: `expected_keys`); ignored by
    /// the others.
    pub window_keys: Option<u64>,
}

impl BuildConfig {
    /// A configuration for `expected_keys` at `fpr` with the defaults (the default hash, s = 2, r = 0.9,
    /// 77-byte keys).
    pub fn new(expected_keys: u64, fpr: f64, seed: u64) -> Self {
        BuildConfig {
            expected_keys,
            fpr,
            seed,
            hash: HashFn::DEFAULT,
            array_bits: None,
            growth: scalable::Growth::default(),
            key_lengths: KeyLengths {
                mean_bytes: 77.0,
                mean_chunk_bytes: 96.0,
            },
            remote: None,
            window_keys: None,
        }
    }

    /// The hash function keyed by the seed.
    pub fn hasher(&self) -> KeyHasher {
        KeyHasher::new(self.hash, self.seed)
    }
}

/// The memory a structure is predicted to hold.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MemoryModel {
    /// Bytes requested from the allocator (what the counting allocator measures).
    pub heap_bytes: f64,
    /// Bytes including the allocator's rounding and headers (what RSS sees).
    pub footprint_bytes: f64,
}

impl MemoryModel {
    /// A model whose footprint equals its heap bytes (one large allocation).
    pub fn flat(bytes: f64) -> Self {
        MemoryModel {
            heap_bytes: bytes,
            footprint_bytes: bytes,
        }
    }
}

/// What the advisor says about a kind beyond its models. Exact kinds rank first (in registry order)
/// while they fit; the rest rank by bytes.
#[derive(Clone, Copy, Debug)]
pub struct Advisor {
    /// Why one picks it, when it fits.
    pub pitch: &'static str,
    /// Why it is the regime ladder's rung where it is.
    pub rung: &'static str,
    /// Whether its model depends on the keys (their lengths), so a run's measured bytes per key are
    /// the better figure.
    pub prefers_measured_bytes: bool,
    /// How the advice sizes it, where that differs from the harness's default sizing.
    pub size_for_advice: Option<fn(&mut BuildConfig)>,
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

/// What a speed ratio sets side by side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comparison {
    /// One call per key on both sides: the filters themselves.
    PerKey,
    /// Our batch API against the peer's best path (its batch API where it has one, else per key): what
    /// our API buys a caller.
    OursBatchedVsBest,
}

impl Comparison {
    /// How a ratio says which comparison it is.
    pub fn words(self) -> &'static str {
        match self {
            Comparison::PerKey => "per key vs per key",
            Comparison::OursBatchedVsBest => "our batched path vs the peer's best",
        }
    }
}

/// A speed target of one of our structures against a peer: for each op, our throughput over the peer's,
/// measured in one run on the same keys and hash and compared as `comparison` says, is at least
/// `min_ratio`. Both comparisons are reported for every pair; the target applies to its own.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpeedTarget {
    /// Our structure's id.
    pub ours: &'static str,
    pub ops: &'static [Op],
    pub comparison: Comparison,
    pub min_ratio: f64,
    /// Whether to add what a filter probing at the memory floor would reach against this peer.
    pub floor_reach: bool,
}

/// A registered kind of structure: its name, description, size model and constructor.
pub trait Kind: Sync {
    /// Stable kebab-case id.
    fn id(&self) -> &'static str;
    /// One line for help and legends.
    fn summary(&self) -> &'static str;
    /// Whether structures of this kind implement [`Removable`].
    fn removable(&self) -> bool {
        false
    }
    /// Whether the answers are exact (no false positives beyond hash collisions of the key itself).
    fn exact(&self) -> bool {
        false
    }
    /// Whether the structure lives on a server (it needs [`BuildConfig::remote`]; the grid leaves it to the
    /// shared-filter sweep).
    fn remote(&self) -> bool {
        false
    }
    /// The server module the structure needs (`MODULE LIST` name), if any.
    fn server_module(&self) -> Option<&'static str> {
        None
    }
    /// Whether the server hashes the keys itself (our hash is then not part of its cost).
    fn hashed_by_server(&self) -> bool {
        false
    }
    /// Whether the default full suite measures it at 10⁹ keys: the article's bitmap and Bloom filter and
    /// the cache-blocked filter the advice names for large sets. The others stop at 10⁸ there (a 10⁹ cell
    /// costs 2–6 minutes of the suite's 45) and run at 10⁹ when named with `--structures`.
    fn at_full_suite_top(&self) -> bool {
        false
    }
    /// Whether this is a peer crate's structure, kept for comparison.
    fn peer(&self) -> bool {
        false
    }
    /// Whether it keeps its rate (or exactness) however many keys arrive beyond those it was sized for.
    fn growable(&self) -> bool {
        false
    }
    /// Whether keys beyond those it was sized for are still stored (its rate rises, or it grows); a filter
    /// that refuses inserts when full would lose them, so the overshoot experiment leaves it out.
    fn stores_past_capacity(&self) -> bool {
        true
    }
    /// The geometry a structure built for `config` starts with (what `size` and `advise` print).
    fn planned_geometry(&self, _config: &BuildConfig) -> Geometry {
        Geometry::default()
    }
    /// How the advisor weighs this kind; `None` leaves it out of the advice (peers, servers).
    fn advisor(&self) -> Option<Advisor> {
        None
    }
    /// Whether it is sized for the target rate (the raw bitmap is sized m = n, whatever the rate).
    fn sized_for_rate(&self) -> bool {
        true
    }
    /// Predicted memory after `config.expected_keys` distinct inserts.
    fn predicted_memory(&self, config: &BuildConfig) -> MemoryModel;
    /// Predicted peak bytes while building (by default the final footprint).
    fn predicted_peak_bytes(&self, config: &BuildConfig) -> f64 {
        self.predicted_memory(config).footprint_bytes
    }
    /// Whether the structure takes inserts one by one and answers at once (static filters do not).
    fn dynamic(&self) -> bool {
        true
    }
    /// Theoretical false-positive rate after the expected number of distinct inserts.
    fn predicted_fpr(&self, config: &BuildConfig) -> f64;
    /// Theoretical rate of a structure sized for `config` after `n_inserted` distinct keys, which may
    /// exceed the keys it was sized for (the overshoot line of `advise`); `None` where there is no model.
    fn predicted_fpr_after(&self, _config: &BuildConfig, _n_inserted: u64) -> Option<f64> {
        None
    }
    /// Builds an empty structure for `config`.
    fn build(&self, config: &BuildConfig) -> Result<Box<dyn Membership>>;
    /// How to rebuild a structure of this kind from a saved file, for kinds that can be saved (their
    /// structures then return [`Membership::saved_parts`]).
    fn loader(&self) -> Option<Loader> {
        None
    }
    /// For a tool of another language run as a separate process (`crate::external`): what the harness
    /// needs to run it. Such a kind cannot be built in process.
    fn external(&self) -> Option<External> {
        None
    }
}

/// The language of an external tool (the report gives each one colour family).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Language {
    Python,
    Java,
}

impl Language {
    /// The name a reader knows.
    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "Python",
            Language::Java => "Java",
        }
    }
}

/// How the harness runs an external tool.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct External {
    pub language: Language,
    /// The largest n it is run at; larger cells are recorded as skipped, saying why (a pure-Python filter
    /// costs microseconds per key).
    pub max_keys: u64,
    /// Why it cannot run on this kind of machine at all, if so (the row stays visible, skipped).
    pub unavailable: Option<&'static str>,
}

/// Rebuilds a structure from a checked saved file ([`crate::persist`]).
pub type Loader = fn(persist::Loaded<'_>) -> Result<Box<dyn Membership>>;

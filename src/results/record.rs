//! The record schema of `results.jsonl`.

use crate::kind::KeyLengths;
use crate::measure::machine::MachineInfo;
use crate::membership::Geometry;
use crate::stats::{Interval, Summary};
use serde::{Deserialize, Serialize};

/// The version of the record schema written by this build. 2 added the `shared`, `sweep_skipped` and
/// `memory_probe` records and the header's `redis*` fields; 3 times every cell per key and, where the
/// structure has a batch API, batched (`timed_per_key`, `batched_*`), and repeats the memory floor; 4 reads
/// the floor once per n in one array for every structure (`memory_floor_array_bytes`) and may name real
/// non-members in the header (`non_members`); 5 adds the interleaved rounds (`speed_group`) and the
/// header's `speed_rounds`, and cells their run's parameters (`run`). Older files read unchanged.
pub const SCHEMA_VERSION: u32 = 5;

/// One line of `results.jsonl`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Line {
    pub schema_version: u32,
    #[serde(flatten)]
    pub record: Record,
}

/// What a line holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "snake_case")]
// One record is held at a time, per line read or written: boxing the cell record would cost an
// allocation per cell to save a few hundred bytes of one value.
#[allow(clippy::large_enum_variant)]
pub enum Record {
    Run(RunHeader),
    Cell(CellRecord),
    Skipped(SkippedCell),
    Saturation(RatePoint),
    Growth(RatePoint),
    BitmapClaim(RatePoint),
    Deletion(DeletionRecord),
    /// One structure of the cache guard's churn after one round.
    Churn(ChurnPoint),
    /// One structure built, saved to a file and loaded back.
    Shipping(ShippingRecord),
    /// One contender of the expiry experiment at one window.
    Expiry(crate::expiry::ExpiryRecord),
    /// One hash of the hash study at one key length.
    HashSpeed(HashSpeedRecord),
    /// One filter of the hash study built with one hash.
    HashQuality(HashQualityRecord),
    Scenario(ScenarioRecord),
    /// A point of the Redis sweep (the tag keeps 0.1's word).
    #[serde(rename = "shared")]
    Sweep(SweepRecord),
    /// Random-read costs of this machine by access pattern and page size.
    MemoryProbe(crate::measure::floor::PageProbe),
    /// A sweep point not measured: the server lacks a module, or it failed (then the run exits 1).
    #[serde(rename = "shared_skipped")]
    SweepSkipped(SkippedCell),
    /// The compared structures at one n, timed together in interleaved rounds.
    SpeedGroup(SpeedGroupRecord),
    /// One tool of the dedup-cli experiment over every round.
    DedupCli(super::DedupCliRecord),
}

/// The structures of the registry's speed targets at one n, built side by side and timed in interleaved
/// rounds (`src/run/speed_group.rs`): in each round every (structure, path) inserts that round's slice of
/// the members, then runs its slice of every lookup, in an order shuffled per round; the rounds are spread
/// over `builds` fresh builds. The per-round figures are kept whole, so any reader can pair them again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpeedGroupRecord {
    pub n: u64,
    /// Rounds timed (every series holds one figure per round).
    pub rounds: u32,
    /// Fresh builds the rounds are spread over, in order (round r in build ⌊r·builds/rounds⌋).
    #[serde(default = "one_build")]
    pub builds: u32,
    /// Members inserted per round, at most (a build inserts all n over its rounds; all n in one round
    /// where every round has its own build).
    pub insert_keys_per_round: u64,
    /// Keys of each lookup per round, the same keys for every structure.
    pub lookup_keys_per_round: u64,
    /// Seed of the per-round orders and of the mixed lookups' member positions.
    pub order_seed: u64,
    /// The structures timed together, registry order.
    pub structures: Vec<String>,
    /// Structures of the compared pairs at this n that were not timed with the others, and why (they did
    /// not fit memory together).
    #[serde(default)]
    pub left_out: Vec<LeftOut>,
    /// Bytes the group held at its peak, by the model (structures on both paths and one chunk of keys).
    pub predicted_peak_bytes: f64,
    /// What the series' times hold: groups written before the hash was timed apart held hash and probe.
    #[serde(default)]
    pub timed: SpeedTiming,
    /// Where the probe is timed alone: the run's hash on each lookup slice's keys, ns per key, one figure
    /// per (round, lookup), timed on the same keys just before the structures probe them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hash_ns_per_key: Vec<f64>,
    pub series: Vec<RoundSeries>,
}

/// What a speed group's times per key hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpeedTiming {
    /// Hashing the key and probing the structure (groups recorded before the hash was timed apart).
    #[default]
    HashAndProbe,
    /// The structure's call alone, on keys hashed untimed with the run's one hasher.
    ProbeOnly,
}

/// Speed groups written before `builds` had one build.
fn one_build() -> u32 {
    1
}

/// A structure left out of a speed group.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LeftOut {
    pub structure: String,
    pub reason: String,
}

/// One (structure, op, path) of a speed group: nanoseconds per key in each round (what they hold: the
/// group's [`SpeedTiming`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoundSeries {
    pub structure: String,
    pub op: crate::membership::Op,
    pub path: crate::membership::CallPath,
    pub ns_per_key: Vec<f64>,
}

impl SpeedGroupRecord {
    /// The per-round figures of `structure`'s `op` on `path`, if timed.
    pub fn series(
        &self,
        structure: &str,
        op: crate::membership::Op,
        path: crate::membership::CallPath,
    ) -> Option<&[f64]> {
        self.series
            .iter()
            .find(|s| s.structure == structure && s.op == op && s.path == path)
            .map(|s| s.ns_per_key.as_slice())
    }
}

/// One keyed hash's cost on keys of one length (the hash study, `src/run/hash_study.rs`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HashSpeedRecord {
    /// [`crate::hash::candidates::HashFn::id`].
    pub hash: String,
    /// Bits the hash itself outputs (128 for xxh3-128; the 64-bit hashes' second half is derived).
    pub output_bits: u32,
    /// What the hash's crate documents of its SMHasher results.
    pub smhasher: String,
    /// Whether that documentation says this very hash passes.
    #[serde(default)]
    pub smhasher_passes: bool,
    pub key_bytes: u32,
    /// Distinct keys hashed per repetition.
    pub keys: u64,
    /// Nanoseconds per key, over repetitions.
    pub ns_per_key: Summary,
}

/// One filter built with one hash of the hash study: its rate on non-members against its theory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HashQualityRecord {
    pub hash: String,
    pub structure: String,
    /// Distinct members inserted (the filter's planned n).
    pub n: u64,
    pub queries: u64,
    pub false_positives: u64,
    pub observed_fpr: f64,
    /// Wilson interval at 99.9% around the observed rate.
    pub observed_fpr_wilson999: Interval,
    /// The rate of this filter from its fill where the structure gives it, else its planned rate at n.
    pub theory_fpr: f64,
    pub theory_in_interval: bool,
    pub members_checked: u64,
    pub false_negatives: u64,
}

/// What a header without a `hash` field hashed with.
fn hash_before_the_field() -> String {
    crate::hash::HashFn::FORMER_DEFAULT.id().to_string()
}

/// The parameters of a run and the machine it ran on (the first line).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunHeader {
    pub suite: super::Suite,
    pub scales: Vec<u64>,
    pub structures: Vec<String>,
    pub fpr: f64,
    pub memory_budget_bytes: u64,
    pub seed: u64,
    /// The hash the run's structures hashed with ([`crate::hash::HashFn::id`]; `redis-set-fp` keeps
    /// xxh3-128, and the external rows and RedisBloom hash for themselves); runs written before the field
    /// all used xxh3-128.
    #[serde(default = "hash_before_the_field")]
    pub hash: String,
    pub reps: u32,
    /// Whether the repetitions were given explicitly (then they apply to every cell).
    #[serde(default)]
    pub reps_explicit: bool,
    pub profile: String,
    pub input: Option<String>,
    /// Lines of `input` that were not valid UTF-8 (measured as their bytes like the others).
    #[serde(default)]
    pub input_non_utf8_lines: Option<u64>,
    /// The cap on the external rows' n in this run (the default quick suite's), if any.
    #[serde(default)]
    pub external_max_keys: Option<u64>,
    /// The cap on n of the in-process structures outside the default full suite's top scale, if any.
    #[serde(default)]
    pub full_suite_max_keys: Option<u64>,
    /// Real non-members (`--non-members`): the file and what checking it against the members found.
    #[serde(default)]
    pub non_members: Option<NonMemberFile>,
    /// Whether the experiments beyond the grid were asked for.
    #[serde(default)]
    pub experiments: bool,
    /// The workload the run measured (runs written before the field measured the crawl).
    #[serde(default)]
    pub workload: crate::workload::Workload,
    /// The Redis server of the shared-filter sweep (`redis://host:port/db`).
    #[serde(default)]
    pub redis: Option<String>,
    /// The Redis Cluster of the shared-filter sweep (comma-separated node URLs).
    #[serde(default)]
    pub redis_cluster: Option<String>,
    /// The Redis backends the sweep runs.
    #[serde(default)]
    pub redis_structures: Vec<String>,
    #[serde(default)]
    pub redis_keys: Option<u64>,
    #[serde(default)]
    pub redis_batches: Option<Vec<usize>>,
    /// Rounds of the interleaved speed groups (runs written before them have none).
    #[serde(default)]
    pub speed_rounds: Option<u32>,
    pub started_unix_s: u64,
    pub key_lengths: KeyLengths,
    pub machine: MachineInfo,
    pub dedupbench_version: String,
}

/// A file of real non-members, checked against the members before the run: its keys less repeats and
/// less members are the grid's non-member queries, in file order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NonMemberFile {
    pub path: String,
    /// Keys in the file (non-blank lines).
    pub keys: u64,
    /// Keys dropped as repeats of an earlier line of the file.
    pub repeats_dropped: u64,
    /// Distinct keys dropped because they are members of the run (the first `members_checked` members).
    pub members_dropped: u64,
    /// Members the file was checked against (the largest scale's).
    pub members_checked: u64,
    /// Keys kept: every one distinct and not a member.
    pub kept: u64,
    /// Keys of the file that are not valid UTF-8 (measured as their bytes like the others).
    pub non_utf8_lines: u64,
}

/// The parameters a measured cell depends on, as its run's header gives them: copied onto every cell so
/// that `bench --resume` can tell a cell of another run (`src/run/resume.rs`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunParams {
    pub fpr: f64,
    pub seed: u64,
    pub hash: String,
    pub profile: String,
    pub input: Option<String>,
    pub non_members: Option<String>,
}

impl RunParams {
    /// What differs from `header`'s, in words ("fpr 0.1, the run's 0.01"); empty when nothing does.
    pub fn differences(&self, header: &RunParams) -> Vec<String> {
        let mut out = Vec::new();
        let mut differ = |what: &str, this: String, run: String| {
            if this != run {
                out.push(format!(
                    "{what} {}, the run's {}",
                    crate::error::printable(&this),
                    crate::error::printable(&run)
                ));
            }
        };
        differ("fpr", self.fpr.to_string(), header.fpr.to_string());
        differ("seed", self.seed.to_string(), header.seed.to_string());
        differ("hash", self.hash.clone(), header.hash.clone());
        differ("profile", self.profile.clone(), header.profile.clone());
        differ(
            "input",
            format!("{:?}", self.input),
            format!("{:?}", header.input),
        );
        differ(
            "non-members",
            format!("{:?}", self.non_members),
            format!("{:?}", header.non_members),
        );
        out
    }
}

impl RunHeader {
    /// The parameters its cells depend on.
    pub fn params(&self) -> RunParams {
        RunParams {
            fpr: self.fpr,
            seed: self.seed,
            hash: self.hash.clone(),
            profile: self.profile.clone(),
            input: self.input.clone(),
            non_members: self.non_members.as_ref().map(|f| f.path.clone()),
        }
    }
}

/// One measured (structure, n) cell of the grid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CellRecord {
    /// The run parameters it was measured with (cells written before the field have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunParams>,
    pub structure: String,
    pub peer: bool,
    pub exact: bool,
    /// Keys inserted.
    pub n: u64,
    /// Distinct keys among them (equal to n for generated keys).
    pub n_distinct: u64,
    /// Inserts the structure reported as new.
    pub n_reported_new: u64,
    pub reps: u32,
    pub geometry: Geometry,
    /// Full insert cost (hash + probe) per key.
    pub insert_ns_per_key: Summary,
    /// Hashing alone, on the same keys.
    pub hash_ns_per_key: Summary,
    /// Probing alone (insert), per key.
    pub probe_insert_ns_per_key: Summary,
    /// Full query cost per key over the members.
    pub member_query_ns_per_key: Summary,
    /// Full query cost per key over non-members.
    pub non_member_query_ns_per_key: Summary,
    pub n_member_queries: u64,
    /// Members not found: must be 0.
    pub false_negatives: u64,
    pub n_non_member_queries: u64,
    pub n_false_positives: u64,
    pub observed_fpr: f64,
    pub observed_fpr_wilson95: Interval,
    pub expected_fpr: f64,
    pub theory_in_interval: bool,
    /// The rate implied by this filter's actual fill (bitmap, Bloom), and whether the interval holds it.
    #[serde(default)]
    pub fill_fpr: Option<f64>,
    #[serde(default)]
    pub fill_fpr_in_interval: Option<bool>,
    /// The structure's own byte count.
    pub bytes_held: u64,
    /// Heap bytes requested during the build, by the counting allocator.
    pub heap_requested_bytes: i64,
    /// Heap footprint (usable size + headers) of the build, by the counting allocator.
    pub heap_footprint_bytes: i64,
    pub model_heap_bytes: f64,
    pub model_footprint_bytes: f64,
    pub rss_before_bytes: u64,
    pub rss_after_bytes: u64,
    pub rss_peak_bytes: u64,
    /// 8 · heap footprint / distinct keys.
    pub bits_per_key: f64,
    pub wall_s: f64,
    /// Threads of the parallel build (1: not run in parallel).
    #[serde(default)]
    pub threads: u32,
    /// Insert cost per key with all threads: the slowest thread's timed hash + insert over n
    /// (key generation excluded), median over repetitions.
    #[serde(default)]
    pub parallel_insert_ns_per_key: Option<Summary>,
    /// Whether the parallel build wrote with owner-writes (each thread its own part of the array, plain
    /// stores); `false` where it used atomic ors (`bloom` with k > 1, and files from before owner-writes).
    /// With owner-writes the figure above leaves out a thread's waits for room in another's inbox.
    #[serde(default)]
    pub parallel_owner_writes: bool,
    /// Whether the three costs above are one call per key (schema 3 on). Before, `bloom` and `blocked`
    /// were timed on their batched paths there and every other structure per key.
    #[serde(default)]
    pub timed_per_key: bool,
    /// The same three costs through the structure's batch API (a fresh build for the insert), for
    /// structures that have one ([`crate::membership::Membership::batch_path`]); `None` otherwise. From
    /// schema 3 on, the three fields above are one call per key for every structure.
    #[serde(default)]
    pub batched_insert_ns_per_key: Option<Summary>,
    #[serde(default)]
    pub batched_member_query_ns_per_key: Option<Summary>,
    #[serde(default)]
    pub batched_non_member_query_ns_per_key: Option<Summary>,
    /// The machine's memory floor: one random cache-line read per key, prefetched as a batched lookup
    /// is (the median of [`CellRecord::memory_floor_reads_ns_per_key`] from schema 3 on). Since schema 4
    /// it is read once per n in one array of [`CellRecord::memory_floor_array_bytes`] (a `blocked` filter's
    /// size for n and the run's rate) and the same figure stands in every cell at n that has a word array;
    /// before, each structure's own array was read.
    #[serde(default)]
    pub memory_floor_ns_per_key: Option<f64>,
    /// The size of the array the floor was read in (`None` before schema 4: the structure's own).
    #[serde(default)]
    pub memory_floor_array_bytes: Option<u64>,
    /// The floor's repetitions over the same hashed keys: median, min and max.
    #[serde(default)]
    pub memory_floor_reads_ns_per_key: Option<Summary>,
    /// Anonymous memory backed by transparent huge pages after the build.
    #[serde(default)]
    pub anon_huge_pages_bytes: u64,
    /// For a tool of another language run as its own process (schema 4 on): what ran and how its figures
    /// were taken. Its hash time is inside its calls (`hash_ns_per_key` is 0), its bytes are the tool's
    /// own count, and its RSS fields are the whole process's peak.
    #[serde(default)]
    pub external: Option<ExternalCell>,
}

/// What an external row ran, and how its figures were taken.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExternalCell {
    pub language: crate::kind::Language,
    /// Interpreter or VM and its version.
    pub runtime: String,
    /// Library and version.
    pub library: String,
    /// How the bytes were counted (tracemalloc, the bit array's length, the serialized size).
    pub bytes_method: String,
    /// Java: the heap allocated creating a second, untimed filter (the JVM's per-thread count), beside the
    /// serialized size.
    pub heap_delta_bytes: Option<i64>,
    /// What the timings include (the interpreter loop, JIT compilation).
    pub timing: String,
}

impl CellRecord {
    /// Inserts per second at the median.
    pub fn insert_keys_per_s(&self) -> f64 {
        1e9 / self.insert_ns_per_key.median
    }
    /// Member queries per second at the median.
    pub fn query_keys_per_s(&self) -> f64 {
        1e9 / self.member_query_ns_per_key.median
    }
}

/// one point of the Redis sweep: a Redis backend (or the in-process reference) at one batch size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepRecord {
    /// `redis-bloom`, `redis-bitmap/bitfield`, …, or `bloom (in-process)`.
    pub series: super::SweepSeries,
    /// The registry id.
    pub structure: String,
    /// Keys per round trip (0 for the in-process reference).
    pub batch_keys: u64,
    /// `host:port` of the server, `cluster host:port,…` of a cluster ("" in-process).
    pub server: String,
    /// Masters the structure is spread over (0 in-process, 1 on one server).
    #[serde(default)]
    pub masters: u32,
    /// Keys held by each shard, on a cluster (empty otherwise).
    #[serde(default)]
    pub shard_loads: Vec<u64>,
    /// Round trips sent again after a server was lost.
    #[serde(default)]
    pub resent_round_trips: u64,
    pub n: u64,
    pub n_reported_new: u64,
    pub geometry: Geometry,
    /// Keys per second, hashing included, key generation excluded.
    pub insert_keys_per_s: f64,
    pub member_query_keys_per_s: f64,
    pub non_member_query_keys_per_s: f64,
    /// The same inserts as pre-encoded commands on a raw socket, replies skimmed (redis-bloom only).
    pub raw_insert_keys_per_s: Option<f64>,
    /// `MEMORY USAGE … SAMPLES 0` of the structure's keys (in-process: its own bytes).
    pub server_bytes: u64,
    /// Change of the server's `used_memory` from before creation to after the inserts.
    pub used_memory_delta_bytes: i64,
    pub bytes_per_key: f64,
    pub n_member_queries: u64,
    pub false_negatives: u64,
    pub n_non_member_queries: u64,
    pub n_false_positives: u64,
    pub observed_fpr: f64,
    pub observed_fpr_wilson95: Interval,
    pub expected_fpr: f64,
    pub theory_in_interval: bool,
    pub fill_fpr: Option<f64>,
    pub wall_s: f64,
}

impl SweepRecord {
    /// The id resume uses to find this point.
    pub fn cell_id(&self) -> String {
        sweep_cell_id(&self.series, self.batch_keys)
    }
}

/// The id of a sweep point (also the `structure` of its skipped record).
pub fn sweep_cell_id(series: &super::SweepSeries, batch_keys: u64) -> String {
    super::SkipSubject::SweepPoint {
        series: series.clone(),
        batch_keys,
    }
    .to_string()
}

/// A cell not run because its predicted bytes exceed the budget; drawn as a projection.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SkippedCell {
    /// What was not run (written as `structure`, its name in every schema).
    #[serde(rename = "structure")]
    pub subject: super::SkipSubject,
    pub n: u64,
    pub projected_bytes: f64,
    pub budget_bytes: u64,
    pub reason: String,
    /// Why it was not run (files before schema 4: always memory).
    #[serde(default)]
    pub cause: SkipCause,
}

impl SkippedCell {
    /// "ID at n = N (REASON)", as the report lists it.
    pub fn describe(&self) -> String {
        format!(
            "{} at n = {} ({})",
            self.subject,
            crate::units::human_count(self.n as f64),
            self.reason
        )
    }
}

/// Why a cell was not run. Only a cell skipped for memory is drawn as a projection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipCause {
    /// Over the budget or the memory available now.
    #[default]
    Memory,
    /// Beyond the largest n the row runs at (a pure-Python filter costs microseconds per key), or at
    /// the default suite's (the reason says which and how to run it).
    Capped,
    /// An external tool whose set-up is missing on this machine (the reason says how to set it up).
    NotSetUp,
    /// A tool that cannot run on this kind of machine at all.
    Unavailable,
    /// A server module or server the point needed was missing or failed (the Redis sweep).
    Server,
    /// An external tool's process failed (the run then exits 1; the reason holds what it printed).
    Failed,
}

impl SkipCause {
    /// The `status` column of `results.csv` (`skipped` for memory, as before schema 4).
    pub fn csv_status(self) -> &'static str {
        match self {
            SkipCause::Memory => "skipped",
            SkipCause::Capped => "capped",
            SkipCause::NotSetUp => "not-set-up",
            SkipCause::Unavailable => "unavailable",
            SkipCause::Server => "server",
            SkipCause::Failed => "failed",
        }
    }
}

/// An observed false-positive rate at one point of an experiment (saturation, growth, bitmap claim).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RatePoint {
    pub structure: String,
    /// Keys the structure was sized for (its initial capacity for the scalable filter).
    pub design_n: u64,
    /// Distinct keys inserted so far.
    pub n_inserted: u64,
    pub bits: u64,
    pub hashes: u32,
    pub bytes: u64,
    pub n_queries: u64,
    pub n_false_positives: u64,
    pub observed_fpr: f64,
    pub observed_fpr_wilson95: Interval,
    pub expected_fpr: f64,
    pub theory_in_interval: bool,
    /// The target rate the structure was built for.
    pub target_fpr: f64,
    /// Members inserted so far that were not found (must be 0).
    pub false_negatives: u64,
}

/// The cache guard's churn: a structure holding a steady population of n keys, after one round in which
/// the oldest quarter was deleted and as many new keys inserted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChurnPoint {
    /// The rate point after the round: the population is `n_inserted` keys, its rate against theory.
    pub point: RatePoint,
    /// The round (1, 2, …); 0 is the filled structure before any deletion.
    pub round: u32,
    /// Keys deleted and inserted in the round.
    pub keys_replaced: u64,
    /// Deletions the structure refused (a key it could not find to remove).
    pub deletes_refused: u64,
    /// Inserts the structure refused or reported failing (full), over all rounds so far.
    pub failure: Option<String>,
    /// Wall times of the round's operations on hashed keys (key generation and hashing excluded), per
    /// key, one pass each: delete, insert, member lookup over the population.
    pub delete_ns_per_key: f64,
    pub insert_ns_per_key: f64,
    pub member_query_ns_per_key: f64,
}

/// A filter shipped: built from n keys, written to a file (what goes on the wire) and loaded back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShippingRecord {
    pub structure: String,
    pub n: u64,
    /// The saved file's bytes (header, parts and checksums).
    pub file_bytes: u64,
    /// The heap the built structure holds.
    pub bytes_held: u64,
    /// One pass of inserts over hashed keys, per key.
    pub build_ns_per_key: f64,
    /// Writing the file (atomically: a temporary file, synced, renamed) and reading it back into a
    /// structure that answers, in milliseconds.
    pub save_ms: f64,
    pub load_ms: f64,
    /// Keys checked on both (every member, and non-members), and the answers that differed (must be 0).
    pub keys_compared: u64,
    pub answers_differing: u64,
}

/// The deletion experiment: a counting filter filled, half removed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeletionRecord {
    pub n_inserted: u64,
    pub n_removed: u64,
    pub n_queries: u64,
    pub false_positives_before: u64,
    pub expected_fpr_before: f64,
    pub false_positives_after: u64,
    pub expected_fpr_after: f64,
    /// Removed keys still reported present (they behave like non-members).
    pub removed_still_present: u64,
    /// Remaining members not found: must be 0.
    pub false_negatives_remaining: u64,
    pub counting_bytes: u64,
    pub bloom_bytes: u64,
    pub target_fpr: f64,
    /// Counters stuck at the sticky maximum after the n distinct inserts.
    #[serde(default)]
    pub saturated_counters: Option<u64>,
    /// Fan et al.'s bound on that number (expected counters reaching the maximum).
    #[serde(default)]
    pub saturation_bound: Option<f64>,
    /// The stream with repeats: keys offered, each this many times, to two fresh counting filters.
    #[serde(default)]
    pub repeat_stream: Option<RepeatStream>,
}

/// Counting filters fed a stream in which every key recurs: one inserting only keys it does not hold (as
/// `dedup` does), one counting every repeat.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RepeatStream {
    pub keys: u64,
    pub offers_per_key: u32,
    /// Saturated counters when each key is inserted only while absent.
    pub saturated_counters_if_new: u64,
    /// Saturated counters when every offer is inserted.
    pub saturated_counters_counted: u64,
}

/// One structure of the 6-billion-URL scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioStructure {
    pub structure: String,
    /// What it stands for in the article's terms.
    pub role: String,
    pub bits: u64,
    pub hashes: u32,
    pub bytes: u64,
    /// Insert cost per key with all threads (the slowest thread's timed probing over n).
    pub insert_ns_per_key: f64,
    /// Non-member query cost per key with all threads (probing only).
    pub query_ns_per_key: f64,
    pub n_queries: u64,
    pub n_false_positives: u64,
    pub observed_fpr: f64,
    pub observed_fpr_wilson95: Interval,
    pub expected_fpr: f64,
    pub theory_in_interval: bool,
    /// Members checked after the build (a sample) and how many were missing: must be 0.
    pub n_members_checked: u64,
    pub false_negatives: u64,
}

/// The second article's size: 6·10⁹ URLs.
pub const ARTICLE_N: u64 = 6_000_000_000;
/// The second article's budget: 1 GiB for 6·10⁹ URLs.
pub const ARTICLE_BUDGET_BYTES: u64 = 1 << 30;

/// The second article's scenario: n distinct URLs into the raw bitmap, the best Bloom filter of a 1 GiB
/// budget, and a cache-blocked filter sized for 1%.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioRecord {
    pub name: String,
    pub n: u64,
    pub threads: u32,
    pub budget_bytes: u64,
    pub wall_s: f64,
    pub build_wall_s: f64,
    pub query_wall_s: f64,
    /// Key generation and hashing per key, summed over threads.
    pub generate_ns_per_key: f64,
    pub hash_ns_per_key: f64,
    pub structures: Vec<ScenarioStructure>,
    pub peak_rss_bytes: u64,
}

//! Suites and the plan of a run: which scales, structures and experiments, with how many queries.

use crate::kind::Kind;
use crate::kind::Role;
use crate::registry::role_id;
use crate::results::Results;
use crate::workload::Workload;

pub use crate::results::Suite;

/// Fill ratios of the saturation (overshoot) experiment: 1.25×, 2× and 5× are the report's overshoot panel.
pub const SATURATION_FILLS: &[f64] = &[0.1, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0];

/// Fill ratios of the other filters of the overshoot experiment: from their planned n on, where every
/// point needs few queries (at lower fills a rate of 10⁻⁵ wants the query cap, ≈ 0.5 s a point here).
pub const PAST_CAPACITY_FILLS: &[f64] = &[1.0, 1.25, 2.0, 5.0];

/// The fills the saturation (overshoot) experiment takes `id` through: the whole curve for `bloom` and
/// `scalable` (the first article's claim), the overshoot for the other filters.
pub fn saturation_fills(id: &str) -> &'static [f64] {
    if id == role_id(Role::ReferenceBloom) || id == role_id(Role::GrowingFilter) {
        SATURATION_FILLS
    } else {
        PAST_CAPACITY_FILLS
    }
}

/// The structures the saturation (overshoot) experiment fills past their planned n: every in-process
/// filter of the run that takes keys one by one and keeps them past its capacity, and always `bloom` and
/// `scalable` (the first article's claim). Left out: exact sets (nothing to overshoot), static filters
/// (built once from their set), filters that refuse inserts when full (`cuckoo`, `qfilter`: they would
/// lose keys), servers and other languages' tools. Registry order.
pub fn overshoot_ids<'a>(run_ids: impl IntoIterator<Item = &'a str>) -> Vec<&'static str> {
    let run_ids: Vec<&str> = run_ids.into_iter().collect();
    crate::registry::local_kinds()
        .filter(|k| {
            let id = k.id();
            (run_ids.contains(&id)
                || id == role_id(Role::ReferenceBloom)
                || id == role_id(Role::GrowingFilter))
                && !k.exact()
                && k.dynamic()
                && k.stores_past_capacity()
        })
        .map(|k| k.id())
        .collect()
}
/// Bits per key of the bitmap claim.
pub const BITMAP_BITS_PER_KEY: &[u64] = &[1, 2, 4, 8, 16, 32, 64, 100];
/// Growth checkpoints, as multiples of n₀.
pub const GROWTH_STEPS: &[u64] = &[1, 2, 4, 8, 16, 32, 64];

pub use crate::results::Experiment;

/// The largest scale the experiments are fitted to (at least 100 keys): one formula for the plan and for
/// reading a run's planned sizes back from its header.
fn largest_scale(scales: &[u64]) -> u64 {
    scales.iter().copied().max().unwrap_or(1).max(100)
}

/// An experiment's largest size as the plan set it: the suite's (by `of_suite`) within the run's largest
/// scale, both from the results' header.
pub(crate) fn sized_as_planned(results: &Results, of_suite: fn(Suite) -> u64) -> u64 {
    results
        .header
        .as_ref()
        .map(|h| {
            let suite = h.suite;
            of_suite(suite).min(largest_scale(&h.scales))
        })
        .unwrap_or(of_suite(Suite::Quick))
}

pub use crate::results::HASH_STUDY_SIZES;

/// Key lengths of the hash study's speed measurement: short URLs, the default profile's mean, long ones.
pub const HASH_KEY_BYTES: [u32; 3] = [40, 77, 200];

/// The hashes whose filters the hash study builds at `n`: every hash up to 10⁷ keys; above, only those
/// documented to pass SMHasher (the other two would add four filters of 1.2 GB and ≈ 2–3 minutes to the
/// full suite's ≈ 8 for the study). The report recommends only the usable ones among them
/// (`HashFn::usable`: persistent too), which ahash-fallback is not.
pub fn hash_study_hashes(n: u64) -> Vec<crate::hash::candidates::HashFn> {
    crate::hash::candidates::HashFn::ALL
        .into_iter()
        .filter(|h| n <= HASH_STUDY_SIZES[0] || h.documented_to_pass())
        .collect()
}

/// The sizes the hash study builds its filters at: 10⁷ and 10⁹ keys where the run reaches them, or
/// else its largest size.
pub fn hash_study_sizes(largest: u64) -> Vec<u64> {
    let sizes: Vec<u64> = HASH_STUDY_SIZES
        .into_iter()
        .filter(|n| *n <= largest)
        .collect();
    if sizes.is_empty() {
        vec![largest]
    } else {
        sizes
    }
}

/// The smallest window of the expiry experiment, in admitted keys.
pub const EXPIRY_WINDOW_MIN_KEYS: u64 = 10_000;

/// The windows of the expiry experiment: decades from [`EXPIRY_WINDOW_MIN_KEYS`] to `largest`.
pub fn expiry_windows(largest: u64) -> Vec<u64> {
    let mut windows = Vec::new();
    let mut w = EXPIRY_WINDOW_MIN_KEYS;
    while w <= largest {
        windows.push(w);
        w *= 10;
    }
    windows
}

/// The Bloom filter joins the bitmap claim up to this many bits per key (k ≤ 22).
pub const BLOOM_MAX_BITS_PER_KEY: u64 = 32;

/// The experiments a run of `workload` measures beyond the grid: the crawl keeps every one written
/// for it (the cache guard's churn is not), a blocklist needs only the grid (build time, non-member
/// lookups and the rate are in its cells), a cache guard the deletion and the churn, a window the expiry
/// experiment, a shipped filter the shipping experiment (its bytes, save and load).
pub fn experiments_of(workload: Workload) -> &'static [Experiment] {
    match workload {
        Workload::Crawl => &[
            Experiment::Saturation,
            Experiment::Deletion,
            Experiment::Growth,
            Experiment::BitmapClaim,
            Experiment::Expiry,
            Experiment::HashStudy,
            Experiment::DedupCli,
        ],
        Workload::Blocklist => &[],
        Workload::Shipped => &[Experiment::Shipping],
        Workload::CacheGuard => &[Experiment::Deletion, Experiment::Churn],
        Workload::Window => &[Experiment::Expiry],
    }
}

/// Sizes of the experiments beyond the grid.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExperimentSizes {
    /// Keys the saturation filters are sized for.
    pub saturation_n: u64,
    /// Initial capacity of the growth experiment (fed 64× that).
    pub growth_n0: u64,
    /// Keys of the deletion experiment.
    pub deletion_n: u64,
    /// Keys of the bitmap claim.
    pub bitmap_n: u64,
    /// Keys of the filters the shipping experiment saves and loads.
    pub shipping_n: u64,
    /// The largest window of the expiry experiment (its stream is 4 windows long).
    pub expiry_window_max_keys: u64,
    /// The largest filters of the hash study ([`hash_study_sizes`]).
    pub hash_study_max_keys: u64,
    /// Lines of the dedup-cli experiment's stream (0: not run, as in the quick suite).
    pub dedup_cli_lines: u64,
}

/// Everything a run will do.
pub struct RunPlan {
    pub suite: Suite,
    pub scales: Vec<u64>,
    pub kinds: Vec<&'static dyn Kind>,
    pub fpr: f64,
    pub memory_budget_bytes: u64,
    pub seed: u64,
    pub reps: u32,
    /// Whether `--reps` was given (then it applies to every cell).
    pub reps_explicit: bool,
    /// Rounds of each interleaved speed group (`src/run/speed_group.rs`).
    pub speed_rounds: u32,
    /// At most this many non-member queries per cell (and at least [`RunPlan::MIN_QUERIES`]).
    pub query_cap: u64,
    /// Seconds a non-member phase may take before it stops early (its count is kept).
    pub query_time_cap_s: f64,
    /// Non-member queries timed in repetitions after the first.
    pub timing_queries_cap: u64,
    pub experiments: Option<ExperimentSizes>,
    /// The workload: which experiments run ([`experiments_of`]).
    pub workload: Workload,
    /// Threads of the parallel builds (1: none).
    pub threads: u32,
    /// The shared-filter sweep, when a Redis server was given.
    pub sweep: Option<SweepPlan>,
    /// The largest n of any external row in this run, below the rows' own caps: the default quick
    /// suite (every structure) keeps to [`RunPlan::QUICK_EXTERNAL_MAX_KEYS`] to stay within 3 minutes.
    pub external_max_keys: Option<u64>,
    /// The largest n of the in-process structures whose descriptor does not say `at_full_suite_top`, in
    /// the default full suite (every structure): [`RunPlan::FULL_SUITE_MAX_KEYS`].
    pub full_suite_max_keys: Option<u64>,
}

/// The shared-filter sweep: every Redis backend at every batch size, on the same keys, next to `bloom`.
#[derive(Clone)]
pub struct SweepPlan {
    /// Where the Redis backends run: a server, a cluster, or both.
    pub endpoints: Vec<crate::redis::Endpoint>,
    /// The Redis backends to run.
    pub kinds: Vec<&'static dyn Kind>,
    /// Keys inserted per point.
    pub keys: u64,
    /// Keys per round trip.
    pub batches: Vec<usize>,
    /// How long a round trip is retried while a server is away.
    pub retry_for: std::time::Duration,
}

impl SweepPlan {
    /// Default keys per point: 10⁵ (a batch of 1 costs one round trip per key).
    pub const DEFAULT_KEYS: u64 = 100_000;
    /// Default batch sizes.
    pub const DEFAULT_BATCHES: [usize; 4] = [1, 16, 128, 1024];
}

impl RunPlan {
    /// Rounds of a speed group unless `--rounds` says otherwise: 15 paired ratios give a 96.5% interval
    /// of their median between the 4th and 12th (order statistics; `crate::stats::median_interval`).
    pub const DEFAULT_SPEED_ROUNDS: u32 = 15;
    /// Fewest rounds: 6 paired ratios are the fewest whose extremes bound their median at ≥ 95%.
    pub const MIN_SPEED_ROUNDS: u32 = 6;
    /// Fewest non-member queries per cell.
    pub const MIN_QUERIES: u64 = 100_000;
    /// Expected false positives a cell aims for.
    pub const TARGET_FALSE_POSITIVES: f64 = 1000.0;
    /// Expected false positives a point of the shared-filter sweep aims for: a rate 20% off its theory
    /// lies outside the interval at a false alarm of 10⁻⁹ each way from ≈ 1,100 false positives on
    /// (`stats::check_trials`); 2,500 keep that where the observed rate is half the predicted one (a
    /// cluster's shards hold fewer keys than the one filter the prediction is for). The grid's cells keep
    /// 1,000: on a filter of a few thousand keys more queries would resolve its own fill's departure from
    /// the average-case theory, which `fill_fpr` reports instead.
    pub const SWEEP_FALSE_POSITIVES: f64 = 2500.0;

    /// The default plan of a suite.
    pub fn for_suite(
        suite: Suite,
        kinds: Vec<&'static dyn Kind>,
        fpr: f64,
        memory_budget_bytes: u64,
        seed: u64,
    ) -> Self {
        let (query_cap, query_time_cap_s) = match suite {
            Suite::Quick | Suite::Redis | Suite::DedupCli => (2_000_000, 4.0),
            Suite::Standard => (10_000_000, 20.0),
            Suite::Full | Suite::Article6e9 => (100_000_000, 60.0),
        };
        let scale = suite.experiment_scale();
        RunPlan {
            suite,
            scales: suite.scales(),
            kinds,
            fpr,
            memory_budget_bytes,
            seed,
            reps: suite.reps(),
            reps_explicit: false,
            speed_rounds: Self::DEFAULT_SPEED_ROUNDS,
            query_cap,
            query_time_cap_s,
            timing_queries_cap: 200_000,
            experiments: Some(ExperimentSizes {
                saturation_n: 100_000 * scale,
                growth_n0: 10_000 * scale,
                deletion_n: 200_000 * scale,
                bitmap_n: 1_000_000 * scale,
                shipping_n: 1_000_000 * scale,
                expiry_window_max_keys: suite.expiry_window_max_keys(),
                hash_study_max_keys: suite.hash_study_max_keys(),
                dedup_cli_lines: suite.dedup_cli_lines(),
            }),
            workload: Workload::Crawl,
            threads: std::thread::available_parallelism()
                .map(|n| n.get() as u32)
                .unwrap_or(1),
            sweep: None,
            external_max_keys: None,
            full_suite_max_keys: None,
        }
    }

    /// External rows in the default quick suite (every structure) run up to this n, so the suite keeps to
    /// its 3 minutes (docs/notes.md has what their 10⁷ cells take). Naming the rows
    /// (`--structures external`) runs them at their own caps.
    pub const QUICK_EXTERNAL_MAX_KEYS: u64 = 1_000_000;

    /// In-process structures in the default full suite (every structure) whose descriptor does not say
    /// `at_full_suite_top` run up to this n, so the full suite stays within its time (docs/notes.md has
    /// what a 10⁹ cell takes). Naming them (`--structures`) runs them at every scale.
    pub const FULL_SUITE_MAX_KEYS: u64 = 100_000_000;

    /// Sizes the experiments to the run: no experiment uses more keys than the largest scale.
    pub fn fit_experiments_to_scales(&mut self) {
        let largest = largest_scale(&self.scales);
        if let Some(e) = self.experiments.as_mut() {
            e.saturation_n = e.saturation_n.min(largest);
            e.growth_n0 = e.growth_n0.min((largest / 64).max(100));
            e.deletion_n = e.deletion_n.min(largest);
            e.bitmap_n = e.bitmap_n.min(largest);
            e.shipping_n = e.shipping_n.min(largest);
            e.expiry_window_max_keys = e.expiry_window_max_keys.min(largest);
            e.hash_study_max_keys = e.hash_study_max_keys.min(largest);
            // The dedup-cli suite's one scale is its stream's length; the others cap it as the rest.
            e.dedup_cli_lines = match self.suite {
                Suite::DedupCli => largest,
                _ => e.dedup_cli_lines.min(largest),
            };
        }
    }

    /// Repetitions of a cell at `n`: the quick suite times its largest cells (≥ 10⁷ keys) once, to stay within
    /// its three minutes; the full suite times its cells up to 10⁷ keys (where the Speed targets are judged)
    /// three times, so a ratio rests on medians rather than on one run of a shared machine, and its larger
    /// cells once; an explicit `--reps` applies to every cell.
    pub fn reps_for(&self, n: u64) -> u32 {
        if self.reps_explicit {
            return self.reps.max(1);
        }
        match self.suite {
            Suite::Quick if n >= 10_000_000 => 1,
            Suite::Full if n <= 10_000_000 => 3,
            _ => self.reps.max(1),
        }
    }

    /// Non-member queries for a structure whose expected rate is `expected_fpr`: enough for
    /// [`RunPlan::TARGET_FALSE_POSITIVES`], within [`RunPlan::MIN_QUERIES`] and the cap.
    pub fn non_member_queries(&self, expected_fpr: f64) -> u64 {
        self.queries_for(Self::TARGET_FALSE_POSITIVES, expected_fpr)
    }

    /// Non-member queries for `false_positives` expected at `expected_fpr`, within the bounds.
    pub fn queries_for(&self, false_positives: f64, expected_fpr: f64) -> u64 {
        if expected_fpr <= 0.0 || !expected_fpr.is_finite() {
            return self.query_cap;
        }
        let wanted = (false_positives / expected_fpr).ceil();
        (wanted as u64).clamp(Self::MIN_QUERIES.min(self.query_cap), self.query_cap)
    }
}

#[cfg(test)]
mod tests {
    use super::{overshoot_ids, RunPlan, Suite};

    #[test]
    fn overshoot_takes_the_filters_that_keep_keys_past_capacity() {
        // Exact sets are left out, bloom and scalable are always in.
        assert_eq!(overshoot_ids(["hashset"]), vec!["bloom", "scalable"]);
        let all: Vec<&str> = crate::registry::ids();
        let ids = overshoot_ids(all.iter().copied());
        for id in ["bitmap", "bloom", "blocked", "counting", "scalable"] {
            assert!(ids.contains(&id), "{id} missing from {ids:?}");
        }
        // cuckoo refuses inserts past its capacity (it would lose keys).
        for id in [
            "hashset",
            "fingerprint",
            "cuckoo",
            "redis-bloom",
            "py-set",
            "guava",
        ] {
            assert!(!ids.contains(&id), "{id} in {ids:?}");
        }
        #[cfg(feature = "peers")]
        {
            // qfilter and cuckoofilter refuse or drop inserts when full; binary fuse is built once.
            for id in ["qfilter", "cuckoofilter", "binary-fuse8", "binary-fuse16"] {
                assert!(!ids.contains(&id), "{id} in {ids:?}");
            }
            assert!(
                ids.contains(&"fastbloom") && ids.contains(&"sbbf"),
                "{ids:?}"
            );
        }
    }

    #[test]
    fn the_article_suite_keeps_its_old_name_and_writes_the_new_one() {
        let new = Suite::parse("article-6e9").unwrap();
        assert_eq!(Suite::parse("seed-6e9").unwrap(), new);
        assert_eq!(new.name(), "article-6e9");
        assert!(Suite::parse("6e9").is_err());
    }

    #[test]
    fn above_ten_million_keys_the_hash_study_builds_only_hashes_documented_to_pass() {
        use crate::hash::candidates::HashFn;
        assert_eq!(
            super::hash_study_hashes(10_000_000).len(),
            HashFn::ALL.len()
        );
        let large = super::hash_study_hashes(1_000_000_000);
        assert!(large.contains(&HashFn::Xxh3_128) && large.contains(&HashFn::Rapidhash));
        assert!(large.iter().all(|h| h.documented_to_pass()));
        assert!(large.len() < HashFn::ALL.len());
    }

    #[test]
    fn the_full_suite_repeats_the_cells_its_targets_are_judged_at() {
        let plan = |suite| RunPlan::for_suite(suite, Vec::new(), 0.01, 1 << 30, 42);
        let full = plan(Suite::Full);
        assert_eq!(full.reps_for(10_000_000), 3);
        assert_eq!(full.reps_for(10_000), 3);
        assert_eq!(full.reps_for(100_000_000), 1);
        assert_eq!(full.reps_for(1_000_000_000), 1);
        let quick = plan(Suite::Quick);
        assert_eq!(
            (quick.reps_for(1_000_000), quick.reps_for(10_000_000)),
            (3, 1)
        );
        let mut explicit = plan(Suite::Full);
        (explicit.reps, explicit.reps_explicit) = (2, true);
        assert_eq!(explicit.reps_for(1_000_000_000), 2);
        assert_eq!(explicit.reps_for(10_000), 2);
    }
}

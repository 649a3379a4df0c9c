//! A run's request, validated: from the command line's options or, when resuming, from the run's header,
//! so a resumed run does exactly what the interrupted one was asked.

use super::{Suite, SweepPlan};
use crate::kind::Kind;
use crate::measure::machine;
use crate::redis::{Endpoint, RedisUrl};
use crate::registry::{parse_list, remote_kinds};
use crate::results::RunHeader;
use crate::workload::Workload;
use crate::{Error, Result};
use std::path::PathBuf;

/// What the user asked for, as given (before validation).
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Suite name.
    pub suite: Suite,
    /// Key counts overriding the suite's.
    pub scales: Option<Vec<u64>>,
    /// Comma-separated structure ids, or `all`.
    pub structures: crate::registry::Selection,
    pub fpr: f64,
    /// Bytes one structure may use (default: memory available now).
    pub memory_budget: Option<u64>,
    /// Seed of the keys and of every structure's hash.
    pub seed: u64,
    /// Repetitions per cell (default: the suite's).
    pub reps: Option<u32>,
    /// Interleaved rounds of the speed groups (default [`super::RunPlan::DEFAULT_SPEED_ROUNDS`]).
    pub rounds: Option<u32>,
    /// Key profile: built-in name or file.
    pub profile: String,
    /// Real URLs as the member set.
    pub input: Option<PathBuf>,
    /// Real URLs as the grid's non-members (checked disjoint from the members).
    pub non_members: Option<PathBuf>,
    /// Whether to run the experiments beyond the grid.
    pub experiments: bool,
    /// The workload: which structures (those that serve it) and experiments the run measures.
    pub workload: Workload,
    /// The Redis server of the shared-filter sweep.
    pub redis: Option<String>,
    /// The Redis Cluster of the shared-filter sweep (comma-separated node URLs).
    pub redis_cluster: Option<String>,
    pub redis_keys: Option<u64>,
    pub redis_batches: Option<Vec<usize>>,
    /// Seconds a sweep round trip is retried while a server is away (default 30).
    pub redis_retry_secs: Option<u64>,
}

/// What a run is asked to do: from the command line, or from a results header when resuming.
pub struct RunSpec {
    pub suite: Suite,
    pub kinds: Vec<&'static dyn Kind>,
    pub fpr: f64,
    pub memory_budget_bytes: u64,
    pub seed: u64,
    pub reps: Option<u32>,
    pub reps_explicit: bool,
    /// Interleaved rounds of the speed groups.
    pub speed_rounds: u32,
    pub profile: String,
    pub input: Option<PathBuf>,
    pub non_members: Option<PathBuf>,
    pub scales: Option<Vec<u64>>,
    pub experiments: bool,
    pub workload: Workload,
    /// Where the sweep runs: a server, a cluster, or both (in that order).
    pub redis: Vec<Endpoint>,
    pub remote_kinds: Vec<&'static dyn Kind>,
    pub redis_keys: u64,
    pub redis_batches: Vec<usize>,
    /// How long a sweep round trip is retried while a server is away.
    pub redis_retry: std::time::Duration,
    /// The cap on external rows' n for this run ([`super::RunPlan::external_max_keys`]).
    pub external_max_keys: Option<u64>,
    /// The cap of [`super::RunPlan::full_suite_max_keys`].
    pub full_suite_max_keys: Option<u64>,
}

/// A list of registered kinds.
type Kinds = Vec<&'static dyn Kind>;

/// The kinds a run of `workload` measures: for the crawl, those selected; for another workload, every
/// in-process kind that serves it (when all were selected), else those named, each of which must serve
/// it (an error names the one that cannot and why).
fn workload_kinds(workload: Workload, kinds: Kinds, listed_all: bool) -> Result<Kinds> {
    if workload == Workload::Crawl {
        return Ok(kinds);
    }
    if listed_all {
        return Ok(kinds
            .into_iter()
            .filter(|k| k.descriptor().in_process() && k.descriptor().serves(workload))
            .collect());
    }
    // What a kind can do does not depend on n, p or memory.
    let demand = crate::analysis::regimes::Demand::new(1, 0.01, 1, workload);
    for k in &kinds {
        if !k.descriptor().in_process() {
            return Err(Error::invalid(
                "--structures",
                format!(
                    "{} does not run in this process; the {workload} workload measures the structures that do (the servers' are measured by the shared-filter sweep, --redis)",
                    k.id()
                ),
            ));
        }
        let unmet = demand.unmet_by(*k);
        if !unmet.is_empty() {
            return Err(Error::invalid(
                "--structures",
                format!(
                    "{} cannot serve the {workload} workload: {}; leave --structures out to run every structure that can",
                    k.id(),
                    unmet.join("; ")
                ),
            ));
        }
    }
    Ok(kinds)
}

/// Splits the structures into the grid's (in-process) and the sweep's (Redis), checking that a Redis
/// backend comes with a server and a `redis` suite with one.
fn split_kinds(
    suite: Suite,
    kinds: Kinds,
    listed_all: bool,
    redis: Option<&Endpoint>,
) -> Result<(Kinds, Kinds)> {
    let (remote, mut local): (Vec<_>, Vec<_>) = kinds.into_iter().partition(|k| k.remote());
    let remote = if listed_all {
        remote_kinds().collect()
    } else {
        remote
    };
    if redis.is_none() {
        if suite == Suite::Redis {
            return Err(Error::invalid(
                "--suite",
                "redis needs a server: give --redis redis://host:port or --redis-cluster URLS",
            ));
        }
        if let Some(k) = remote.first().filter(|_| !listed_all) {
            return Err(Error::invalid(
                "--structures",
                format!(
                    "{} lives on a Redis server; give one with --redis redis://host:port",
                    k.id()
                ),
            ));
        }
        return Ok((local, Vec::new()));
    }
    if remote.is_empty() {
        return Err(Error::invalid(
            "--structures",
            format!(
                "--redis is given but none of the structures lives on Redis; add some of: {}",
                remote_kinds()
                    .map(|k| k.id())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    if suite == Suite::Redis {
        local.clear();
    }
    Ok((local, remote))
}

fn check_batches(batches: &[usize]) -> Result<()> {
    if batches.is_empty() || batches.iter().any(|b| *b == 0 || *b > 100_000) {
        return Err(Error::invalid(
            "--redis-batches",
            "each must be between 1 and 100000 keys",
        ));
    }
    Ok(())
}

impl RunSpec {
    /// Validates the options; nothing is touched yet.
    pub fn from_options(options: &RunOptions) -> Result<RunSpec> {
        if options.reps == Some(0) || options.reps.is_some_and(|r| r > 100) {
            return Err(Error::invalid("--reps", "must be between 1 and 100"));
        }
        let speed_rounds = options
            .rounds
            .unwrap_or(super::RunPlan::DEFAULT_SPEED_ROUNDS);
        if !(super::RunPlan::MIN_SPEED_ROUNDS..=1000).contains(&speed_rounds) {
            return Err(Error::invalid(
                "--rounds",
                format!(
                    "must be between {} and 1000 (fewer rounds give no 95% interval of a median), got {speed_rounds}",
                    super::RunPlan::MIN_SPEED_ROUNDS
                ),
            ));
        }
        let suite = options.suite;
        let mut redis = Vec::new();
        if let Some(url) = options.redis.as_deref() {
            redis.push(Endpoint::Server(RedisUrl::parse(url)?));
        }
        if let Some(urls) = options.redis_cluster.as_deref() {
            redis.push(Endpoint::cluster(urls)?);
        }
        if redis.is_empty() && (options.redis_keys.is_some() || options.redis_batches.is_some()) {
            return Err(Error::invalid(
                "--redis-keys/--redis-batches",
                "need --redis redis://host:port or --redis-cluster URLS",
            ));
        }
        let listed_all = matches!(options.structures, crate::registry::Selection::All);
        let kinds = workload_kinds(options.workload, options.structures.kinds(), listed_all)?;
        let (kinds, remote_kinds) = split_kinds(suite, kinds, listed_all, redis.first())?;
        let redis_keys = options.redis_keys.unwrap_or(SweepPlan::DEFAULT_KEYS);
        if redis_keys == 0 || redis_keys >= crate::keys::NON_MEMBER_BASE {
            return Err(Error::invalid("--redis-keys", "must be in [1, 2^47)"));
        }
        let redis_batches = options
            .redis_batches
            .clone()
            .unwrap_or_else(|| SweepPlan::DEFAULT_BATCHES.to_vec());
        check_batches(&redis_batches)?;
        let redis_retry = redis_retry(options.redis_retry_secs, &redis)?;
        if suite == Suite::DedupCli
            && (options.input.is_some() || options.non_members.is_some() || !redis.is_empty())
        {
            return Err(Error::invalid(
                "--suite",
                "dedup-cli runs on a stream it generates, in process: --input, --non-members, --redis and --redis-cluster do not apply (run dedup on your own file with `dedupbench dedup`)",
            ));
        }
        if options.non_members.is_some() && matches!(suite, Suite::Article6e9 | Suite::Redis) {
            return Err(Error::invalid(
                "--non-members",
                format!(
                    "applies to the grid's cells; the {} suite makes its own keys (use quick, standard or full)",
                    suite.name()
                ),
            ));
        }
        Ok(RunSpec {
            suite,
            kinds,
            redis,
            remote_kinds,
            redis_keys,
            redis_batches,
            redis_retry,
            external_max_keys: (listed_all && suite == Suite::Quick)
                .then_some(super::RunPlan::QUICK_EXTERNAL_MAX_KEYS),
            full_suite_max_keys: (listed_all && suite == Suite::Full)
                .then_some(super::RunPlan::FULL_SUITE_MAX_KEYS),
            fpr: options.fpr,
            memory_budget_bytes: options
                .memory_budget
                .unwrap_or_else(machine::available_memory_bytes),
            seed: options.seed,
            reps: options.reps,
            reps_explicit: options.reps.is_some(),
            speed_rounds,
            profile: options.profile.clone(),
            input: options.input.clone(),
            non_members: options.non_members.clone(),
            // A scale given twice is one scale (its cells would otherwise be measured twice).
            scales: options.scales.as_ref().map(|scales| {
                let mut once = Vec::new();
                for n in scales {
                    if !once.contains(n) {
                        once.push(*n);
                    }
                }
                once
            }),
            experiments: options.experiments,
            workload: options.workload,
        })
    }

    /// The request an interrupted run was started with; `redis_retry_secs` is given again (how long a
    /// round trip waits for an away server is not one of the run's parameters, and not in its header).
    pub fn from_header(h: &RunHeader, redis_retry_secs: Option<u64>) -> Result<RunSpec> {
        if h.hash != crate::hash::HashFn::DEFAULT.id() {
            return Err(Error::invalid(
                "--resume",
                format!(
                    "the run hashed with {}, and this build hashes with {}: a resumed run would mix the two; start a new run",
                    h.hash,
                    crate::hash::HashFn::DEFAULT.id()
                ),
            ));
        }
        // The header's values must be ones a run can have: an edited rate of 1.5 would build filters of
        // one bit.
        let bad = |what: &str, why: String| {
            Err(Error::invalid(
                "--resume",
                format!("the run header's {what} {why}; start a new run"),
            ))
        };
        if !(h.fpr > 0.0 && h.fpr < 1.0) {
            return bad(
                "fpr",
                format!("is {}, and a rate lies strictly between 0 and 1", h.fpr),
            );
        }
        if !(1..=100).contains(&h.reps) {
            return bad("reps", format!("is {}, not between 1 and 100", h.reps));
        }
        if h.scales
            .iter()
            .any(|n| *n == 0 || *n >= crate::units::MAX_EXPECTED_KEYS)
        {
            return bad(
                "scales",
                format!("{:?} hold one outside [1, 2^47)", h.scales),
            );
        }
        if h.speed_rounds
            .is_some_and(|r| !(super::RunPlan::MIN_SPEED_ROUNDS..=1000).contains(&r))
        {
            return bad(
                "speed_rounds",
                format!("{:?} is outside 6..=1000", h.speed_rounds),
            );
        }
        let suite = h.suite;
        let mut redis = Vec::new();
        if let Some(url) = h.redis.as_deref() {
            redis.push(Endpoint::Server(RedisUrl::parse(url)?));
        }
        if let Some(urls) = h.redis_cluster.as_deref() {
            redis.push(Endpoint::cluster(urls)?);
        }
        let all: Vec<_> = h
            .structures
            .iter()
            .chain(&h.redis_structures)
            .cloned()
            .collect();
        let kinds = if all.is_empty() {
            Vec::new()
        } else {
            parse_list(&all.join(","))?
        };
        let (kinds, remote_kinds) = split_kinds(suite, kinds, false, redis.first())?;
        let redis_retry = redis_retry(redis_retry_secs, &redis)?;
        Ok(RunSpec {
            suite,
            kinds,
            redis,
            remote_kinds,
            redis_keys: h.redis_keys.unwrap_or(SweepPlan::DEFAULT_KEYS),
            redis_batches: h
                .redis_batches
                .clone()
                .unwrap_or_else(|| SweepPlan::DEFAULT_BATCHES.to_vec()),
            redis_retry,
            external_max_keys: h.external_max_keys,
            full_suite_max_keys: h.full_suite_max_keys,
            fpr: h.fpr,
            memory_budget_bytes: h.memory_budget_bytes,
            seed: h.seed,
            reps: Some(h.reps),
            reps_explicit: h.reps_explicit,
            speed_rounds: h
                .speed_rounds
                .unwrap_or(super::RunPlan::DEFAULT_SPEED_ROUNDS),
            profile: h.profile.clone(),
            input: h.input.as_ref().map(PathBuf::from),
            non_members: h.non_members.as_ref().map(|f| PathBuf::from(&f.path)),
            scales: Some(h.scales.clone()),
            experiments: h.experiments,
            workload: h.workload,
        })
    }
}

/// `--redis-retry-secs` as a duration (at most an hour; only with a server or cluster to wait for).
fn redis_retry(secs: Option<u64>, redis: &[Endpoint]) -> Result<std::time::Duration> {
    match secs {
        Some(s) if redis.is_empty() => Err(Error::invalid(
            "--redis-retry-secs",
            format!("{s} s applies to a sweep; give --redis or --redis-cluster"),
        )),
        Some(s) if s > 3600 => Err(Error::invalid(
            "--redis-retry-secs",
            format!("must be at most 3600, got {s}"),
        )),
        Some(s) => Ok(std::time::Duration::from_secs(s)),
        None => Ok(crate::redis::conn::DEFAULT_RETRY_FOR),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(suite: Suite, structures: &str) -> RunOptions {
        RunOptions {
            suite,
            scales: None,
            structures: crate::registry::Selection::parse(structures).unwrap(),
            fpr: 0.01,
            memory_budget: Some(1 << 30),
            seed: 42,
            reps: None,
            rounds: None,
            profile: "crawl-frontier".into(),
            input: None,
            non_members: None,
            experiments: true,
            workload: Default::default(),
            redis: None,
            redis_cluster: None,
            redis_keys: None,
            redis_batches: None,
            redis_retry_secs: None,
        }
    }

    #[test]
    fn only_the_default_suites_cap_their_rows() {
        let full = RunSpec::from_options(&options(Suite::Full, "all")).unwrap();
        assert_eq!(
            full.full_suite_max_keys,
            Some(super::super::RunPlan::FULL_SUITE_MAX_KEYS)
        );
        assert_eq!(full.external_max_keys, None);
        let quick = RunSpec::from_options(&options(Suite::Quick, "all")).unwrap();
        assert_eq!(quick.full_suite_max_keys, None);
        assert!(quick.external_max_keys.is_some());
        // Named structures run at every scale of the suite.
        let named = RunSpec::from_options(&options(Suite::Full, "bloom,fastbloom")).unwrap();
        assert_eq!(named.full_suite_max_keys, None);
    }

    #[test]
    fn the_full_suite_runs_the_article_structures_and_ours_at_its_top() {
        let top: Vec<&str> = crate::registry::ids()
            .into_iter()
            .map(|id| crate::registry::find(id).unwrap())
            .filter(|k| k.descriptor().at_full_suite_top)
            .map(|k| k.id())
            .collect();
        assert_eq!(top, ["bitmap", "bloom", "blocked"]);
    }

    /// The header of a run saved before the header named its hash.
    fn fixture_header() -> RunHeader {
        let line = include_str!("../../tests/fixtures/skips-and-scenario/results.jsonl")
            .lines()
            .next()
            .expect("a header");
        serde_json::from_str(line).expect("the fixture's header")
    }

    /// Why resuming the run of `header` is refused (it must be).
    fn refusal(header: &RunHeader, redis_retry_secs: Option<u64>) -> String {
        match RunSpec::from_header(header, redis_retry_secs) {
            Ok(_) => panic!("resumed, not refused"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_run_hashed_with_another_hash_is_not_resumed() {
        let mut header = fixture_header();
        assert_eq!(header.hash, "xxh3-128", "a header from before the field");
        let refused = refusal(&header, None);
        assert!(
            refused.contains("--resume") && refused.contains("hashed with xxh3-128"),
            "{refused}"
        );
        header.hash = crate::hash::HashFn::DEFAULT.id().into();
        assert!(RunSpec::from_header(&header, None).is_ok());
    }

    #[test]
    fn a_resumed_sweep_waits_as_long_as_it_is_told() {
        let mut header = fixture_header();
        header.hash = crate::hash::HashFn::DEFAULT.id().into();
        assert_eq!(header.redis, None, "a run without a sweep");
        let refused = refusal(&header, Some(5));
        assert!(
            refused.contains("--redis-retry-secs") && refused.contains("applies to a sweep"),
            "{refused}"
        );
        header.redis = Some("redis://127.0.0.1:6399/0".into());
        header.redis_structures = vec!["redis-bloom".into()];
        let spec = |secs| RunSpec::from_header(&header, secs).map(|s| s.redis_retry);
        assert_eq!(
            spec(Some(5)).map_err(|e| e.to_string()),
            Ok(std::time::Duration::from_secs(5))
        );
        assert_eq!(spec(None).ok(), Some(crate::redis::conn::DEFAULT_RETRY_FOR));
        assert!(spec(Some(3601)).is_err());
    }
}

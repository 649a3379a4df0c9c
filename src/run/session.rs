//! One run from request to results file: validate and plan, prepare the folder (or resume one), write
//! the header, then the loop over the memory probe, the grid (or the scenario), the experiments and the
//! sweep. Everything that can be refused is checked before the folder is touched.

use super::resume::{Completed, WorkId};
use super::source::{KeySource, Members, NonMembers};
use super::spec::RunSpec;
use super::{out_dir, Progress, RunPlan, Runner, Suite, SweepPlan};
use crate::keys::{Profile, Shape, UrlGenerator, NON_MEMBER_BASE};
use crate::measure::machine::MachineInfo;
use crate::redis::{Conn, Endpoint};
use crate::results::{read_results, Record, ResultsWriter, RunHeader};
use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// A run ready to start: planned, its folder prepared, what is already complete known.
pub struct Session {
    /// The folder the run writes into.
    pub out: PathBuf,
    pub plan: RunPlan,
    /// What the folder already holds (nothing for a new run).
    pub completed: Completed,
    source: KeySource,
    /// The header to write first (`None` when resuming: the file has it).
    header: Option<RunHeader>,
    /// The run's parameters, copied onto every measured cell.
    params: crate::results::RunParams,
}

/// How a run ended.
pub struct Outcome {
    /// The error that stopped the run early (after an interruption, the abandoned cell's).
    pub error: Option<Error>,
    /// Whether a stop was requested.
    pub interrupted: bool,
    /// Cells that found false negatives or lost their server.
    pub failures: Vec<String>,
}

impl Session {
    /// A new run of `spec` into `out` (default `reports/<UTC timestamp>`).
    pub fn new(spec: RunSpec, out: Option<&Path>) -> Result<Session> {
        let (plan, source, profile_name) = plan(&spec)?;
        let out = out_dir::prepare(out)?;
        let header = header(&spec, &plan, &profile_name, &source)?;
        Ok(Session {
            out,
            plan,
            completed: Completed::nothing(),
            source,
            params: header.params(),
            header: Some(header),
        })
    }

    /// Continues the interrupted run in `dir` with its own parameters (and a sweep's round trips retried
    /// for `redis_retry_secs`, which is not one of them).
    pub fn resume(dir: &Path, redis_retry_secs: Option<u64>) -> Result<Session> {
        if !dir.join("results.jsonl").is_file() {
            return Err(Error::invalid(
                "--resume",
                format!("{} holds no results.jsonl to resume", dir.display()),
            ));
        }
        let results = read_results(dir)?;
        let header = results.header.as_ref().ok_or_else(|| {
            Error::invalid("--resume", format!("{} has no run header", dir.display()))
        })?;
        // The header's values first, then whether every record belongs to the run it describes.
        let spec = RunSpec::from_header(header, redis_retry_secs)?;
        super::resume::check_resumable(dir, header)?;
        let (plan, source, _) = plan(&spec)?;
        if source.non_members.checked() != header.non_members.as_ref() {
            return Err(Error::invalid(
                "--resume",
                format!(
                    "the run's --non-members file is not what it was: {:?} then, {:?} now",
                    header.non_members,
                    source.non_members.checked()
                ),
            ));
        }
        let completed = Completed::prepare(dir)?;
        Ok(Session {
            out: dir.to_path_buf(),
            plan,
            completed,
            source,
            params: header.params(),
            header: None,
        })
    }

    /// Progress steps of the loop: one per grid cell (or scenario scale).
    pub fn cell_count(&self) -> u64 {
        let per_scale = if self.plan.suite == Suite::Article6e9 {
            1
        } else {
            self.plan.kinds.len()
        };
        (self.plan.scales.len() * per_scale) as u64
    }

    /// Runs what is not complete, appending every record as it is measured; stops early when `stop` is
    /// set (the current cell is abandoned, not recorded).
    pub fn run(self, progress: &dyn Progress, stop: &AtomicBool) -> Result<Outcome> {
        let mut writer = ResultsWriter::open(&self.out)?;
        if let Some(header) = self.header {
            writer.write(Record::Run(header))?;
        }
        let mut runner = Runner::new(self.plan, self.source, writer, progress, stop)?;
        runner.run_params = Some(self.params);
        let error = runner.run_all(&self.completed).err();
        Ok(Outcome {
            error,
            interrupted: runner.stopped(),
            failures: runner.failures,
        })
    }
}

/// The plan of `spec`, its key source and its profile's name; connects to the Redis server (a wrong
/// address fails here), counts an input file and checks a non-member file against the members.
fn plan(spec: &RunSpec) -> Result<(RunPlan, KeySource, String)> {
    let profile = Profile::load(&spec.profile)?;
    let mut plan = RunPlan::for_suite(
        spec.suite,
        spec.kinds.clone(),
        spec.fpr,
        spec.memory_budget_bytes,
        spec.seed,
    );
    if let Some(reps) = spec.reps {
        plan.reps = reps;
        plan.reps_explicit = spec.reps_explicit;
    }
    plan.speed_rounds = spec.speed_rounds;
    plan.workload = spec.workload;
    plan.external_max_keys = spec.external_max_keys;
    plan.full_suite_max_keys = spec.full_suite_max_keys;
    if !spec.experiments || matches!(spec.suite, Suite::Article6e9 | Suite::Redis) {
        plan.experiments = None;
    }
    if !spec.redis.is_empty() {
        for endpoint in &spec.redis {
            Conn::connect(endpoint)?;
        }
        plan.sweep = Some(SweepPlan {
            endpoints: spec.redis.clone(),
            kinds: spec.remote_kinds.clone(),
            keys: spec.redis_keys,
            batches: spec.redis_batches.clone(),
            retry_for: spec.redis_retry,
        });
    }
    let members = match &spec.input {
        None => Members::Generated,
        Some(path) => Members::from_file(path, spec.scales.as_deref().unwrap_or(&[]))?,
    };
    plan.scales = match (&spec.scales, &members) {
        (Some(scales), Members::File { lines, .. }) => {
            if let Some(bad) = scales.iter().find(|s| **s > *lines) {
                return Err(Error::invalid(
                    "--scales",
                    format!("{bad} exceeds the {lines} URLs of --input"),
                ));
            }
            scales.clone()
        }
        (None, Members::File { lines, .. }) => vec![*lines],
        (Some(scales), Members::Generated) => scales.clone(),
        (None, Members::Generated) => plan.scales.clone(),
    };
    if let Some(bad) = plan
        .scales
        .iter()
        .find(|s| **s == 0 || **s >= NON_MEMBER_BASE)
    {
        return Err(Error::invalid(
            "--scales",
            format!("{bad} is outside [1, 2^47)"),
        ));
    }
    plan.fit_experiments_to_scales();
    let generator = UrlGenerator::new(profile.clone(), spec.seed);
    let limit = generator.member_limit();
    if let (Members::Generated, Some(bad)) = (&members, plan.scales.iter().find(|s| **s >= limit)) {
        return Err(Error::invalid(
            "--scales",
            format!(
                "{bad} is past the {} distinct members {} keys have (profile {}); give a smaller scale or --input FILE",
                limit - 1,
                profile.shape,
                profile.name
            ),
        ));
    }
    // Generated IPv4 non-members are public addresses like any in a file: some would be members.
    if profile.shape == Shape::Ipv4 && spec.input.is_some() && spec.non_members.is_none() {
        return Err(Error::invalid(
            "--profile",
            "ipv4 draws its non-members from the public IPv4 addresses, where those of --input are too, so some would be members: give --non-members FILE (checked disjoint from --input) or another profile",
        ));
    }
    let mut source = KeySource {
        generator,
        members,
        non_members: NonMembers::Generated,
    };
    if let Some(path) = &spec.non_members {
        let largest = plan.scales.iter().copied().max().unwrap_or(0);
        let limit = crate::measure::machine::memory_limit_bytes(plan.memory_budget_bytes);
        source.non_members = NonMembers::from_file(path, &source, largest, limit)?;
    }
    Ok((plan, source, profile.name))
}

/// The record that opens a new run's results: its request, resolved, and the machine it ran on.
fn header(spec: &RunSpec, plan: &RunPlan, profile: &str, source: &KeySource) -> Result<RunHeader> {
    Ok(RunHeader {
        suite: spec.suite,
        scales: plan.scales.clone(),
        structures: plan.kinds.iter().map(|k| k.id().to_string()).collect(),
        fpr: plan.fpr,
        memory_budget_bytes: plan.memory_budget_bytes,
        seed: plan.seed,
        hash: crate::hash::HashFn::DEFAULT.id().to_string(),
        reps: plan.reps,
        reps_explicit: plan.reps_explicit,
        speed_rounds: Some(plan.speed_rounds),
        profile: profile.to_string(),
        input: spec.input.as_ref().map(|p| p.display().to_string()),
        input_non_utf8_lines: match &source.members {
            Members::File { non_utf8_lines, .. } => Some(*non_utf8_lines),
            Members::Generated => None,
        },
        non_members: source.non_members.checked().cloned(),
        external_max_keys: spec.external_max_keys,
        full_suite_max_keys: spec.full_suite_max_keys,
        experiments: plan.experiments.is_some(),
        workload: plan.workload,
        redis: spec.redis.iter().find_map(|e| match e {
            Endpoint::Server(url) => Some(url.to_string()),
            Endpoint::Cluster(_) => None,
        }),
        redis_cluster: spec.redis.iter().find_map(|e| match e {
            Endpoint::Cluster(nodes) => Some(
                nodes
                    .iter()
                    .map(|u| u.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            Endpoint::Server(_) => None,
        }),
        redis_structures: spec
            .remote_kinds
            .iter()
            .map(|k| k.id().to_string())
            .collect(),
        redis_keys: plan.sweep.as_ref().map(|s| s.keys),
        redis_batches: plan.sweep.as_ref().map(|s| s.batches.clone()),
        started_unix_s: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        key_lengths: source.key_lengths()?,
        machine: MachineInfo::detect(),
        dedupbench_version: env!("CARGO_PKG_VERSION").to_string(),
    })
}

impl Runner<'_> {
    /// The loop of a run: the memory probe (where structures outgrow the caches), then the scenario's
    /// scales or the grid's cells, the experiments and the sweep, skipping what `done` holds.
    pub fn run_all(&mut self, done: &Completed) -> Result<()> {
        let scales = self.plan.scales.clone();
        if self.plan.suite == Suite::DedupCli {
            // No grid: its one scale is the stream's length.
            return self.run_experiments(|e| done.has_experiment(e));
        }
        let probe_wanted =
            self.plan.suite != Suite::Redis && scales.iter().any(|n| *n >= 10_000_000);
        if probe_wanted && !done.has(&WorkId::MemoryProbe) {
            self.run_memory_probe()?;
        }
        if self.plan.suite == Suite::Article6e9 {
            for &n in &scales {
                if !done.has(&WorkId::Scenario { n }) {
                    self.run_seed_scenario(n)?;
                }
                self.progress.cell_done();
            }
            return Ok(());
        }
        let kinds = self.plan.kinds.clone();
        for &n in &scales {
            for kind in &kinds {
                let cell = WorkId::Cell {
                    structure: kind.id().to_string(),
                    n,
                };
                if !done.has(&cell) {
                    self.run_cell(*kind, n)?;
                }
                self.progress.cell_done();
            }
            // A group interrupted part-way left no record, so it is timed again whole.
            if !done.has(&WorkId::SpeedGroup { n }) {
                self.run_speed_group(n)?;
            }
        }
        self.run_experiments(|e| done.has_experiment(e))?;
        self.run_sweep(done)
    }
}

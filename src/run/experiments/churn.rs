//! The cache guard's churn: every structure of the run that deletes holds a steady population of n keys
//! while [`ROUNDS`] rounds each delete the oldest quarter and insert as many new keys. After each round
//! (and once before the first) the population is looked up whole (no false negative may appear: a
//! deletion must never take another key's fingerprint or counters with it) and a burst of non-members
//! measures the rate beside the structure's theory for n keys (a structure freshly filled with the same
//! population). A lost key or a refused insert fails the run; the rate is reported with its interval
//! (the conformance suite holds each filter to its theory through the same churn, at 10⁻⁹).
//!
//! Times are one pass per round over hashed keys (key generation and hashing outside the clock), for
//! the report's table; the grid's cells are where speeds are compared.

use super::{kinds_of_run, peak_of, ExperimentRun};
use crate::kind::{BuildConfig, Kind};
use crate::membership::Membership;
use crate::results::{ChurnPoint, Experiment, Record, Results};
use crate::run::plan::ExperimentSizes;
use crate::run::Runner;
use crate::Result;
use std::time::Instant;

/// Rounds of replacing a quarter of the population.
pub const ROUNDS: u32 = 4;

/// The experiment's registration.
pub(super) struct Churn;

/// The kinds of `kinds` the churn runs: those that delete.
fn churned(kinds: &[&'static dyn Kind]) -> Vec<&'static dyn Kind> {
    kinds
        .iter()
        .copied()
        .filter(|k| k.removable() && k.descriptor().in_process())
        .collect()
}

impl ExperimentRun for Churn {
    fn experiment(&self) -> Experiment {
        Experiment::Churn
    }
    fn size(&self, sizes: &ExperimentSizes) -> u64 {
        sizes.deletion_n
    }
    fn peak_bytes(&self, runner: &Runner<'_>, n: u64) -> Result<f64> {
        let config = BuildConfig::new(n, runner.plan.fpr, runner.plan.seed);
        peak_of(
            churned(&runner.plan.kinds)
                .into_iter()
                .map(|k| (k.id(), config.clone())),
        )
    }
    fn expected_records(&self, results: &Results) -> usize {
        churned(&kinds_of_run(results)).len() * (ROUNDS as usize + 1)
    }
    fn run(&self, runner: &mut Runner<'_>, n: u64) -> Result<()> {
        let quarter = (n / 4).max(1);
        for kind in churned(&runner.plan.kinds) {
            let config = BuildConfig::new(n, runner.plan.fpr, runner.plan.seed);
            let mut s = kind.build(&config)?;
            let (_, insert_ns) = timed_over(runner, s.hasher(), 0, n, |b| s.insert_batch(b))?;
            s.finish_build();
            let point = measure(runner, s.as_ref(), n, 0..n)?;
            let at_start = Timed {
                insert_ns: insert_ns / n as f64,
                ..Timed::default()
            };
            record(runner, s.as_ref(), point, 0, 0, 0, at_start)?;
            for round in 1..=ROUNDS {
                let oldest = u64::from(round - 1) * quarter;
                let hasher = s.hasher();
                let removable = s.as_removable().ok_or_else(|| {
                    crate::Error::invalid("structure", "says it deletes but does not")
                })?;
                let (removed, delete_ns) =
                    timed_over(runner, hasher, oldest, oldest + quarter, |b| {
                        removable.remove_batch(b)
                    })?;
                let newest = n + oldest;
                let (_, insert_ns) = timed_over(runner, hasher, newest, newest + quarter, |b| {
                    s.insert_batch(b)
                })?;
                let point = measure(runner, s.as_ref(), n, oldest + quarter..newest + quarter)?;
                let times = Timed {
                    delete_ns: delete_ns / quarter as f64,
                    insert_ns: insert_ns / quarter as f64,
                };
                record(
                    runner,
                    s.as_ref(),
                    point,
                    round,
                    quarter,
                    quarter - removed,
                    times,
                )?;
            }
        }
        Ok(())
    }
}

/// Runs `op` over the hashed batches of generated members `[from, to)`, timing `op` alone: returns
/// its sum and the nanoseconds inside it.
fn timed_over(
    runner: &mut Runner<'_>,
    hasher: crate::hash::KeyHasher,
    from: u64,
    to: u64,
    mut op: impl FnMut(&crate::keys::KeyBatch) -> u64,
) -> Result<(u64, f64)> {
    let mut ns = 0.0;
    let sum = runner.over_members(hasher, from, to, |batch| {
        let t = Instant::now();
        let out = op(batch);
        ns += t.elapsed().as_nanos() as f64;
        out
    })?;
    Ok((sum, ns))
}

/// Per-key times of one round.
#[derive(Default)]
struct Timed {
    delete_ns: f64,
    insert_ns: f64,
}

/// The population looked up whole (timed), and the rate on a burst of non-members.
fn measure(
    runner: &mut Runner<'_>,
    s: &dyn Membership,
    n: u64,
    population: std::ops::Range<u64>,
) -> Result<(crate::results::RatePoint, f64)> {
    let keys = population.end - population.start;
    let (_, query_ns) = timed_over(runner, s.hasher(), population.start, population.end, |b| {
        s.contains_batch(b)
    })?;
    let label = format!("churn: {}", s.id());
    let point = runner.rate_point_of(s, n, population, runner.plan.fpr, &label)?;
    Ok((point, query_ns / keys.max(1) as f64))
}

fn record(
    runner: &mut Runner<'_>,
    s: &dyn Membership,
    (point, member_query_ns): (crate::results::RatePoint, f64),
    round: u32,
    keys_replaced: u64,
    deletes_refused: u64,
    times: Timed,
) -> Result<()> {
    if point.false_negatives > 0 {
        runner.failures.push(format!(
            "churn: {} lost {} of its population after round {round}",
            s.id(),
            point.false_negatives
        ));
    }
    if let Some(failure) = s.failure() {
        runner
            .failures
            .push(format!("churn: {} after round {round}: {failure}", s.id()));
    }
    runner.record(Record::Churn(ChurnPoint {
        point,
        round,
        keys_replaced,
        deletes_refused,
        failure: s.failure(),
        delete_ns_per_key: times.delete_ns,
        insert_ns_per_key: times.insert_ns,
        member_query_ns_per_key: member_query_ns,
    }))
}

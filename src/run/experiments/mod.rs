//! Experiments beyond the grid, each one chart of the report and one file here behind [`ExperimentRun`]:
//! its size in a run, the peak bytes it needs there, the records a complete run writes (what resume
//! checks), and the run itself. Adding one is its file, its `Experiment` name and its line in
//! [`EXPERIMENTS`].
//!
//! Like the grid's cells, an experiment whose largest structure would not fit the memory limit is skipped
//! before allocating, and recorded as skipped with the bytes it would need.

mod bitmap_claim;
mod churn;
mod dedup_cli;
mod deletion;
mod expiry;
mod growth;
mod hash_study;
mod saturation;
mod shipping;

use super::plan::{overshoot_ids, ExperimentSizes};
use super::Suite;
use super::{Need, Runner};
use crate::kind::BuildConfig;
use crate::membership::Membership;
use crate::registry::find;
use crate::results::{Experiment, RatePoint, Results, SkipSubject};
use crate::stats::wilson;
use crate::Result;

/// One experiment beyond the grid.
pub(crate) trait ExperimentRun: Sync {
    /// Its name in results and reports.
    fn experiment(&self) -> Experiment;
    /// The size it runs at, of the plan's sizes.
    fn size(&self, sizes: &ExperimentSizes) -> u64;
    /// The bytes its largest structure needs at `n`, by the models (checked before anything is built).
    fn peak_bytes(&self, runner: &Runner<'_>, n: u64) -> Result<f64>;
    /// How many records a complete run of it writes, in the run whose header `results` holds.
    fn expected_records(&self, results: &Results) -> usize;
    /// Runs it at `n`, recording each point as it is measured.
    fn run(&self, runner: &mut Runner<'_>, n: u64) -> Result<()>;
}

/// Every experiment, in run order (the order of [`Experiment::ALL`]).
const EXPERIMENTS: [&dyn ExperimentRun; 9] = [
    &saturation::Saturation,
    &deletion::Deletion,
    &churn::Churn,
    &growth::Growth,
    &bitmap_claim::BitmapClaim,
    &expiry::Expiry,
    &hash_study::HashStudy,
    &shipping::Shipping,
    &dedup_cli::DedupCli,
];

/// The experiment named `experiment`.
pub(crate) fn of(experiment: Experiment) -> &'static dyn ExperimentRun {
    EXPERIMENTS
        .into_iter()
        .find(|e| e.experiment() == experiment)
        .expect("every experiment is in EXPERIMENTS (tested)")
}

/// The kinds the run in `results` measures (its header's structures), for experiments that run over
/// some of them.
fn kinds_of_run(results: &Results) -> Vec<&'static dyn crate::kind::Kind> {
    results
        .header
        .as_ref()
        .and_then(|h| crate::registry::parse_list(&h.structures.join(",")).ok())
        .unwrap_or_default()
}

/// Removes the folders an interrupted experiment left in the run folder `out`, named `prefix`… (a second
/// Ctrl-C exits at once, before a folder's own cleanup).
fn remove_leftovers(out: &std::path::Path, prefix: &str) -> Result<()> {
    let entries = std::fs::read_dir(out).map_err(|e| crate::Error::io(out, e))?;
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with(prefix) && entry.path().is_dir() {
            std::fs::remove_dir_all(entry.path()).map_err(|e| crate::Error::io(entry.path(), e))?;
        }
    }
    Ok(())
}

/// The largest peak of `configs` by each kind's model, with 5% for the allocator.
fn peak_of<'a>(configs: impl IntoIterator<Item = (&'a str, BuildConfig)>) -> Result<f64> {
    let mut peak = 0.0f64;
    for (id, config) in configs {
        peak = peak.max(find(id)?.predicted_peak_bytes(&config));
    }
    Ok(peak * 1.05)
}

impl Runner<'_> {
    /// Runs every experiment the plan asks for except those `done` says are complete, recording each
    /// point as it is measured.
    pub fn run_experiments(&mut self, done: impl Fn(Experiment) -> bool) -> Result<()> {
        let Some(sizes) = self.plan.experiments else {
            return Ok(());
        };
        let wanted = match self.plan.suite {
            Suite::DedupCli => &[Experiment::DedupCli],
            _ => super::plan::experiments_of(self.plan.workload),
        };
        for experiment in EXPERIMENTS {
            if done(experiment.experiment()) || !wanted.contains(&experiment.experiment()) {
                continue;
            }
            let n = experiment.size(&sizes);
            // A size of 0 is the suite leaving it out (the quick suite's dedup-cli).
            if n == 0 {
                continue;
            }
            if !self.experiment_fits(experiment, n)? {
                continue;
            }
            experiment.run(self, n)?;
        }
        Ok(())
    }

    /// Whether `experiment` fits the memory limit at `n`; when it does not, records it as skipped.
    fn experiment_fits(&mut self, experiment: &dyn ExperimentRun, n: u64) -> Result<bool> {
        let peak = experiment.peak_bytes(self, n)?;
        self.fits(Need {
            subject: SkipSubject::Experiment(experiment.experiment()),
            n,
            peak_bytes: peak,
            projected_bytes: peak,
            what: "its largest structure needs",
        })
    }

    fn rate_point(
        &mut self,
        s: &dyn Membership,
        design_n: u64,
        n_inserted: u64,
        target_fpr: f64,
        label: &str,
    ) -> Result<RatePoint> {
        self.rate_point_of(s, design_n, 0..n_inserted, target_fpr, label)
    }

    /// The rate point of `s` holding the generated members `population` (its theory at that many keys).
    fn rate_point_of(
        &mut self,
        s: &dyn Membership,
        design_n: u64,
        population: std::ops::Range<u64>,
        target_fpr: f64,
        label: &str,
    ) -> Result<RatePoint> {
        let n_inserted = population.end - population.start;
        let expected = s.expected_fpr(n_inserted);
        let queries = self.plan.non_member_queries(expected);
        let (fp, q) = self.count_false_positives(s, queries, label)?;
        let found = self.count_members_found(s, population.start, population.end)?;
        let interval = wilson(fp, q, 0.95);
        let geometry = s.geometry();
        Ok(RatePoint {
            structure: s.id().to_string(),
            design_n,
            n_inserted,
            bits: geometry.bits.unwrap_or(0),
            hashes: geometry.hashes.unwrap_or(0),
            bytes: s.bytes_held(),
            n_queries: q,
            n_false_positives: fp,
            observed_fpr: fp as f64 / q.max(1) as f64,
            observed_fpr_wilson95: interval,
            expected_fpr: expected,
            theory_in_interval: interval.contains(expected),
            target_fpr,
            false_negatives: n_inserted - found,
        })
    }

    /// The structures of the saturation (overshoot) experiment in this run.
    fn overshoot_ids(&self) -> Vec<&'static str> {
        overshoot_ids(self.plan.kinds.iter().map(|k| k.id()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_experiment_has_its_file_in_run_order() {
        let names: Vec<Experiment> = EXPERIMENTS.iter().map(|e| e.experiment()).collect();
        assert_eq!(names, Experiment::ALL);
    }
}

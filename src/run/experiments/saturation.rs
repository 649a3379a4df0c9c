//! Saturation (overshoot): every filter that can be overfilled, sized for n and filled to 0.1×…5× n (the
//! first article's "creeps upward as it fills"; users who underestimate n).

use super::{peak_of, ExperimentRun};
use crate::kind::{BuildConfig, Role};
use crate::registry::{find, role_id};
use crate::results::{Experiment, Record, Results};
use crate::run::plan::{overshoot_ids, saturation_fills, ExperimentSizes, SATURATION_FILLS};
use crate::run::Runner;
use crate::Result;

/// The experiment's registration.
pub(super) struct Saturation;

impl ExperimentRun for Saturation {
    fn experiment(&self) -> Experiment {
        Experiment::Saturation
    }
    fn size(&self, sizes: &ExperimentSizes) -> u64 {
        sizes.saturation_n
    }
    fn peak_bytes(&self, runner: &Runner<'_>, n: u64) -> Result<f64> {
        let (fpr, seed) = (runner.plan.fpr, runner.plan.seed);
        let most = SATURATION_FILLS.iter().copied().fold(1.0, f64::max);
        let configs = runner.overshoot_ids().into_iter().map(|id| {
            // The scalable filter starts at n and holds the most fill × n at the end.
            let keys = if id == role_id(Role::GrowingFilter) {
                most.ceil() as u64 * n
            } else {
                n
            };
            let mut config = BuildConfig::new(keys, fpr, seed);
            config.growth.initial_keys = Some(n);
            (id, config)
        });
        peak_of(configs)
    }
    fn expected_records(&self, results: &Results) -> usize {
        let run_ids = results
            .header
            .iter()
            .flat_map(|h| h.structures.iter().map(String::as_str));
        overshoot_ids(run_ids)
            .iter()
            .map(|id| saturation_fills(id).len())
            .sum()
    }
    fn run(&self, runner: &mut Runner<'_>, n: u64) -> Result<()> {
        for id in runner.overshoot_ids() {
            let mut config = BuildConfig::new(n, runner.plan.fpr, runner.plan.seed);
            config.growth.initial_keys = Some(n);
            let mut s = find(id)?.build(&config)?;
            let mut filled = 0;
            for fill in saturation_fills(id) {
                let target = (n as f64 * fill).round() as u64;
                runner.insert_members(s.as_mut(), filled, target)?;
                filled = target;
                let point = runner.rate_point(
                    s.as_ref(),
                    n,
                    filled,
                    runner.plan.fpr,
                    &format!("saturation {id} at {fill}x"),
                )?;
                runner.record(Record::Saturation(point))?;
            }
        }
        Ok(())
    }
}

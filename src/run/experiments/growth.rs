//! Growth: an unknown final size: the reference Bloom filter sized for n₀ against the growing filter
//! starting at n₀, both fed 64× n₀.

use super::{peak_of, ExperimentRun};
use crate::kind::{BuildConfig, Role};
use crate::registry::{find, role_id};
use crate::results::{Experiment, Record, Results};
use crate::run::plan::{ExperimentSizes, GROWTH_STEPS};
use crate::run::Runner;
use crate::Result;

/// The experiment's registration.
pub(super) struct Growth;

impl ExperimentRun for Growth {
    fn experiment(&self) -> Experiment {
        Experiment::Growth
    }
    fn size(&self, sizes: &ExperimentSizes) -> u64 {
        sizes.growth_n0
    }
    fn peak_bytes(&self, runner: &Runner<'_>, n: u64) -> Result<f64> {
        let (fpr, seed) = (runner.plan.fpr, runner.plan.seed);
        let mut grown = BuildConfig::new(n * GROWTH_STEPS.last().copied().unwrap_or(1), fpr, seed);
        grown.growth.initial_keys = Some(n);
        peak_of([
            (
                role_id(Role::ReferenceBloom),
                BuildConfig::new(n, fpr, seed),
            ),
            (role_id(Role::GrowingFilter), grown),
        ])
    }
    fn expected_records(&self, _results: &Results) -> usize {
        2 * GROWTH_STEPS.len()
    }
    fn run(&self, runner: &mut Runner<'_>, n0: u64) -> Result<()> {
        for id in [role_id(Role::ReferenceBloom), role_id(Role::GrowingFilter)] {
            let mut config = BuildConfig::new(n0, runner.plan.fpr, runner.plan.seed);
            config.growth.initial_keys = Some(n0);
            let mut s = find(id)?.build(&config)?;
            let mut filled = 0;
            for step in GROWTH_STEPS {
                let target = n0 * step;
                runner.insert_members(s.as_mut(), filled, target)?;
                filled = target;
                let point = runner.rate_point(
                    s.as_ref(),
                    n0,
                    filled,
                    runner.plan.fpr,
                    &format!("growth {id} at {step}x"),
                )?;
                runner.record(Record::Growth(point))?;
            }
        }
        Ok(())
    }
}

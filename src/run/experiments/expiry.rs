//! Expiry: at every window up to the largest, each contender (windowed filter, counting filter with a
//! delete log, exact map) over its re-crawl stream ([`crate::expiry`]).

use super::ExperimentRun;
use crate::results::{Experiment, Record, Results};
use crate::run::plan::{expiry_windows, sized_as_planned, ExperimentSizes};
use crate::run::{Runner, Suite};
use crate::Result;

/// The experiment's registration.
pub(super) struct Expiry;

impl ExperimentRun for Expiry {
    fn experiment(&self) -> Experiment {
        Experiment::Expiry
    }
    fn size(&self, sizes: &ExperimentSizes) -> u64 {
        sizes.expiry_window_max_keys
    }
    fn peak_bytes(&self, runner: &Runner<'_>, n: u64) -> Result<f64> {
        // The largest window's contenders one at a time, each beside its exact shadow of 4 windows of
        // admissions (hashbrown, 16-byte slots) and a batch of keys.
        let shadow = crate::theory::hashbrown_table_bytes(4 * n, 16) as f64;
        let most = crate::expiry::Contender::ALL
            .iter()
            .map(|c| crate::expiry::model_bytes(*c, n, runner.plan.fpr))
            .fold(0.0, f64::max);
        Ok((most + shadow) * 1.25)
    }
    fn expected_records(&self, results: &Results) -> usize {
        let largest = sized_as_planned(results, Suite::expiry_window_max_keys);
        expiry_windows(largest).len() * crate::expiry::Contender::ALL.len()
    }
    /// The expiry experiment at every window up to `largest`: each contender over its re-crawl stream.
    fn run(&self, runner: &mut Runner<'_>, largest: u64) -> Result<()> {
        for window in expiry_windows(largest) {
            for contender in crate::expiry::Contender::ALL {
                runner.progress.start(
                    &format!("expiry: {} at a window of {window}", contender.name()),
                    1,
                );
                let record = crate::expiry::run(
                    contender,
                    window,
                    runner.plan.fpr,
                    runner.plan.seed,
                    &runner.source.generator,
                )?;
                runner.progress.advance(1);
                runner.progress.finish();
                if record.wrongly_readmitted > 0 {
                    runner.failures.push(format!(
                        "expiry: {} re-admitted {} keys inside its window of {window}",
                        contender.name(),
                        record.wrongly_readmitted
                    ));
                }
                runner.record(Record::Expiry(record))?;
            }
        }
        Ok(())
    }
}

//! The bitmap claim: the raw bitmap at m = n bits (and more bits per key) against 1 − (1 − 1/m)ⁿ, beside a
//! Bloom filter of the same size with the best k.

use super::{peak_of, ExperimentRun};
use crate::kind::{BuildConfig, Role};
use crate::registry::{find, role_id};
use crate::results::{Experiment, Record, Results};
use crate::run::plan::{ExperimentSizes, BITMAP_BITS_PER_KEY, BLOOM_MAX_BITS_PER_KEY};
use crate::run::Runner;
use crate::Result;

/// The experiment's registration.
pub(super) struct BitmapClaim;

impl ExperimentRun for BitmapClaim {
    fn experiment(&self) -> Experiment {
        Experiment::BitmapClaim
    }
    fn size(&self, sizes: &ExperimentSizes) -> u64 {
        sizes.bitmap_n
    }
    fn peak_bytes(&self, runner: &Runner<'_>, n: u64) -> Result<f64> {
        let mut config = BuildConfig::new(n, runner.plan.fpr, runner.plan.seed);
        let most = BITMAP_BITS_PER_KEY.iter().copied().max().unwrap_or(1);
        config.array_bits = Some(n * most);
        peak_of([(role_id(Role::RawBitmap), config)])
    }
    fn expected_records(&self, _results: &Results) -> usize {
        BITMAP_BITS_PER_KEY.len()
            + BITMAP_BITS_PER_KEY
                .iter()
                .filter(|b| **b <= BLOOM_MAX_BITS_PER_KEY)
                .count()
    }
    fn run(&self, runner: &mut Runner<'_>, n: u64) -> Result<()> {
        for &bits_per_key in BITMAP_BITS_PER_KEY {
            let mut config = BuildConfig::new(n, runner.plan.fpr, runner.plan.seed);
            config.array_bits = Some(n * bits_per_key);
            let ids: &[&str] = if bits_per_key <= BLOOM_MAX_BITS_PER_KEY {
                &[role_id(Role::RawBitmap), role_id(Role::ReferenceBloom)]
            } else {
                &[role_id(Role::RawBitmap)]
            };
            for id in ids {
                let mut s = find(id)?.build(&config)?;
                runner.insert_members(s.as_mut(), 0, n)?;
                let point = runner.rate_point(
                    s.as_ref(),
                    n,
                    n,
                    runner.plan.fpr,
                    &format!("bitmap claim: {id} at {bits_per_key} bits/key"),
                )?;
                if point.false_negatives > 0 {
                    runner
                        .failures
                        .push(format!("{id}: {} false negatives", point.false_negatives));
                }
                runner.record(Record::BitmapClaim(point))?;
            }
        }
        Ok(())
    }
}

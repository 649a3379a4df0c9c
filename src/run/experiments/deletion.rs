//! Deletion: a counting filter filled, half removed (rate before/after, false negatives among the rest),
//! its saturated counters beside Fan et al.'s bound, and a stream in which every key recurs
//! [`REPEAT_OFFERS`] times (insert-if-new against counting every repeat).

use super::{peak_of, ExperimentRun};
use crate::kind::{BuildConfig, Role};
use crate::registry::{find, role_id};
use crate::results::{DeletionRecord, Experiment, Record, RepeatStream, Results};
use crate::run::plan::ExperimentSizes;
use crate::run::Runner;
use crate::structures::counting;
use crate::theory;
use crate::Result;

/// Times each key of the deletion experiment's repeat stream is offered (more than the sticky 15).
const REPEAT_OFFERS: u32 = 16;

/// The experiment's registration.
pub(super) struct Deletion;

impl ExperimentRun for Deletion {
    fn experiment(&self) -> Experiment {
        Experiment::Deletion
    }
    fn size(&self, sizes: &ExperimentSizes) -> u64 {
        sizes.deletion_n
    }
    fn peak_bytes(&self, runner: &Runner<'_>, n: u64) -> Result<f64> {
        let config = BuildConfig::new(n, runner.plan.fpr, runner.plan.seed);
        peak_of([(role_id(Role::DeletingFilter), config)])
    }
    fn expected_records(&self, _results: &Results) -> usize {
        1
    }
    fn run(&self, runner: &mut Runner<'_>, n: u64) -> Result<()> {
        let config = BuildConfig::new(n, runner.plan.fpr, runner.plan.seed);
        let mut s = find(role_id(Role::DeletingFilter))?.build(&config)?;
        runner.insert_members(s.as_mut(), 0, n)?;
        let saturated_counters = s.as_removable().and_then(|r| r.saturated_counters());
        let geometry = s.geometry();
        let saturation_bound = geometry
            .bits
            .zip(geometry.hashes)
            .map(|(m, k)| theory::counting_saturation_bound(m, k, n, u32::from(counting::STICKY)));
        let expected_before = s.expected_fpr(n);
        let queries = runner.plan.non_member_queries(expected_before);
        let (fp_before, q) =
            runner.count_false_positives(s.as_ref(), queries, "deletion: before")?;
        let removed = runner.remove_members(s.as_mut(), 0, n / 2)?;
        let remaining_found = runner.count_members_found(s.as_ref(), n / 2, n)?;
        let removed_still_present = runner.count_members_found(s.as_ref(), 0, n / 2)?;
        let (fp_after, _) = runner.count_false_positives(s.as_ref(), q, "deletion: after")?;
        let bloom_bytes = find(role_id(Role::ReferenceBloom))?
            .build(&config)?
            .bytes_held();
        let (counting_bytes, expected_fpr_after) = (s.bytes_held(), s.expected_fpr(n - removed));
        drop(s);
        // After the first filter is gone: the two of the repeat stream hold n/4 keys each.
        let repeat_stream = Some(repeat_stream(runner, &config, n)?);
        let record = DeletionRecord {
            n_inserted: n,
            n_removed: removed,
            n_queries: q,
            false_positives_before: fp_before,
            expected_fpr_before: expected_before,
            false_positives_after: fp_after,
            expected_fpr_after,
            removed_still_present,
            false_negatives_remaining: (n - n / 2) - remaining_found,
            counting_bytes,
            bloom_bytes,
            target_fpr: runner.plan.fpr,
            saturated_counters,
            saturation_bound,
            repeat_stream,
        };
        if record.false_negatives_remaining > 0 {
            runner.failures.push(format!(
                "deletion: {} false negatives among the remaining keys",
                record.false_negatives_remaining
            ));
        }
        runner.record(Record::Deletion(record))
    }
}

/// Offers each of n/4 keys [`REPEAT_OFFERS`] times (more than the sticky maximum) to two counting
/// filters planned for those keys: one inserting a key only while absent, one counting every offer.
fn repeat_stream(runner: &mut Runner<'_>, config: &BuildConfig, n: u64) -> Result<RepeatStream> {
    let keys = (n / 4).max(1);
    let mut config = config.clone();
    config.expected_keys = keys;
    let mut if_new = find(role_id(Role::DeletingFilter))?.build(&config)?;
    let mut counted = find(role_id(Role::DeletingFilter))?.build(&config)?;
    for _ in 0..REPEAT_OFFERS {
        runner.over_members(if_new.hasher(), 0, keys, |batch| {
            batch
                .iter()
                .filter(|(key, hash)| if_new.insert_if_new(key, *hash))
                .count() as u64
        })?;
        runner.insert_members(counted.as_mut(), 0, keys)?;
    }
    let saturated = |s: &mut Box<dyn crate::membership::Membership>| {
        s.as_removable()
            .and_then(|r| r.saturated_counters())
            .unwrap_or(0)
    };
    Ok(RepeatStream {
        keys,
        offers_per_key: REPEAT_OFFERS,
        saturated_counters_if_new: saturated(&mut if_new),
        saturated_counters_counted: saturated(&mut counted),
    })
}

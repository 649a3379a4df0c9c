//! Experiments beyond the grid, each one chart of the report:
//! - saturation (overshoot): every filter that can be overfilled, sized for n and filled to 0.1×…5× n (the
//!   first article's "creeps upward as it fills"; users who underestimate n);
//! - deletion: a counting filter filled, half removed (rate before/after, false negatives among the rest),
//!   its saturated counters beside Fan et al.'s bound, and a stream in which every key recurs
//!   [`REPEAT_OFFERS`] times (insert-if-new against counting every repeat);
//! - growth: unknown final size: `bloom` sized for n₀ against `scalable` starting at n₀, both fed 64× n₀;
//! - the bitmap claim: the raw bitmap at m = n bits (and more bits per key) against 1 − (1 − 1/m)ⁿ, beside
//!   a Bloom filter of the same size with the best k.
//!
//! Like the grid's cells, an experiment whose largest structure would not fit the memory limit is skipped
//! before allocating, and recorded as skipped with the bytes it would need.

use super::plan::{
    expiry_windows, overshoot_ids, saturation_fills, Experiment, BITMAP_BITS_PER_KEY,
    BLOOM_MAX_BITS_PER_KEY, GROWTH_STEPS, SATURATION_FILLS,
};
use super::resume::Completed;
use super::{Need, Runner};
use crate::kind::BuildConfig;
use crate::kind::Role;
use crate::membership::Membership;
use crate::registry::find;
use crate::registry::role_id;
use crate::results::SkipSubject;
use crate::results::{DeletionRecord, RatePoint, Record, RepeatStream};
use crate::stats::wilson;
use crate::structures::counting;
use crate::theory;
use crate::Result;

/// Times each key of the deletion experiment's repeat stream is offered (more than the sticky 15).
const REPEAT_OFFERS: u32 = 16;

impl Runner<'_> {
    /// Runs every experiment the plan asks for except those in `done`, recording each point as it is
    /// measured.
    pub fn run_experiments(&mut self, done: &Completed) -> Result<()> {
        let Some(sizes) = self.plan.experiments else {
            return Ok(());
        };
        for experiment in Experiment::ALL {
            if done.has_experiment(experiment) {
                continue;
            }
            let n = match experiment {
                Experiment::Saturation => sizes.saturation_n,
                Experiment::Deletion => sizes.deletion_n,
                Experiment::Growth => sizes.growth_n0,
                Experiment::BitmapClaim => sizes.bitmap_n,
                Experiment::Expiry => sizes.expiry_window_max_keys,
                Experiment::HashStudy => sizes.hash_study_max_keys,
            };
            if !self.experiment_fits(experiment, n)? {
                continue;
            }
            match experiment {
                Experiment::Saturation => self.saturation(n)?,
                Experiment::Deletion => self.deletion(n)?,
                Experiment::Growth => self.growth(n)?,
                Experiment::BitmapClaim => self.bitmap_claim(n)?,
                Experiment::Expiry => self.expiry(n)?,
                Experiment::HashStudy => self.hash_study(n)?,
            }
        }
        Ok(())
    }

    /// The largest structure `experiment` holds at size `n`, by its peak-memory model: the filled
    /// scalable filter (4× n in saturation, 64× n₀ in growth), the counting filter, the 100-bit-per-key bitmap.
    fn experiment_peak_bytes(&self, experiment: Experiment, n: u64) -> Result<f64> {
        let (fpr, seed) = (self.plan.fpr, self.plan.seed);
        // The scalable filter starts at n and holds `times` × n at the end.
        let scalable = |times: u64| {
            let mut config = BuildConfig::new(times * n, fpr, seed);
            config.growth.initial_keys = Some(n);
            (role_id(Role::GrowingFilter), config)
        };
        let mut configs = Vec::new();
        match experiment {
            Experiment::Saturation => {
                let most = SATURATION_FILLS.iter().copied().fold(1.0, f64::max);
                for id in self.overshoot_ids() {
                    if id == role_id(Role::GrowingFilter) {
                        configs.push(scalable(most.ceil() as u64));
                    } else {
                        let mut config = BuildConfig::new(n, fpr, seed);
                        config.growth.initial_keys = Some(n);
                        configs.push((id, config));
                    }
                }
            }
            Experiment::Deletion => configs.push((
                role_id(Role::DeletingFilter),
                BuildConfig::new(n, fpr, seed),
            )),
            Experiment::Growth => {
                configs.push((
                    role_id(Role::ReferenceBloom),
                    BuildConfig::new(n, fpr, seed),
                ));
                configs.push(scalable(GROWTH_STEPS.last().copied().unwrap_or(1)));
            }
            Experiment::Expiry => {
                // The largest window's contenders one at a time, each beside its exact shadow of
                // 4 windows of admissions (hashbrown, 16-byte slots) and a batch of keys.
                let shadow = crate::theory::hashbrown_table_bytes(4 * n, 16) as f64;
                let most = crate::expiry::Contender::ALL
                    .iter()
                    .map(|c| crate::expiry::model_bytes(*c, n, fpr))
                    .fold(0.0, f64::max);
                return Ok((most + shadow) * 1.25);
            }
            Experiment::HashStudy => {
                // Its smallest size: each larger one is checked (and skipped alone) as it comes.
                let smallest = super::plan::hash_study_sizes(n)[0];
                return self.hash_study_peak_bytes(smallest);
            }
            Experiment::BitmapClaim => {
                let mut config = BuildConfig::new(n, fpr, seed);
                let most = BITMAP_BITS_PER_KEY.iter().copied().max().unwrap_or(1);
                config.array_bits = Some(n * most);
                configs.push((role_id(Role::RawBitmap), config));
            }
        }
        let mut peak = 0.0f64;
        for (id, config) in &configs {
            peak = peak.max(find(id)?.predicted_peak_bytes(config));
        }
        Ok(peak * 1.05)
    }

    /// Whether `experiment` fits the memory limit at `n`; when it does not, records it as skipped.
    fn experiment_fits(&mut self, experiment: Experiment, n: u64) -> Result<bool> {
        let peak = self.experiment_peak_bytes(experiment, n)?;
        self.fits(Need {
            subject: SkipSubject::Experiment(experiment),
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
        let expected = s.expected_fpr(n_inserted);
        let queries = self.plan.non_member_queries(expected);
        let (fp, q) = self.count_false_positives(s, queries, label)?;
        let found = self.count_members_found(s, 0, n_inserted)?;
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

    fn saturation(&mut self, n: u64) -> Result<()> {
        for id in self.overshoot_ids() {
            let mut config = BuildConfig::new(n, self.plan.fpr, self.plan.seed);
            config.growth.initial_keys = Some(n);
            let mut s = find(id)?.build(&config)?;
            let mut filled = 0;
            for fill in saturation_fills(id) {
                let target = (n as f64 * fill).round() as u64;
                self.insert_members(s.as_mut(), filled, target)?;
                filled = target;
                let point = self.rate_point(
                    s.as_ref(),
                    n,
                    filled,
                    self.plan.fpr,
                    &format!("saturation {id} at {fill}x"),
                )?;
                self.record(Record::Saturation(point))?;
            }
        }
        Ok(())
    }

    fn deletion(&mut self, n: u64) -> Result<()> {
        let config = BuildConfig::new(n, self.plan.fpr, self.plan.seed);
        let mut s = find(role_id(Role::DeletingFilter))?.build(&config)?;
        self.insert_members(s.as_mut(), 0, n)?;
        let saturated_counters = s.as_removable().and_then(|r| r.saturated_counters());
        let geometry = s.geometry();
        let saturation_bound = geometry
            .bits
            .zip(geometry.hashes)
            .map(|(m, k)| theory::counting_saturation_bound(m, k, n, u32::from(counting::STICKY)));
        let expected_before = s.expected_fpr(n);
        let queries = self.plan.non_member_queries(expected_before);
        let (fp_before, q) = self.count_false_positives(s.as_ref(), queries, "deletion: before")?;
        let removed = self.remove_members(s.as_mut(), 0, n / 2)?;
        let remaining_found = self.count_members_found(s.as_ref(), n / 2, n)?;
        let removed_still_present = self.count_members_found(s.as_ref(), 0, n / 2)?;
        let (fp_after, _) = self.count_false_positives(s.as_ref(), q, "deletion: after")?;
        let bloom_bytes = find(role_id(Role::ReferenceBloom))?
            .build(&config)?
            .bytes_held();
        let (counting_bytes, expected_fpr_after) = (s.bytes_held(), s.expected_fpr(n - removed));
        drop(s);
        // After the first filter is gone: the two of the repeat stream hold n/4 keys each.
        let repeat_stream = Some(self.repeat_stream(&config, n)?);
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
            target_fpr: self.plan.fpr,
            saturated_counters,
            saturation_bound,
            repeat_stream,
        };
        if record.false_negatives_remaining > 0 {
            self.failures.push(format!(
                "deletion: {} false negatives among the remaining keys",
                record.false_negatives_remaining
            ));
        }
        self.record(Record::Deletion(record))
    }

    /// Offers each of n/4 keys [`REPEAT_OFFERS`] times (more than the sticky maximum) to two counting
    /// filters planned for those keys: one inserting a key only while absent, one counting every offer.
    fn repeat_stream(&mut self, config: &BuildConfig, n: u64) -> Result<RepeatStream> {
        let keys = (n / 4).max(1);
        let mut config = config.clone();
        config.expected_keys = keys;
        let mut if_new = find(role_id(Role::DeletingFilter))?.build(&config)?;
        let mut counted = find(role_id(Role::DeletingFilter))?.build(&config)?;
        for _ in 0..REPEAT_OFFERS {
            self.over_members(if_new.hasher(), 0, keys, |batch| {
                batch
                    .iter()
                    .filter(|(key, hash)| if_new.insert_if_new(key, *hash))
                    .count() as u64
            })?;
            self.insert_members(counted.as_mut(), 0, keys)?;
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

    fn growth(&mut self, n0: u64) -> Result<()> {
        for id in [role_id(Role::ReferenceBloom), role_id(Role::GrowingFilter)] {
            let mut config = BuildConfig::new(n0, self.plan.fpr, self.plan.seed);
            config.growth.initial_keys = Some(n0);
            let mut s = find(id)?.build(&config)?;
            let mut filled = 0;
            for step in GROWTH_STEPS {
                let target = n0 * step;
                self.insert_members(s.as_mut(), filled, target)?;
                filled = target;
                let point = self.rate_point(
                    s.as_ref(),
                    n0,
                    filled,
                    self.plan.fpr,
                    &format!("growth {id} at {step}x"),
                )?;
                self.record(Record::Growth(point))?;
            }
        }
        Ok(())
    }

    /// The expiry experiment at every window up to `largest`: each contender over its re-crawl stream.
    fn expiry(&mut self, largest: u64) -> Result<()> {
        for window in expiry_windows(largest) {
            for contender in crate::expiry::Contender::ALL {
                self.progress.start(
                    &format!("expiry: {} at a window of {window}", contender.name()),
                    1,
                );
                let record = crate::expiry::run(
                    contender,
                    window,
                    self.plan.fpr,
                    self.plan.seed,
                    &self.source.generator,
                )?;
                self.progress.advance(1);
                self.progress.finish();
                if record.wrongly_readmitted > 0 {
                    self.failures.push(format!(
                        "expiry: {} re-admitted {} keys inside its window of {window}",
                        contender.name(),
                        record.wrongly_readmitted
                    ));
                }
                self.record(Record::Expiry(record))?;
            }
        }
        Ok(())
    }

    fn bitmap_claim(&mut self, n: u64) -> Result<()> {
        for &bits_per_key in BITMAP_BITS_PER_KEY {
            let mut config = BuildConfig::new(n, self.plan.fpr, self.plan.seed);
            config.array_bits = Some(n * bits_per_key);
            let ids: &[&str] = if bits_per_key <= BLOOM_MAX_BITS_PER_KEY {
                &[role_id(Role::RawBitmap), role_id(Role::ReferenceBloom)]
            } else {
                &[role_id(Role::RawBitmap)]
            };
            for id in ids {
                let mut s = find(id)?.build(&config)?;
                self.insert_members(s.as_mut(), 0, n)?;
                let point = self.rate_point(
                    s.as_ref(),
                    n,
                    n,
                    self.plan.fpr,
                    &format!("bitmap claim: {id} at {bits_per_key} bits/key"),
                )?;
                if point.false_negatives > 0 {
                    self.failures
                        .push(format!("{id}: {} false negatives", point.false_negatives));
                }
                self.record(Record::BitmapClaim(point))?;
            }
        }
        Ok(())
    }
}

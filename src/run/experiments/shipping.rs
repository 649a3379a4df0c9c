//! The shipped filter: every structure of the run that can be saved is built from n keys, written to a
//! file (the bytes another machine receives) and loaded back, each step timed; the loaded structure must
//! answer every member and a sample of non-members exactly as the one that was saved.
//!
//! The file is written where the run writes its results, atomically (a temporary file, synced, then
//! renamed), and removed after the load: the save time includes the sync to disk; the load reads the file
//! just written, from the page cache. A folder left by an interrupted run is removed before the next.

use super::{kinds_of_run, peak_of, ExperimentRun};
use crate::kind::{BuildConfig, Kind};
use crate::membership::Membership;
use crate::results::{Experiment, Record, Results, ShippingRecord};
use crate::run::plan::ExperimentSizes;
use crate::run::Runner;
use crate::Result;
use std::time::Instant;

/// Non-members compared between the saved and the loaded structure.
const NON_MEMBERS_COMPARED: u64 = 200_000;

/// The experiment's registration.
pub(super) struct Shipping;

/// The kinds of `kinds` that can be saved.
fn shipped(kinds: &[&'static dyn Kind]) -> Vec<&'static dyn Kind> {
    kinds
        .iter()
        .copied()
        .filter(|k| k.loader().is_some())
        .collect()
}

impl ExperimentRun for Shipping {
    fn experiment(&self) -> Experiment {
        Experiment::Shipping
    }
    fn size(&self, sizes: &ExperimentSizes) -> u64 {
        sizes.shipping_n
    }
    fn peak_bytes(&self, runner: &Runner<'_>, n: u64) -> Result<f64> {
        // The built structure, the loaded one and the file's bytes while it loads.
        let config = BuildConfig::new(n, runner.plan.fpr, runner.plan.seed);
        Ok(peak_of(
            shipped(&runner.plan.kinds)
                .into_iter()
                .map(|k| (k.id(), config.clone())),
        )? * 3.0)
    }
    fn expected_records(&self, results: &Results) -> usize {
        shipped(&kinds_of_run(results)).len()
    }
    fn run(&self, runner: &mut Runner<'_>, n: u64) -> Result<()> {
        let out = runner.out_dir().to_path_buf();
        super::remove_leftovers(&out, FOLDER_PREFIX)?;
        let dir = tempfile::Builder::new()
            .prefix(FOLDER_PREFIX)
            .tempdir_in(&out)
            .map_err(|e| crate::Error::io(&out, e))?;
        for kind in shipped(&runner.plan.kinds) {
            if runner.stopped() {
                return Err(crate::run::interrupted_error());
            }
            let config = BuildConfig::new(n, runner.plan.fpr, runner.plan.seed);
            let mut s = kind.build(&config)?;
            let mut build_ns = 0.0;
            runner.over_members(s.hasher(), 0, n, |batch| {
                let t = Instant::now();
                let new = s.insert_batch(batch);
                build_ns += t.elapsed().as_nanos() as f64;
                new
            })?;
            s.finish_build();
            let path = dir.path().join(format!("{}.filter", kind.id()));
            let t = Instant::now();
            crate::registry::save(s.as_ref(), &path)?;
            let save_ms = t.elapsed().as_secs_f64() * 1e3;
            let file_bytes = std::fs::metadata(&path)
                .map_err(|e| crate::Error::io(&path, e))?
                .len();
            let t = Instant::now();
            let loaded = crate::registry::load(&path)?;
            let load_ms = t.elapsed().as_secs_f64() * 1e3;
            std::fs::remove_file(&path).map_err(|e| crate::Error::io(&path, e))?;
            let (keys_compared, answers_differing) =
                compare(runner, s.as_ref(), loaded.as_ref(), n)?;
            if let Some(failure) = s.failure() {
                runner
                    .failures
                    .push(format!("shipping: {}: {failure}", kind.id()));
            }
            if answers_differing > 0 {
                runner.failures.push(format!(
                    "shipping: {} answered {answers_differing} of {keys_compared} keys differently once loaded",
                    kind.id()
                ));
            }
            runner.record(Record::Shipping(ShippingRecord {
                structure: kind.id().to_string(),
                n,
                file_bytes,
                bytes_held: s.bytes_held(),
                build_ns_per_key: build_ns / n.max(1) as f64,
                save_ms,
                load_ms,
                keys_compared,
                answers_differing,
            }))?;
        }
        Ok(())
    }
}

/// The prefix of the folder the files are written in.
const FOLDER_PREFIX: &str = ".shipping-";

/// Every member and [`NON_MEMBERS_COMPARED`] non-members asked of both: (keys, answers differing).
fn compare(
    runner: &mut Runner<'_>,
    saved: &dyn Membership,
    loaded: &dyn Membership,
    n: u64,
) -> Result<(u64, u64)> {
    let differing = |batch: &crate::keys::KeyBatch| {
        batch
            .iter()
            .filter(|(key, hash)| {
                saved.contains_hashed(key, *hash) != loaded.contains_hashed(key, *hash)
            })
            .count() as u64
    };
    let members = runner.over_members(saved.hasher(), 0, n, differing)?;
    let strangers = runner.over_non_members(saved.hasher(), NON_MEMBERS_COMPARED, differing)?;
    Ok((n + NON_MEMBERS_COMPARED, members + strangers))
}

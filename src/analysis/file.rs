//! `analysis.json`: what the analysis layer concluded from a run's records, written once beside
//! `results.jsonl` by `bench` and by `report`, and read by the report, the CLI's summary, `advise
//! --results` and the criterion targets printer, which compute none of it themselves.
//!
//! Schema (version [`ANALYSIS_VERSION`]): `speed_ratios`, a list of paired ratios ([`SpeedRatio`]: `ours`,
//! `peer`, `op`, `path`, `n`, `ratio_median`, `ratio_low`, `ratio_high`, `rounds`, `verdict`, with the
//! ratio defined as the peer's time over ours, so above 1 means ours is faster); `other_ratios`, the ratios
//! measured once ([`Ratio`]); `missed_rates`, filters whose observed rate is significantly above the one
//! they were built for; `left_out`, structures a speed group could not time with the others;
//! `headline_n`, the size the summaries show; `dedup_cli`, the dedup-cli experiment's rows and targets
//! where the run has it; `interval`, how the intervals were computed; and
//! `results_xxh3_64`, the hash of the `results.jsonl` it was computed from, so a reader can tell a stale
//! file (the results grew or changed since) and refuse it.

use super::speed::{
    headline_n, other_ratios, speed_ratios, LeftOutAt, Ratio, SpeedRatio, TargetStatus,
};
use crate::atomic_file::write_atomic;
use crate::results::Results;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The file's name in a results folder.
pub const ANALYSIS_FILE: &str = "analysis.json";

/// The version of the schema this build writes and reads.
pub const ANALYSIS_VERSION: u32 = 1;

/// How the speed ratios' intervals are computed, as the file states it.
const INTERVAL_METHOD: &str = "median of the per-round ratios (peer ns per key over ours, both timed in the same round); 95% distribution-free interval from the order statistics of those ratios (ranks k and m+1-k, the largest k whose binomial coverage is at least 95%; the exact coverage is in each entry)";

/// Everything the analysis layer concludes from one results file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    pub analysis_version: u32,
    /// xxh3-64 of the bytes of the `results.jsonl` this was computed from (hex).
    pub results_xxh3_64: String,
    pub interval: String,
    /// The size whose ratios the summaries show (10⁷, or the timed size nearest it).
    pub headline_n: Option<u64>,
    pub speed_ratios: Vec<SpeedRatio>,
    pub other_ratios: Vec<Ratio>,
    pub missed_rates: Vec<String>,
    /// Structures a speed group could not time with the others (memory), and why.
    pub left_out: Vec<LeftOutAt>,
    /// The dedup-cli experiment, where the run has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedup_cli: Option<super::dedup_cli::DedupCliAnalysis>,
}

impl Analysis {
    /// The analysis of `results`, read from a file whose bytes hash to `results_xxh3_64`.
    pub fn of(results: &Results, results_xxh3_64: u64) -> Analysis {
        let speed_ratios = speed_ratios(results);
        Analysis {
            analysis_version: ANALYSIS_VERSION,
            results_xxh3_64: format!("{results_xxh3_64:016x}"),
            interval: INTERVAL_METHOD.to_string(),
            headline_n: headline_n(&speed_ratios),
            speed_ratios,
            other_ratios: other_ratios(results),
            missed_rates: super::speed::missed_rates(results),
            left_out: super::speed::left_out(results),
            dedup_cli: super::dedup_cli::dedup_cli(results),
        }
    }

    /// The headline size's ratios that carry a target.
    pub fn headline(&self) -> impl Iterator<Item = &SpeedRatio> {
        self.speed_ratios
            .iter()
            .filter(move |q| Some(q.n) == self.headline_n && q.target_min_ratio.is_some())
    }

    /// The ratios measured once whose target was missed.
    pub fn missed_other_ratios(&self) -> impl Iterator<Item = &Ratio> {
        self.other_ratios.iter().filter(|q| q.met == Some(false))
    }

    /// The speed ratios whose target is `status`.
    pub fn targets(&self, status: TargetStatus) -> impl Iterator<Item = &SpeedRatio> {
        self.speed_ratios
            .iter()
            .filter(move |r| r.target == Some(status))
    }

    /// Writes `dir/analysis.json` atomically.
    pub fn write(&self, dir: &Path) -> Result<()> {
        let mut text = serde_json::to_vec_pretty(self)?;
        text.push(b'\n');
        write_atomic(&dir.join(ANALYSIS_FILE), &text)
    }

    /// Reads `dir/analysis.json` and checks it against `dir/results.jsonl`: an analysis of other
    /// results (the run went on, or the file was replaced) is refused with the command that writes it
    /// again.
    pub fn read(dir: &Path) -> Result<Analysis> {
        let file = dir.join(ANALYSIS_FILE);
        let text = std::fs::read(&file).map_err(|e| Error::io(&file, e))?;
        let value: serde_json::Value =
            serde_json::from_slice(&text).map_err(|e| Error::Format {
                path: file.clone(),
                line: e.line(),
                message: format!("not an analysis file: {e}"),
            })?;
        let version = value.get("analysis_version").and_then(|v| v.as_u64());
        if version != Some(ANALYSIS_VERSION as u64) {
            return Err(Error::Format {
                path: file,
                line: 0,
                message: format!(
                    "analysis_version {version:?}, and this build reads {ANALYSIS_VERSION}; run `dedupbench report` on its folder to write it again"
                ),
            });
        }
        let analysis: Analysis = serde_json::from_value(value).map_err(|e| Error::Format {
            path: file.clone(),
            line: 0,
            message: format!("does not match analysis schema {ANALYSIS_VERSION}: {e}"),
        })?;
        let now = format!("{:016x}", results_hash(dir)?);
        if analysis.results_xxh3_64 != now {
            return Err(Error::Format {
                path: file,
                line: 0,
                message: format!(
                    "was computed from other results than {} holds now; `dedupbench report {}` writes it again",
                    dir.join("results.jsonl").display(),
                    dir.display()
                ),
            });
        }
        Ok(analysis)
    }

    /// The analysis of the results in `dir`, written beside them: what `bench` and `report` call.
    pub fn write_for(dir: &Path, results: &Results) -> Result<Analysis> {
        let analysis = Analysis::of(results, results_hash(dir)?);
        analysis.write(dir)?;
        Ok(analysis)
    }
}

/// xxh3-64 of `dir/results.jsonl`'s bytes.
fn results_hash(dir: &Path) -> Result<u64> {
    let path = dir.join("results.jsonl");
    let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
    Ok(xxhash_rust::xxh3::xxh3_64(&bytes))
}

//! Reading and writing `results.jsonl` and `results.csv`.

use super::record::*;
use crate::atomic_file::write_atomic;
use crate::{Error, Result};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

/// Appends records to `results.jsonl`, flushing after each one so a killed run keeps every completed line.
pub struct ResultsWriter {
    path: PathBuf,
    file: File,
}

impl ResultsWriter {
    /// Opens (creating or appending to) `dir/results.jsonl`.
    pub fn open(dir: &Path) -> Result<Self> {
        let path = dir.join("results.jsonl");
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        Ok(ResultsWriter { path, file })
    }

    /// Writes one record as one line, in one `write` call, then syncs the data.
    pub fn write(&mut self, record: Record) -> Result<()> {
        let mut line = serde_json::to_vec(&Line {
            schema_version: SCHEMA_VERSION,
            record,
        })?;
        line.push(b'\n');
        self.file
            .write_all(&line)
            .map_err(|e| Error::io(&self.path, e))?;
        self.file.sync_data().map_err(|e| Error::io(&self.path, e))
    }
}

/// Everything a results file holds, by kind.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Results {
    pub header: Option<RunHeader>,
    pub cells: Vec<CellRecord>,
    pub skipped: Vec<SkippedCell>,
    pub saturation: Vec<RatePoint>,
    /// The expiry experiment: each contender at each window.
    pub expiry: Vec<crate::expiry::ExpiryRecord>,
    /// The hash study: each hash's speed at each key length, and each filter built with each hash.
    pub hash_speed: Vec<HashSpeedRecord>,
    pub hash_quality: Vec<HashQualityRecord>,
    pub growth: Vec<RatePoint>,
    pub bitmap_claim: Vec<RatePoint>,
    pub deletion: Vec<DeletionRecord>,
    pub scenario: Vec<ScenarioRecord>,
    pub sweep: Vec<SweepRecord>,
    pub sweep_skipped: Vec<SkippedCell>,
    pub memory_probe: Vec<crate::measure::floor::PageProbe>,
    /// The interleaved speed groups, one per n.
    pub speed_groups: Vec<SpeedGroupRecord>,
    /// Warnings met while reading (e.g. a torn last line).
    pub warnings: Vec<String>,
}

/// Reads `dir/results.jsonl` (or the file itself when `path` is a file).
pub fn read_results(path: &Path) -> Result<Results> {
    let file_path = if path.is_dir() {
        path.join("results.jsonl")
    } else {
        path.to_path_buf()
    };
    let file = crate::input_file::open_regular(
        &file_path,
        "results file",
        "the results.jsonl a run wrote",
    )?;
    let mut lines: Vec<(usize, String)> = Vec::new();
    let mut reader = BufReader::new(file);
    let mut raw = Vec::new();
    let mut number = 0;
    let mut torn_tail = false;
    loop {
        raw.clear();
        let read = (&mut reader)
            .take(MAX_RECORD_BYTES + 1)
            .read_until(b'\n', &mut raw)
            .map_err(|e| Error::io(&file_path, e))?;
        if read == 0 {
            break;
        }
        number += 1;
        if raw.len() as u64 > MAX_RECORD_BYTES {
            return Err(Error::Format {
                path: file_path.clone(),
                line: number,
                message: format!(
                    "a line longer than {} is no record of this tool's",
                    crate::units::human_bytes(MAX_RECORD_BYTES as f64)
                ),
            });
        }
        if raw.last() != Some(&b'\n') {
            torn_tail = true;
        }
        let text = String::from_utf8(raw.clone()).map_err(|_| Error::Format {
            path: file_path.clone(),
            line: number,
            message: "not UTF-8; expected JSON records".into(),
        })?;
        lines.push((number, text));
    }
    let mut results = Results::default();
    let count = lines.len();
    for (index, (number, text)) in lines.into_iter().enumerate() {
        if text.trim().is_empty() {
            continue;
        }
        let is_last = index + 1 == count;
        let value: serde_json::Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) if is_last && torn_tail => {
                results.warnings.push(format!(
                    "{}:{number}: ignoring a torn last line (an interrupted write): {e}",
                    file_path.display()
                ));
                continue;
            }
            Err(e) => {
                return Err(Error::Format {
                    path: file_path.clone(),
                    line: number,
                    message: format!("corrupt record: {e}"),
                })
            }
        };
        let version = value
            .get("schema_version")
            .and_then(|v| v.as_u64())
            .ok_or_else(|| Error::Format {
                path: file_path.clone(),
                line: number,
                message: "no schema_version; not a dedupbench results file".into(),
            })?;
        if version > SCHEMA_VERSION as u64 {
            return Err(Error::Format {
                path: file_path.clone(),
                line: number,
                message: format!(
                    "schema version {version} is newer than this build reads ({SCHEMA_VERSION}); upgrade dedupbench"
                ),
            });
        }
        let line: Line = serde_json::from_value(value).map_err(|e| Error::Format {
            path: file_path.clone(),
            line: number,
            message: format!("record does not match schema {version}: {e}"),
        })?;
        match line.record {
            Record::Run(h) => results.header = Some(h),
            Record::Cell(c) => results.cells.push(c),
            Record::Skipped(s) => results.skipped.push(s),
            Record::Saturation(p) => results.saturation.push(p),
            Record::Expiry(e) => results.expiry.push(e),
            Record::HashSpeed(h) => results.hash_speed.push(h),
            Record::HashQuality(h) => results.hash_quality.push(h),
            Record::Growth(p) => results.growth.push(p),
            Record::BitmapClaim(p) => results.bitmap_claim.push(p),
            Record::Deletion(d) => results.deletion.push(d),
            Record::Scenario(x) => results.scenario.push(x),
            Record::Sweep(x) => results.sweep.push(x),
            Record::SweepSkipped(x) => results.sweep_skipped.push(x),
            Record::MemoryProbe(x) => results.memory_probe.push(x),
            Record::SpeedGroup(x) => results.speed_groups.push(x),
        }
    }
    if results.header.is_none() {
        return Err(Error::Format {
            path: file_path,
            line: 0,
            message: "no run header; not a dedupbench results file".into(),
        });
    }
    Ok(results)
}

/// The longest line a results file may hold: a record is a few kilobytes (a speed group's, with every
/// round of every series, tens).
const MAX_RECORD_BYTES: u64 = 16 << 20;

/// Rewrites `dir/results.jsonl` atomically without the records `drop` selects (and without a torn last
/// line or blank lines, which [`read_results`] skips too); returns how many records were dropped. Used
/// by `bench --resume`, after [`read_results`] accepted the file.
pub fn rewrite_without(dir: &Path, drop: impl Fn(&Record) -> bool) -> Result<usize> {
    let path = dir.join("results.jsonl");
    let limit = crate::measure::machine::available_memory_bytes() / 2;
    let text = crate::input_file::read_bounded(&path, "results file", limit)?;
    let complete = match text.iter().rposition(|b| *b == b'\n') {
        Some(last) => &text[..=last],
        None => &text[..0],
    };
    let tail = &text[complete.len()..];
    let mut kept = Vec::with_capacity(text.len() + 1);
    // A last record written whole but for its newline is kept (with the newline); a torn one is dropped.
    let tail_is_whole = !tail.is_empty() && serde_json::from_slice::<Line>(tail).is_ok();
    let mut dropped = usize::from(!tail.is_empty() && !tail_is_whole);
    for (index, raw) in complete.split_inclusive(|b| *b == b'\n').enumerate() {
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let line: Line = serde_json::from_slice(raw).map_err(|e| Error::Format {
            path: path.clone(),
            line: index + 1,
            message: format!("corrupt record: {e}"),
        })?;
        if drop(&line.record) {
            dropped += 1;
        } else {
            kept.extend_from_slice(raw);
        }
    }
    if tail_is_whole {
        let line: Line = serde_json::from_slice(tail)?;
        if drop(&line.record) {
            dropped += 1;
        } else {
            kept.extend_from_slice(tail);
            kept.push(b'\n');
        }
    }
    if dropped > 0 || tail_is_whole {
        write_atomic(&path, &kept)?;
    }
    Ok(dropped)
}

/// Writes `dir/results.csv`: one row per measured cell and per skipped cell, written atomically. `status`
/// is `measured`, `measured-external` (a tool run as its own process: its hashing is inside its calls, so
/// `hash_ns_per_key` is blank), or the cause a cell was not run: `skipped` (memory), `capped`,
/// `not-set-up`, `unavailable`, `failed`.
pub fn write_csv(dir: &Path, results: &Results) -> Result<()> {
    let mut out = String::from(
        "structure,n,status,bits,hashes,insert_ns_per_key,hash_ns_per_key,member_query_ns_per_key,non_member_query_ns_per_key,\
false_negatives,n_non_member_queries,n_false_positives,observed_fpr,fpr_low95,fpr_high95,expected_fpr,theory_in_interval,\
bytes_held,heap_requested_bytes,heap_footprint_bytes,model_footprint_bytes,rss_peak_bytes,bits_per_key\n",
    );
    for c in &results.cells {
        out.push_str(&format!(
            "{},{},{},{},{},{:.3},{},{:.3},{:.3},{},{},{},{:.9},{:.9},{:.9},{:.9},{},{},{},{},{:.0},{},{:.4}\n",
            c.structure,
            c.n,
            if c.external.is_some() {
                "measured-external"
            } else {
                "measured"
            },
            c.geometry.bits.map(|b| b.to_string()).unwrap_or_default(),
            c.geometry.hashes.map(|k| k.to_string()).unwrap_or_default(),
            c.insert_ns_per_key.median,
            if c.external.is_some() {
                String::new()
            } else {
                format!("{:.3}", c.hash_ns_per_key.median)
            },
            c.member_query_ns_per_key.median,
            c.non_member_query_ns_per_key.median,
            c.false_negatives,
            c.n_non_member_queries,
            c.n_false_positives,
            c.observed_fpr,
            c.observed_fpr_wilson95.low,
            c.observed_fpr_wilson95.high,
            c.expected_fpr,
            c.theory_in_interval,
            c.bytes_held,
            c.heap_requested_bytes,
            c.heap_footprint_bytes,
            c.model_footprint_bytes,
            c.rss_peak_bytes,
            c.bits_per_key
        ));
    }
    for s in &results.skipped {
        out.push_str(&format!(
            "{},{},{},,,,,,,,,,,,,,,,,,{:.0},,{:.4}\n",
            s.subject,
            s.n,
            s.cause.csv_status(),
            s.projected_bytes,
            s.projected_bytes * 8.0 / s.n.max(1) as f64
        ));
    }
    write_atomic(&dir.join("results.csv"), out.as_bytes())
}

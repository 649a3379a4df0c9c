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

    /// The folder the results file is in.
    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
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
    /// The cache guard's churn: each removable structure after each round.
    pub churn: Vec<ChurnPoint>,
    /// The shipping experiment: each savable structure saved and loaded.
    pub shipping: Vec<ShippingRecord>,
    pub scenario: Vec<ScenarioRecord>,
    pub sweep: Vec<SweepRecord>,
    pub sweep_skipped: Vec<SkippedCell>,
    pub memory_probe: Vec<crate::measure::floor::PageProbe>,
    /// The interleaved speed groups, one per n.
    pub speed_groups: Vec<SpeedGroupRecord>,
    /// The dedup-cli experiment: each tool on the same stream.
    pub dedup_cli: Vec<super::DedupCliRecord>,
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
            Record::Churn(c) => results.churn.push(c),
            Record::Shipping(x) => results.shipping.push(x),
            Record::Scenario(x) => results.scenario.push(x),
            Record::Sweep(x) => results.sweep.push(x),
            Record::SweepSkipped(x) => results.sweep_skipped.push(x),
            Record::MemoryProbe(x) => results.memory_probe.push(x),
            Record::SpeedGroup(x) => results.speed_groups.push(x),
            Record::DedupCli(x) => results.dedup_cli.push(x),
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
/// `not-set-up`, `unavailable`, `failed`. The columns are [`CsvRow`]'s fields, in order; a field holding
/// a comma, a quote or a line break is quoted.
pub fn write_csv(dir: &Path, results: &Results) -> Result<()> {
    let path = dir.join("results.csv");
    let failed = |e: csv::Error| Error::io(&path, std::io::Error::other(e));
    let mut out = csv::Writer::from_writer(Vec::new());
    for c in &results.cells {
        let external = c.external.is_some();
        out.serialize(CsvRow {
            structure: &c.structure,
            n: c.n,
            status: if external {
                "measured-external"
            } else {
                "measured"
            },
            bits: c.geometry.bits,
            hashes: c.geometry.hashes,
            insert_ns_per_key: Some(Fixed(c.insert_ns_per_key.median)),
            hash_ns_per_key: (!external).then_some(Fixed(c.hash_ns_per_key.median)),
            member_query_ns_per_key: Some(Fixed(c.member_query_ns_per_key.median)),
            non_member_query_ns_per_key: Some(Fixed(c.non_member_query_ns_per_key.median)),
            false_negatives: Some(c.false_negatives),
            n_non_member_queries: Some(c.n_non_member_queries),
            n_false_positives: Some(c.n_false_positives),
            observed_fpr: Some(Fixed(c.observed_fpr)),
            fpr_low95: Some(Fixed(c.observed_fpr_wilson95.low)),
            fpr_high95: Some(Fixed(c.observed_fpr_wilson95.high)),
            expected_fpr: Some(Fixed(c.expected_fpr)),
            theory_in_interval: Some(c.theory_in_interval),
            bytes_held: Some(c.bytes_held),
            heap_requested_bytes: Some(c.heap_requested_bytes),
            heap_footprint_bytes: Some(c.heap_footprint_bytes),
            model_footprint_bytes: Fixed(c.model_footprint_bytes),
            rss_peak_bytes: Some(c.rss_peak_bytes),
            bits_per_key: Fixed(c.bits_per_key),
        })
        .map_err(failed)?;
    }
    for s in &results.skipped {
        // A skipped cell has only its projected bytes: in the model's column, and per key.
        out.serialize(CsvRow {
            structure: &s.subject.to_string(),
            n: s.n,
            status: s.cause.csv_status(),
            model_footprint_bytes: Fixed(s.projected_bytes),
            bits_per_key: Fixed(s.projected_bytes * 8.0 / s.n.max(1) as f64),
            ..CsvRow::default()
        })
        .map_err(failed)?;
    }
    let bytes = out
        .into_inner()
        .map_err(|e| Error::io(&path, e.into_error()))?;
    write_atomic(&path, &bytes)
}

/// One row of `results.csv`; the header is the field names, in this order. A blank field is a figure
/// the row does not have.
#[derive(Default, serde::Serialize)]
struct CsvRow<'a> {
    structure: &'a str,
    n: u64,
    status: &'a str,
    bits: Option<u64>,
    hashes: Option<u32>,
    insert_ns_per_key: Option<Fixed<3>>,
    hash_ns_per_key: Option<Fixed<3>>,
    member_query_ns_per_key: Option<Fixed<3>>,
    non_member_query_ns_per_key: Option<Fixed<3>>,
    false_negatives: Option<u64>,
    n_non_member_queries: Option<u64>,
    n_false_positives: Option<u64>,
    observed_fpr: Option<Fixed<9>>,
    fpr_low95: Option<Fixed<9>>,
    fpr_high95: Option<Fixed<9>>,
    expected_fpr: Option<Fixed<9>>,
    theory_in_interval: Option<bool>,
    bytes_held: Option<u64>,
    heap_requested_bytes: Option<i64>,
    heap_footprint_bytes: Option<i64>,
    model_footprint_bytes: Fixed<0>,
    rss_peak_bytes: Option<u64>,
    bits_per_key: Fixed<4>,
}

/// A number written with `D` decimals.
#[derive(Clone, Copy, Default)]
struct Fixed<const D: usize>(f64);

impl<const D: usize> serde::Serialize for Fixed<D> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(&format_args!("{:.*}", D, self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A structure named with a comma and a quote comes back whole through a CSV reader, in a measured
    /// row and a skipped one, with the header unchanged.
    #[test]
    fn odd_names_round_trip_through_a_csv_reader() {
        let reference = Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/reference");
        let mut results = read_results(&reference).unwrap();
        let name = "bloom, \"tuned\" (k = 7)";
        results.cells.truncate(1);
        results.cells[0].structure = name.into();
        results.skipped = vec![SkippedCell {
            subject: super::super::SkipSubject::Cell(name.into()),
            n: 1_000,
            projected_bytes: 2_000.0,
            budget_bytes: 1,
            reason: "over the budget, \"1 B\"".into(),
            cause: SkipCause::Memory,
        }];
        let dir = tempfile::tempdir().unwrap();
        write_csv(dir.path(), &results).unwrap();
        let text = std::fs::read_to_string(dir.path().join("results.csv")).unwrap();
        let want_header = std::fs::read_to_string(reference.join("results.csv")).unwrap();
        assert_eq!(text.lines().next(), want_header.lines().next());
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let header = reader.headers().unwrap().clone();
        let column = |row: &csv::StringRecord, name: &str| {
            row[header.iter().position(|h| h == name).unwrap()].to_string()
        };
        let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
        assert_eq!(rows.len(), 2);
        for row in &rows {
            assert_eq!(row.len(), 23);
            assert_eq!(column(row, "structure"), name);
        }
        assert_eq!(column(&rows[0], "status"), "measured");
        assert_eq!(column(&rows[1], "status"), "skipped");
        assert_eq!(column(&rows[1], "model_footprint_bytes"), "2000");
        assert_eq!(column(&rows[1], "bits_per_key"), "16.0000");
        assert_eq!(column(&rows[1], "insert_ns_per_key"), "");
    }
}

//! The results file: one JSON record per line (`results.jsonl`), appended and flushed after every cell, and a
//! CSV of the grid cells. Records store counts, not only rates, so any reader can recompute intervals.
//!
//! Invariants: every line carries `schema_version`; a reader accepts versions ≤ [`SCHEMA_VERSION`], rejects
//! newer ones, and ignores (with a warning) a torn last line left by a killed run.

mod experiment;
mod io;
mod record;
mod series;
mod subject;
mod suite;

pub use experiment::Experiment;
pub use io::{read_results, rewrite_without, write_csv, Results, ResultsWriter};
pub use record::*;
pub use series::{SeriesPlacement, SweepSeries};
pub use subject::SkipSubject;
pub use suite::{Suite, HASH_STUDY_SIZES};

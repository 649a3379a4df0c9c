//! The results file: one JSON record per line (`results.jsonl`), appended and flushed after every cell, and a
//! CSV of the grid cells. Records store counts, not only rates, so any reader can recompute intervals.
//!
//! Invariants: every line carries `schema_version`; a reader accepts versions ≤ [`SCHEMA_VERSION`], rejects
//! newer ones, and ignores (with a warning) a torn last line left by a killed run.

/// Serde for a type written in results files as its text: `Display` writes it, `T::from_text` reads it
/// back (the names files have always held).
macro_rules! text_serde {
    ($t:ty) => {
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(
                &self,
                s: S,
            ) -> std::result::Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(
                d: D,
            ) -> std::result::Result<Self, D::Error> {
                let text = <String as serde::Deserialize>::deserialize(d)?;
                <$t>::from_text(&text).map_err(serde::de::Error::custom)
            }
        }
    };
}
pub(crate) use text_serde;

mod dedup_cli;
mod experiment;
mod io;
mod record;
mod series;
mod subject;
mod suite;

pub use dedup_cli::{DedupCliRecord, DedupTool};
pub use experiment::Experiment;
pub use io::{read_results, rewrite_without, write_csv, Results, ResultsWriter};
pub use record::*;
pub use series::{SeriesPlacement, SweepSeries};
pub use subject::SkipSubject;
pub use suite::{Suite, DEDUP_CLI_LINES, HASH_STUDY_SIZES};

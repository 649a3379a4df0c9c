//! The report: reads results only, never reruns anything.
use crate::results::Results;
use std::path::Path;
/// Writes the report.
pub fn write_report(_dir: &Path, _results: &Results) -> crate::Result<()> { Ok(()) }

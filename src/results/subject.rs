//! What a skipped record is about: a grid cell of a structure, an experiment, the scenario, or a point of
//! the shared-filter sweep. Written in the record's `structure` field as files have always held it
//! (`bloom`, `saturation experiment`, `seed-6e9 scenario`, `redis-bloom@cluster batch=1024`) and read
//! back into the type.

use super::{Experiment, SweepSeries};
use std::fmt;

/// The subject of a skipped record.
#[derive(Clone, Debug, PartialEq)]
pub enum SkipSubject {
    /// A grid cell of the structure with this registry id.
    Cell(String),
    /// An experiment that did not fit.
    Experiment(Experiment),
    /// The second article's scenario.
    Scenario,
    /// A point of the shared-filter sweep.
    SweepPoint {
        series: SweepSeries,
        batch_keys: u64,
    },
}

/// How the scenario's skipped record names it (the name from before the suite was renamed, kept so
/// resumed files still match).
const SCENARIO: &str = "seed-6e9 scenario";
const EXPERIMENT_SUFFIX: &str = " experiment";
const BATCH_MARK: &str = " batch=";

impl SkipSubject {
    /// The structure's id, for a grid cell.
    pub fn cell(&self) -> Option<&str> {
        match self {
            SkipSubject::Cell(id) => Some(id),
            _ => None,
        }
    }

    /// Reads the written form back (every text is some subject).
    pub fn from_text(text: &str) -> Result<SkipSubject, std::convert::Infallible> {
        Ok(SkipSubject::parse(text))
    }

    /// Reads the written form back.
    pub fn parse(text: &str) -> SkipSubject {
        if text == SCENARIO {
            return SkipSubject::Scenario;
        }
        if let Some(name) = text.strip_suffix(EXPERIMENT_SUFFIX) {
            if let Some(e) = Experiment::ALL.into_iter().find(|e| e.name() == name) {
                return SkipSubject::Experiment(e);
            }
        }
        if let Some((series, batch)) = text.rsplit_once(BATCH_MARK) {
            if let Ok(batch_keys) = batch.parse() {
                return SkipSubject::SweepPoint {
                    series: SweepSeries::parse(series),
                    batch_keys,
                };
            }
        }
        SkipSubject::Cell(text.to_string())
    }
}

impl fmt::Display for SkipSubject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipSubject::Cell(id) => f.write_str(id),
            SkipSubject::Experiment(e) => write!(f, "{}{EXPERIMENT_SUFFIX}", e.name()),
            SkipSubject::Scenario => f.write_str(SCENARIO),
            SkipSubject::SweepPoint { series, batch_keys } => {
                write!(f, "{series}{BATCH_MARK}{batch_keys}")
            }
        }
    }
}

super::text_serde!(SkipSubject);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_written_form_reads_back_as_itself() {
        for text in [
            "bloom",
            "py-set",
            "saturation experiment",
            "hash_study experiment",
            "seed-6e9 scenario",
            "redis-bloom batch=1024",
            "redis-bitmap/setbit@cluster batch=16",
            "bloom (in-process) batch=0",
        ] {
            assert_eq!(SkipSubject::parse(text).to_string(), text);
        }
        assert_eq!(
            SkipSubject::parse("growth experiment"),
            SkipSubject::Experiment(Experiment::Growth)
        );
        assert_eq!(SkipSubject::parse("bloom").cell(), Some("bloom"));
        assert!(matches!(
            SkipSubject::parse("redis-set batch=8"),
            SkipSubject::SweepPoint { batch_keys: 8, .. }
        ));
    }
}

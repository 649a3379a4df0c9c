//! The experiments beyond the grid, by name: which records belong to each and how a skipped one is named.

use super::{Record, Results};

/// An experiment beyond the grid; its name is also its figure's stem and its results' field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Experiment {
    Saturation,
    Deletion,
    Churn,
    Growth,
    BitmapClaim,
    Expiry,
    HashStudy,
    Shipping,
    DedupCli,
}

impl Experiment {
    /// The experiments, in run order.
    pub const ALL: [Experiment; 9] = [
        Experiment::Saturation,
        Experiment::Deletion,
        Experiment::Churn,
        Experiment::Growth,
        Experiment::BitmapClaim,
        Experiment::Expiry,
        Experiment::HashStudy,
        Experiment::Shipping,
        Experiment::DedupCli,
    ];

    /// The name in results and reports.
    pub fn name(self) -> &'static str {
        match self {
            Experiment::Saturation => "saturation",
            Experiment::Deletion => "deletion",
            Experiment::Churn => "churn",
            Experiment::Growth => "growth",
            Experiment::BitmapClaim => "bitmap_claim",
            Experiment::Expiry => "expiry",
            Experiment::HashStudy => "hash_study",
            Experiment::Shipping => "shipping",
            Experiment::DedupCli => "dedup_cli",
        }
    }

    /// The records of the experiment in `results`.
    pub fn records_in(self, results: &Results) -> usize {
        match self {
            Experiment::Saturation => results.saturation.len(),
            Experiment::Deletion => results.deletion.len(),
            Experiment::Churn => results.churn.len(),
            Experiment::Growth => results.growth.len(),
            Experiment::BitmapClaim => results.bitmap_claim.len(),
            Experiment::Expiry => results.expiry.len(),
            Experiment::HashStudy => results.hash_speed.len() + results.hash_quality.len(),
            Experiment::Shipping => results.shipping.len(),
            Experiment::DedupCli => results.dedup_cli.len(),
        }
    }

    /// The experiment a record belongs to, if any.
    pub fn of(record: &Record) -> Option<Experiment> {
        match record {
            Record::Saturation(_) => Some(Experiment::Saturation),
            Record::Deletion(_) => Some(Experiment::Deletion),
            Record::Churn(_) => Some(Experiment::Churn),
            Record::Growth(_) => Some(Experiment::Growth),
            Record::BitmapClaim(_) => Some(Experiment::BitmapClaim),
            Record::Expiry(_) => Some(Experiment::Expiry),
            Record::HashSpeed(_) | Record::HashQuality(_) => Some(Experiment::HashStudy),
            Record::Shipping(_) => Some(Experiment::Shipping),
            Record::DedupCli(_) => Some(Experiment::DedupCli),
            _ => None,
        }
    }
}

//! Between results and their readers: fits, crossovers, speed ratios against their targets, missed
//! rate targets and the regime ladder, computed once from a results file and read by the report, the
//! CLI's summary and `advise --results`. Nothing here draws or writes.

mod fit;
pub mod nodes;
pub mod regimes;
pub mod speed;
pub mod sweep;

pub use fit::{exact_crossover, fit_bytes, measured_line, BytesFit};
pub use regimes::run_ladder;
pub use speed::{missed_targets, ratios, Ratio, TARGET_N};

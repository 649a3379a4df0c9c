//! Between results and their readers: fits, crossovers, paired speed ratios with their intervals and
//! targets, missed rate targets and the regime ladder, computed once from a results file. The speed
//! verdicts and missed targets are written to `analysis.json` ([`file`]) and read from there by the
//! report, the CLI's summary, `advise --results` and the criterion targets printer. Nothing here draws.

pub mod dedup_cli;
pub mod file;
mod fit;
pub mod nodes;
pub mod regimes;
pub mod speed;
pub mod sweep;

pub use file::{Analysis, ANALYSIS_FILE};
pub use fit::{exact_crossover, fit_bytes, measured_line, BytesFit};
pub use regimes::run_ladder;
pub use speed::{Ratio, SpeedRatio, TargetStatus, Verdict, TARGET_N};

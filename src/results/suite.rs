//! The suites a run can be: their names (written in the results header) and what each one measures.

use crate::{Error, Result};

/// The sizes the hash study builds its filters at, where the run reaches them: every suite's, then the
/// full suite's.
pub const HASH_STUDY_SIZES: [u64; 2] = [10_000_000, 1_000_000_000];

/// Lines of the dedup-cli experiment's stream where a suite runs it.
pub const DEDUP_CLI_LINES: u64 = 5_000_000;

/// A named suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Suite {
    /// ≤ 3 minutes on 2 cores: 10⁴…10⁷ keys, every chart.
    Quick,
    /// Up to 10⁸ keys.
    Standard,
    /// Up to 10⁹ keys, for whatever fits the budget.
    Full,
    /// The second article's 6·10⁹-URL scenario only (the scenario `bench --suite article-6e9` runs).
    Article6e9,
    /// The shared-filter sweep only: Redis backends against in-process `bloom` (needs `--redis`).
    Redis,
    /// `dedup` with each structure beside the Unix tools (awk, sort -u, huniq, runiq) on one stream of
    /// lines with repeats, and nothing else (the standard and full suites run it too).
    DedupCli,
}

// Written by name in results headers, as before it was a type.
super::text_serde!(Suite);

impl std::fmt::Display for Suite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Suite {
    /// Parses a suite name.
    pub fn parse(name: &str) -> Result<Suite> {
        match name {
            "quick" => Ok(Suite::Quick),
            "standard" => Ok(Suite::Standard),
            "full" => Ok(Suite::Full),
            // "seed-6e9" is the name before 0.2 (the article that seeded the project, not the hash seed).
            "article-6e9" | "seed-6e9" => Ok(Suite::Article6e9),
            "redis" => Ok(Suite::Redis),
            "dedup-cli" => Ok(Suite::DedupCli),
            other => Err(Error::invalid(
                "--suite",
                format!(
                    "'{other}' is not one of quick, standard, full, article-6e9, redis, dedup-cli"
                ),
            )),
        }
    }

    /// The suite named on the command line or in a results header.
    pub fn from_text(name: &str) -> std::result::Result<Suite, String> {
        Suite::parse(name).map_err(|e| e.to_string())
    }

    /// The suite's name.
    pub fn name(self) -> &'static str {
        match self {
            Suite::Quick => "quick",
            Suite::Standard => "standard",
            Suite::Full => "full",
            Suite::Article6e9 => "article-6e9",
            Suite::Redis => "redis",
            Suite::DedupCli => "dedup-cli",
        }
    }

    /// Default scales.
    pub fn scales(self) -> Vec<u64> {
        let top = match self {
            Suite::Quick => 7,
            Suite::Standard => 8,
            Suite::Full => 9,
            Suite::Article6e9 => return vec![6_000_000_000],
            Suite::Redis => return Vec::new(),
            // Lines of its stream (no grid: the scale is the stream's length).
            Suite::DedupCli => return vec![DEDUP_CLI_LINES],
        };
        (4..=top).map(|e| 10u64.pow(e)).collect()
    }

    /// The largest window of the expiry experiment: 10⁵ in the quick suite (its 3 minutes), 10⁷ in the
    /// others (each contender then answers 4·10⁷ arrivals beside an exact shadow of them).
    pub fn expiry_window_max_keys(self) -> u64 {
        match self {
            Suite::Quick | Suite::Redis | Suite::DedupCli => 100_000,
            Suite::Standard | Suite::Full | Suite::Article6e9 => 10_000_000,
        }
    }

    /// The largest filters of the hash study: 10⁹ keys in the full suite (the quality check at
    /// scale), 10⁷ otherwise.
    pub fn hash_study_max_keys(self) -> u64 {
        match self {
            Suite::Full => HASH_STUDY_SIZES[1],
            _ => HASH_STUDY_SIZES[0],
        }
    }

    /// How much larger than the quick suite's the experiments are.
    pub fn experiment_scale(self) -> u64 {
        match self {
            Suite::Quick | Suite::Redis | Suite::DedupCli => 1,
            Suite::Standard | Suite::Full | Suite::Article6e9 => 10,
        }
    }

    /// Lines of the dedup-cli experiment's stream: none in the quick suite (its 3 minutes), 5·10⁶ in the
    /// others (373 MB of generated URLs, the size the Unix tools were first compared at).
    pub fn dedup_cli_lines(self) -> u64 {
        match self {
            Suite::Quick | Suite::Redis | Suite::Article6e9 => 0,
            Suite::Standard | Suite::Full | Suite::DedupCli => DEDUP_CLI_LINES,
        }
    }

    /// Default repetitions.
    pub fn reps(self) -> u32 {
        match self {
            Suite::Quick | Suite::Standard => 3,
            Suite::Full | Suite::Article6e9 | Suite::Redis | Suite::DedupCli => 1,
        }
    }
}

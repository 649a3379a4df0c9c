//! The records of the dedup-cli experiment: `dedup` with each structure and the Unix tools a crawler's
//! operator already has, on one stream of lines with repeats, each run as a whole process.

use serde::{Deserialize, Serialize};

/// A tool of the experiment.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DedupTool {
    /// `dedupbench dedup --structure ID`.
    Dedup { structure: String },
    /// `awk '!seen[$0]++'`: every line kept in an associative array.
    Awk,
    /// `sort -u`: sorted, so the order of first sight is lost.
    SortUnique,
    /// `huniq`: 64-bit hashes of the lines (ahash, randomly seeded) in a hash set.
    Huniq,
    /// `runiq -f quick`: 64-bit hashes of the lines (xxh3-64) in a hash set.
    Runiq,
}

super::text_serde!(DedupTool);

impl std::fmt::Display for DedupTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DedupTool::Dedup { structure } => write!(f, "dedup:{structure}"),
            DedupTool::Awk => f.write_str("awk"),
            DedupTool::SortUnique => f.write_str("sort-u"),
            DedupTool::Huniq => f.write_str("huniq"),
            DedupTool::Runiq => f.write_str("runiq"),
        }
    }
}

impl DedupTool {
    /// The Unix tools, in the order they are listed.
    pub const UNIX: [DedupTool; 4] = [
        DedupTool::Awk,
        DedupTool::SortUnique,
        DedupTool::Huniq,
        DedupTool::Runiq,
    ];

    /// Parses the name a results file holds.
    pub fn from_text(text: &str) -> Result<DedupTool, String> {
        if let Some(structure) = text.strip_prefix("dedup:") {
            return Ok(DedupTool::Dedup {
                structure: structure.to_string(),
            });
        }
        DedupTool::UNIX
            .into_iter()
            .find(|t| t.to_string() == text)
            .ok_or_else(|| format!("'{text}' is not a tool of the dedup-cli experiment"))
    }
}

/// One tool on the experiment's stream: its wall time in every round, its peak resident set, and its
/// output checked against the exact answer (the stream's distinct lines, in order of first sight).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DedupCliRecord {
    pub tool: DedupTool,
    /// The command as run (stdin from the stream's file, stdout to a file, `LC_ALL=C`).
    pub command: String,
    /// The tool's version line, where it prints one.
    pub version: Option<String>,
    /// Lines of the stream, of which `distinct_lines` are distinct.
    pub lines: u64,
    pub distinct_lines: u64,
    pub input_bytes: u64,
    /// Seconds of wall time of the whole process, one per round in round order (empty when it did not
    /// run: `unavailable` says why).
    pub wall_s: Vec<f64>,
    /// Seconds of CPU (user and system) of the process in each round, where `/usr/bin/time` gave them: a
    /// tool on several threads (sort, and `dedup`'s reader) can pass more lines per wall second than per
    /// CPU second.
    #[serde(default)]
    pub cpu_s: Vec<f64>,
    /// Lines the tool wrote in the round checked (the first).
    pub lines_out: u64,
    /// Distinct lines of the stream missing from its output.
    pub wrongly_dropped: u64,
    /// Lines of its output that repeat an earlier output line or are not lines of the stream.
    pub wrongly_passed: u64,
    /// Whether its output kept the order of first sight.
    pub order_kept: bool,
    /// The process's peak resident set (the kernel's `ru_maxrss` through `/usr/bin/time`), the largest
    /// over the rounds.
    pub peak_rss_bytes: Option<u64>,
    /// What `/usr/bin/time` itself holds when it starts the tool: a peak at or below it says only "at
    /// most this".
    pub rss_floor_bytes: Option<u64>,
    /// Why the tool did not run: not installed.
    pub unavailable: Option<String>,
    /// How it failed, where it ran and exited with an error (then it has no times).
    #[serde(default)]
    pub failed: Option<String>,
}

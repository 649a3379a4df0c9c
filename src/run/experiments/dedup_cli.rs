//! `dedup` among the Unix tools: one stream of generated URLs with repeats (30% of its lines repeat an
//! earlier one) written to a file, then `dedup` with each of our dynamic structures and `awk
//! '!seen[$0]++'`, `sort -u`, `huniq` and `runiq` (where installed; their absence is recorded), each run as
//! a whole process with stdin from the file and stdout to a file, in [`ROUNDS`] rounds whose order is
//! shuffled per round, so a ratio between two tools pairs runs made moments apart.
//!
//! Each process runs under `/usr/bin/time`, whose `ru_maxrss` of its child is the tool's peak resident
//! set (a child of this harness would carry the harness's own resident set across its exec; the one of
//! `/usr/bin/time` is about 2 MiB, recorded as the floor). The first round's output is checked against the
//! exact answer, the stream's distinct lines in order of first sight: lines missing, lines repeated or
//! foreign, and whether the order was kept. Lines are compared by their xxh3-128 (odds of a collision
//! among 10⁷ lines about 10⁻²⁵).
//!
//! The stream and the outputs live in a folder of the run's, removed when the experiment ends (and at the
//! start of the next, after an interruption).

use super::{kinds_of_run, peak_of, ExperimentRun};
use crate::keys::stream::RepeatStream;
use crate::kind::{BuildConfig, Kind, Role};
use crate::results::{DedupCliRecord, DedupTool, Experiment, Record, Results};
use crate::run::plan::{sized_as_planned, ExperimentSizes};
use crate::run::{Runner, Suite};
use crate::{Error, Result};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::io::{BufRead, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Rounds: 7 paired ratios bound their median at 98.4% between the extremes (`stats::median_interval`).
pub const ROUNDS: usize = 7;
/// Fraction of the stream's lines that repeat an earlier line.
pub const REPEAT_FRACTION: f64 = 0.3;
/// The program that reports a child's peak resident set.
const TIME_PROGRAM: &str = "/usr/bin/time";

/// The experiment's registration.
pub(super) struct DedupCli;

/// Our structures `dedup` can run with (in process, taking keys as they come, no window to give).
fn dedup_kinds(kinds: &[&'static dyn Kind]) -> Vec<&'static dyn Kind> {
    kinds
        .iter()
        .copied()
        .filter(|k| !k.peer() && !k.remote() && k.dynamic() && !k.plays(Role::ExpiringFilter))
        .collect()
}

/// Every tool of a run of `kinds`: `dedup` with each structure, then the Unix tools.
fn tools(kinds: &[&'static dyn Kind]) -> Vec<DedupTool> {
    dedup_kinds(kinds)
        .into_iter()
        .map(|k| DedupTool::Dedup {
            structure: k.id().to_string(),
        })
        .chain(DedupTool::UNIX)
        .collect()
}

impl ExperimentRun for DedupCli {
    fn experiment(&self) -> Experiment {
        Experiment::DedupCli
    }
    fn size(&self, sizes: &ExperimentSizes) -> u64 {
        sizes.dedup_cli_lines
    }
    fn peak_bytes(&self, runner: &Runner<'_>, n: u64) -> Result<f64> {
        // The check's map of every distinct line (its hash, index and table slack), and beside it the
        // largest structure a `dedup` process holds.
        let config = BuildConfig::new(n, runner.plan.fpr, runner.plan.seed);
        let structures = peak_of(
            dedup_kinds(&runner.plan.kinds)
                .into_iter()
                .map(|k| (k.id(), config.clone())),
        )?;
        Ok(n as f64 * 64.0 + structures)
    }
    fn expected_records(&self, results: &Results) -> usize {
        if sized_as_planned(results, Suite::dedup_cli_lines) == 0 {
            return 0;
        }
        tools(&kinds_of_run(results)).len()
    }
    fn run(&self, runner: &mut Runner<'_>, n: u64) -> Result<()> {
        let out = runner.out_dir().to_path_buf();
        super::remove_leftovers(&out, FOLDER_PREFIX)?;
        let dir = tempfile::Builder::new()
            .prefix(FOLDER_PREFIX)
            .tempdir_in(&out)
            .map_err(|e| Error::io(&out, e))?;
        let stream = dir.path().join("stream.txt");
        runner
            .progress
            .start(&format!("dedup-cli: writing {n} lines"), 1);
        let (distinct, input_bytes) = write_stream(runner, &stream, n)?;
        runner.progress.finish();
        let plans: Vec<ToolPlan> = tools(&runner.plan.kinds)
            .into_iter()
            .map(|tool| ToolPlan::new(tool, runner.plan.fpr, runner.plan.seed, distinct))
            .collect();
        let time = Path::new(TIME_PROGRAM)
            .is_file()
            .then_some(Path::new(TIME_PROGRAM));
        let rss_floor_bytes = time.and_then(|t| rss_floor(t, dir.path()));
        let mut rows: Vec<Row> = plans.into_iter().map(Row::new).collect();
        let mut rng = rand::rngs::StdRng::seed_from_u64(runner.plan.seed ^ 0xD3D0);
        let runnable = rows.iter().filter(|r| r.unavailable.is_none()).count();
        runner
            .progress
            .start("dedup-cli: rounds", (ROUNDS * runnable) as u64);
        let mut expected = None;
        for round in 0..ROUNDS {
            let mut order: Vec<usize> = (0..rows.len()).collect();
            order.shuffle(&mut rng);
            for &i in &order {
                if rows[i].unavailable.is_some() {
                    continue;
                }
                if runner.stopped() {
                    runner.progress.finish();
                    return Err(crate::run::interrupted_error());
                }
                let output = dir.path().join(format!("out-{i}.txt"));
                match run_once(&rows[i].plan, time, &stream, &output, dir.path()) {
                    Ok((wall_s, rss)) => {
                        rows[i].wall_s.push(wall_s);
                        rows[i].peak_rss_bytes = rows[i].peak_rss_bytes.max(rss);
                        if round == 0 {
                            let expected = match &expected {
                                Some(e) => e,
                                None => expected.insert(Expected::of(runner, distinct)),
                            };
                            rows[i].check = Some(expected.check(&output)?);
                        }
                    }
                    Err(why) => {
                        rows[i].unavailable = Some(why);
                        rows[i].wall_s.clear();
                    }
                }
                let _ = std::fs::remove_file(&output);
                runner.progress.advance(1);
            }
        }
        runner.progress.finish();
        for row in rows {
            if let (Some(check), DedupTool::Dedup { structure }) = (&row.check, &row.plan.tool) {
                // No false negatives: a structure of ours never passes a line twice.
                if check.wrongly_passed > 0 {
                    runner.failures.push(format!(
                        "dedup-cli: dedup --structure {structure} passed {} lines twice or not of the stream",
                        check.wrongly_passed
                    ));
                }
            }
            let check = row.check.unwrap_or_default();
            runner.record(Record::DedupCli(DedupCliRecord {
                tool: row.plan.tool,
                command: row.plan.display,
                version: row.plan.version,
                lines: n,
                distinct_lines: distinct,
                input_bytes,
                wall_s: row.wall_s,
                lines_out: check.lines_out,
                wrongly_dropped: check.wrongly_dropped,
                wrongly_passed: check.wrongly_passed,
                order_kept: check.order_kept,
                peak_rss_bytes: row.peak_rss_bytes,
                rss_floor_bytes,
                unavailable: row.unavailable,
            }))?;
        }
        Ok(())
    }
}

/// The prefix of the folder the stream and the outputs are written in.
const FOLDER_PREFIX: &str = ".dedup-cli-";

/// Writes `n` lines of the member stream with repeats to `path`: (distinct lines, bytes).
fn write_stream(runner: &Runner<'_>, path: &Path, n: u64) -> Result<(u64, u64)> {
    let file = std::fs::File::create(path).map_err(|e| Error::io(path, e))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut stream = RepeatStream::new(runner.plan.seed, REPEAT_FRACTION);
    let mut buf = Vec::with_capacity(256);
    let mut bytes = 0u64;
    for emitted in stream.by_ref().take(n as usize) {
        runner.source.generator.member(emitted.index(), &mut buf);
        buf.push(b'\n');
        bytes += buf.len() as u64;
        out.write_all(&buf).map_err(|e| Error::io(path, e))?;
    }
    out.flush().map_err(|e| Error::io(path, e))?;
    Ok((stream.distinct(), bytes))
}

/// How one tool is run.
struct ToolPlan {
    tool: DedupTool,
    program: Option<PathBuf>,
    args: Vec<String>,
    /// The command as a user would type it.
    display: String,
    version: Option<String>,
}

impl ToolPlan {
    fn new(tool: DedupTool, fpr: f64, seed: u64, distinct: u64) -> Self {
        let (program, args, display): (Option<PathBuf>, Vec<String>, String) = match &tool {
            DedupTool::Dedup { structure } => {
                let args = vec![
                    "dedup".into(),
                    "--structure".into(),
                    structure.clone(),
                    "--expected".into(),
                    distinct.to_string(),
                    "--fpr".into(),
                    fpr.to_string(),
                    "--seed".into(),
                    seed.to_string(),
                ];
                let display = format!("dedupbench {}", args.join(" "));
                (std::env::current_exe().ok(), args, display)
            }
            DedupTool::Awk => (
                on_path("awk"),
                vec!["!seen[$0]++".into()],
                "awk '!seen[$0]++'".into(),
            ),
            DedupTool::SortUnique => (on_path("sort"), vec!["-u".into()], "sort -u".into()),
            DedupTool::Huniq => (on_path("huniq"), Vec::new(), "huniq".into()),
            DedupTool::Runiq => (on_path("runiq"), Vec::new(), "runiq".into()),
        };
        let version = program.as_deref().and_then(|p| version_of(&tool, p));
        ToolPlan {
            tool,
            program,
            args,
            display,
            version,
        }
    }
}

/// `name` in `PATH`, or where `cargo install` puts programs (`$CARGO_HOME/bin`, `~/.cargo/bin`).
fn on_path(name: &str) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    if let Some(home) = std::env::var_os("CARGO_HOME") {
        dirs.push(PathBuf::from(home).join("bin"));
    }
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(PathBuf::from(home).join(".cargo/bin"));
    }
    dirs.into_iter().map(|d| d.join(name)).find(|p| p.is_file())
}

/// The first line of the tool's version text (mawk answers `-W version`, the others `--version`).
fn version_of(tool: &DedupTool, program: &Path) -> Option<String> {
    let flag = match tool {
        DedupTool::Awk => "-W",
        _ => "--version",
    };
    let mut cmd = Command::new(program);
    cmd.arg(flag);
    if matches!(tool, DedupTool::Awk) {
        cmd.arg("version");
    }
    let out = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .next()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
}

/// One tool's measurements so far.
struct Row {
    plan: ToolPlan,
    wall_s: Vec<f64>,
    peak_rss_bytes: Option<u64>,
    check: Option<Check>,
    unavailable: Option<String>,
}

impl Row {
    fn new(plan: ToolPlan) -> Self {
        let unavailable = plan.program.is_none().then(|| {
            let name = plan.display.split(' ').next().unwrap_or_default();
            format!("{name} is not installed (not in PATH or ~/.cargo/bin)")
        });
        Row {
            plan,
            wall_s: Vec::new(),
            peak_rss_bytes: None,
            check: None,
            unavailable,
        }
    }
}

/// Runs the tool once on `stream` into `output`: (wall seconds, peak RSS bytes where measured), or why it
/// failed.
fn run_once(
    plan: &ToolPlan,
    time: Option<&Path>,
    stream: &Path,
    output: &Path,
    dir: &Path,
) -> std::result::Result<(f64, Option<u64>), String> {
    let program = plan.program.as_deref().ok_or("not installed")?;
    let rss_file = dir.join("rss.txt");
    let mut cmd = match time {
        Some(time) => {
            let mut cmd = Command::new(time);
            cmd.arg("-f")
                .arg("%M")
                .arg("-o")
                .arg(&rss_file)
                .arg(program);
            cmd
        }
        None => Command::new(program),
    };
    let input = std::fs::File::open(stream).map_err(|e| e.to_string())?;
    let sink = std::fs::File::create(output).map_err(|e| e.to_string())?;
    cmd.args(&plan.args)
        .env("LC_ALL", "C")
        .stdin(input)
        .stdout(sink)
        .stderr(Stdio::piped());
    let started = Instant::now();
    let done = cmd
        .spawn()
        .and_then(|c| c.wait_with_output())
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    let wall_s = started.elapsed().as_secs_f64();
    if !done.status.success() {
        let stderr = String::from_utf8_lossy(&done.stderr);
        let last = stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        return Err(format!("{} failed ({}): {last}", plan.display, done.status));
    }
    let rss = time
        .and_then(|_| read_rss_kib(&rss_file))
        .map(|kib| kib * 1024);
    Ok((wall_s, rss))
}

/// The last number `/usr/bin/time -f %M` wrote (KiB).
fn read_rss_kib(path: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().rev().find_map(|l| l.trim().parse().ok())
}

/// The peak `/usr/bin/time` reports for `true`: what it holds itself when it starts a tool.
fn rss_floor(time: &Path, dir: &Path) -> Option<u64> {
    let rss_file = dir.join("rss-floor.txt");
    let status = Command::new(time)
        .arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(&rss_file)
        .arg("true")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()?;
    status.success().then_some(())?;
    read_rss_kib(&rss_file).map(|kib| kib * 1024)
}

/// What a tool's output held against the exact answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Check {
    lines_out: u64,
    wrongly_dropped: u64,
    wrongly_passed: u64,
    order_kept: bool,
}

/// The exact answer: each distinct line's xxh3-128 and its place in the order of first sight.
struct Expected {
    place: hashbrown::HashMap<u128, u32>,
}

impl Expected {
    /// Members 0..distinct are the stream's distinct lines, in order of first sight.
    fn of(runner: &Runner<'_>, distinct: u64) -> Self {
        let mut place = hashbrown::HashMap::with_capacity(distinct as usize);
        let mut buf = Vec::with_capacity(256);
        for i in 0..distinct {
            runner.source.generator.member(i, &mut buf);
            place.insert(line_hash(&buf), i as u32);
        }
        Expected { place }
    }

    /// Reads `output` and compares it with the answer.
    fn check(&self, output: &Path) -> Result<Check> {
        let file = std::fs::File::open(output).map_err(|e| Error::io(output, e))?;
        let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
        let mut seen = vec![false; self.place.len()];
        let mut check = Check {
            order_kept: true,
            ..Check::default()
        };
        let (mut matched, mut last) = (0u64, None::<u32>);
        let mut line = Vec::with_capacity(256);
        loop {
            line.clear();
            let read = reader
                .read_until(b'\n', &mut line)
                .map_err(|e| Error::io(output, e))?;
            if read == 0 {
                break;
            }
            if line.last() == Some(&b'\n') {
                line.pop();
            }
            check.lines_out += 1;
            match self.place.get(&line_hash(&line)) {
                Some(&at) if !seen[at as usize] => {
                    seen[at as usize] = true;
                    matched += 1;
                    if last.is_some_and(|l| at < l) {
                        check.order_kept = false;
                    }
                    last = Some(at);
                }
                _ => check.wrongly_passed += 1,
            }
        }
        check.wrongly_dropped = self.place.len() as u64 - matched;
        Ok(check)
    }
}

fn line_hash(line: &[u8]) -> u128 {
    xxhash_rust::xxh3::xxh3_128(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::stream::Emitted;

    fn expected_of(lines: &[&str]) -> Expected {
        Expected {
            place: lines
                .iter()
                .enumerate()
                .map(|(i, l)| (line_hash(l.as_bytes()), i as u32))
                .collect(),
        }
    }

    fn check_of(expected: &Expected, output: &str) -> Check {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        std::fs::write(&path, output).unwrap();
        expected.check(&path).unwrap()
    }

    #[test]
    fn the_check_counts_drops_repeats_strangers_and_order() {
        let e = expected_of(&["a", "b", "c", "d"]);
        let exact = check_of(&e, "a\nb\nc\nd\n");
        assert_eq!(
            exact,
            Check {
                lines_out: 4,
                wrongly_dropped: 0,
                wrongly_passed: 0,
                order_kept: true
            }
        );
        let filter = check_of(&e, "a\nc\nd\n");
        assert_eq!((filter.wrongly_dropped, filter.wrongly_passed), (1, 0));
        let repeats = check_of(&e, "a\nb\na\nx\nc\nd");
        assert_eq!((repeats.wrongly_dropped, repeats.wrongly_passed), (0, 2));
        assert!(repeats.order_kept);
        let sorted = check_of(&e, "d\nc\nb\na\n");
        assert_eq!((sorted.wrongly_dropped, sorted.order_kept), (0, false));
    }

    #[test]
    fn tool_names_read_back() {
        for tool in tools(&crate::registry::local_kinds().collect::<Vec<_>>()) {
            assert_eq!(DedupTool::from_text(&tool.to_string()), Ok(tool.clone()));
        }
        assert!(DedupTool::from_text("uniq").is_err());
    }

    #[test]
    fn a_stream_has_the_repeats_it_was_asked_for() {
        let mut stream = RepeatStream::new(42, REPEAT_FRACTION);
        let repeats = stream
            .by_ref()
            .take(100_000)
            .filter(|e| matches!(e, Emitted::Repeat(_)))
            .count();
        assert!((29_000..31_000).contains(&repeats), "{repeats}");
        assert_eq!(stream.distinct(), 100_000 - repeats as u64);
    }
}

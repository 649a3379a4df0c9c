//! `dedup` among the Unix tools: one stream of generated URLs with repeats (30% of its lines repeat an
//! earlier one) written to a file (synced before anything is timed), then `dedup` with each of our dynamic
//! structures (sized for the stream's line count, what `wc -l` tells an operator) and `awk
//! '!seen[$0]++'`, `sort -u`, `huniq` and `runiq -f quick` (where installed; their absence is recorded),
//! each run as a whole process in its own process group (a Ctrl-C stops the run after the tool in
//! flight, not the tool) with stdin from the file and stdout to a file, in [`ROUNDS`] rounds whose order
//! is shuffled per round, so a ratio between two tools pairs runs made moments apart. A `dedup` that fails,
//! or whose output is wrong beyond its rate's false drops (a line passed twice; a drop by an exact
//! structure), fails the run.
//!
//! Each process runs under GNU `/usr/bin/time` ([`process`]), whose `ru_maxrss` of its child is the
//! tool's peak resident set (a child of this harness would carry the harness's own resident set across its
//! exec; the one of `/usr/bin/time`, about 1 MiB, is recorded as the floor), and which gives its CPU
//! seconds. The first round's output is checked against the exact answer ([`check`]); later rounds must
//! write as many bytes.
//!
//! The stream and the outputs live in a folder of the run's, removed when the experiment ends (and at the
//! start of the next, after an interruption).

use super::{kinds_of_run, peak_of, ExperimentRun};
use crate::keys::stream::RepeatStream;
use crate::kind::{BuildConfig, Kind, Role};
use crate::results::{DedupCliRecord, DedupTool, Experiment, Record, Results};
use check::{Check, Expected};
use process::{gnu_time, rss_floor, run_once, ToolPlan};

mod check;
mod process;
use crate::run::plan::{sized_as_planned, ExperimentSizes};
use crate::run::{Runner, Suite};
use crate::{Error, Result};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::io::{BufWriter, Write};
use std::path::Path;

/// Rounds: 7 paired ratios bound their median at 98.4% between the extremes (`stats::median_interval`).
pub const ROUNDS: usize = 7;
/// Fraction of the stream's lines that repeat an earlier line.
pub const REPEAT_FRACTION: f64 = 0.3;

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
        // The Unix tools hold the lines themselves: awk and sort about twice the stream's bytes.
        let tools = 2.0 * n as f64 * runner.key_lengths.mean_bytes.max(1.0);
        Ok(n as f64 * 64.0 + structures.max(tools))
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
            .map(|tool| ToolPlan::new(tool, runner.plan.fpr, runner.plan.seed, n))
            .collect();
        let time = gnu_time();
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
                if rows[i].unavailable.is_some() || rows[i].failed.is_some() {
                    continue;
                }
                if runner.stopped() {
                    runner.progress.finish();
                    return Err(crate::run::interrupted_error());
                }
                let output = dir.path().join(format!("out-{i}.txt"));
                let ran = run_once(&rows[i].plan, time, &stream, &output, dir.path());
                // A stop asked for during the run: that run is not recorded.
                if runner.stopped() {
                    runner.progress.finish();
                    return Err(crate::run::interrupted_error());
                }
                match ran {
                    Ok(run) => {
                        rows[i].wall_s.push(run.wall_s);
                        rows[i].cpu_s.extend(run.cpu_s);
                        rows[i].peak_rss_bytes = rows[i].peak_rss_bytes.max(run.peak_rss_bytes);
                        let output_bytes = std::fs::metadata(&output).map_or(0, |m| m.len());
                        if round == 0 {
                            let expected = match &expected {
                                Some(e) => e,
                                None => expected.insert(Expected::of(runner, distinct)),
                            };
                            rows[i].check = Some(expected.check(&output)?);
                            rows[i].output_bytes = output_bytes;
                        } else if output_bytes != rows[i].output_bytes {
                            // Checked whole once; later rounds must write the same bytes' count.
                            rows[i].failed = Some(format!(
                                "{} wrote {output_bytes} bytes in round {}, {} in the round checked",
                                rows[i].plan.display,
                                round + 1,
                                rows[i].output_bytes
                            ));
                            rows[i].wall_s.clear();
                            rows[i].cpu_s.clear();
                        }
                    }
                    Err(why) => {
                        rows[i].failed = Some(why);
                        rows[i].wall_s.clear();
                        rows[i].cpu_s.clear();
                    }
                }
                let _ = std::fs::remove_file(&output);
                runner.progress.advance(1);
            }
        }
        runner.progress.finish();
        for row in rows {
            if let DedupTool::Dedup { structure } = &row.plan.tool {
                runner.failures.extend(dedup_failures(structure, &row));
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
                cpu_s: row.cpu_s,
                lines_out: check.lines_out,
                wrongly_dropped: check.wrongly_dropped,
                wrongly_passed: check.wrongly_passed,
                order_kept: check.order_kept,
                peak_rss_bytes: row.peak_rss_bytes,
                rss_floor_bytes,
                unavailable: row.unavailable,
                failed: row.failed,
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
    // On disk before the first tool is timed: no write-back of the stream runs beside them.
    out.get_ref().sync_all().map_err(|e| Error::io(path, e))?;
    Ok((stream.distinct(), bytes))
}

/// One tool's measurements so far.
struct Row {
    plan: ToolPlan,
    wall_s: Vec<f64>,
    cpu_s: Vec<f64>,
    peak_rss_bytes: Option<u64>,
    check: Option<Check>,
    /// Bytes of the output checked (the first round's).
    output_bytes: u64,
    unavailable: Option<String>,
    failed: Option<String>,
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
            cpu_s: Vec::new(),
            peak_rss_bytes: None,
            check: None,
            output_bytes: 0,
            unavailable,
            failed: None,
        }
    }
}

/// Why a `dedup` row fails the run: it failed, or its output is wrong beyond its rate's false drops.
fn dedup_failures(structure: &str, row: &Row) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(why) = &row.failed {
        out.push(format!("dedup-cli: {why}"));
    }
    if let Some(check) = &row.check {
        if check.wrongly_passed > 0 {
            out.push(format!(
                "dedup-cli: dedup --structure {structure} passed {} lines twice or not of the stream",
                check.wrongly_passed
            ));
        }
        let exact = crate::registry::find(structure).is_ok_and(|k| k.exact());
        if exact && check.wrongly_dropped > 0 {
            out.push(format!(
                "dedup-cli: dedup --structure {structure}, an exact structure, dropped {} new lines",
                check.wrongly_dropped
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::stream::Emitted;

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

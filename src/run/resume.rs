//! What an interrupted run already completed, read back from its `results.jsonl`, so `bench --resume`
//! runs only the rest.
//!
//! Invariants: a unit of work is complete when its record (measured or skipped) is in the file; an
//! experiment is complete when all its records are, or when it was recorded as skipped. Before resuming,
//! a torn last line, the records of an experiment that stopped part-way and every unmeasured sweep point
//! are removed from the file (the server may be back), so what runs again starts clean.

use super::plan::Experiment;
use crate::results::{read_results, rewrite_without, Record, Results, SkipCause, SkipSubject};
use crate::Result;
use std::collections::HashSet;
use std::path::Path;

/// Checks that the results in `dir` are one run that can be resumed: one header whose values a run can
/// have (`RunSpec::from_header` checks the rest), and records that all belong to it: cells of structures
/// the run names, at its scales, measured with its parameters (rate, seed, hash, profile, key source;
/// cells written before they carried them are taken as they are), each (structure, n) once, each speed
/// group once. Anything else is an error naming the file, the line
/// and what differs. Blank lines are skipped, as [`read_results`] skips them; a torn last line is left to
/// [`Completed::prepare`].
pub fn check_resumable(dir: &Path, header: &crate::results::RunHeader) -> Result<()> {
    use crate::results::Line;
    let path = dir.join("results.jsonl");
    let limit = crate::measure::machine::available_memory_bytes() / 2;
    let bytes = crate::input_file::read_bounded(&path, "--resume", limit)?;
    let text = String::from_utf8_lossy(&bytes);
    let wrong = |line: usize, message: String| crate::Error::Format {
        path: path.clone(),
        line,
        message,
    };
    let params = header.params();
    let mut header_line = None;
    let mut seen: HashSet<(String, u64)> = HashSet::new();
    // A structure's cell at n is recorded once, measured or skipped.
    let mut once = |id: &str, n: u64, number: usize| -> Result<()> {
        match seen.insert((id.to_string(), n)) {
            true => Ok(()),
            false => Err(wrong(number, format!("a second record of {id} at n = {n}"))),
        }
    };
    let mut groups: HashSet<u64> = HashSet::new();
    let count = text.lines().count();
    for (index, raw) in text.lines().enumerate() {
        let number = index + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let Ok(line) = serde_json::from_str::<Line>(raw) else {
            // read_results accepted the file, so only a torn last line can fail here.
            if number == count {
                continue;
            }
            return Err(wrong(number, "corrupt record".into()));
        };
        let cell_of = |structure: &str, n: u64| -> Result<()> {
            if !header.structures.iter().any(|s| s == structure) {
                return Err(wrong(
                    number,
                    format!(
                        "a cell of '{}', which the run does not measure ({})",
                        crate::error::printable(structure),
                        header.structures.join(", ")
                    ),
                ));
            }
            if !header.scales.contains(&n) {
                return Err(wrong(
                    number,
                    format!(
                        "a cell at n = {n}, not one of the run's scales {:?}",
                        header.scales
                    ),
                ));
            }
            Ok(())
        };
        match &line.record {
            Record::Run(_) => {
                if let Some(first) = header_line {
                    return Err(wrong(
                        number,
                        format!("a second run header (the first is on line {first}); a results file holds one run"),
                    ));
                }
                header_line = Some(number);
            }
            Record::Cell(c) => {
                cell_of(&c.structure, c.n)?;
                if let Some(run) = &c.run {
                    let differs = run.differences(&params);
                    if !differs.is_empty() {
                        return Err(wrong(
                            number,
                            format!(
                                "the cell of {} at n = {} comes from another run: {}",
                                c.structure,
                                c.n,
                                differs.join("; ")
                            ),
                        ));
                    }
                }
                once(&c.structure, c.n, number)?;
            }
            Record::Skipped(s)
                if s.subject
                    .cell()
                    .is_some_and(|id| crate::registry::find(id).is_ok()) =>
            {
                let id = s.subject.to_string();
                cell_of(&id, s.n)?;
                once(&id, s.n, number)?;
            }
            Record::SpeedGroup(g) if !groups.insert(g.n) => {
                return Err(wrong(
                    number,
                    format!("a second speed group at n = {}", g.n),
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// One unit of a run, as resume recognises it in the results.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum WorkId {
    /// A grid cell (measured or skipped).
    Cell { structure: String, n: u64 },
    /// The 6·10⁹ scenario at `n` keys.
    Scenario { n: u64 },
    /// One point of the shared-filter sweep: its series at a batch size.
    SweepPoint { point: String, n: u64 },
    /// The page-size memory probe.
    MemoryProbe,
    /// The interleaved speed group at `n` (complete only whole: it is one record).
    SpeedGroup { n: u64 },
}

/// What a results file already holds.
#[derive(Debug, Default)]
pub struct Completed {
    work: HashSet<WorkId>,
    experiments: Vec<Experiment>,
    /// Records removed before resuming (a torn line, a partial experiment, unmeasured sweep points).
    pub dropped_records: usize,
}

impl Completed {
    /// Nothing done: a new run.
    pub fn nothing() -> Completed {
        Completed::default()
    }

    /// Reads the run in `dir`, removes its unfinished work from the file, and returns what is complete.
    pub fn prepare(dir: &Path) -> Result<Completed> {
        let before = read_results(dir)?;
        let incomplete: Vec<Experiment> = Experiment::ALL
            .into_iter()
            .filter(|e| {
                let have = e.records_in(&before);
                have > 0 && have < super::experiments::of(*e).expected_records(&before)
            })
            .collect();
        // An external row skipped because it was not set up, or whose process failed, runs again.
        let retried = |r: &Record| matches!(r, Record::Skipped(s) if matches!(s.cause, SkipCause::NotSetUp | SkipCause::Failed));
        let dropped_records = rewrite_without(dir, |r| {
            Experiment::of(r).is_some_and(|e| incomplete.contains(&e))
                || matches!(r, Record::SweepSkipped(_))
                || retried(r)
        })?;
        let before = read_results(dir)?;
        let mut completed = Completed::from_results(&before);
        completed.experiments.retain(|e| !incomplete.contains(e));
        completed.dropped_records = dropped_records;
        Ok(completed)
    }

    /// What `results` holds, as it stands.
    pub fn from_results(results: &Results) -> Completed {
        let skipped_experiments: Vec<Experiment> = Experiment::ALL
            .into_iter()
            .filter(|e| {
                results
                    .skipped
                    .iter()
                    .any(|s| s.subject == SkipSubject::Experiment(*e))
            })
            .collect();
        let experiments = Experiment::ALL
            .into_iter()
            .filter(|e| {
                e.records_in(results) == super::experiments::of(*e).expected_records(results)
                    || skipped_experiments.contains(e)
            })
            .collect();
        let cells = results
            .cells
            .iter()
            .map(|c| (SkipSubject::Cell(c.structure.clone()), c.n))
            .chain(results.skipped.iter().map(|s| (s.subject.clone(), s.n)))
            .map(|(subject, n)| match subject {
                SkipSubject::Scenario => WorkId::Scenario { n },
                other => WorkId::Cell {
                    structure: other.to_string(),
                    n,
                },
            });
        let work = cells
            .chain(results.scenario.iter().map(|s| WorkId::Scenario { n: s.n }))
            .chain(results.sweep.iter().map(|s| WorkId::SweepPoint {
                point: s.cell_id(),
                n: s.n,
            }))
            .chain(results.memory_probe.iter().map(|_| WorkId::MemoryProbe))
            .chain(
                results
                    .speed_groups
                    .iter()
                    .map(|g| WorkId::SpeedGroup { n: g.n }),
            )
            .collect();
        Completed {
            work,
            experiments,
            dropped_records: 0,
        }
    }

    /// Whether `work` is complete.
    pub fn has(&self, work: &WorkId) -> bool {
        self.work.contains(work)
    }

    /// Whether `experiment` is complete (or was skipped for memory).
    pub fn has_experiment(&self, experiment: Experiment) -> bool {
        self.experiments.contains(&experiment)
    }

    /// Units of work complete.
    pub fn work_count(&self) -> usize {
        self.work.len()
    }

    /// Experiments complete.
    pub fn experiment_count(&self) -> usize {
        self.experiments.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::SkippedCell;

    fn skipped(structure: &str, n: u64) -> SkippedCell {
        SkippedCell {
            subject: SkipSubject::parse(structure),
            n,
            projected_bytes: 1.0,
            budget_bytes: 1,
            reason: "test".to_string(),
            cause: crate::results::SkipCause::Memory,
        }
    }

    #[test]
    fn a_skipped_cell_is_done_and_a_skipped_experiment_too() {
        let mut results = Results::default();
        results.skipped.push(skipped("bloom", 1000));
        results.skipped.push(skipped("growth experiment", 10));
        let done = Completed::from_results(&results);
        assert!(done.has(&WorkId::Cell {
            structure: "bloom".into(),
            n: 1000
        }));
        assert!(!done.has(&WorkId::Cell {
            structure: "bloom".into(),
            n: 999
        }));
        assert!(done.has_experiment(Experiment::Growth));
        assert!(!done.has_experiment(Experiment::Saturation));
        assert!(!done.has(&WorkId::MemoryProbe));
    }

    /// The committed runs resume: every record passes the checks.
    #[test]
    fn committed_runs_pass_the_resume_checks() {
        for fixture in [
            include_str!("../../reports/reference/results.jsonl"),
            include_str!("../../tests/fixtures/skips-and-scenario/results.jsonl"),
        ] {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("results.jsonl"), fixture).unwrap();
            let results = read_results(dir.path()).unwrap();
            check_resumable(dir.path(), results.header.as_ref().unwrap()).unwrap();
        }
    }

    #[test]
    fn a_scenario_skipped_for_memory_is_done() {
        let mut results = Results::default();
        results
            .skipped
            .push(skipped("seed-6e9 scenario", 6_000_000));
        let done = Completed::from_results(&results);
        assert!(done.has(&WorkId::Scenario { n: 6_000_000 }));
        assert!(!done.has(&WorkId::Scenario { n: 60_000_000 }));
    }
}

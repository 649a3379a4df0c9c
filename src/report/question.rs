//! The question the report answers. By default the run's own: its largest scale, its header's rate and
//! memory budget. `dedupbench report DIR --n N --memory SIZE --fpr P` re-asks any part of it from the same
//! results (nothing is rerun); `--machines M [--machine-memory SIZE] [--partition P]` adds a fleet of M
//! crawling machines (each with the question's budget unless given, split by host unless given), whose
//! designs the first screen prices ([`crate::advise::fleet`]). A new part of the question is one field
//! here, its line in [`Question::demand`] or [`Question::fleet`] and its flag in [`Question::flags`].

use crate::advise::fleet::{plan, Fleet, FleetPlan, Partition};
use crate::advise::rates::RateAsk;
use crate::analysis::regimes::{run_workload, Demand, NODE_MEMORY_BYTES};
use crate::results::Results;
use crate::units::{human_count, parse_count};
use crate::workload::Workload;
use crate::{Error, Result};

/// What the reader asks; each field left empty is the run's own.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Question {
    /// Distinct keys to plan for (none: the run's largest scale).
    pub n: Option<u64>,
    /// Memory budget per process, bytes (none: the run's budget).
    pub memory_bytes: Option<u64>,
    /// Target false-positive rate (none: the run's).
    pub fpr: Option<f64>,
    /// Machines crawling the n URLs together (none: one process, no fleet).
    pub machines: Option<u64>,
    /// Memory each machine gives the structure, bytes (none: the question's budget).
    pub machine_memory_bytes: Option<u64>,
    /// How the URLs are split between the machines (none: by host).
    pub partition: Option<Partition>,
}

impl Question {
    /// Whether nothing is re-asked: the answer is the run's own.
    pub fn is_own(&self) -> bool {
        *self == Question::default()
    }

    /// What it asks of a run whose own demand is `own`: each given field replaces the run's (the
    /// workload, deletes and growth stay the run's).
    pub fn demand(&self, own: &Demand) -> Demand {
        Demand {
            n_low: self.n.unwrap_or(own.n_low),
            n_high: self.n.unwrap_or(own.n_high),
            fpr: self.fpr.unwrap_or(own.fpr),
            memory_bytes: self.memory_bytes.unwrap_or(own.memory_bytes),
            ..own.clone()
        }
    }

    /// What it asks of the run `r` (none without a run header, whose question there is nothing to
    /// re-ask of).
    pub fn demand_of(&self, r: &Results) -> Option<Demand> {
        run_workload(r).map(|own| self.demand(&own))
    }

    /// The fleet it asks about, given its demand (none without `machines`).
    pub fn fleet(&self, demand: &Demand) -> Option<Fleet> {
        self.machines.map(|machines| Fleet {
            machines,
            machine_memory_bytes: self.machine_memory_bytes.unwrap_or(demand.memory_bytes),
            partition: self.partition.unwrap_or(Partition::Host),
        })
    }

    /// The fleet's designs priced for it of the run `r` (none without `machines` or a run header): at
    /// the question's rate, a shared design on nodes of the size the ladder's server rung assumes, each
    /// node's insert rate as the run measured it (else as stated). Refused for a workload other than a
    /// crawl, whose keys a fleet does not split.
    pub fn fleet_plan(&self, r: &Results) -> Result<Option<FleetPlan>> {
        let Some(demand) = self.demand_of(r) else {
            return Ok(None);
        };
        let Some(fleet) = self.fleet(&demand) else {
            return Ok(None);
        };
        if demand.workload != Workload::Crawl {
            return Err(Error::invalid(
                "--machines",
                format!(
                    "the fleet is priced for a crawl (URLs split between machines); this run's workload is {}",
                    demand.workload
                ),
            ));
        }
        let ask = RateAsk::Fixed { fpr: demand.fpr };
        plan(
            &demand,
            &fleet,
            ask,
            NODE_MEMORY_BYTES,
            Some((r, "this run")),
        )
        .map(Some)
    }

    /// The flags that re-ask it, as `report` takes them (`--n 2G --memory 16GiB --fpr 0.001`): each value
    /// in a form that parses back to it exactly. Empty for the run's own.
    pub fn flags(&self) -> String {
        let mut flags = Vec::new();
        if let Some(n) = self.n {
            flags.push(format!("--n {}", exact_count(n)));
        }
        if let Some(bytes) = self.memory_bytes {
            flags.push(format!("--memory {}", exact_size(bytes)));
        }
        if let Some(fpr) = self.fpr {
            flags.push(format!("--fpr {fpr}"));
        }
        if let Some(machines) = self.machines {
            flags.push(format!("--machines {}", exact_count(machines)));
        }
        if let Some(bytes) = self.machine_memory_bytes {
            flags.push(format!("--machine-memory {}", exact_size(bytes)));
        }
        if let Some(partition) = self.partition {
            let name = clap::ValueEnum::to_possible_value(&partition)
                .map(|v| v.get_name().to_string())
                .unwrap_or_default();
            flags.push(format!("--partition {name}"));
        }
        flags.join(" ")
    }
}

/// `n` with a decimal suffix when that says it exactly (`2G`), else its digits.
fn exact_count(n: u64) -> String {
    let short = human_count(n as f64);
    if parse_count(&short).ok() == Some(n) {
        short
    } else {
        n.to_string()
    }
}

/// `bytes` in the largest IEC unit that divides it (`16GiB`), else in bytes.
fn exact_size(bytes: u64) -> String {
    [
        (1u64 << 40, "TiB"),
        (1 << 30, "GiB"),
        (1 << 20, "MiB"),
        (1 << 10, "KiB"),
    ]
    .into_iter()
    .find(|(unit, _)| bytes.is_multiple_of(*unit))
    .map(|(unit, name)| format!("{}{name}", bytes / unit))
    .unwrap_or_else(|| format!("{bytes}B"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{count_arg, parse_size, KeyRange};

    fn own() -> Demand {
        Demand::new(10_000_000, 0.01, 24 << 30, Default::default())
    }

    #[test]
    fn an_empty_question_is_the_runs_own() {
        let q = Question::default();
        assert!(q.is_own());
        assert_eq!(q.demand(&own()), own());
        assert_eq!(q.flags(), "");
    }

    #[test]
    fn each_given_field_replaces_the_runs_and_the_rest_stay() {
        let q = Question {
            n: Some(2_000_000_000),
            memory_bytes: Some(16 << 30),
            ..Default::default()
        };
        assert!(!q.is_own());
        let d = q.demand(&own());
        assert_eq!((d.n_low, d.n_high), (2_000_000_000, 2_000_000_000));
        assert_eq!(d.memory_bytes, 16 << 30);
        assert_eq!(d.fpr, 0.01);
        assert_eq!(d.workload, own().workload);
        assert_eq!(q.flags(), "--n 2G --memory 16GiB");
        assert_eq!(q.fleet(&d), None);
    }

    #[test]
    fn a_fleet_takes_the_questions_budget_and_the_host_partition_unless_given() {
        let q = Question {
            memory_bytes: Some(16 << 30),
            machines: Some(20),
            ..Default::default()
        };
        let fleet = q.fleet(&q.demand(&own())).unwrap();
        assert_eq!(
            (fleet.machines, fleet.machine_memory_bytes, fleet.partition),
            (20, 16 << 30, Partition::Host)
        );
        assert_eq!(q.flags(), "--memory 16GiB --machines 20");
        let q = Question {
            machines: Some(20),
            machine_memory_bytes: Some(8 << 30),
            partition: Some(Partition::Url),
            ..Default::default()
        };
        let fleet = q.fleet(&q.demand(&own())).unwrap();
        assert_eq!(
            (fleet.machine_memory_bytes, fleet.partition),
            (8 << 30, Partition::Url)
        );
    }

    #[test]
    fn the_flags_parse_back_to_the_same_question() {
        for q in [
            Question {
                n: Some(1_234_567),
                memory_bytes: Some(1_000_000_001),
                fpr: Some(0.001),
                machines: Some(20),
                machine_memory_bytes: Some(16 << 30),
                partition: Some(Partition::Url),
            },
            Question {
                n: Some(6_000_000_000),
                memory_bytes: Some(3 << 20),
                fpr: Some(1e-5),
                machines: Some(1_000),
                machine_memory_bytes: Some(5_000_000_000),
                partition: Some(Partition::None),
            },
        ] {
            let flags = q.flags();
            let value = |flag: &str| {
                let words: Vec<&str> = flags.split(' ').collect();
                let at = words.iter().position(|w| *w == flag).unwrap();
                words[at + 1].to_string()
            };
            assert_eq!(
                Some(KeyRange::parse(&value("--n")).unwrap().high),
                q.n,
                "{flags}"
            );
            assert_eq!(
                Some(parse_size(&value("--memory")).unwrap()),
                q.memory_bytes,
                "{flags}"
            );
            assert_eq!(value("--fpr").parse::<f64>().ok(), q.fpr, "{flags}");
            assert_eq!(count_arg(&value("--machines")).ok(), q.machines, "{flags}");
            assert_eq!(
                parse_size(&value("--machine-memory")).ok(),
                q.machine_memory_bytes,
                "{flags}"
            );
            assert_eq!(
                <Partition as clap::ValueEnum>::from_str(&value("--partition"), false).ok(),
                q.partition,
                "{flags}"
            );
        }
    }
}

//! The fleet on the first screen: with `report DIR --machines M`, the designs
//! [`crate::advise::fleet::plan`] prices for the question (exact fingerprints or a filter on each
//! machine, or one structure shared on Redis), best first, as `advise --machines` prints them. Every
//! figure is a model's (bytes, the host partition's skew measured on generated URLs, pages lost summed
//! over each machine's fill); a node's insert rate is this run's when it measured one, else the stated one.

use super::markup::expected_count;
use crate::advise::fleet::{FleetPlan, Place, BATCH_URLS};
use crate::units::{human_bytes, human_count, human_rate};
use serde::Serialize;

/// What `templates/answer.html` shows of the fleet.
#[derive(Serialize)]
pub struct FleetView {
    /// "20 machines of 16.0 GiB each, partitioned by host".
    fleet: String,
    n: String,
    fpr: String,
    /// The first design that deduplicates across machines and fits: its name, and what it costs in words.
    pick: Option<(String, String)>,
    /// The fullest machine's share over n/M, and where that comes from.
    skew: String,
    skew_source: String,
    rows: Vec<FleetRow>,
    /// One node's insert rate and its source, for the shared designs.
    node_rate: Option<String>,
}

/// One design, priced.
#[derive(Serialize)]
struct FleetRow {
    /// Its rank among the usable designs (none: it does not fit, or does not deduplicate across machines).
    rank: Option<usize>,
    design: String,
    keys: String,
    per_machine: String,
    per_node: String,
    round_trips: String,
    never_crawled: String,
    note: String,
}

/// The view of `plan`.
pub fn view(plan: &FleetPlan) -> FleetView {
    let mut rank = 0;
    let rows: Vec<FleetRow> = plan
        .options
        .iter()
        .map(|o| {
            rank += usize::from(o.usable());
            FleetRow {
                rank: o.usable().then_some(rank),
                design: o.design(),
                keys: human_count(o.keys as f64),
                per_machine: if o.bytes_per_machine > 0 {
                    human_bytes(o.bytes_per_machine as f64)
                } else {
                    "0".into()
                },
                per_node: if o.bytes_per_node > 0 {
                    human_bytes(o.bytes_per_node as f64)
                } else {
                    "–".into()
                },
                round_trips: if o.round_trips_per_batch() > 0 {
                    format!("{} per {BATCH_URLS} URLs", o.round_trips_per_batch())
                } else {
                    "0".into()
                },
                never_crawled: if !o.deduplicates_across_machines {
                    "every repeat across machines is crawled again".into()
                } else if o.pages_lost_bound {
                    format!("≤ {}", expected_count(o.pages_lost))
                } else {
                    expected_count(o.pages_lost)
                },
                note: o.note.clone(),
            }
        })
        .collect();
    let node_rate = plan
        .options
        .iter()
        .find_map(|o| Some((o.node_inserts_per_sec?, o.node_rate_source.as_deref()?)))
        .map(|(rate, source)| format!("{} inserts/s ({source})", human_count(rate)));
    let pick =
        plan.options
            .iter()
            .zip(&rows)
            .find(|(_, row)| row.rank.is_some())
            .map(|(o, row)| {
                let place = match o.place {
                    Place::EachMachine => format!(
                        "{} keys and {} on each machine, no round trip",
                        row.keys, row.per_machine
                    ),
                    Place::SharedRedis => format!(
                    "{} keys, {} on each of {} Redis node{}, {} round trip{} per {BATCH_URLS} URLs",
                    row.keys,
                    row.per_node,
                    o.nodes,
                    if o.nodes == 1 { "" } else { "s" },
                    o.round_trips_per_batch(),
                    if o.round_trips_per_batch() == 1 { "" } else { "s" },
                ),
                };
                (
                    row.design.clone(),
                    format!(
                        "{place}; {} new URLs never crawled over the {} at p = {}",
                        row.never_crawled,
                        human_count(plan.n as f64),
                        human_rate(plan.fpr)
                    ),
                )
            });
    FleetView {
        fleet: format!(
            "{} machines of {} each, {}",
            plan.fleet.machines,
            human_bytes(plan.fleet.machine_memory_bytes as f64),
            plan.fleet.partition.words()
        ),
        n: human_count(plan.n as f64),
        fpr: human_rate(plan.fpr),
        pick,
        skew: format!("{:.2}", plan.skew.fullest_over_mean),
        skew_source: plan.skew.source.clone(),
        rows,
        node_rate,
    }
}

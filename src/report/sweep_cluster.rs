//! The shared-filter section's cluster part: every backend split over a Redis Cluster beside the same
//! backend on one node, the spread of its shards' loads, and per-node figures labelled as a model for N
//! machines (on this machine every node shares the same cores, so the cluster's own total says little).

use crate::analysis::sweep::{
    cluster_ratio, load_spread, network_bytes_per_key, point, shared_bloom,
};
use crate::results::Results;
use crate::units::human_bytes;
use serde::Serialize;

/// The target of `redis-bloom` split over a 3-master cluster against one node, at 1024 keys per trip.
pub const CLUSTER_TARGET: f64 = 0.8;

/// One sentence for the verdict, if a cluster was measured.
pub fn verdict(r: &Results, batch: u64) -> Option<String> {
    let ratio = cluster_ratio(r, batch)?;
    let p = point(r, &shared_bloom().on_cluster(), batch)?;
    Some(format!(
        "split over {} masters ({} shards), {} inserts at {:.0}% of one node's rate (target ≥ {:.0}%: {}); the servers share this machine's cores",
        p.masters,
        p.shard_loads.len(),
        p.series.structure,
        100.0 * ratio,
        100.0 * CLUSTER_TARGET,
        if ratio >= CLUSTER_TARGET { "met" } else { "NOT met" }
    ))
}

/// One point measured on a cluster, beside the same backend on one node.
#[derive(Serialize)]
pub struct ClusterRow {
    series: String,
    batch: u64,
    masters: u32,
    shards: usize,
    /// The shards' loads: min – max (coefficient of variation).
    spread: String,
    insert: String,
    one_node_insert: String,
    ratio: String,
    insert_per_master: String,
    bytes_per_key: String,
    server_bytes_per_master: String,
    network_bytes_per_key: String,
    observed: String,
    theory: String,
}

/// The rows of the cluster table (empty when no cluster was measured).
pub fn rows(r: &Results) -> Vec<ClusterRow> {
    let mean_key_bytes = r
        .header
        .as_ref()
        .map(|h| h.key_lengths.mean_bytes)
        .unwrap_or(77.0);
    r.sweep
        .iter()
        .filter(|p| p.masters > 1)
        .map(|p| {
            let one = p.series.one_node().and_then(|s| point(r, &s, p.batch_keys));
            ClusterRow {
                series: p.series.to_string(),
                batch: p.batch_keys,
                masters: p.masters,
                shards: p.shard_loads.len(),
                spread: load_spread(&p.shard_loads)
                    .map(|(lo, hi, cv)| format!("{lo} – {hi} ({:.1}%)", 100.0 * cv))
                    .unwrap_or_else(|| "–".into()),
                insert: format!("{:.0}", p.insert_keys_per_s),
                one_node_insert: one
                    .map(|o| format!("{:.0}", o.insert_keys_per_s))
                    .unwrap_or_else(|| "–".into()),
                ratio: one
                    .map(|o| format!("{:.2}", p.insert_keys_per_s / o.insert_keys_per_s))
                    .unwrap_or_else(|| "–".into()),
                insert_per_master: format!("{:.0}", p.insert_keys_per_s / p.masters.max(1) as f64),
                bytes_per_key: format!("{:.2}", p.bytes_per_key),
                server_bytes_per_master: human_bytes(
                    p.server_bytes as f64 / p.masters.max(1) as f64,
                ),
                network_bytes_per_key: format!(
                    "{:.0}",
                    network_bytes_per_key(&p.structure, mean_key_bytes, p.geometry.hashes)
                ),
                observed: crate::units::human_rate(p.observed_fpr),
                theory: crate::units::human_rate(p.expected_fpr),
            }
        })
        .collect()
}

//! The shared-filter section's cluster part: every backend split over a Redis Cluster beside the same
//! backend on one node, the spread of its shards' loads, and per-node figures labelled as a model for N
//! machines (on this machine every node shares the same cores, so the cluster's own total says little).

use super::markup::esc;
use crate::analysis::sweep::{
    cluster_ratio, load_spread, network_bytes_per_key, point, shared_bloom,
};
use crate::results::Results;
use crate::units::human_bytes;
use std::fmt::Write;

/// The target of `redis-bloom` split over a 3-master cluster against one node, at 1024 keys per trip.
pub const CLUSTER_TARGET: f64 = 0.8;

/// One sentence for the verdict, if a cluster was measured.
pub fn verdict(r: &Results, batch: u64) -> Option<String> {
    let ratio = cluster_ratio(r, batch)?;
    let p = point(r, &shared_bloom().on_cluster(), batch)?;
    Some(format!(
        "split over {} masters ({} shards), redis-bloom inserts at {:.0}% of one node's rate (target ≥ {:.0}%: {}); the servers share this machine's cores",
        p.masters,
        p.shard_loads.len(),
        100.0 * ratio,
        100.0 * CLUSTER_TARGET,
        if ratio >= CLUSTER_TARGET { "met" } else { "NOT met" }
    ))
}

/// The table of cluster points.
pub fn section(s: &mut String, r: &Results) {
    let points: Vec<_> = r.sweep.iter().filter(|p| p.masters > 1).collect();
    if points.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "<h3>Over a Redis Cluster</h3><table><tr><th>series</th><th>batch</th><th>masters</th><th>shards</th>\
<th>shard loads: min – max (CV)</th><th>insert keys/s</th><th>one node keys/s</th><th>cluster / one node</th>\
<th>model: keys/s per master</th><th>bytes per key</th><th>model: server bytes per master</th><th>model: network bytes per insert</th><th>observed rate</th><th>theory (from each shard's load)</th></tr>"
    );
    let mean_key_bytes = r
        .header
        .as_ref()
        .map(|h| h.key_lengths.mean_bytes)
        .unwrap_or(77.0);
    for p in points {
        let one = p.series.one_node().and_then(|s| point(r, &s, p.batch_keys));
        let spread = load_spread(&p.shard_loads)
            .map(|(lo, hi, cv)| format!("{lo} – {hi} ({:.1}%)", 100.0 * cv))
            .unwrap_or_else(|| "–".into());
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{spread}</td><td>{:.0}</td><td>{}</td><td>{}</td><td>{:.0}</td><td>{:.2}</td><td>{}</td><td>{:.0}</td><td>{:.3e}</td><td>{:.3e}</td></tr>",
            esc(&p.series.to_string()),
            p.batch_keys,
            p.masters,
            p.shard_loads.len(),
            p.insert_keys_per_s,
            one.map(|o| format!("{:.0}", o.insert_keys_per_s)).unwrap_or_else(|| "–".into()),
            one.map(|o| format!("{:.2}", p.insert_keys_per_s / o.insert_keys_per_s)).unwrap_or_else(|| "–".into()),
            p.insert_keys_per_s / p.masters.max(1) as f64,
            p.bytes_per_key,
            human_bytes(p.server_bytes as f64 / p.masters.max(1) as f64),
            network_bytes_per_key(&p.structure, mean_key_bytes, p.geometry.hashes),
            p.observed_fpr,
            p.expected_fpr,
        );
    }
    let _ = writeln!(
        s,
        "</table><p>On this machine the cluster's nodes, the single node and the client share two cores, so the \
cluster's total cannot exceed one node's by much; what carries to N machines is per node: each master holds 1/N of \
the keys and of the bytes, and a batch's keys are split across masters and sent to each as one pipeline. The column \
\"keys/s per master\" is the measured total divided by the masters, \"server bytes per master\" the measured \
bytes divided likewise: a model of one machine's share, not a measurement of N machines. \"Network bytes per \
insert\" is a model from the protocol's framing (the key and its framing out, a 4-byte integer back; a client-hashed \
bitmap sends k bit operations instead), not a capture. Shard loads are binomial (n keys over S shards); the logical filter's theory is the mean \
of the shards' rates at their own loads.</p>"
    );
}

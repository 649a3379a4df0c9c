//! Past one process: how many Redis nodes a shared Bloom filter for n keys at rate p needs, from memory
//! (a node's memory, of which a fixed share holds data) and, when an insert rate is asked for, from the
//! per-node insert throughput a `bench --suite redis` run measured. The advisor's last rungs.
//!
//! A model, labelled as one: memory is the formula's m/8 (RedisBloom sizes a fixed filter the same way),
//! throughput is what one node sustained on the machine that ran the sweep (client and server sharing its
//! cores), taken as what each node of a cluster sustains (a cluster's nodes share nothing per key).

use crate::kind::Role;
use crate::registry::role_id;
use crate::results::Results;
use crate::theory::BloomSizing;
use serde::Serialize;

/// The share of a node's memory that holds the filter; the rest is Redis itself, fragmentation and the
/// copy-on-write of a background save or AOF rewrite.
pub const USABLE_SHARE: f64 = 0.75;
/// Shards per node (the `--shards` default of a cluster).
pub const SHARDS_PER_NODE: u64 = crate::remote::link::SHARDS_PER_MASTER;

/// One Redis node's `redis-bloom` inserts per second at 1024 keys per round trip, as
/// docs/shared-filters.md states it (where it is dated and its machine described): used, labelled as
/// stated, when no run's sweep is given.
pub const STATED_NODE_INSERTS_PER_SEC: f64 = 2.01e6;

/// Where a shared filter lives and how many nodes it takes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NodePlan {
    pub n: u64,
    pub fpr: f64,
    /// m/8 of a Bloom filter for n at p.
    #[serde(serialize_with = "crate::units::serde_bytes::serialize")]
    pub filter_bytes: f64,
    pub node_memory_bytes: u64,
    /// Nodes the memory needs: ⌈filter / (node memory × [`USABLE_SHARE`])⌉.
    pub nodes_for_memory: u64,
    /// The insert rate asked for (`--inserts-per-sec`).
    pub inserts_per_sec: Option<f64>,
    /// One node's measured `redis-bloom` inserts per second at the sweep's largest batch, and where from.
    pub node_inserts_per_sec: Option<f64>,
    pub node_throughput_source: Option<String>,
    /// Nodes the insert rate needs at the measured per-node rate.
    pub nodes_for_throughput: Option<u64>,
    /// The larger of the two: 1 is one shared server, more is a cluster of that many masters.
    pub nodes: u64,
    /// Sub-filters of the cluster (`--shards`): 3 per node.
    pub shards: u64,
}

/// The plan for n keys at p on nodes of `node_memory_bytes`, with the sweep of `run` if any.
pub fn node_plan(
    n: u64,
    fpr: f64,
    node_memory_bytes: u64,
    inserts_per_sec: Option<f64>,
    run: Option<(&Results, &str)>,
) -> NodePlan {
    let filter_bytes = BloomSizing::for_rate(n.max(1), fpr).bytes() as f64;
    let usable = node_memory_bytes as f64 * USABLE_SHARE;
    let nodes_for_memory = (filter_bytes / usable.max(1.0)).ceil().max(1.0) as u64;
    let measured = run.and_then(|(results, label)| {
        results
            .sweep
            .iter()
            .filter(|r| r.structure == role_id(Role::SharedBloom) && r.masters <= 1)
            .max_by_key(|r| r.batch_keys)
            .map(|r| {
                (
                    r.insert_keys_per_s,
                    format!(
                        "{label}: {} on one node, {} keys per round trip (client and server on one machine)",
                        role_id(Role::SharedBloom),
                        r.batch_keys
                    ),
                )
            })
    });
    let measured = measured.or(Some((
        STATED_NODE_INSERTS_PER_SEC,
        format!(
            "stated, not measured by a run given here: docs/shared-filters.md, {} on one node, 1024 keys per round trip, client and server sharing 2 cores",
            role_id(Role::SharedBloom)
        ),
    )));
    let nodes_for_throughput = match (inserts_per_sec, &measured) {
        (Some(wanted), Some((per_node, _))) => Some((wanted / per_node).ceil().max(1.0) as u64),
        _ => None,
    };
    let nodes = nodes_for_memory.max(nodes_for_throughput.unwrap_or(1));
    NodePlan {
        n,
        fpr,
        filter_bytes,
        node_memory_bytes,
        nodes_for_memory,
        inserts_per_sec,
        node_inserts_per_sec: measured.as_ref().map(|m| m.0),
        node_throughput_source: measured.map(|m| m.1),
        nodes_for_throughput,
        nodes,
        shards: if nodes > 1 {
            nodes * SHARDS_PER_NODE
        } else {
            1
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_come_from_memory_and_from_the_insert_rate() {
        // 6·10⁹ URLs at 1%: 7.19 GB, one 64 GiB node; 10¹¹: 120 GB, 3 nodes of 64 GiB (48 GiB usable).
        let one = node_plan(6_000_000_000, 0.01, 64 << 30, None, None);
        assert_eq!((one.nodes_for_memory, one.nodes, one.shards), (1, 1, 1));
        assert!(
            (one.filter_bytes / 1e9 - 7.19).abs() < 0.01,
            "{}",
            one.filter_bytes
        );
        let big = node_plan(100_000_000_000, 0.01, 64 << 30, None, None);
        assert_eq!((big.nodes_for_memory, big.nodes, big.shards), (3, 3, 9));
        // No measurement: the stated per-node rate turns the insert rate into nodes, labelled so.
        let asked = node_plan(1_000_000, 0.01, 64 << 30, Some(1e7), None);
        assert_eq!(asked.nodes_for_throughput, Some(5));
        assert_eq!(asked.nodes, 5);
        assert!(asked.node_throughput_source.unwrap().starts_with("stated"));
    }
}

//! The shared-filter sweep's targets, from its records: the bitmap backend's inserts against
//! RedisBloom's at the same batch size, our client against a raw pipeline of the same commands, and the
//! filter split over a cluster against one node.

use crate::kind::{Role, Wire};
use crate::registry::role_id;
use crate::results::{Results, SweepRecord, SweepSeries};

/// The record of `series` at `batch` keys per round trip.
pub fn point<'a>(r: &'a Results, series: &SweepSeries, batch: u64) -> Option<&'a SweepRecord> {
    r.sweep
        .iter()
        .find(|p| p.series == *series && p.batch_keys == batch)
}

/// The series of the Bloom filter shared on one server.
pub fn shared_bloom() -> SweepSeries {
    SweepSeries::remote(role_id(Role::SharedBloom), None, false)
}

/// The fastest `redis-bitmap` mode at a batch size.
pub fn best_bitmap(r: &Results, batch: u64) -> Option<&SweepRecord> {
    r.sweep
        .iter()
        .filter(|p| {
            p.structure == role_id(Role::SharedBitmap) && p.batch_keys == batch && p.masters <= 1
        })
        .max_by(|a, b| a.insert_keys_per_s.total_cmp(&b.insert_keys_per_s))
}

/// The two targets at one batch size: (bitmap / bloom inserts, our client / raw pipeline).
pub fn target_ratios(r: &Results, batch: u64) -> (Option<f64>, Option<f64>) {
    let bloom = point(r, &shared_bloom(), batch);
    let bitmap = best_bitmap(r, batch)
        .zip(bloom)
        .map(|(m, b)| m.insert_keys_per_s / b.insert_keys_per_s);
    let client = bloom.and_then(|b| b.raw_insert_keys_per_s.map(|raw| b.insert_keys_per_s / raw));
    (bitmap, client)
}

/// `redis-bloom` split over the cluster against one node: inserts per second at one batch size.
pub fn cluster_ratio(r: &Results, batch: u64) -> Option<f64> {
    let one = point(r, &shared_bloom(), batch)?;
    let cluster = point(r, &shared_bloom().on_cluster(), batch)?;
    Some(cluster.insert_keys_per_s / one.insert_keys_per_s)
}

/// The spread of a split structure's shard loads: (smallest, largest, coefficient of variation).
pub fn load_spread(loads: &[u64]) -> Option<(u64, u64, f64)> {
    let (&min, &max) = (loads.iter().min()?, loads.iter().max()?);
    let mean = loads.iter().sum::<u64>() as f64 / loads.len() as f64;
    let var = loads
        .iter()
        .map(|&l| (l as f64 - mean).powi(2))
        .sum::<f64>()
        / loads.len() as f64;
    Some((min, max, var.sqrt() / mean.max(1.0)))
}

/// Bytes on the wire per inserted key (request and reply), from RESP framing: a model, not a capture.
/// A key argument is `$L\r\n…\r\n` (L + 5 + digits of L) and its reply `:0\r\n` (4); a client-hashed
/// bitmap sends k field operations `SET u1 OFFSET 1` (≈ 35 bytes with a 9-digit offset) and reads k
/// replies instead. A command's own name and key, shared by the keys of a round trip, are left out.
pub fn network_bytes_per_key(structure: &str, mean_key_bytes: f64, hashes: Option<u32>) -> f64 {
    let argument = |len: f64| len + 5.0 + (len.max(1.0).log10().floor() + 1.0);
    let wire = crate::registry::find(structure)
        .ok()
        .and_then(|k| k.server())
        .map(|s| s.wire);
    match wire {
        Some(Wire::FieldOperations) => hashes.unwrap_or(1) as f64 * (35.0 + 4.0),
        Some(Wire::FixedArgument { bytes }) => argument(bytes as f64) + 4.0,
        Some(Wire::KeyArgument) | None => argument(mean_key_bytes) + 4.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_bytes_follow_the_framing() {
        // "$77\r\n" + 77 bytes + "\r\n" out, ":1\r\n" back.
        assert_eq!(network_bytes_per_key("redis-bloom", 77.0, Some(7)), 88.0);
        assert_eq!(network_bytes_per_key("redis-set-fp", 77.0, None), 27.0);
        assert_eq!(network_bytes_per_key("redis-bitmap", 77.0, Some(7)), 273.0);
        assert_eq!(load_spread(&[90, 110]), Some((90, 110, 0.1)));
    }
}

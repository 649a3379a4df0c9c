//! `redis-bloom` and `redis-bloom-scaling`: the RedisBloom module's filter, shared by every worker that
//! talks to the server. `BF.RESERVE key p n NONSCALING` makes one fixed filter (RedisBloom sizes it
//! m = n·(−ln p / ln²2), k = ⌈ln 2 · m/n⌉, MurmurHash64A double hashing); without `NONSCALING` it is a
//! scalable chain (first link at p/2, each next link 2× larger at half the rate, Almeida et al. 2007),
//! reserved here for max(1000, n/64) keys like our `scalable`, so both grow through the same links.
//! Inserts are `BF.MADD` of `batch_keys` keys per round trip, lookups `BF.MEXISTS`.
//!
//! Geometry and theory come from the server itself (`BF.DEBUG`: bits, hashes and items of every link), so
//! the observed rate is checked against the filter the module actually built. The module is detected at
//! connect time (`MODULE LIST`); without it the build fails with that reason and the cell is skipped.
//! `BF.MADD` answers per key and is atomic per command: under concurrent workers, at most one of them is
//! told a key is new (none, when the key was a false positive); `dedup`'s adds keep their answers for a
//! resend ([`super::once`]). The parameters (rate, capacity, mode,
//! and on a cluster the hash and seed that pick a key's shard, unless xxh3-128, which older parameters
//! meant without naming it) are stored in `NAME:params` and checked by every worker that joins.
//!
//! On a Redis Cluster the logical filter is S sub-filters ([`Shards`]), each reserved for
//! ⌈n/S + 6·√(n/S)⌉ keys (a shard's load is binomial; a `NONSCALING` filter refuses keys past its
//! capacity, and 6σ is never reached in practice), with its parameters under its own `{tag}:params`. A
//! round trip carries `batch_keys` keys as one `BF.MADD` per shard, the crate sending each node its
//! commands as one pipeline. The logical rate is the mean of the shards' rates, each from the shard's own
//! `BF.DEBUG` (its actual load), since a non-member goes to each shard with probability 1/S.

use super::link::{self, Link};
use super::shards::{InFlight, Shards};
use crate::hash::{KeyHash, KeyHasher};
use crate::keys::KeyBatch;
use crate::kind::{
    BuildConfig, Capabilities, Descriptor, Family, Kind, MemoryModel, Placement, RateModel, Role,
    Server, Wire,
};
use crate::membership::{Geometry, Membership};
use crate::redis::{Conn, RemoteConfig};
use crate::{theory, Error, Result};
use redis::Value;

/// Registry entry of the fixed filter.
pub struct RedisBloomKind;
/// Registry entry of the module's scalable filter.
pub struct RedisBloomScalingKind;

/// The remote part of a config, or the error saying it is missing.
pub(crate) fn remote_of<'a>(id: &str, config: &'a BuildConfig) -> Result<&'a RemoteConfig> {
    config.remote.as_ref().ok_or_else(|| {
        Error::invalid(
            id,
            "lives on a Redis server; give one with --redis redis://host:port or a cluster with \
             --redis-cluster redis://host:port[,…]",
        )
    })
}

/// The registry id of the fixed-size filter.
pub const ID: &str = "redis-bloom";
/// The registry id of the module's scalable filter.
pub const SCALING_ID: &str = "redis-bloom-scaling";
/// The module both need (`MODULE LIST` name).
pub const MODULE: &str = "bf";

/// Bits per key RedisBloom gives a fixed filter at rate p.
fn module_bits_per_key(p: f64) -> f64 {
    -p.ln() / (std::f64::consts::LN_2 * std::f64::consts::LN_2)
}

macro_rules! kind {
    ($kind:ident, $descriptor:ident, $id:expr, $summary:literal, $scaling:expr, $family:expr, $rate_model:expr, $roles:expr) => {
        /// What the registry knows about it.
        pub static $descriptor: Descriptor = Descriptor {
            roles: $roles,
            ..Descriptor::new(
                $id,
                $summary,
                $family,
                Placement::OurServer(Server {
                    module: Some(MODULE),
                    hashes_keys: true,
                    wire: Wire::KeyArgument,
                    answers_kept_for_resend: true,
                    has_write_modes: false,
                }),
                Capabilities {
                    growable: $scaling,
                    ..Capabilities::FILTER
                },
                $rate_model,
            )
        };

        impl Kind for $kind {
            fn descriptor(&self) -> &Descriptor {
                &$descriptor
            }
            fn predicted_memory(&self, config: &BuildConfig) -> MemoryModel {
                // On the server, not in this process.
                let bits = config.expected_keys as f64 * module_bits_per_key(config.fpr);
                MemoryModel {
                    heap_bytes: 0.0,
                    footprint_bytes: bits / 8.0,
                }
            }
            fn predicted_fpr(&self, config: &BuildConfig) -> f64 {
                let bits = (config.expected_keys as f64 * module_bits_per_key(config.fpr)) as u64;
                let hashes =
                    (std::f64::consts::LN_2 * module_bits_per_key(config.fpr)).ceil() as u32;
                theory::bloom_fpr(bits.max(1), hashes, config.expected_keys)
            }
            fn build(&self, config: &BuildConfig) -> Result<Box<dyn Membership>> {
                Ok(Box::new(RedisBloom::open($id, config, $scaling)?))
            }
        }
    };
}
kind!(
    RedisBloomKind,
    DESCRIPTOR,
    ID,
    "RedisBloom module filter on a Redis server (BF.RESERVE … NONSCALING, BF.MADD/BF.MEXISTS)",
    false,
    Family::Bloom,
    RateModel::Fill,
    &[Role::SharedBloom]
);
kind!(
    RedisBloomScalingKind,
    SCALING_DESCRIPTOR,
    SCALING_ID,
    "RedisBloom module's scalable filter (BF.RESERVE without NONSCALING, expansion 2)",
    true,
    Family::ScalableBloom,
    RateModel::Stated,
    &[Role::SharedGrowingFilter]
);

/// One link of a RedisBloom chain, from `BF.DEBUG`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkInfo {
    pub bits: u64,
    pub hashes: u32,
    pub items: u64,
}

/// A RedisBloom filter on a server, or S of them over a cluster.
pub struct RedisBloom {
    id: &'static str,
    link: Link,
    shards: Shards,
    batch_keys: usize,
    hasher: KeyHasher,
    owned: bool,
    inserted: u64,
    /// Answers kept for a resend (`dedup`'s adds).
    once: super::once::Once,
}

/// The capacity each of `count` shards is reserved for, for `keys` keys in all.
pub fn shard_capacity(keys: u64, count: usize) -> u64 {
    if count <= 1 {
        return keys.max(1);
    }
    let mean = keys as f64 / count as f64;
    (mean + 6.0 * mean.sqrt()).ceil().max(1.0) as u64
}

impl RedisBloom {
    /// Connects, checks the module, and reserves the filter (or joins an existing one when `shared`).
    pub fn open(id: &'static str, config: &BuildConfig, scaling: bool) -> Result<Self> {
        let remote = remote_of(id, config)?;
        let mut conn = link::connect(remote)?;
        if !conn.has_module(MODULE)? {
            return Err(conn.error(
                "the server has no RedisBloom module (MODULE LIST shows no 'bf'); start it with \
                 --loadmodule redisbloom.so (scripts/fetch-redisbloom.sh fetches it)",
            ));
        }
        let shards = link::plan_shards(
            &mut conn,
            remote,
            (config.expected_keys as f64 * module_bits_per_key(config.fpr)) as u64,
        )?;
        let count = shards.count();
        if !remote.join_existing {
            link::delete_all(&mut conn, &link::shard_keys(&shards))?;
        } else if !remote.create {
            link::require_existing(&mut conn, &remote.key, &shards)?;
        }
        let fpr = format!("{}", config.fpr);
        // The scaling filter starts where our `scalable` does (max(1000, n/64)) and grows 2× per link, so
        // both face the same unknown growth; the fixed one is reserved for all n.
        let capacity = if scaling {
            (config.growth.first_slice_keys(config.expected_keys) / count as u64).max(1)
        } else {
            shard_capacity(config.expected_keys, count)
        }
        .to_string();
        // The client's hash picks a key's shard: a sharded filter records it and the seed (lines of before
        // recorded neither).
        let hash_tag = link::hash_tag(config.hash, &format!(" seed={}", config.seed));
        for (s, prefix) in shards.prefixes().iter().enumerate() {
            let shard = if count > 1 {
                format!(" shard={s}/{count}{hash_tag}")
            } else {
                String::new()
            };
            link::claim_params(
                &mut conn,
                prefix,
                &format!("{id} v1 error_rate={fpr} capacity={capacity}{shard}"),
            )?;
            let mut reserve = redis::cmd("BF.RESERVE");
            reserve.arg(prefix).arg(&fpr).arg(&capacity);
            if scaling {
                reserve.arg("EXPANSION").arg(2);
            } else {
                reserve.arg("NONSCALING");
            }
            match conn.query::<Value>(&reserve) {
                Ok(_) => {}
                Err(Error::Remote { message, .. })
                    if remote.join_existing && message.contains("exists") => {}
                Err(e) => return Err(conn.error(format!("BF.RESERVE failed: {e}"))),
            }
        }
        Ok(RedisBloom {
            id,
            link: Link::new(conn),
            shards,
            batch_keys: remote.batch_keys.max(1),
            hasher: config.hasher(),
            owned: !remote.join_existing,
            inserted: 0,
            once: Default::default(),
        })
    }

    /// The links the module built (`BF.DEBUG`), per shard.
    pub fn links(&self) -> Vec<Vec<LinkInfo>> {
        self.link.run(|c| {
            let mut all = Vec::with_capacity(self.shards.count());
            for p in self.shards.prefixes() {
                let reply: Vec<Value> = c.query(redis::cmd("BF.DEBUG").arg(p))?;
                all.push(parse_debug(&reply));
            }
            Ok(all)
        })
    }

    /// Sends `command` over the batch (see [`super::shards::per_key`]); `each(i, answer)` sees key i's
    /// answer, in batch order.
    fn answers(
        &self,
        c: &mut Conn,
        command: &str,
        batch: &KeyBatch,
        in_flight: InFlight,
        each: impl FnMut(usize, bool) -> bool,
    ) -> Result<u64> {
        // `dedup` (one round trip in flight) needs each key's answer even after a resend.
        let head = |s: usize| match (command, in_flight) {
            ("BF.MADD", InFlight::One) => self
                .once
                .head(&super::once::BLOOM_ADD, self.shards.prefix(s)),
            _ => {
                let mut cmd = redis::cmd(command);
                cmd.arg(self.shards.prefix(s));
                cmd
            }
        };
        let member = |cmd: &mut redis::Cmd, i: usize| {
            cmd.arg(batch.key(i));
        };
        super::shards::per_key(
            c,
            &self.shards,
            batch,
            self.batch_keys,
            in_flight,
            head,
            member,
            each,
        )
    }

    /// Keys held by each shard (`BF.DEBUG`'s item count, summed over its links).
    pub fn shard_loads(&self) -> Vec<u64> {
        self.links()
            .iter()
            .map(|links| links.iter().map(|l| l.items).sum())
            .collect()
    }
}

/// A batch of one key, hashed (its hash picks its shard).
pub(crate) fn one_key(key: &[u8], hasher: KeyHasher) -> KeyBatch {
    let mut batch = KeyBatch::with_capacity(1, key.len());
    batch.push(key);
    batch.hash_all(hasher);
    batch
}

/// Parses `BF.DEBUG`'s lines `bytes:… bits:… hashes:… … size:…`.
fn parse_debug(lines: &[Value]) -> Vec<LinkInfo> {
    lines
        .iter()
        .skip(1)
        .filter_map(|l| {
            let text = match l {
                Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
                Value::SimpleString(s) => s.clone(),
                _ => return None,
            };
            let field = |name: &str| -> Option<u64> {
                text.split_whitespace()
                    .find_map(|f| f.strip_prefix(name)?.strip_prefix(':')?.parse().ok())
            };
            Some(LinkInfo {
                bits: field("bits")?,
                hashes: field("hashes")? as u32,
                items: field("size")?,
            })
        })
        .collect()
}

/// The chance a non-member is reported present by a chain: any link says yes.
fn chain_fpr(links: &[LinkInfo]) -> f64 {
    let miss: f64 = links
        .iter()
        .map(|l| 1.0 - theory::bloom_fpr(l.bits.max(1), l.hashes, l.items))
        .product();
    1.0 - miss
}

impl Membership for RedisBloom {
    fn id(&self) -> &'static str {
        self.id
    }
    fn hasher(&self) -> KeyHasher {
        self.hasher
    }
    fn insert_hashed(&mut self, key: &[u8], _hash: KeyHash) -> bool {
        self.insert_batch(&one_key(key, self.hasher)) == 1
    }
    fn contains_hashed(&self, key: &[u8], _hash: KeyHash) -> bool {
        self.contains_batch(&one_key(key, self.hasher)) == 1
    }
    fn batch_path(&self) -> bool {
        true
    }
    fn insert_batch(&mut self, batch: &KeyBatch) -> u64 {
        let new = self
            .link
            .run(|c| self.answers(c, "BF.MADD", batch, InFlight::Two, |_, _| true));
        self.inserted += new;
        new
    }
    fn insert_batch_if_new(
        &mut self,
        batch: &KeyBatch,
        each: &mut dyn FnMut(usize, bool) -> bool,
    ) -> u64 {
        let new = self
            .link
            .run(|c| self.answers(c, "BF.MADD", batch, InFlight::One, &mut *each));
        self.inserted += new;
        new
    }
    fn contains_batch(&self, batch: &KeyBatch) -> u64 {
        self.link
            .run(|c| self.answers(c, "BF.MEXISTS", batch, InFlight::Two, |_, _| true))
    }
    fn bytes_held(&self) -> u64 {
        link::shard_bytes(&self.link, &self.shards)
    }
    fn n_inserted(&self) -> u64 {
        self.inserted
    }
    fn expected_fpr(&self, _n_distinct: u64) -> f64 {
        // A non-member goes to each shard with probability 1/S; each shard at its own load.
        let shards = self.links();
        shards.iter().map(|l| chain_fpr(l)).sum::<f64>() / shards.len().max(1) as f64
    }
    fn geometry(&self) -> Geometry {
        let shards = self.links();
        let links: Vec<&LinkInfo> = shards.iter().flatten().collect();
        Geometry {
            bits: Some(links.iter().map(|l| l.bits).sum()),
            hashes: links.last().map(|l| l.hashes),
            slices: (links.len() > 1).then_some(links.len() as u32),
        }
    }
    fn shard_loads(&self) -> Option<Vec<u64>> {
        (self.shards.count() > 1).then(|| RedisBloom::shard_loads(self))
    }
    fn keys_held_by_all(&self) -> Option<u64> {
        Some(RedisBloom::shard_loads(self).iter().sum())
    }
    fn failure(&self) -> Option<String> {
        self.link.failure()
    }
    fn resent_round_trips(&self) -> u64 {
        self.link.resent()
    }
}

impl Drop for RedisBloom {
    fn drop(&mut self) {
        if self.owned {
            link::delete_on_drop(&self.link, &self.shards, link::shard_keys(&self.shards));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_lines_parse() {
        let reply = vec![
            Value::BulkString(b"size:3".to_vec()),
            Value::BulkString(
                b"bytes:1199 bits:9592 hashes:7 hashwidth:64 capacity:1000 size:3 ratio:0.01"
                    .to_vec(),
            ),
        ];
        assert_eq!(
            parse_debug(&reply),
            vec![LinkInfo {
                bits: 9592,
                hashes: 7,
                items: 3
            }]
        );
    }

    #[test]
    fn shard_capacity_covers_six_sigma() {
        assert_eq!(shard_capacity(1000, 1), 1000);
        // 10⁶ over 9: mean 111 111, σ ≈ 333, +6σ = 2000.
        assert_eq!(shard_capacity(1_000_000, 9), 113_112);
    }
}

//! `redis-set` and `redis-set-fp`: the exact shared baseline, a Redis set of the URLs themselves (or of
//! their 16-byte xxh3-128 fingerprints, whatever the run's hash: rate ≈ n/2¹²⁸, [`crate::theory::fingerprint_fpr_bits`]). Inserts are
//! `SADD` of `batch_keys` members per round trip (atomic per command: a member new to the set is counted by
//! exactly one worker), lookups `SMISMEMBER` (Redis ≥ 6.2). A worker that needs to know which of its keys
//! were new (`dedup`) sends a small Lua script per shard that answers `SADD`'s 0/1 per member: atomic per
//! key, so under concurrent workers exactly one of them is told a URL is new, and kept for a resend
//! ([`super::once`]). The server's bytes come from
//! `MEMORY USAGE`. On a Redis Cluster the set is one set per shard ([`super::shards::Shards`]); the
//! shard is picked by our hash of the URL, so every worker must use the same `--seed` and `--hash`,
//! which the parameters record.

use super::link::{self, Link};
use super::redis_bloom::{one_key, remote_of};
use super::shards::{InFlight, Shards};
use crate::hash::{HashFn, KeyHash, KeyHasher};
use crate::keys::KeyBatch;
use crate::kind::{
    BuildConfig, Capabilities, Descriptor, Family, Kind, MemoryModel, Placement, RateModel, Server,
    Wire,
};
use crate::membership::{Geometry, Membership};
use crate::redis::Conn;
use crate::{theory, Result};

/// Registry entry of the set of URLs.
pub struct RedisSetKind;
/// Registry entry of the set of 16-byte fingerprints.
pub struct RedisSetFingerprintKind;

/// Redis's per-member cost in a hashtable-encoded set, roughly: a dict entry (24 B), its bucket slot
/// (8 B at load ≤ 1) and an sds string (header + bytes + NUL, jemalloc-rounded). A projection only: the
/// sweep reports what `MEMORY USAGE` measured.
fn model_bytes_per_member(member_bytes: f64) -> f64 {
    24.0 + 8.0 + (member_bytes + 4.0).max(16.0).next_power_of_two_f64()
}

trait NextPow2 {
    fn next_power_of_two_f64(self) -> f64;
}
impl NextPow2 for f64 {
    fn next_power_of_two_f64(self) -> f64 {
        (self.max(1.0) as u64).next_power_of_two() as f64
    }
}

/// The registry id of the exact set.
pub const ID: &str = "redis-set";
/// The registry id of the set of fingerprints.
pub const FINGERPRINT_ID: &str = "redis-set-fp";

macro_rules! kind {
    ($kind:ident, $descriptor:ident, $id:expr, $summary:literal, $fingerprint:expr) => {
        /// What the registry knows about it.
        pub static $descriptor: Descriptor = Descriptor::new(
            $id,
            $summary,
            Family::ExactSet,
            Placement::OurServer(Server {
                module: None,
                hashes_keys: !$fingerprint,
                wire: if $fingerprint {
                    Wire::FixedArgument { bytes: 16 }
                } else {
                    Wire::KeyArgument
                },
                answers_kept_for_resend: true,
                has_write_modes: false,
            }),
            Capabilities {
                exact: !$fingerprint,
                removable: false,
                ..Capabilities::EXACT_SET
            },
            RateModel::Exact,
        );

        impl Kind for $kind {
            fn descriptor(&self) -> &Descriptor {
                &$descriptor
            }
            fn predicted_memory(&self, config: &BuildConfig) -> MemoryModel {
                let member = if $fingerprint {
                    16.0
                } else {
                    config.key_lengths.mean_bytes
                };
                MemoryModel {
                    heap_bytes: 0.0,
                    footprint_bytes: config.expected_keys as f64 * model_bytes_per_member(member),
                }
            }
            fn predicted_fpr(&self, config: &BuildConfig) -> f64 {
                if $fingerprint {
                    theory::fingerprint_fpr_bits(config.expected_keys, 128)
                } else {
                    0.0
                }
            }
            fn build(&self, config: &BuildConfig) -> Result<Box<dyn Membership>> {
                Ok(Box::new(RedisSet::open($id, config, $fingerprint)?))
            }
        }
    };
}
kind!(
    RedisSetKind,
    DESCRIPTOR,
    ID,
    "exact Redis set of the URLs (SADD/SMISMEMBER)",
    false
);
kind!(
    RedisSetFingerprintKind,
    FINGERPRINT_DESCRIPTOR,
    FINGERPRINT_ID,
    "Redis set of 16-byte xxh3-128 fingerprints (SADD/SMISMEMBER)",
    true
);

/// A Redis set (one per shard).
pub struct RedisSet {
    id: &'static str,
    link: Link,
    shards: Shards,
    fingerprint: bool,
    batch_keys: usize,
    hasher: KeyHasher,
    owned: bool,
    inserted: u64,
    /// Answers kept for a resend (`dedup`'s adds).
    once: super::once::Once,
}

/// The member stored for a key.
#[inline]
fn fingerprint(hash: KeyHash) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&hash.h1.to_le_bytes());
    out[8..].copy_from_slice(&hash.h2.to_le_bytes());
    out
}

impl RedisSet {
    /// Connects and empties the set (unless shared).
    pub fn open(id: &'static str, config: &BuildConfig, fingerprint: bool) -> Result<Self> {
        let remote = remote_of(id, config)?;
        let mut conn = link::connect(remote)?;
        let shards = link::plan_shards(&mut conn, remote, 0)?;
        if !remote.join_existing {
            link::delete_all(&mut conn, &link::shard_keys(&shards))?;
        } else if !remote.create {
            link::require_existing(&mut conn, &remote.key, &shards)?;
        }
        let count = shards.count();
        let hasher = if fingerprint {
            KeyHasher::new(HashFn::FINGERPRINT, config.seed)
        } else {
            config.hasher()
        };
        let hash_tag = link::hash_tag(hasher.func(), "");
        for (s, prefix) in shards.prefixes().iter().enumerate() {
            // Fingerprints and shards depend on the hash and seed: a worker with another would miss keys.
            let params = match (fingerprint, count) {
                (true, _) => format!(
                    "{id} v1 member={} seed={}",
                    hasher.func().id(),
                    hasher.seed()
                ),
                (false, 1) => format!("{id} v1 member=url"),
                (false, _) => format!("{id} v1 member=url seed={}{hash_tag}", hasher.seed()),
            };
            let params = if count > 1 {
                format!("{params} shard={s}/{count}")
            } else {
                params
            };
            link::claim_params(&mut conn, prefix, &params)?;
        }
        Ok(RedisSet {
            id,
            link: Link::new(conn),
            shards,
            fingerprint,
            batch_keys: remote.batch_keys.max(1),
            hasher,
            owned: !remote.join_existing,
            inserted: 0,
            once: Default::default(),
        })
    }

    fn member(&self, cmd: &mut redis::Cmd, batch: &KeyBatch, i: usize) {
        if self.fingerprint {
            cmd.arg(&fingerprint(batch.hashes()[i])[..]);
        } else {
            cmd.arg(batch.key(i));
        }
    }

    /// `SADD` per shard and round trip (two round trips in flight); returns how many members were new.
    fn add(&self, c: &mut Conn, batch: &KeyBatch) -> Result<u64> {
        let per = self.batch_keys;
        let mut new = 0u64;
        let encode = |i: usize| -> Vec<redis::Cmd> {
            let end = ((i + 1) * per).min(batch.len());
            let groups = self.shards.group(batch, i * per..end);
            groups
                .iter()
                .enumerate()
                .filter(|(_, k)| !k.is_empty())
                .map(|(s, keys)| {
                    let mut cmd = redis::cmd("SADD");
                    cmd.arg(self.shards.prefix(s));
                    for &k in keys {
                        self.member(&mut cmd, batch, k as usize);
                    }
                    cmd
                })
                .collect()
        };
        let endpoint = c.endpoint().addr();
        let read = |_: usize, replies: Vec<redis::Value>| -> Result<()> {
            for reply in replies {
                match reply {
                    redis::Value::Int(n) => new += n.max(0) as u64,
                    other => {
                        return Err(crate::Error::Remote {
                            addr: endpoint.clone(),
                            message: format!("SADD answered {other:?}"),
                        })
                    }
                }
            }
            Ok(())
        };
        c.round_trips(batch.len().div_ceil(per), 2, encode, read)?;
        Ok(new)
    }

    /// Per-key answers of `SMISMEMBER` (`write` false) or of the add-each script.
    fn answers(
        &self,
        c: &mut Conn,
        batch: &KeyBatch,
        write: bool,
        each: impl FnMut(usize, bool) -> bool,
    ) -> Result<u64> {
        let head = |s: usize| {
            if write {
                self.once.head(&super::once::SET_ADD, self.shards.prefix(s))
            } else {
                let mut cmd = redis::cmd("SMISMEMBER");
                cmd.arg(self.shards.prefix(s));
                cmd
            }
        };
        let member = |cmd: &mut redis::Cmd, i: usize| self.member(cmd, batch, i);
        let in_flight = if write { InFlight::One } else { InFlight::Two };
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
}

impl RedisSet {
    /// Members of each shard's set (`SCARD`, every worker's).
    fn set_sizes(&self) -> Vec<u64> {
        self.link.run(|c| {
            let mut loads = Vec::new();
            for p in self.shards.prefixes() {
                loads.push(c.query::<u64>(redis::cmd("SCARD").arg(p))?);
            }
            Ok(loads)
        })
    }
}

impl Membership for RedisSet {
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
        let new = self.link.run(|c| self.add(c, batch));
        self.inserted += new;
        new
    }
    fn insert_batch_if_new(
        &mut self,
        batch: &KeyBatch,
        each: &mut dyn FnMut(usize, bool) -> bool,
    ) -> u64 {
        let new = self.link.run(|c| self.answers(c, batch, true, &mut *each));
        self.inserted += new;
        new
    }
    fn contains_batch(&self, batch: &KeyBatch) -> u64 {
        self.link
            .run(|c| self.answers(c, batch, false, |_, _| true))
    }
    fn bytes_held(&self) -> u64 {
        link::shard_bytes(&self.link, &self.shards)
    }
    fn n_inserted(&self) -> u64 {
        self.inserted
    }
    fn expected_fpr(&self, n_distinct: u64) -> f64 {
        if self.fingerprint {
            theory::fingerprint_fpr_bits(n_distinct, 128)
        } else {
            0.0
        }
    }
    fn geometry(&self) -> Geometry {
        Geometry::default()
    }
    fn shard_loads(&self) -> Option<Vec<u64>> {
        (self.shards.count() > 1).then(|| self.set_sizes())
    }
    fn keys_held_by_all(&self) -> Option<u64> {
        Some(self.set_sizes().iter().sum())
    }
    fn failure(&self) -> Option<String> {
        self.link.failure()
    }
    fn resent_round_trips(&self) -> u64 {
        self.link.resent()
    }
}

impl Drop for RedisSet {
    fn drop(&mut self) {
        if self.owned {
            // DEL, not UNLINK: the sweep reads used_memory next, and a lazy free would still hold the set.
            link::delete_on_drop(&self.link, &self.shards, link::shard_keys(&self.shards));
        }
    }
}

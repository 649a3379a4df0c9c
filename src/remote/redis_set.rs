//! `redis-set` and `redis-set-fp`: the exact shared baseline, a Redis set of the URLs themselves (or of
//! their 16-byte xxh3-128 fingerprints: rate ≈ n/2¹²⁸, [`crate::theory::fingerprint_fpr_bits`]). Inserts are
//! `SADD` of `batch_keys` members per round trip (atomic per command: a member new to the set is counted by
//! exactly one worker, though a worker learns only how many of its batch were new), lookups `SMISMEMBER` (Redis ≥ 6.2). The server's bytes come from `MEMORY USAGE … SAMPLES 0`,
//! which walks every element.

use super::link::Link;
use super::redis_bloom::remote_of;
use crate::hash::KeyHash;
use crate::keys::KeyBatch;
use crate::redis::Client;
use crate::structures::{BuildConfig, Geometry, Kind, Membership, MemoryModel};
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
    ($kind:ident, $id:expr, $summary:literal, $fingerprint:expr) => {
        impl Kind for $kind {
            fn id(&self) -> &'static str {
                $id
            }
            fn summary(&self) -> &'static str {
                $summary
            }
            fn remote(&self) -> bool {
                true
            }
            fn exact(&self) -> bool {
                !$fingerprint
            }
            fn growable(&self) -> bool {
                true
            }
            fn hashed_by_server(&self) -> bool {
                !$fingerprint
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
    ID,
    "exact Redis set of the URLs (SADD/SMISMEMBER)",
    false
);
kind!(
    RedisSetFingerprintKind,
    FINGERPRINT_ID,
    "Redis set of 16-byte xxh3-128 fingerprints (SADD/SMISMEMBER)",
    true
);

/// A Redis set.
pub struct RedisSet {
    id: &'static str,
    link: Link,
    key: Vec<u8>,
    fingerprint: bool,
    batch_keys: usize,
    seed: u64,
    owned: bool,
    inserted: u64,
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
        let mut client = Client::connect(&remote.url)?;
        let key = remote.key.as_bytes().to_vec();
        let params_key = super::link::params_key(&remote.key);
        if !remote.join_existing {
            client.call(&[b"DEL", &key, params_key.as_bytes()])?;
        } else if !remote.create {
            super::link::require_existing(&mut client, &remote.key)?;
        }
        // Fingerprints depend on the seed: a worker with another seed would miss every key.
        let params = if fingerprint {
            format!("{id} v1 member=xxh3-128 seed={}", config.seed)
        } else {
            format!("{id} v1 member=url")
        };
        super::link::claim_params(&mut client, &remote.key, &params)?;
        Ok(RedisSet {
            id,
            link: Link::new(client),
            key,
            fingerprint,
            batch_keys: remote.batch_keys.max(1),
            seed: config.seed,
            owned: !remote.join_existing,
            inserted: 0,
        })
    }

    /// One command per chunk: `SADD` (returns the new count) or `SMISMEMBER` (an array of 0/1).
    fn over_batch(&self, c: &mut Client, batch: &KeyBatch, write: bool) -> Result<u64> {
        let hashes = batch.hashes();
        let per = self.batch_keys;
        let mut total = 0u64;
        c.round_trips(
            batch.len().div_ceil(per),
            |c, chunk| {
                let (start, end) = (chunk * per, ((chunk + 1) * per).min(batch.len()));
                c.begin(2 + end - start);
                c.arg(if write { b"SADD" } else { b"SMISMEMBER" });
                c.arg(&self.key);
                for (i, hash) in hashes.iter().enumerate().take(end).skip(start) {
                    if self.fingerprint {
                        c.arg(&fingerprint(*hash));
                    } else {
                        c.arg(batch.key(i));
                    }
                }
            },
            |c, chunk| {
                let keys = ((chunk + 1) * per).min(batch.len()) - chunk * per;
                if write {
                    total += c.read_int("SADD")?.max(0) as u64;
                } else {
                    let got = c.read_int_array("SMISMEMBER", |v| total += (v == 1) as u64)?;
                    if got != keys {
                        return Err(c.error(format!("SMISMEMBER answered {got} of {keys} keys")));
                    }
                }
                Ok(())
            },
        )?;
        Ok(total)
    }

    fn one(&self, key: &[u8], hash: KeyHash, write: bool) -> bool {
        let member = fingerprint(hash);
        let member: &[u8] = if self.fingerprint { &member } else { key };
        let command: &[u8] = if write { b"SADD" } else { b"SISMEMBER" };
        self.link.run(|c| {
            c.call(&[command, &self.key, member])
                .map(|r| r.int() == Some(1))
        })
    }
}

impl Membership for RedisSet {
    fn id(&self) -> &'static str {
        self.id
    }
    fn seed(&self) -> u64 {
        self.seed
    }
    fn insert_hashed(&mut self, key: &[u8], hash: KeyHash) -> bool {
        let new = self.one(key, hash, true);
        self.inserted += new as u64;
        new
    }
    fn contains_hashed(&self, key: &[u8], hash: KeyHash) -> bool {
        self.one(key, hash, false)
    }
    fn batch_path(&self) -> bool {
        true
    }
    fn insert_batch(&mut self, batch: &KeyBatch) -> u64 {
        let new = self.link.run(|c| self.over_batch(c, batch, true));
        self.inserted += new;
        new
    }
    fn contains_batch(&self, batch: &KeyBatch) -> u64 {
        self.link.run(|c| self.over_batch(c, batch, false))
    }
    fn bytes_held(&self) -> u64 {
        self.link.run(|c| c.memory_usage(&self.key))
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
    fn failure(&self) -> Option<String> {
        self.link.failure()
    }
}

impl Drop for RedisSet {
    fn drop(&mut self) {
        if self.owned {
            // DEL, not UNLINK: the sweep reads used_memory next, and a lazy free would still hold the set.
            let params = super::link::params_key(&String::from_utf8_lossy(&self.key));
            self.link
                .run(|c| c.call(&[b"DEL", &self.key, params.as_bytes()]).map(|_| ()));
        }
    }
}

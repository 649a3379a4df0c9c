//! `redis-bitmap`: a Bloom filter over plain Redis strings on a stock server (what Redisson does). The
//! client hashes exactly as the in-process [`crate::structures::bloom`] does — same m, k, hash, seed and probe
//! positions `reduce(h1 + i·h2, m)` — and only sets and reads bits on the server.
//!
//! Layout: bit p lives in string `{key}:bits:{p / S}` at offset `p mod S`, S = `bits_per_string` (2³² at
//! most: Redis strings stop at 512 MiB). Every string is allocated at creation (`SETBIT last 0`), so the
//! server's memory is the filter's from the start. The parameters (layout version, m, k, hash, seed, S)
//! are stored in `{key}:params` with `SET NX` and compared on every connect: two workers can never share
//! one filter with different parameters. Allocation never clears a bit (`BITFIELD … INCRBY u1 last 0`),
//! so a worker that joins while the creator is still allocating loses nothing.
//!
//! Three ways to move the bits ([`BitmapMode`]), all measured by the shared-filter sweep:
//! - `bitfield`: one `BITFIELD key SET u1 p 1 …` per string per round trip (`BITFIELD_RO … GET` to read).
//!   A key whose k bits lie in one string (always, when m ≤ S) gets an atomic "was it new?".
//! - `setbit`: a pipeline of one `SETBIT`/`GETBIT` per bit. Not atomic per key: two workers inserting the
//!   same key at once can both be told it is new.
//! - `script`: a server-side Lua script (`EVAL`) that sets a batch's bits and counts the new keys. Atomic
//!   per batch, whatever the layout (the worker learns how many of its batch were new).
//!
//! On a Redis Cluster the filter is S sub-filters ([`Shards`]) of ⌈m/S⌉ bits each, with the same k; a key's
//! shard comes from [`super::shards::shard_of`], its probes inside the shard from h1 + i·h2 as above. A
//! shard's strings share its hash tag, so `BITFIELD` and the script stay within one slot. Each worker
//! counts the keys each shard told it were new and adds them to the shard's `PREFIX:keys` after every
//! batch (as RedisBloom counts its items); the logical rate is the mean of the shards' rates at those
//! loads. The fill-based rate ([`Membership::fill_fpr`]) stays a separate figure.

use super::link::{self, Link};
use super::redis_bloom::remote_of;
use super::shards::Shards;
use crate::hash::{reduce, KeyHash, KeyHasher};
use crate::keys::KeyBatch;
use crate::kind::{
    BuildConfig, Capabilities, Descriptor, Family, Kind, MemoryModel, Placement, RateModel, Role,
    Server, Wire,
};
use crate::membership::{Geometry, Membership};
use crate::redis::BitmapMode;
use crate::redis::Conn;
use crate::structures::bloom;
use crate::{theory, Result};
use redis::Value;

/// The registry id.
pub const ID: &str = "redis-bitmap";

/// Sets the bits given as (string index, offset) pairs after `k`; returns how many keys had a clear bit.
const INSERT_SCRIPT: &str = "local k = tonumber(ARGV[1]) local new = 0 local i = 2 \
while i <= #ARGV do local fresh = 0 for j = 1, k do \
if redis.call('SETBIT', KEYS[tonumber(ARGV[i])], ARGV[i + 1], 1) == 0 then fresh = 1 end i = i + 2 end \
new = new + fresh end return new";
/// Counts the keys whose k bits are all set.
const QUERY_SCRIPT: &str = "local k = tonumber(ARGV[1]) local found = 0 local i = 2 \
while i <= #ARGV do local all = 1 for j = 1, k do \
if redis.call('GETBIT', KEYS[tonumber(ARGV[i])], ARGV[i + 1]) == 0 then all = 0 end i = i + 2 end \
found = found + all end return found";

/// Registry entry.
pub struct RedisBitmapKind;

/// What the registry knows about it.
pub static DESCRIPTOR: Descriptor = Descriptor {
    roles: &[Role::SharedBitmap],
    ..Descriptor::new(
        ID,
        "Bloom filter over plain Redis strings (client-side hashing as in `bloom`; BITFIELD, SETBIT or a script)",
        Family::Bloom,
        Placement::OurServer(Server {
            module: None,
            hashes_keys: false,
            wire: Wire::FieldOperations,
            // A bit set before the server was lost is set again: the key is then called seen.
            answers_kept_for_resend: false,
            has_write_modes: true,
        }),
        Capabilities::FILTER,
        RateModel::Fill,
    )
};

impl Kind for RedisBitmapKind {
    fn descriptor(&self) -> &Descriptor {
        &DESCRIPTOR
    }
    fn predicted_memory(&self, config: &BuildConfig) -> MemoryModel {
        MemoryModel {
            heap_bytes: 0.0,
            footprint_bytes: bloom::sizing(config).bytes() as f64,
        }
    }
    fn predicted_fpr(&self, config: &BuildConfig) -> f64 {
        bloom::sizing(config).fpr(config.expected_keys)
    }
    fn build(&self, config: &BuildConfig) -> Result<Box<dyn Membership>> {
        Ok(Box::new(RedisBitmap::open(config)?))
    }
}

/// A Bloom filter in Redis strings (per shard, on a cluster).
pub struct RedisBitmap {
    link: Link,
    shards: Shards,
    /// Each shard's strings.
    strings: Vec<Vec<Vec<u8>>>,
    /// Bits of the logical filter (the in-process `bloom`'s m).
    bits: u64,
    /// Bits of each shard.
    shard_bits: u64,
    hashes: u32,
    bits_per_string: u64,
    mode: BitmapMode,
    batch_keys: usize,
    hasher: KeyHasher,
    owned: bool,
    inserted: u64,
    /// Keys each shard told this worker were new, since it opened the filter (a cluster only).
    told_new: std::sync::Mutex<Vec<u64>>,
    /// This worker's field in each shard's `PREFIX:keys` hash.
    worker: String,
}

/// Every key of the filter: each shard's strings, parameters and load counts.
fn own_keys(shards: &Shards, strings: &[Vec<Vec<u8>>]) -> Vec<Vec<u8>> {
    let mut keys: Vec<Vec<u8>> = strings.iter().flatten().cloned().collect();
    for p in shards.prefixes() {
        keys.push(link::params_key(p).into_bytes());
        keys.push(load_key(p).into_bytes());
    }
    keys
}

/// Where a shard's load is counted: `PREFIX:keys`, a hash of each worker's total of keys the shard told
/// it were new. A total, not an increment, so sending it again after a lost reply counts nothing twice.
fn load_key(prefix: &str) -> String {
    format!("{prefix}:keys")
}

impl RedisBitmap {
    /// Connects and creates the filter, or joins an existing one after checking its parameters.
    pub fn open(config: &BuildConfig) -> Result<Self> {
        let remote = remote_of(ID, config)?;
        let sizing = bloom::sizing(config);
        let bits_per_string = remote.bitmap.bits_per_string.clamp(64, 1 << 32);
        let mut conn = link::connect(remote)?;
        let shards = link::plan_shards(&mut conn, remote, sizing.bits)?;
        let count = shards.count();
        let shard_bits = sizing.bits.div_ceil(count as u64);
        let per_shard = shard_bits.div_ceil(bits_per_string);
        let strings: Vec<Vec<Vec<u8>>> = shards
            .prefixes()
            .iter()
            .map(|p| {
                (0..per_shard)
                    .map(|i| format!("{p}:bits:{i}").into_bytes())
                    .collect()
            })
            .collect();
        if !remote.join_existing {
            link::delete_all(&mut conn, &own_keys(&shards, &strings))?;
        } else if !remote.create {
            link::require_existing(&mut conn, &remote.key, &shards)?;
        }
        for (s, prefix) in shards.prefixes().iter().enumerate() {
            let shard = if count > 1 {
                format!(" shard={s}/{count} shard_bits={shard_bits}")
            } else {
                String::new()
            };
            let params = format!(
                "dedupbench-bloom-v1 m={} k={} hash={} seed={} bits_per_string={bits_per_string}{shard}",
                sizing.bits,
                sizing.hashes,
                config.hash.id(),
                config.seed
            );
            if link::claim_params(&mut conn, prefix, &params)? {
                // Allocate every string now, so the server's memory is the filter's from the first
                // insert. `INCRBY u1 … 0` grows a string without changing a bit: a worker that joined in
                // between and already set the last bit keeps it.
                let cmds: Vec<redis::Cmd> = strings[s]
                    .iter()
                    .enumerate()
                    .map(|(i, name)| {
                        let len = (shard_bits - i as u64 * bits_per_string).min(bits_per_string);
                        let mut cmd = redis::cmd("BITFIELD");
                        cmd.arg(name.as_slice())
                            .arg("INCRBY")
                            .arg("u1")
                            .arg(len - 1)
                            .arg(0);
                        cmd
                    })
                    .collect();
                conn.pipeline(cmds)?;
            }
        }
        Ok(RedisBitmap {
            link: Link::new(conn),
            shards,
            strings,
            bits: sizing.bits,
            shard_bits,
            hashes: sizing.hashes,
            bits_per_string,
            mode: remote.bitmap.mode,
            batch_keys: remote.batch_keys.max(1),
            hasher: config.hasher(),
            owned: !remote.join_existing,
            inserted: 0,
            told_new: std::sync::Mutex::new(vec![0; count]),
            worker: super::once::worker_id(),
        })
    }

    /// The mode bits move by.
    pub fn mode(&self) -> BitmapMode {
        self.mode
    }

    /// (string, offset) of probe `i` of a key inside its shard: the in-process `bloom`'s position (one
    /// shard), split over strings.
    #[inline]
    fn place(&self, hash: KeyHash, i: u32) -> (usize, u64) {
        let pos = reduce(hash.probe(i), self.shard_bits);
        (
            (pos / self.bits_per_string) as usize,
            pos % self.bits_per_string,
        )
    }

    /// Sets (`write`) or reads the bits of `hashes`, one round trip; returns the keys that had a clear bit
    /// (write) or had every bit set (read).
    fn round_trip(&self, c: &mut Conn, hashes: &[KeyHash], write: bool) -> Result<u64> {
        self.round_trip_each(c, hashes, write, None)
    }

    /// [`Self::round_trip`], also pushing each key's answer to `answers` (not in `script` mode, whose
    /// script answers a count).
    fn round_trip_each(
        &self,
        c: &mut Conn,
        hashes: &[KeyHash],
        write: bool,
        mut answers: Option<&mut Vec<bool>>,
    ) -> Result<u64> {
        let k = self.hashes as usize;
        let shard: Vec<usize> = hashes.iter().map(|h| self.shards.of(*h)).collect();
        match self.mode {
            BitmapMode::Setbit => {
                let mut cmds = Vec::with_capacity(hashes.len() * k);
                for (j, h) in hashes.iter().enumerate() {
                    for i in 0..self.hashes {
                        let (s, offset) = self.place(*h, i);
                        let mut cmd = redis::cmd(if write { "SETBIT" } else { "GETBIT" });
                        cmd.arg(self.strings[shard[j]][s].as_slice()).arg(offset);
                        if write {
                            cmd.arg(1);
                        }
                        cmds.push(cmd);
                    }
                }
                let replies = c.pipeline(cmds)?;
                let mut count = 0;
                for (j, key) in replies.chunks(k).enumerate() {
                    let clear = key.iter().any(|v| matches!(v, Value::Int(0)));
                    count += (clear == write) as u64;
                    if write && clear {
                        self.count_new(shard[j], 1);
                    }
                    if let Some(a) = answers.as_deref_mut() {
                        a.push(clear == write);
                    }
                }
                Ok(count)
            }
            BitmapMode::Bitfield => {
                // One command per (shard, string) this round trip touches; answers in probe order.
                let per_shard = self.strings[0].len();
                let mut per_string: Vec<Vec<(usize, u64)>> =
                    vec![Vec::new(); self.shards.count() * per_shard];
                for (j, h) in hashes.iter().enumerate() {
                    for i in 0..self.hashes {
                        let (s, offset) = self.place(*h, i);
                        per_string[shard[j] * per_shard + s].push((j, offset));
                    }
                }
                let op = if write { "BITFIELD" } else { "BITFIELD_RO" };
                let touched = || per_string.iter().enumerate().filter(|(_, o)| !o.is_empty());
                let cmds: Vec<redis::Cmd> = touched()
                    .map(|(at, ops)| {
                        let mut cmd = redis::cmd(op);
                        cmd.arg(self.strings[at / per_shard][at % per_shard].as_slice());
                        for (_, offset) in ops {
                            if write {
                                cmd.arg("SET").arg("u1").arg(*offset).arg(1);
                            } else {
                                cmd.arg("GET").arg("u1").arg(*offset);
                            }
                        }
                        cmd
                    })
                    .collect();
                let replies = c.pipeline(cmds)?;
                let mut clear = vec![false; hashes.len()];
                for ((_, ops), reply) in touched().zip(replies) {
                    let Value::Array(values) = reply else {
                        return Err(c.error(format!("{op} answered {reply:?}")));
                    };
                    if values.len() != ops.len() {
                        return Err(c.error(format!(
                            "{op} answered {} of {} fields",
                            values.len(),
                            ops.len()
                        )));
                    }
                    for ((j, _), v) in ops.iter().zip(values) {
                        clear[*j] |= matches!(v, Value::Int(0));
                    }
                }
                if write {
                    for (j, _) in clear.iter().enumerate().filter(|(_, c)| **c) {
                        self.count_new(shard[j], 1);
                    }
                }
                if let Some(a) = answers {
                    a.extend(clear.iter().map(|c| *c == write));
                }
                Ok(clear.iter().filter(|c| **c == write).count() as u64)
            }
            BitmapMode::Script => {
                let script = if write { INSERT_SCRIPT } else { QUERY_SCRIPT };
                let mut cmds = Vec::new();
                let mut sent_to = Vec::new();
                for (sh, strings) in self.strings.iter().enumerate() {
                    let mine: Vec<&KeyHash> = hashes
                        .iter()
                        .zip(&shard)
                        .filter(|(_, s)| **s == sh)
                        .map(|(h, _)| h)
                        .collect();
                    if mine.is_empty() {
                        continue;
                    }
                    let mut cmd = redis::cmd("EVAL");
                    cmd.arg(script).arg(strings.len());
                    for s in strings {
                        cmd.arg(s.as_slice());
                    }
                    cmd.arg(k);
                    for h in mine {
                        for i in 0..self.hashes {
                            let (s, offset) = self.place(*h, i);
                            cmd.arg(s + 1).arg(offset);
                        }
                    }
                    cmds.push(cmd);
                    sent_to.push(sh);
                }
                let mut total = 0;
                for (reply, sh) in c.pipeline(cmds)?.into_iter().zip(sent_to) {
                    match reply {
                        Value::Int(n) => {
                            total += n.max(0) as u64;
                            if write {
                                self.count_new(sh, n.max(0) as u64);
                            }
                        }
                        other => return Err(c.error(format!("EVAL answered {other:?}"))),
                    }
                }
                Ok(total)
            }
        }
    }

    fn over_batch(&self, c: &mut Conn, hashes: &[KeyHash], write: bool) -> Result<u64> {
        let mut total = 0;
        for chunk in hashes.chunks(self.batch_keys) {
            total += self.round_trip(c, chunk, write)?;
        }
        Ok(total)
    }

    /// Bits set in each shard (`BITCOUNT` over its strings).
    pub fn shard_ones(&self) -> Vec<u64> {
        self.link.run(|c| {
            let mut ones = Vec::with_capacity(self.strings.len());
            for strings in &self.strings {
                let cmds: Vec<redis::Cmd> = strings
                    .iter()
                    .map(|s| {
                        let mut cmd = redis::cmd("BITCOUNT");
                        cmd.arg(s.as_slice());
                        cmd
                    })
                    .collect();
                let mut sum = 0u64;
                for v in c.pipeline(cmds)? {
                    if let Value::Int(n) = v {
                        sum += n.max(0) as u64;
                    }
                }
                ones.push(sum);
            }
            Ok(ones)
        })
    }

    /// Bits set, summed over the strings.
    pub fn ones(&self) -> u64 {
        self.shard_ones().iter().sum()
    }

    /// Counts `n` keys new to shard `s` (on a cluster; one server's load is the caller's n).
    fn count_new(&self, s: usize, n: u64) {
        if self.shards.count() > 1 {
            self.told_new.lock().unwrap_or_else(|p| p.into_inner())[s] += n;
        }
    }

    /// Stores this worker's totals in each shard's `PREFIX:keys` (`HSET`, one pipeline).
    fn flush_loads(&self) {
        if self.shards.count() == 1 {
            return;
        }
        let totals = self
            .told_new
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let cmds: Vec<redis::Cmd> = totals
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(s, n)| {
                let mut cmd = redis::cmd("HSET");
                cmd.arg(load_key(self.shards.prefix(s)))
                    .arg(&self.worker)
                    .arg(*n);
                cmd
            })
            .collect();
        if !cmds.is_empty() {
            self.link.run(|c| c.pipeline(cmds).map(|_| ()));
        }
    }

    /// Keys each shard told the workers were new, summed over the workers (`PREFIX:keys`).
    fn loads(&self) -> Vec<u64> {
        self.link.run(|c| {
            let mut loads = Vec::with_capacity(self.shards.count());
            for p in self.shards.prefixes() {
                let totals: Vec<u64> = c.query(redis::cmd("HVALS").arg(load_key(p)))?;
                loads.push(totals.iter().sum());
            }
            Ok(loads)
        })
    }
}

impl Membership for RedisBitmap {
    fn id(&self) -> &'static str {
        ID
    }
    fn hasher(&self) -> KeyHasher {
        self.hasher
    }
    fn insert_hashed(&mut self, _key: &[u8], hash: KeyHash) -> bool {
        let new = self.link.run(|c| self.round_trip(c, &[hash], true)) == 1;
        self.flush_loads();
        self.inserted += new as u64;
        new
    }
    fn contains_hashed(&self, _key: &[u8], hash: KeyHash) -> bool {
        self.link.run(|c| self.round_trip(c, &[hash], false)) == 1
    }
    fn insert(&mut self, key: &[u8]) -> bool {
        let hash = self.hasher.hash(key);
        self.insert_hashed(key, hash)
    }
    fn batch_path(&self) -> bool {
        true
    }
    fn insert_batch(&mut self, batch: &KeyBatch) -> u64 {
        let new = self.link.run(|c| self.over_batch(c, batch.hashes(), true));
        self.flush_loads();
        self.inserted += new;
        new
    }
    fn insert_batch_if_new(
        &mut self,
        batch: &KeyBatch,
        each: &mut dyn FnMut(usize, bool) -> bool,
    ) -> u64 {
        // The script answers a count per round trip: one key per round trip gives each key's answer.
        let per = if self.mode == BitmapMode::Script {
            1
        } else {
            self.batch_keys
        };
        let mut new = 0u64;
        let mut answers = Vec::with_capacity(per);
        'chunks: for (c_at, chunk) in batch.hashes().chunks(per).enumerate() {
            answers.clear();
            let got = self.link.run(|c| {
                if per == 1 {
                    let n = self.round_trip(c, chunk, true)?;
                    answers.push(n == 1);
                    Ok(n)
                } else {
                    self.round_trip_each(c, chunk, true, Some(&mut answers))
                }
            });
            new += got;
            if self.link.failure().is_some() {
                break;
            }
            for (j, &was_new) in answers.iter().enumerate() {
                if !each(c_at * per + j, was_new) {
                    break 'chunks;
                }
            }
        }
        self.flush_loads();
        self.inserted += new;
        new
    }
    fn contains_batch(&self, batch: &KeyBatch) -> u64 {
        self.link.run(|c| self.over_batch(c, batch.hashes(), false))
    }
    fn bytes_held(&self) -> u64 {
        self.link.run(|c| {
            let mut bytes = 0;
            for p in self.shards.prefixes() {
                bytes += c.memory_usage(link::params_key(p).as_bytes())?;
            }
            for s in self.strings.iter().flatten() {
                bytes += c.memory_usage(s)?;
            }
            Ok(bytes)
        })
    }
    fn n_inserted(&self) -> u64 {
        self.inserted
    }
    fn expected_fpr(&self, n_distinct: u64) -> f64 {
        if self.shards.count() == 1 {
            return theory::bloom_fpr(self.bits, self.hashes, n_distinct);
        }
        // A non-member goes to each shard with probability 1/S; each shard at its counted load.
        let loads = self.loads();
        loads
            .iter()
            .map(|&load| theory::bloom_fpr(self.shard_bits, self.hashes, load))
            .sum::<f64>()
            / loads.len().max(1) as f64
    }
    fn fill_fpr(&self) -> Option<f64> {
        let ones = self.shard_ones();
        let rate = ones
            .iter()
            .map(|&o| (o as f64 / self.shard_bits as f64).powi(self.hashes as i32))
            .sum::<f64>()
            / ones.len().max(1) as f64;
        Some(rate)
    }
    fn keys_held_by_all(&self) -> Option<u64> {
        // Each shard's load from its fill, n ≈ −(m/k)·ln(1 − X/m) (Swamidass and Baldi 2007): one
        // count per shard, every worker's keys, where the per-worker totals cover clusters only.
        let m = self.shard_bits as f64;
        let held = self
            .shard_ones()
            .iter()
            .map(|&ones| {
                -(m / self.hashes as f64) * (1.0 - (ones as f64 / m).min(1.0 - 1e-12)).ln()
            })
            .sum::<f64>();
        Some(held.round() as u64)
    }
    fn geometry(&self) -> Geometry {
        let strings = self.strings.iter().map(Vec::len).sum::<usize>();
        Geometry {
            bits: Some(self.shard_bits * self.shards.count() as u64),
            hashes: Some(self.hashes),
            slices: (strings > 1).then_some(strings as u32),
        }
    }
    fn shard_loads(&self) -> Option<Vec<u64>> {
        (self.shards.count() > 1).then(|| self.loads())
    }
    fn failure(&self) -> Option<String> {
        self.link.failure()
    }
    fn resent_round_trips(&self) -> u64 {
        self.link.resent()
    }
}

impl Drop for RedisBitmap {
    fn drop(&mut self) {
        if self.owned {
            link::delete_on_drop(
                &self.link,
                &self.shards,
                own_keys(&self.shards, &self.strings),
            );
        }
    }
}

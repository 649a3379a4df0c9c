//! `redis-bitmap`: a Bloom filter over plain Redis strings on a stock server (what Redisson does). The
//! client hashes exactly as the in-process [`crate::structures::bloom`] does — same m, k, xxh3-128 seed and probe
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
//! - `script`: a server-side Lua script (`EVALSHA`) that sets a batch's bits and counts the new keys. Atomic
//!   per batch, whatever the layout (the worker learns how many of its batch were new).

use super::link::Link;
use super::redis_bloom::remote_of;
use crate::hash::{hash_key, reduce, KeyHash};
use crate::keys::KeyBatch;
use crate::redis::BitmapMode;
use crate::redis::Client;
use crate::structures::{bloom, BuildConfig, Geometry, Kind, Membership, MemoryModel};
use crate::{theory, Result};

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

impl Kind for RedisBitmapKind {
    fn id(&self) -> &'static str {
        ID
    }
    fn summary(&self) -> &'static str {
        "Bloom filter over plain Redis strings (client-side hashing as in `bloom`; BITFIELD, SETBIT or a script)"
    }
    fn remote(&self) -> bool {
        true
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

/// A Bloom filter in Redis strings.
pub struct RedisBitmap {
    link: Link,
    key: String,
    strings: Vec<Vec<u8>>,
    bits: u64,
    hashes: u32,
    bits_per_string: u64,
    mode: BitmapMode,
    batch_keys: usize,
    seed: u64,
    owned: bool,
    inserted: u64,
    insert_sha: String,
    query_sha: String,
}

impl RedisBitmap {
    /// Connects and creates the filter, or joins an existing one after checking its parameters.
    pub fn open(config: &BuildConfig) -> Result<Self> {
        let remote = remote_of(ID, config)?;
        let sizing = bloom::sizing(config);
        let bits_per_string = remote.bitmap.bits_per_string.clamp(64, 1 << 32);
        let count = sizing.bits.div_ceil(bits_per_string);
        let key = remote.key.clone();
        let strings: Vec<Vec<u8>> = (0..count)
            .map(|i| format!("{key}:bits:{i}").into_bytes())
            .collect();
        let params_key = super::link::params_key(&key);
        let params = format!(
            "dedupbench-bloom-v1 m={} k={} hash=xxh3-128 seed={} bits_per_string={bits_per_string}",
            sizing.bits, sizing.hashes, config.seed
        );
        let mut client = Client::connect(&remote.url)?;
        if !remote.join_existing {
            let mut del: Vec<&[u8]> = vec![b"DEL", params_key.as_bytes()];
            del.extend(strings.iter().map(|s| s.as_slice()));
            client.call(&del)?;
        } else if !remote.create {
            super::link::require_existing(&mut client, &key)?;
        }
        if super::link::claim_params(&mut client, &key, &params)? {
            // Allocate every string now, so the server's memory is the filter's from the first insert.
            // `INCRBY u1 … 0` grows a string without changing a bit: a worker that joined in between and
            // already set the last bit keeps it.
            for (i, s) in strings.iter().enumerate() {
                let len = (sizing.bits - i as u64 * bits_per_string).min(bits_per_string);
                client.command(&[
                    b"BITFIELD",
                    s,
                    b"INCRBY",
                    b"u1",
                    (len - 1).to_string().as_bytes(),
                    b"0",
                ]);
            }
            client.send()?;
            for _ in &strings {
                client.read_int_array("BITFIELD", |_| {})?;
            }
        }
        let load = |c: &mut Client, script: &str| -> Result<String> {
            let reply = c.call(&[b"SCRIPT", b"LOAD", script.as_bytes()])?;
            Ok(String::from_utf8_lossy(reply.bytes().unwrap_or_default()).into_owned())
        };
        let insert_sha = load(&mut client, INSERT_SCRIPT)?;
        let query_sha = load(&mut client, QUERY_SCRIPT)?;
        Ok(RedisBitmap {
            link: Link::new(client),
            key,
            strings,
            bits: sizing.bits,
            hashes: sizing.hashes,
            bits_per_string,
            mode: remote.bitmap.mode,
            batch_keys: remote.batch_keys.max(1),
            seed: config.seed,
            owned: !remote.join_existing,
            inserted: 0,
            insert_sha,
            query_sha,
        })
    }

    /// The mode bits move by.
    pub fn mode(&self) -> BitmapMode {
        self.mode
    }

    /// (string, offset) of probe `i` of a key: the in-process `bloom`'s position, split over strings.
    #[inline]
    fn place(&self, hash: KeyHash, i: u32) -> (usize, u64) {
        let pos = reduce(hash.probe(i), self.bits);
        (
            (pos / self.bits_per_string) as usize,
            pos % self.bits_per_string,
        )
    }

    /// Sets (`write`) or reads the bits of `hashes`, one round trip; returns the keys that had a clear bit
    /// (write) or had every bit set (read).
    fn round_trip(&self, c: &mut Client, hashes: &[KeyHash], write: bool) -> Result<u64> {
        let k = self.hashes as usize;
        match self.mode {
            BitmapMode::Setbit => {
                for h in hashes {
                    for i in 0..self.hashes {
                        let (s, offset) = self.place(*h, i);
                        if write {
                            c.begin(4);
                            c.arg(b"SETBIT");
                            c.arg(&self.strings[s]);
                            c.arg_u64(offset);
                            c.arg(b"1");
                        } else {
                            c.begin(3);
                            c.arg(b"GETBIT");
                            c.arg(&self.strings[s]);
                            c.arg_u64(offset);
                        }
                    }
                }
                c.send()?;
                let mut count = 0;
                for _ in hashes {
                    let mut clear = false;
                    for _ in 0..k {
                        clear |= c.read_int(if write { "SETBIT" } else { "GETBIT" })? == 0;
                    }
                    count += (clear == write) as u64;
                }
                Ok(count)
            }
            BitmapMode::Bitfield => {
                // One command per string that this round trip touches; answers come back in probe order.
                let mut per_string: Vec<Vec<(usize, u64)>> = vec![Vec::new(); self.strings.len()];
                for (j, h) in hashes.iter().enumerate() {
                    for i in 0..self.hashes {
                        let (s, offset) = self.place(*h, i);
                        per_string[s].push((j, offset));
                    }
                }
                let op: &[u8] = if write { b"BITFIELD" } else { b"BITFIELD_RO" };
                for (s, ops) in per_string.iter().enumerate().filter(|(_, o)| !o.is_empty()) {
                    c.begin(2 + ops.len() * if write { 4 } else { 3 });
                    c.arg(op);
                    c.arg(&self.strings[s]);
                    for (_, offset) in ops {
                        if write {
                            c.arg(b"SET");
                            c.arg(b"u1");
                            c.arg_u64(*offset);
                            c.arg(b"1");
                        } else {
                            c.arg(b"GET");
                            c.arg(b"u1");
                            c.arg_u64(*offset);
                        }
                    }
                }
                c.send()?;
                let mut clear = vec![false; hashes.len()];
                let what = String::from_utf8_lossy(op).into_owned();
                for ops in per_string.iter().filter(|o| !o.is_empty()) {
                    let mut at = 0;
                    let got = c.read_int_array(&what, |v| {
                        if let Some((j, _)) = ops.get(at) {
                            clear[*j] |= v == 0;
                        }
                        at += 1;
                    })?;
                    if got != ops.len() {
                        return Err(
                            c.error(format!("{what} answered {got} of {} fields", ops.len()))
                        );
                    }
                }
                Ok(clear.iter().filter(|c| **c == write).count() as u64)
            }
            BitmapMode::Script => {
                let sha = if write {
                    &self.insert_sha
                } else {
                    &self.query_sha
                };
                let strings = self.strings.len();
                c.begin(3 + strings + 1 + hashes.len() * k * 2);
                c.arg(b"EVALSHA");
                c.arg(sha.as_bytes());
                c.arg_u64(strings as u64);
                for s in &self.strings {
                    c.arg(s);
                }
                c.arg_u64(k as u64);
                for h in hashes {
                    for i in 0..self.hashes {
                        let (s, offset) = self.place(*h, i);
                        c.arg_u64(s as u64 + 1);
                        c.arg_u64(offset);
                    }
                }
                c.send()?;
                Ok(c.read_int("EVALSHA")?.max(0) as u64)
            }
        }
    }

    fn over_batch(&self, c: &mut Client, hashes: &[KeyHash], write: bool) -> Result<u64> {
        let mut total = 0;
        for chunk in hashes.chunks(self.batch_keys) {
            total += self.round_trip(c, chunk, write)?;
        }
        Ok(total)
    }

    /// Bits set, summed over the strings (`BITCOUNT`).
    pub fn ones(&self) -> u64 {
        self.link.run(|c| {
            let mut ones = 0;
            for s in &self.strings {
                ones += c.call(&[b"BITCOUNT", s])?.int().unwrap_or(0).max(0) as u64;
            }
            Ok(ones)
        })
    }

    /// The Redis key prefix.
    pub fn key(&self) -> &str {
        &self.key
    }
}

impl Membership for RedisBitmap {
    fn id(&self) -> &'static str {
        ID
    }
    fn seed(&self) -> u64 {
        self.seed
    }
    fn insert_hashed(&mut self, _key: &[u8], hash: KeyHash) -> bool {
        let new = self.link.run(|c| self.round_trip(c, &[hash], true)) == 1;
        self.inserted += new as u64;
        new
    }
    fn contains_hashed(&self, _key: &[u8], hash: KeyHash) -> bool {
        self.link.run(|c| self.round_trip(c, &[hash], false)) == 1
    }
    fn insert(&mut self, key: &[u8]) -> bool {
        let hash = hash_key(self.seed, key);
        self.insert_hashed(key, hash)
    }
    fn batch_path(&self) -> bool {
        true
    }
    fn insert_batch(&mut self, batch: &KeyBatch) -> u64 {
        let new = self.link.run(|c| self.over_batch(c, batch.hashes(), true));
        self.inserted += new;
        new
    }
    fn contains_batch(&self, batch: &KeyBatch) -> u64 {
        self.link.run(|c| self.over_batch(c, batch.hashes(), false))
    }
    fn bytes_held(&self) -> u64 {
        self.link.run(|c| {
            let mut bytes = c.memory_usage(format!("{}:params", self.key).as_bytes())?;
            for s in &self.strings {
                bytes += c.memory_usage(s)?;
            }
            Ok(bytes)
        })
    }
    fn n_inserted(&self) -> u64 {
        self.inserted
    }
    fn expected_fpr(&self, n_distinct: u64) -> f64 {
        theory::bloom_fpr(self.bits, self.hashes, n_distinct)
    }
    fn fill_fpr(&self) -> Option<f64> {
        let fill = self.ones() as f64 / self.bits as f64;
        Some(fill.powi(self.hashes as i32))
    }
    fn geometry(&self) -> Geometry {
        Geometry {
            bits: Some(self.bits),
            hashes: Some(self.hashes),
            slices: (self.strings.len() > 1).then_some(self.strings.len() as u32),
        }
    }
    fn failure(&self) -> Option<String> {
        self.link.failure()
    }
}

impl Drop for RedisBitmap {
    fn drop(&mut self) {
        if self.owned {
            let params = format!("{}:params", self.key).into_bytes();
            self.link.run(|c| {
                let mut del: Vec<&[u8]> = vec![b"DEL", &params];
                del.extend(self.strings.iter().map(|s| s.as_slice()));
                c.call(&del).map(|_| ())
            });
        }
    }
}

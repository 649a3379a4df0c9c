//! How one logical structure is split over a Redis Cluster: S sub-structures, each under its own hash tag
//! so that all its keys live in one slot, and the shard of a key taken from a mix of its hash that does not
//! follow the positions its probes use.
//!
//! Invariants:
//! - On one server there is one shard, and its keys are the structure's name itself (as before sharding).
//! - On a cluster, shard s's tag is the first `NAME/s/j` (j = 0, 1, …) whose slot (CRC16-XMODEM of the tag,
//!   mod 16384, as Redis Cluster computes it) falls in the middle half of the s-th of S equal slot ranges. A cluster created
//!   with `redis-cli --cluster create` gives each master equal contiguous ranges, so S = 3 × masters puts 3
//!   shards on each master; after a reshard the tags stay, and the cluster moves them.
//! - A key's shard is `reduce(fmix64(h1 ⊕ rotl(h2, 32)), S)`: a mix of both halves of the key's hash (of
//!   one 64-bit value for a 64-bit hash, whose h2 is fmix64(h1)), not either probe value alone (the client-hashed bitmap probes with h1 + i·h2; RedisBloom hashes
//!   keys itself with MurmurHash64A, which shares nothing with ours).

use crate::hash::{fmix64, reduce, KeyHash};
use crate::keys::KeyBatch;
use crate::redis::Conn;
use crate::{Error, Result};
use redis::{Cmd, Value};

/// Redis Cluster's slot count.
pub const SLOTS: u32 = 16384;

/// The slot of a key or hash tag, as Redis Cluster computes it (CRC16-XMODEM of the tag, mod 16384).
pub fn slot_of(tag: &[u8]) -> u16 {
    (crc16::State::<crc16::XMODEM>::calculate(tag) as u32 % SLOTS) as u16
}

/// The middle half of shard s's equal share of the slots.
fn middle_half(s: usize, count: usize) -> (u16, u16) {
    let start = s as f64 * SLOTS as f64 / count as f64;
    let width = SLOTS as f64 / count as f64;
    let lo = (start + width / 4.0).ceil() as u16;
    let hi = ((start + 3.0 * width / 4.0).floor() as u16).max(lo + 1);
    (lo, hi)
}

/// The shards of one logical structure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shards {
    /// The structure's name.
    name: String,
    /// Every shard's key prefix: `NAME` on one server, `{NAME/s/j}` on a cluster.
    prefixes: Vec<String>,
}

impl Shards {
    /// One shard named `name` (one server).
    pub fn single(name: &str) -> Shards {
        Shards {
            name: name.to_string(),
            prefixes: vec![name.to_string()],
        }
    }

    /// `count` shards of `name` spread over the slot ranges (a cluster). The name may not hold braces
    /// (they would make its own hash tag).
    pub fn spread(name: &str, count: usize) -> Result<Shards> {
        if name.contains(['{', '}']) {
            return Err(Error::invalid(
                "--name",
                format!("'{name}' holds a brace; on a cluster the tool adds its own hash tags"),
            ));
        }
        if count == 0 || count > SLOTS as usize {
            return Err(Error::invalid(
                "--shards",
                format!("must be in 1..={SLOTS}, got {count}"),
            ));
        }
        let prefixes = (0..count)
            .map(|s| {
                // The middle half of [s·16384/S, (s+1)·16384/S): `--cluster create` splits the slots
                // into equal ranges up to rounding, so with S a multiple of the masters a shard's slot is
                // never at a boundary between two masters.
                let (lo, hi) = middle_half(s, count);
                (0u64..)
                    .map(|j| format!("{name}/{s}/{j}"))
                    .find(|tag| (lo..hi).contains(&slot_of(tag.as_bytes())))
                    .map(|tag| format!("{{{tag}}}"))
                    .unwrap_or_default()
            })
            .collect();
        Ok(Shards {
            name: name.to_string(),
            prefixes,
        })
    }

    /// The structure's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many shards.
    pub fn count(&self) -> usize {
        self.prefixes.len()
    }

    /// Shard `s`'s key prefix.
    pub fn prefix(&self, s: usize) -> &str {
        &self.prefixes[s]
    }

    /// Every prefix.
    pub fn prefixes(&self) -> &[String] {
        &self.prefixes
    }

    /// The shard of a key.
    #[inline]
    pub fn of(&self, hash: KeyHash) -> usize {
        if self.prefixes.len() == 1 {
            return 0;
        }
        shard_of(hash, self.prefixes.len())
    }

    /// The keys of `range` of a batch grouped by shard, in batch order within each shard.
    pub fn group(&self, batch: &KeyBatch, range: std::ops::Range<usize>) -> Vec<Vec<u32>> {
        let mut groups = vec![Vec::new(); self.count()];
        let hashes = batch.hashes();
        for i in range {
            groups[self.of(hashes[i])].push(i as u32);
        }
        groups
    }
}

/// How many round trips may be on the wire at once ([`Conn::round_trips`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InFlight {
    /// One: nothing is sent past a round trip whose answers stop the batch (`dedup`: a line is inserted
    /// only once the lines before it were written).
    One,
    /// Two: the next round trip is encoded and sent while the server works on this one.
    Two,
}

/// Sends a batch, `per` keys per round trip, as one command per shard the round trip touches (`head(s)`
/// then `member(cmd, i)` for each of its keys), all in one pipeline; each command must answer one integer
/// per key (1: yes, 0: no). `each(i, yes)` sees the answers in batch order and stops the batch by
/// returning false (after the round trips in flight, see [`InFlight`]). Returns how many of the answers
/// `each` saw were yes.
#[allow(clippy::too_many_arguments)]
pub fn per_key(
    c: &mut Conn,
    shards: &Shards,
    batch: &KeyBatch,
    per: usize,
    in_flight: InFlight,
    head: impl Fn(usize) -> Cmd,
    member: impl Fn(&mut Cmd, usize),
    mut each: impl FnMut(usize, bool) -> bool,
) -> Result<u64> {
    let per = per.max(1);
    let mut answer = vec![false; per.min(batch.len())];
    let mut yes = 0u64;
    let count = batch.len().div_ceil(per);
    let range = |i: usize| i * per..((i + 1) * per).min(batch.len());
    // The shard groups of the round trips sent and not yet read, oldest first.
    let sent: std::cell::RefCell<std::collections::VecDeque<Vec<Vec<u32>>>> = Default::default();
    let stopped = std::cell::Cell::new(false);
    // The command's name, for errors: taken from the first command encoded (`head` may hand out tokens).
    let what = std::cell::RefCell::new(String::new());
    let encode = |i: usize| {
        let groups = shards.group(batch, range(i));
        let cmds = groups
            .iter()
            .enumerate()
            .filter(|(_, k)| !k.is_empty())
            .map(|(s, keys)| {
                let mut cmd = head(s);
                for &k in keys {
                    member(&mut cmd, k as usize);
                }
                cmd
            })
            .collect::<Vec<Cmd>>();
        if let Some(first) = cmds.first().filter(|_| what.borrow().is_empty()) {
            *what.borrow_mut() = crate::redis::conn::command_name(first);
        }
        sent.borrow_mut().push_back(groups);
        cmds
    };
    let endpoint = c.endpoint().addr();
    let fail = |message: String| crate::Error::Remote {
        addr: endpoint.clone(),
        message,
    };
    let read = |i: usize, replies: Vec<Value>| -> Result<()> {
        let groups = sent.borrow_mut().pop_front().unwrap_or_default();
        if stopped.get() {
            return Ok(());
        }
        let start = range(i).start;
        let what = what.borrow();
        let touched = groups.iter().filter(|k| !k.is_empty());
        if touched.clone().count() != replies.len() {
            return Err(fail(format!(
                "{what}: {} replies to {} commands",
                replies.len(),
                touched.count()
            )));
        }
        for (keys, reply) in touched.zip(replies) {
            let Value::Array(values) = reply else {
                return Err(fail(format!("{what} answered {reply:?}, not an array")));
            };
            if values.len() != keys.len() {
                return Err(fail(format!(
                    "{what} answered {} of {} keys",
                    values.len(),
                    keys.len()
                )));
            }
            for (&k, v) in keys.iter().zip(values) {
                answer[k as usize - start] = match v {
                    Value::Int(v) => v == 1,
                    Value::Boolean(b) => b,
                    other => return Err(fail(format!("{what} answered {other:?}"))),
                };
            }
        }
        for (j, &a) in answer[..range(i).len()].iter().enumerate() {
            yes += a as u64;
            if !each(start + j, a) {
                stopped.set(true);
                break;
            }
        }
        Ok(())
    };
    match in_flight {
        InFlight::Two => c.round_trips(count, 2, encode, read)?,
        // Round trip i + 1 is not encoded before i's answers were seen: stop means stop.
        InFlight::One => {
            let mut read = read;
            for i in 0..count {
                let replies = c.pipeline(encode(i))?;
                read(i, replies)?;
                if stopped.get() {
                    break;
                }
            }
        }
    }
    Ok(yes)
}

/// `reduce(fmix64(h1 ⊕ rotl(h2, 32)), count)`.
#[inline]
pub fn shard_of(hash: KeyHash, count: usize) -> usize {
    reduce(fmix64(hash.h1 ^ hash.h2.rotate_left(32)), count as u64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_match_redis_cluster() {
        // Values from the Redis Cluster specification and `CLUSTER KEYSLOT`.
        assert_eq!(slot_of(b"123456789"), 0x31c3);
        assert_eq!(slot_of(b"foo"), 12182);
        assert_eq!(slot_of(b"bar"), 5061);
    }

    #[test]
    fn shards_spread_over_the_slot_ranges_in_order() {
        let shards = Shards::spread("seen", 9).unwrap();
        assert_eq!(shards.count(), 9);
        for (s, prefix) in shards.prefixes().iter().enumerate() {
            let tag = prefix.trim_start_matches('{').trim_end_matches('}');
            let slot = slot_of(tag.as_bytes()) as u64;
            let share = 16384.0 / 9.0;
            let (lo, hi) = (
                s as f64 * share + share / 4.0,
                s as f64 * share + 3.0 * share / 4.0,
            );
            assert!((lo..hi).contains(&(slot as f64)), "shard {s}: slot {slot}");
        }
        assert!(Shards::spread("a{b}", 3).is_err());
        assert!(Shards::spread("a", 0).is_err());
    }

    #[test]
    fn keys_spread_evenly_over_shards() {
        // 9·10⁴ keys over 9 shards: each count is binomial(9·10⁴, 1/9), σ = 94.3; 3.87σ bounds, the
        // 99.9% level shared by the 9 counts.
        let mut counts = [0u64; 9];
        for i in 0..90_000u64 {
            let h = crate::hash::hash_key(7, format!("https://example.com/{i}").as_bytes());
            counts[shard_of(h, 9)] += 1;
        }
        for c in counts {
            assert!((10_000 - 365..=10_000 + 365).contains(&c), "{counts:?}");
        }
    }
}

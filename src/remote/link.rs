//! The connection latch, the parameter claim and the shard plan every Redis backend uses.
//!
//! Invariant: two workers never use one structure (or one of its shards) with different parameters
//! (`PREFIX:params`, `SET NX`, compared on every connect).

use super::shards::Shards;
use crate::hash::HashFn;
use crate::redis::{Conn, RemoteConfig};
use crate::Result;
use std::sync::Mutex;

/// Where a shared structure's (or shard's) parameters live: `PREFIX:params`.
pub fn params_key(prefix: &str) -> String {
    format!("{prefix}:params")
}

/// Connects to the structure's server or cluster, with its retry time.
pub fn connect(remote: &RemoteConfig) -> Result<Conn> {
    let mut conn = Conn::connect_retrying(&remote.endpoint, remote.retry_for)?;
    conn.wait_for_replicas(remote.wait);
    Ok(conn)
}

/// Where a split structure's shard count lives: `NAME:shards` (no hash tag; any slot).
pub fn shard_count_key(name: &str) -> String {
    format!("{name}:shards")
}

/// Redis strings stop at 2³² bits: no sub-filter may hold more.
pub const MAX_SHARD_BITS: u64 = 1 << 32;
/// Shards per master of a new filter on a cluster, by default: enough that the keys spread evenly when
/// masters join or leave.
pub const SHARDS_PER_MASTER: u64 = 3;

/// The shards of the structure: one on a server; on a cluster the count the structure was created with
/// (`NAME:shards`), or for a new one `--shards`, by default max(3 per master, ⌈bits / 2³²⌉) so that no
/// sub-filter passes 2³² bits. A worker joining with another `--shards` is refused: it would split keys
/// differently and miss the others' keys.
pub fn plan_shards(conn: &mut Conn, remote: &RemoteConfig, bits: u64) -> Result<Shards> {
    if !remote.endpoint.is_cluster() {
        return match remote.shards {
            None | Some(1) => Ok(Shards::single(&remote.key)),
            Some(n) => Err(crate::Error::invalid(
                "--shards",
                format!("splits a filter over a cluster's masters; one server holds one filter, got {n}"),
            )),
        };
    }
    let least = bits.div_ceil(MAX_SHARD_BITS) as usize;
    let wanted = remote
        .shards
        .unwrap_or((SHARDS_PER_MASTER as usize * conn.masters().len()).max(least));
    if wanted < least {
        return Err(crate::Error::invalid(
            "--shards",
            format!(
                "{wanted} shards of a {bits}-bit filter pass 2^32 bits each; give at least {least}"
            ),
        ));
    }
    let key = shard_count_key(&remote.key);
    let count = if !remote.join_existing {
        // A fresh structure (or a delete) takes the layout already under the name unless --shards says
        // otherwise, so it replaces (or removes) those very keys.
        let stored: Option<usize> = conn.query(redis::cmd("GET").arg(&key))?;
        let count = match (remote.shards, stored) {
            (None, Some(stored)) if stored >= least => stored,
            _ => wanted,
        };
        conn.query::<()>(redis::cmd("SET").arg(&key).arg(count))?;
        count
    } else {
        // Only a worker that may create the structure writes its shard count.
        let created: Option<String> = if remote.create {
            conn.query(redis::cmd("SET").arg(&key).arg(wanted).arg("NX"))?
        } else {
            None
        };
        let stored: usize = match created {
            Some(_) => wanted,
            None => conn
                .query::<Option<usize>>(redis::cmd("GET").arg(&key))?
                .unwrap_or(wanted),
        };
        if remote.shards.is_some_and(|s| s != stored) {
            return Err(conn.error(format!(
                "filter '{}' is split into {stored} shards; this worker asks for {wanted} (--shards)",
                remote.key
            )));
        }
        stored
    };
    Shards::spread(&remote.key, count)
}

/// Each shard's own key (the structure's data) and its parameters key: what a fresh structure deletes.
pub fn shard_keys(shards: &Shards) -> Vec<Vec<u8>> {
    shards
        .prefixes()
        .iter()
        .flat_map(|p| [p.as_bytes().to_vec(), params_key(p).into_bytes()])
        .collect()
}

/// Deletes an owned structure when it is dropped: `keys` and the shard count under its name. Nothing is
/// sent once the link has failed.
pub fn delete_on_drop(link: &Link, shards: &Shards, mut keys: Vec<Vec<u8>>) {
    keys.push(shard_count_key(shards.name()).into_bytes());
    link.run(|c| delete_all(c, &keys));
}

/// `MEMORY USAGE` summed over the shards' own keys.
pub fn shard_bytes(link: &Link, shards: &Shards) -> u64 {
    link.run(|c| {
        let mut bytes = 0;
        for p in shards.prefixes() {
            bytes += c.memory_usage(p.as_bytes())?;
        }
        Ok(bytes)
    })
}

/// Stores a structure's (or shard's) parameters under `PREFIX:params` unless they are there (`SET NX`);
/// when they are, they must be the same, so two workers never use one structure with different
/// parameters. Returns whether this call created them.
pub fn claim_params(conn: &mut Conn, prefix: &str, params: &str) -> Result<bool> {
    let key = params_key(prefix);
    let set: Option<String> = conn.query(redis::cmd("SET").arg(&key).arg(params).arg("NX"))?;
    if set.is_some() {
        return Ok(true);
    }
    let stored: Option<String> = conn.query(redis::cmd("GET").arg(&key))?;
    let stored = stored.unwrap_or_default();
    if stored != params {
        return Err(conn.error(format!(
            "filter '{prefix}' was created with \"{stored}\"; this worker asks for \"{params}\". \
             Use the same --structure, --expected, --fpr, --seed, --hash and --shards, or another name"
        )));
    }
    Ok(false)
}

/// The words a parameter line adds for a structure whose client hash picks where a key goes (its shard,
/// its bits): nothing for [`HashFn::FORMER_DEFAULT`], which lines written before the hash was a choice
/// meant without naming it (so workers still join those filters), else ` hash=ID` and `more`.
pub fn hash_tag(hash: HashFn, more: &str) -> String {
    if hash == HashFn::FORMER_DEFAULT {
        String::new()
    } else {
        format!(" hash={}{more}", hash.id())
    }
}

/// For workers that only read: the structure must exist (its first shard's parameters key is there).
pub fn require_existing(conn: &mut Conn, name: &str, shards: &Shards) -> Result<()> {
    let key = params_key(shards.prefix(0));
    let exists: i64 = conn.query(redis::cmd("EXISTS").arg(&key))?;
    if exists == 0 {
        return Err(conn.error(format!(
            "there is no shared filter named '{name}' ({key} is missing); insert into it first"
        )));
    }
    Ok(())
}

/// Deletes every key given (one `DEL` per key: on a cluster the keys of different shards live in
/// different slots). `DEL`, not `UNLINK`: the sweep reads `used_memory` next.
pub fn delete_all(conn: &mut Conn, keys: &[Vec<u8>]) -> Result<()> {
    let cmds: Vec<redis::Cmd> = keys
        .iter()
        .map(|k| {
            let mut c = redis::cmd("DEL");
            c.arg(k.as_slice());
            c
        })
        .collect();
    conn.pipeline(cmds).map(|_| ())
}

/// A connection shared by a backend's `&self` and `&mut self` methods, with a latch for the first error.
///
/// The [`crate::membership::Membership`] trait answers counts, not results, so a backend that loses its
/// server (after [`Conn`]'s retries) records the error here, answers 0 from then on, and the harness
/// reads [`crate::membership::Membership::failure`] after every pass: a cell built on a partial filter is
/// reported as failed, never as a measurement.
pub struct Link {
    conn: Mutex<Conn>,
    failure: Mutex<Option<String>>,
}

impl Link {
    /// Wraps a connection.
    pub fn new(conn: Conn) -> Self {
        Link {
            conn: Mutex::new(conn),
            failure: Mutex::new(None),
        }
    }

    /// Runs `work` on the connection unless an earlier call failed; a failure is latched and gives
    /// `T::default()`.
    pub fn run<T: Default>(&self, work: impl FnOnce(&mut Conn) -> Result<T>) -> T {
        let mut failure = self.failure.lock().unwrap_or_else(|p| p.into_inner());
        if failure.is_some() {
            return T::default();
        }
        let mut conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        match work(&mut conn) {
            Ok(v) => v,
            Err(e) => {
                *failure = Some(e.to_string());
                T::default()
            }
        }
    }

    /// The first error, if any call failed.
    pub fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Where the structure lives (`host:port` or `cluster …`).
    pub fn addr(&self) -> String {
        self.conn
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .endpoint()
            .addr()
    }

    /// Round trips sent again after a server was lost.
    pub fn resent(&self) -> u64 {
        self.conn.lock().unwrap_or_else(|p| p.into_inner()).resent()
    }
}

//! Answers that survive a resend: `dedup` asks "was it new?" of a shared filter, and a round trip whose
//! reply was lost (a killed node, a reset connection, a MOVED in the middle of a cluster pipeline) is sent
//! again. Adding a key twice leaves the filter as once, but the second answer would say "seen" for a key
//! the first attempt added, and the worker would drop a URL nobody passed.
//!
//! So the worker's adds go through a Lua script that keeps each command's answers on the server, next to
//! the filter (same hash tag, same slot): `PREFIX:ack:WORKER` holds `TOKEN=0110…`. A command carries a
//! token unique to the worker; sent again with the same token, the script returns the stored answers
//! instead of adding again. The script runs atomically, and an append-only file records its effects (the
//! adds and the stored answers) together. One key per worker and shard, overwritten by the next command
//! (a worker has one such command per shard in flight) and expiring after three hours (a resend comes
//! within `--retry-secs`, at most an hour, plus a reply timeout). A per-key error of `BF.MADD` (a full
//! `NONSCALING` filter) is returned as the script's error, answers not stored.

use redis::Cmd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::LazyLock;

/// Builds the script around `apply`, Lua that appends each member's 0/1 answer to `out`.
fn script(apply: &str) -> String {
    format!(
        "local prev = redis.call('GET', KEYS[2]) \
         local tag = ARGV[1] .. '=' \
         if prev and string.sub(prev, 1, #tag) == tag then \
           local out = {{}} \
           for i = #tag + 1, #prev do out[#out + 1] = string.byte(prev, i) - 48 end \
           return out \
         end \
         local out = {{}} \
         {apply} \
         redis.call('SET', KEYS[2], tag .. table.concat(out), 'EX', 10800) \
         return out"
    )
}

/// `BF.MADD` of the members (4000 per call: Lua's `unpack` has a stack limit), answers kept.
pub static BLOOM_ADD: LazyLock<String> = LazyLock::new(|| {
    script(
        "for i = 2, #ARGV, 4000 do \
           local r = redis.call('BF.MADD', KEYS[1], unpack(ARGV, i, math.min(i + 3999, #ARGV))) \
           for j = 1, #r do \
             if type(r[j]) == 'table' then return r[j] end \
             out[#out + 1] = r[j] \
           end \
         end",
    )
});

/// `SADD` of each member, answers kept.
pub static SET_ADD: LazyLock<String> = LazyLock::new(|| {
    script("for i = 2, #ARGV do out[#out + 1] = redis.call('SADD', KEYS[1], ARGV[i]) end")
});

/// A random id naming one worker's keys on the server (its kept answers, its bitmap load totals).
pub fn worker_id() -> String {
    format!("{:016x}", rand::random::<u64>())
}

/// One worker's identity and its next command token.
pub struct Once {
    worker: String,
    next: AtomicU64,
}

impl Default for Once {
    fn default() -> Self {
        Once {
            worker: worker_id(),
            next: AtomicU64::new(0),
        }
    }
}

impl Once {
    /// `EVAL script 2 PREFIX PREFIX:ack:WORKER TOKEN`: the members follow.
    pub fn head(&self, script: &str, prefix: &str) -> Cmd {
        let token = self.next.fetch_add(1, Ordering::Relaxed);
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(script)
            .arg(2)
            .arg(prefix)
            .arg(format!("{prefix}:ack:{}", self.worker))
            .arg(token);
        cmd
    }
}

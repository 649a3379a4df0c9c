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
//! told a key is new (none, when the key was a false positive). The parameters (rate, capacity, mode)
//! are stored in `NAME:params` and checked by every worker that joins.

use super::link::Link;
use crate::hash::KeyHash;
use crate::keys::KeyBatch;
use crate::redis::RemoteConfig;
use crate::redis::{Client, Reply};
use crate::structures::{BuildConfig, Geometry, Kind, Membership, MemoryModel};
use crate::{theory, Error, Result};

/// Registry entry of the fixed filter.
pub struct RedisBloomKind;
/// Registry entry of the module's scalable filter.
pub struct RedisBloomScalingKind;

/// The remote part of a config, or the error saying it is missing.
pub(crate) fn remote_of<'a>(id: &str, config: &'a BuildConfig) -> Result<&'a RemoteConfig> {
    config.remote.as_ref().ok_or_else(|| {
        Error::invalid(
            id,
            "lives on a Redis server; give one with --redis redis://host:port",
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
    ($kind:ident, $id:expr, $summary:literal, $scaling:expr) => {
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
            fn hashed_by_server(&self) -> bool {
                true
            }
            fn growable(&self) -> bool {
                $scaling
            }
            fn server_module(&self) -> Option<&'static str> {
                Some(MODULE)
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
    ID,
    "RedisBloom module filter on a Redis server (BF.RESERVE … NONSCALING, BF.MADD/BF.MEXISTS)",
    false
);
kind!(
    RedisBloomScalingKind,
    SCALING_ID,
    "RedisBloom module's scalable filter (BF.RESERVE without NONSCALING, expansion 2)",
    true
);

/// One link of a RedisBloom chain, from `BF.DEBUG`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkInfo {
    pub bits: u64,
    pub hashes: u32,
    pub items: u64,
}

/// A RedisBloom filter on a server.
pub struct RedisBloom {
    id: &'static str,
    link: Link,
    key: Vec<u8>,
    batch_keys: usize,
    seed: u64,
    owned: bool,
    inserted: u64,
}

impl RedisBloom {
    /// Connects, checks the module, and reserves the filter (or joins an existing one when `shared`).
    pub fn open(id: &'static str, config: &BuildConfig, scaling: bool) -> Result<Self> {
        let remote = remote_of(id, config)?;
        let mut client = Client::connect(&remote.url)?;
        if !client.has_module("bf")? {
            return Err(client.error(
                "the server has no RedisBloom module (MODULE LIST shows no 'bf'); start it with \
                 --loadmodule redisbloom.so (scripts/fetch-redisbloom.sh fetches it)",
            ));
        }
        let key = remote.key.as_bytes().to_vec();
        let params_key = super::link::params_key(&remote.key);
        if !remote.join_existing {
            client.call(&[b"DEL", &key, params_key.as_bytes()])?;
        } else if !remote.create {
            super::link::require_existing(&mut client, &remote.key)?;
        }
        let fpr = format!("{}", config.fpr);
        // The scaling filter starts where our `scalable` does (max(1000, n/64)) and grows 2× per link, so
        // both face the same unknown growth; the fixed one is reserved for all n.
        let capacity = if scaling {
            config.growth.first_slice_keys(config.expected_keys)
        } else {
            config.expected_keys.max(1)
        }
        .to_string();
        super::link::claim_params(
            &mut client,
            &remote.key,
            &format!("{id} v1 error_rate={fpr} capacity={capacity}"),
        )?;
        let mut args: Vec<&[u8]> = vec![b"BF.RESERVE", &key, fpr.as_bytes(), capacity.as_bytes()];
        if scaling {
            args.extend([b"EXPANSION".as_slice(), b"2".as_slice()]);
        } else {
            args.push(b"NONSCALING");
        }
        client.command(&args);
        client.send()?;
        match client.read_reply()? {
            Reply::Error(e) if remote.join_existing && e.contains("exists") => {}
            Reply::Error(e) => return Err(client.error(format!("BF.RESERVE failed: {e}"))),
            _ => {}
        }
        Ok(RedisBloom {
            id,
            link: Link::new(client),
            key,
            batch_keys: remote.batch_keys.max(1),
            seed: config.seed,
            owned: !remote.join_existing,
            inserted: 0,
        })
    }

    /// The links the module built (`BF.DEBUG`).
    pub fn links(&self) -> Vec<LinkInfo> {
        self.link.run(|c| {
            let reply = c.call(&[b"BF.DEBUG", &self.key])?;
            Ok(parse_debug(&reply))
        })
    }

    /// Sends `command` over the batch in chunks of `batch_keys` keys; `each` sees every integer answer.
    fn chunked(
        &self,
        c: &mut Client,
        command: &[u8],
        batch: &KeyBatch,
        mut each: impl FnMut(i64),
    ) -> Result<()> {
        let per = self.batch_keys;
        let what = String::from_utf8_lossy(command).into_owned();
        c.round_trips(
            batch.len().div_ceil(per),
            |c, chunk| {
                let (start, end) = (chunk * per, ((chunk + 1) * per).min(batch.len()));
                c.begin(2 + end - start);
                c.arg(command);
                c.arg(&self.key);
                for i in start..end {
                    c.arg(batch.key(i));
                }
            },
            |c, chunk| {
                let keys = ((chunk + 1) * per).min(batch.len()) - chunk * per;
                let got = c.read_int_array(&what, &mut each)?;
                if got != keys {
                    return Err(c.error(format!("{what} answered {got} of {keys} keys")));
                }
                Ok(())
            },
        )
    }
}

/// Parses `BF.DEBUG`'s lines `bytes:… bits:… hashes:… … size:…`.
fn parse_debug(reply: &Reply) -> Vec<LinkInfo> {
    let Reply::Array(Some(lines)) = reply else {
        return Vec::new();
    };
    lines
        .iter()
        .skip(1)
        .filter_map(|l| {
            let text = String::from_utf8_lossy(l.bytes()?).into_owned();
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

impl Membership for RedisBloom {
    fn id(&self) -> &'static str {
        self.id
    }
    fn seed(&self) -> u64 {
        self.seed
    }
    fn insert_hashed(&mut self, key: &[u8], _hash: KeyHash) -> bool {
        let new = self.link.run(|c| {
            c.call(&[b"BF.ADD", &self.key, key])
                .map(|r| r.int() == Some(1))
        });
        self.inserted += new as u64;
        new
    }
    fn contains_hashed(&self, key: &[u8], _hash: KeyHash) -> bool {
        self.link.run(|c| {
            c.call(&[b"BF.EXISTS", &self.key, key])
                .map(|r| r.int() == Some(1))
        })
    }
    fn batch_path(&self) -> bool {
        true
    }
    fn insert_batch(&mut self, batch: &KeyBatch) -> u64 {
        let new = self.link.run(|c| {
            let mut new = 0u64;
            self.chunked(c, b"BF.MADD", batch, |v| new += (v == 1) as u64)?;
            Ok(new)
        });
        self.inserted += new;
        new
    }
    fn contains_batch(&self, batch: &KeyBatch) -> u64 {
        self.link.run(|c| {
            let mut found = 0u64;
            self.chunked(c, b"BF.MEXISTS", batch, |v| found += (v == 1) as u64)?;
            Ok(found)
        })
    }
    fn bytes_held(&self) -> u64 {
        self.link.run(|c| c.memory_usage(&self.key))
    }
    fn n_inserted(&self) -> u64 {
        self.inserted
    }
    fn expected_fpr(&self, _n_distinct: u64) -> f64 {
        // Every link at its own fill; a key is a false positive if any link says yes.
        let miss: f64 = self
            .links()
            .iter()
            .map(|l| 1.0 - theory::bloom_fpr(l.bits.max(1), l.hashes, l.items))
            .product();
        1.0 - miss
    }
    fn geometry(&self) -> Geometry {
        let links = self.links();
        Geometry {
            bits: Some(links.iter().map(|l| l.bits).sum()),
            hashes: links.last().map(|l| l.hashes),
            slices: (links.len() > 1).then_some(links.len() as u32),
        }
    }
    fn failure(&self) -> Option<String> {
        self.link.failure()
    }
}

impl Drop for RedisBloom {
    fn drop(&mut self) {
        if self.owned {
            let params = super::link::params_key(&String::from_utf8_lossy(&self.key));
            self.link
                .run(|c| c.call(&[b"DEL", &self.key, params.as_bytes()]).map(|_| ()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_lines_parse() {
        let reply = Reply::Array(Some(vec![
            Reply::Bulk(Some(b"size:3".to_vec())),
            Reply::Bulk(Some(
                b"bytes:1199 bits:9592 hashes:7 hashwidth:64 capacity:1000 size:3 ratio:0.01"
                    .to_vec(),
            )),
        ]));
        assert_eq!(
            parse_debug(&reply),
            vec![LinkInfo {
                bits: 9592,
                hashes: 7,
                items: 3
            }]
        );
    }
}

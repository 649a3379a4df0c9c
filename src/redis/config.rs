//! How a shared structure on a Redis server or cluster is reached and driven: where, the key, the shards,
//! the round-trip size, and how the bitmap backend moves its bits.

use super::conn::Endpoint;
use crate::{Error, Result};
use std::time::Duration;

/// How a shared structure on a Redis server is reached and driven.
#[derive(Clone, Debug, PartialEq)]
pub struct RemoteConfig {
    /// The server, or the cluster.
    pub endpoint: Endpoint,
    /// Sub-structures on a cluster (`None`: 3 per master); one server always has one.
    pub shards: Option<usize>,
    /// How long a round trip is retried while its server is away.
    pub retry_for: Duration,
    /// The Redis key (or key prefix) of the structure.
    pub key: String,
    /// Keys per round trip (one command of that many keys, or a pipeline of their commands).
    pub batch_keys: usize,
    /// The parameters of the `redis-bitmap` backend (ignored by the others).
    pub bitmap: BitmapLayout,
    /// Workers share an existing structure (and check its parameters); otherwise the structure is created
    /// afresh, replacing what was under `key`, and deleted when dropped.
    pub join_existing: bool,
    /// A shared structure may be created by this worker (inserting workers); read-only ones need it to
    /// exist already.
    pub create: bool,
    /// On a cluster, writes count as done only once this many replicas of their master hold them
    /// (`--wait-replicas`; see [`super::conn::WaitReplicas`]).
    pub wait: Option<super::conn::WaitReplicas>,
}

impl RemoteConfig {
    /// Defaults: 3 shards per master, retries for 30 s, batches of 1024 keys, `BITFIELD`, strings of 2³² bits, a fresh structure.
    pub fn new(endpoint: Endpoint, key: impl Into<String>) -> Self {
        RemoteConfig {
            endpoint,
            shards: None,
            retry_for: super::conn::DEFAULT_RETRY_FOR,
            key: key.into(),
            batch_keys: 1024,
            bitmap: BitmapLayout::default(),
            join_existing: false,
            create: true,
            wait: None,
        }
    }
}

/// How `redis-bitmap` lays its bits over Redis strings and moves them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitmapLayout {
    /// How bits move between client and server.
    pub mode: BitmapMode,
    /// The largest Redis string, in bits (Redis allows 2³²).
    pub bits_per_string: u64,
}

impl Default for BitmapLayout {
    /// `BITFIELD`, strings of 2³² bits.
    fn default() -> Self {
        BitmapLayout {
            mode: BitmapMode::Bitfield,
            bits_per_string: 1 << 32,
        }
    }
}

/// How bits move between client and server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitmapMode {
    Bitfield,
    Setbit,
    Script,
}

impl BitmapMode {
    /// Every mode, in report order.
    pub const ALL: [BitmapMode; 3] = [BitmapMode::Bitfield, BitmapMode::Setbit, BitmapMode::Script];

    /// The mode's name.
    pub fn name(self) -> &'static str {
        match self {
            BitmapMode::Bitfield => "bitfield",
            BitmapMode::Setbit => "setbit",
            BitmapMode::Script => "script",
        }
    }

    /// Parses a mode name.
    pub fn parse(text: &str) -> Result<BitmapMode> {
        BitmapMode::ALL
            .into_iter()
            .find(|m| m.name() == text)
            .ok_or_else(|| {
                Error::invalid(
                    "--mode",
                    format!("'{text}' is not one of bitfield, setbit, script"),
                )
            })
    }
}

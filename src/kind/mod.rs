//! A kind of structure: its [`Descriptor`] (what it is and can do, as data), its models (memory, rate,
//! geometry) and its constructor. The registry (`crate::registry`) lists every kind; the structures
//! themselves live in `structures/`, `peers/`, `remote/` and `external/`, one file each.

mod descriptor;
mod external;
mod speed_target;

pub use descriptor::{
    Capabilities, Crate, Descriptor, Family, Placement, RateModel, Role, Server, Wire,
};
pub use external::{External, Language};
pub use speed_target::{Comparison, OwnTarget, SpeedTarget, AT_TEN_MILLION};

use crate::hash::{HashFn, KeyHasher};
use crate::membership::{Geometry, Membership};
use crate::persist;
use crate::Result;

/// A registered kind of structure: its descriptor, models and constructor. Everything that is data about
/// a kind is in its [`Descriptor`]; the methods here compute.
pub trait Kind: Sync {
    /// What the registry knows about this kind.
    fn descriptor(&self) -> &Descriptor;
    /// The geometry a structure built for `config` starts with (what `size` and `advise` print).
    fn planned_geometry(&self, _config: &BuildConfig) -> Geometry {
        Geometry::default()
    }
    /// Predicted memory after `config.expected_keys` distinct inserts.
    fn predicted_memory(&self, config: &BuildConfig) -> MemoryModel;
    /// Predicted peak bytes while building (by default the final footprint).
    fn predicted_peak_bytes(&self, config: &BuildConfig) -> f64 {
        self.predicted_memory(config).footprint_bytes
    }
    /// Theoretical false-positive rate after the expected number of distinct inserts.
    fn predicted_fpr(&self, config: &BuildConfig) -> f64;
    /// Theoretical rate of a structure sized for `config` after `n_inserted` distinct keys, which may
    /// exceed the keys it was sized for (the overshoot line of `advise`); `None` where there is no model.
    fn predicted_fpr_after(&self, _config: &BuildConfig, _n_inserted: u64) -> Option<f64> {
        None
    }
    /// Builds an empty structure for `config`.
    fn build(&self, config: &BuildConfig) -> Result<Box<dyn Membership>>;
}

/// The descriptor's fields, read through any kind (these cannot be overridden: the descriptor is the one
/// place a kind says them).
impl dyn Kind + '_ {
    /// Stable kebab-case id.
    pub fn id(&self) -> &'static str {
        self.descriptor().id
    }
    /// One line for help and legends.
    pub fn summary(&self) -> &'static str {
        self.descriptor().summary
    }
    /// What it can do.
    pub fn capabilities(&self) -> Capabilities {
        self.descriptor().capabilities
    }
    /// Whether the answers are exact.
    pub fn exact(&self) -> bool {
        self.capabilities().exact
    }
    /// Whether its structures can forget a key.
    pub fn removable(&self) -> bool {
        self.capabilities().removable
    }
    /// Whether it keeps its rate however many keys arrive.
    pub fn growable(&self) -> bool {
        self.capabilities().growable
    }
    /// Whether it takes inserts one by one and answers at once.
    pub fn dynamic(&self) -> bool {
        self.capabilities().dynamic
    }
    /// Whether the structure lives on a server.
    pub fn remote(&self) -> bool {
        self.descriptor().remote()
    }
    /// What a structure on a server needs of it.
    pub fn server(&self) -> Option<Server> {
        match self.descriptor().placement {
            Placement::OurServer(server) => Some(server),
            _ => None,
        }
    }
    /// Whether this is a peer's structure (a crate's, or another language's tool), kept for comparison.
    pub fn peer(&self) -> bool {
        self.descriptor().peer()
    }
    /// For a tool of another language run as its own process: what the harness needs to run it.
    pub fn external(&self) -> Option<External> {
        match self.descriptor().placement {
            Placement::OtherProcess(external) => Some(external),
            _ => None,
        }
    }
    /// How the advisor weighs it.
    pub fn advisor(&self) -> Option<Advisor> {
        self.descriptor().advisor
    }
    /// How to rebuild one from a saved file.
    pub fn loader(&self) -> Option<Loader> {
        self.descriptor().loader
    }
    /// Whether it is sized for the target rate.
    pub fn sized_for_rate(&self) -> bool {
        self.capabilities().sized_for_rate
    }
    /// Whether keys past its capacity are still stored.
    pub fn stores_past_capacity(&self) -> bool {
        self.capabilities().stores_past_capacity
    }
    /// Whether it plays `role`.
    pub fn plays(&self, role: Role) -> bool {
        self.descriptor().roles.contains(&role)
    }
}

/// Lengths of the keys, for the exact set's memory model.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct KeyLengths {
    /// Mean key length in bytes.
    pub mean_bytes: f64,
    /// Mean heap footprint glibc gives one key allocation (see [`crate::theory::glibc_chunk_bytes`]).
    pub mean_chunk_bytes: f64,
}

impl KeyLengths {
    /// Statistics of a sample of key lengths.
    pub fn from_lengths(lengths: impl IntoIterator<Item = usize>) -> Self {
        let (mut n, mut sum, mut chunk) = (0u64, 0u64, 0u64);
        for len in lengths {
            n += 1;
            sum += len as u64;
            chunk += crate::theory::glibc_chunk_bytes(len as u64);
        }
        let n = n.max(1) as f64;
        KeyLengths {
            mean_bytes: sum as f64 / n,
            mean_chunk_bytes: chunk as f64 / n,
        }
    }
}

/// What a structure is built for.
#[derive(Clone, Debug, PartialEq)]
pub struct BuildConfig {
    /// Keys the structure is sized for.
    pub expected_keys: u64,
    /// Target false-positive rate.
    pub fpr: f64,
    /// Hash seed.
    pub seed: u64,
    /// Hash function ([`HashFn::DEFAULT`] unless asked otherwise).
    pub hash: HashFn,
    /// A fixed array size in bits instead of the kind's own sizing: the raw bitmap's m (default m = n), or
    /// the Bloom family's m instead of the rate-based size (k then chosen optimally for it; `blocked`
    /// rounds up to whole blocks).
    pub array_bits: Option<u64>,
    /// How the scalable filters grow (`scalable`, and RedisBloom's scaling filter); ignored by the others.
    pub growth: Growth,
    /// Key lengths, for the exact set's model.
    pub key_lengths: KeyLengths,
    /// The server and options of a shared (Redis) structure; `None` for in-process ones.
    pub remote: Option<crate::redis::RemoteConfig>,
    /// The sliding window of the windowed filter, in admitted keys (default: `expected_keys`); ignored by
    /// the others.
    pub window_keys: Option<u64>,
}

impl BuildConfig {
    /// A configuration for `expected_keys` at `fpr` with the defaults (the default hash, s = 2, r = 0.9,
    /// 77-byte keys).
    pub fn new(expected_keys: u64, fpr: f64, seed: u64) -> Self {
        BuildConfig {
            expected_keys,
            fpr,
            seed,
            hash: HashFn::DEFAULT,
            array_bits: None,
            growth: Growth::default(),
            key_lengths: KeyLengths {
                mean_bytes: 77.0,
                mean_chunk_bytes: 96.0,
            },
            remote: None,
            window_keys: None,
        }
    }

    /// The hash function keyed by the seed.
    pub fn hasher(&self) -> KeyHasher {
        KeyHasher::new(self.hash, self.seed)
    }
}

/// The memory a structure is predicted to hold.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MemoryModel {
    /// Bytes requested from the allocator (what the counting allocator measures).
    pub heap_bytes: f64,
    /// Bytes including the allocator's rounding and headers (what RSS sees).
    pub footprint_bytes: f64,
}

impl MemoryModel {
    /// A model whose footprint equals its heap bytes (one large allocation).
    pub fn flat(bytes: f64) -> Self {
        MemoryModel {
            heap_bytes: bytes,
            footprint_bytes: bytes,
        }
    }
}

/// What the advisor says about a kind beyond its models. Exact kinds rank first (in registry order)
/// while they fit; the rest rank by bytes.
#[derive(Clone, Copy, Debug)]
pub struct Advisor {
    /// Why one picks it, when it fits.
    pub pitch: &'static str,
    /// Why it is the regime ladder's rung where it is.
    pub rung: &'static str,
    /// Whether its model depends on the keys (their lengths), so a run's measured bytes per key are
    /// the better figure.
    pub prefers_measured_bytes: bool,
    /// How the advice sizes it, where that differs from the harness's default sizing.
    pub size_for_advice: Option<fn(&mut BuildConfig)>,
}

/// Rebuilds a structure from a checked saved file ([`crate::persist`]).
pub type Loader = fn(persist::Loaded<'_>) -> Result<Box<dyn Membership>>;

/// How a scalable filter grows: its build parameters beyond n and p.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Growth {
    /// Keys of the first slice; `None`: max(1000, n/64), so that a filter planned for n faces growth.
    pub initial_keys: Option<u64>,
    /// Growth s: each slice holds s times the keys of the one before.
    pub factor: f64,
    /// Tightening r: each slice's rate is r times the one before.
    pub tightening: f64,
}

impl Default for Growth {
    /// s = 2, r = 0.9, first slice max(1000, n/64).
    fn default() -> Self {
        Growth {
            initial_keys: None,
            factor: 2.0,
            tightening: 0.9,
        }
    }
}

impl Growth {
    /// Keys of the first slice of a filter planned for `expected_keys`.
    pub fn first_slice_keys(&self, expected_keys: u64) -> u64 {
        self.initial_keys
            .unwrap_or((expected_keys / 64).max(1000))
            .max(1)
    }
}

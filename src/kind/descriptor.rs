//! What the registry knows about a kind, as data: one [`Descriptor`] per kind, read by every part of the
//! workbench that must treat kinds differently (the plan, the experiments, the advice, the report). Code
//! that needs a particular structure asks for it by its [`Role`], never by its id.
//!
//! Invariants (tested in `registry`): ids are unique kebab-case; each role is held by exactly one kind;
//! a kind whose capabilities say `removable` builds structures that return `as_removable()`.

use super::{Advisor, External, Loader, OwnTarget, SpeedTarget};
use crate::workload::{Operation, Workload};

/// Everything the registry says about one kind, beyond its models and its constructor.
#[derive(Clone, Copy, Debug)]
pub struct Descriptor {
    /// Stable kebab-case id (results files, `--structures`).
    pub id: &'static str,
    /// One line for help and legends.
    pub summary: &'static str,
    /// What it is, for grouping in tables and legends.
    pub family: Family,
    /// Whose it is and where it runs.
    pub placement: Placement,
    /// What it can do.
    pub capabilities: Capabilities,
    /// How far its rate can be checked against its own model.
    pub rate_model: RateModel,
    /// The parts it plays that other code asks for by name (most kinds play none).
    pub roles: &'static [Role],
    /// How the advisor weighs it; `None` leaves it out of the advice (peers, servers).
    pub advisor: Option<Advisor>,
    /// How to rebuild one from a saved file, for kinds that can be saved.
    pub loader: Option<Loader>,
    /// The speed targets our structures must meet against this kind (a peer's list).
    pub speed_targets: &'static [SpeedTarget],
    /// Targets it sets itself (bits against another kind, lookups against the memory floor, parallel
    /// builds).
    pub own_targets: &'static [OwnTarget],
    /// Whether the default full suite measures it at 10⁹ keys: the article's bitmap and Bloom filter and
    /// the cache-blocked filter the advice names for large sets. The others stop at 10⁸ there and run at
    /// 10⁹ when named with `--structures`.
    pub at_full_suite_top: bool,
}

impl Descriptor {
    /// A descriptor with no roles, advice, loader or targets, for `id` of `family` at `placement`.
    pub const fn new(
        id: &'static str,
        summary: &'static str,
        family: Family,
        placement: Placement,
        capabilities: Capabilities,
        rate_model: RateModel,
    ) -> Self {
        Descriptor {
            id,
            summary,
            family,
            placement,
            capabilities,
            rate_model,
            roles: &[],
            advisor: None,
            loader: None,
            speed_targets: &[],
            own_targets: &[],
            at_full_suite_top: false,
        }
    }
    /// Whether a peer's crate, or a tool of another language, rather than ours.
    pub const fn peer(&self) -> bool {
        !matches!(self.placement, Placement::Ours | Placement::OurServer(_))
    }
    /// Whether it lives on a server.
    pub const fn remote(&self) -> bool {
        matches!(self.placement, Placement::OurServer(_))
    }
    /// Whether its structures live in this process (ours or a peer crate's).
    pub const fn in_process(&self) -> bool {
        matches!(self.placement, Placement::Ours | Placement::PeerCrate(_))
    }
    /// The crate it comes from, for a peer crate's row.
    pub const fn peer_crate(&self) -> Option<Crate> {
        match self.placement {
            Placement::PeerCrate(c) => Some(c),
            _ => None,
        }
    }
    /// Whether it can do `op`.
    pub fn supports(&self, op: Operation) -> bool {
        let c = self.capabilities;
        match op {
            Operation::InsertIfNew | Operation::Insert => c.dynamic,
            Operation::Delete => c.removable,
            // Anything can be built from a whole list; a static filter can only be built so.
            Operation::BuildOnce => true,
            Operation::Grow => c.growable,
            Operation::Window => c.expires,
            Operation::Save => self.loader.is_some(),
            Operation::Share => self.remote(),
        }
    }
    /// Whether it can serve `workload`: it does every operation the workload needs, and keeps its keys
    /// unless the workload is the window.
    pub fn serves(&self, workload: Workload) -> bool {
        workload.needs().iter().all(|op| self.supports(*op))
            && (workload.forgets() || !self.capabilities.expires)
    }
    /// The name a table gives it: its id, and for a peer crate's row the crate and version.
    pub fn label(&self) -> String {
        match self.peer_crate() {
            Some(c) => format!("{} ({} {})", self.id, c.name, c.version),
            None => self.id.to_string(),
        }
    }
}

/// A peer crate from crates.io, as its row names it; the version is the one `Cargo.lock` holds (tested).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Crate {
    pub name: &'static str,
    pub version: &'static str,
}

/// What a structure is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Every key stored (or its full hash): no false positive from the structure.
    ExactSet,
    /// One bit per key, one probe.
    Bitmap,
    /// k bits per key anywhere in the array.
    Bloom,
    /// k bits per key inside one cache line or word.
    BlockedBloom,
    /// Counters instead of bits: keys can be removed.
    CountingBloom,
    /// A chain of Bloom filters that grows with the keys.
    ScalableBloom,
    /// Generations of filters: keys expire after a window.
    WindowedBloom,
    /// Fingerprints in a table (quotient, cuckoo): removal, fixed capacity.
    FingerprintTable,
    /// Built once from all keys (xor, binary fuse): no inserts after.
    StaticFilter,
}

impl Family {
    /// The words a table or legend uses.
    pub fn words(self) -> &'static str {
        match self {
            Family::ExactSet => "exact set",
            Family::Bitmap => "raw bitmap",
            Family::Bloom => "Bloom",
            Family::BlockedBloom => "blocked Bloom",
            Family::CountingBloom => "counting Bloom",
            Family::ScalableBloom => "scalable Bloom",
            Family::WindowedBloom => "windowed Bloom",
            Family::FingerprintTable => "fingerprint table",
            Family::StaticFilter => "static filter",
        }
    }
}

/// Whose a kind is and where its structures live.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Placement {
    /// Ours, in this process.
    Ours,
    /// A peer crate's, in this process: a comparison row.
    PeerCrate(Crate),
    /// Ours, on a Redis server (it needs `BuildConfig::remote`; the grid leaves it to the shared-filter
    /// sweep).
    OurServer(Server),
    /// A tool of another language, run as its own process (`crate::external`): it cannot be built in
    /// process.
    OtherProcess(External),
}

/// What a structure on a server needs of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Server {
    /// The server module it needs (`MODULE LIST` name), if any.
    pub module: Option<&'static str>,
    /// Whether the server hashes the keys itself (our hash is then not part of its cost).
    pub hashes_keys: bool,
    /// What one key costs on the wire.
    pub wire: Wire,
    /// Whether a round trip sent again after a lost server gets its first answers back (kept on the
    /// server), so no key is called seen for it.
    pub answers_kept_for_resend: bool,
    /// Whether it moves bits in several ways (`redis::BitmapMode`), each measured by the sweep.
    pub has_write_modes: bool,
}

/// What one inserted key puts on the wire, for the model of bytes per key (`analysis::sweep`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire {
    /// The key itself as one argument, one integer reply.
    KeyArgument,
    /// A fixed-size argument (a fingerprint of this many bytes), one integer reply.
    FixedArgument { bytes: u32 },
    /// k field operations (`SET u1 OFFSET 1`), k replies: a client-hashed bitmap.
    FieldOperations,
}

/// What a kind can do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// No false positives beyond collisions of the key's own hash.
    pub exact: bool,
    /// Its structures implement `Removable`.
    pub removable: bool,
    /// It keeps its rate (or exactness) however many keys arrive beyond those it was sized for.
    pub growable: bool,
    /// Keys beyond those it was sized for are still stored (its rate rises, or it grows); a filter that
    /// refuses inserts when full would lose them, so the overshoot experiment leaves it out.
    pub stores_past_capacity: bool,
    /// It takes inserts one by one and answers at once (static filters do not).
    pub dynamic: bool,
    /// It is sized for the target rate (the raw bitmap is sized m = n, whatever the rate).
    pub sized_for_rate: bool,
    /// It forgets keys older than a window by design.
    pub expires: bool,
}

impl Capabilities {
    /// A fixed-size filter: approximate, no removal, no growth, dynamic, sized for the rate.
    pub const FILTER: Capabilities = Capabilities {
        exact: false,
        removable: false,
        growable: false,
        stores_past_capacity: true,
        dynamic: true,
        sized_for_rate: true,
        expires: false,
    };
    /// An exact set that grows and forgets.
    pub const EXACT_SET: Capabilities = Capabilities {
        exact: true,
        removable: true,
        growable: true,
        ..Capabilities::FILTER
    };
}

/// How far a kind's stated rate (`Membership::expected_fpr`) is a model of the structure it built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateModel {
    /// Exact: no false positive expected (beyond a hash collision too rare to see).
    Exact,
    /// The rate at the structure's actual geometry and fill: observed rates must match it.
    Fill,
    /// The target it was built for, or a crate's own estimate: a statement, not a model to test.
    Stated,
}

/// A part a kind plays that other code asks the registry for by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The exact baseline: every URL stored.
    ExactSet,
    /// The exact set of 64-bit fingerprints (the exact map of the expiry workload).
    ExactFingerprints,
    /// The article's raw bitmap, one bit per URL.
    RawBitmap,
    /// The reference Bloom filter every reader of the articles knows; `dedup`'s default.
    ReferenceBloom,
    /// The cache-blocked filter the advice names for large sets.
    BlockedBloom,
    /// The filter that deletes.
    DeletingFilter,
    /// The filter that grows as keys arrive.
    GrowingFilter,
    /// The filter whose keys expire after a window.
    ExpiringFilter,
    /// The Bloom filter shared on a server (RedisBloom).
    SharedBloom,
    /// The Bloom filter we keep in a plain server bitmap (SETBIT/GETBIT).
    SharedBitmap,
    /// The server's own filter that grows as keys arrive (RedisBloom's scaling filter).
    SharedGrowingFilter,
    /// The exact set of the articles' readers' language (Python's `set()`).
    ExternalExactSet,
}

impl Role {
    /// Every role, for the registry's check that each is held once.
    pub const ALL: [Role; 12] = [
        Role::ExactSet,
        Role::ExactFingerprints,
        Role::RawBitmap,
        Role::ReferenceBloom,
        Role::BlockedBloom,
        Role::DeletingFilter,
        Role::GrowingFilter,
        Role::ExpiringFilter,
        Role::SharedBloom,
        Role::SharedBitmap,
        Role::SharedGrowingFilter,
        Role::ExternalExactSet,
    ];
}

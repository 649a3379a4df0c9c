//! The registry: every structure the workbench knows, in report order, and the operations that iterate
//! it (look-up by id, selection lists, saving and loading files). Adding a structure is one file (in
//! `structures/`, `peers/` or `remote/`), its `pub mod` line and its line in [`REGISTRY`] (a peer also
//! takes the `#[cfg(feature = "peers")]` above it); nothing else names it. An external row (a tool of
//! another language, `external/`) is its program in `peers/`, its constant and its line here.

mod fuzz;
mod saved;

pub use fuzz::{fuzz_loader, FuzzSummary};
pub use saved::{load, savable_ids, save};

use crate::kind::{Kind, Role, SpeedTarget};
#[cfg(feature = "peers")]
use crate::peers;
use crate::structures;
use crate::{external, remote, Error, Result};

/// Every registered structure, in report order.
pub const REGISTRY: &[&dyn Kind] = &[
    &structures::hashset::HashSetKind,
    &structures::fingerprint::FingerprintKind,
    &structures::bitmap::BitmapKind,
    &structures::bloom::BloomKind,
    &structures::blocked::BlockedKind,
    &structures::counting::CountingKind,
    &structures::cuckoo::CuckooKind,
    &structures::scalable::ScalableKind,
    &structures::windowed::WindowedKind,
    #[cfg(feature = "peers")]
    &peers::fastbloom::FastBloomKind,
    #[cfg(feature = "peers")]
    &peers::bloomfilter::BloomfilterKind,
    #[cfg(feature = "peers")]
    &peers::growable::GrowableKind,
    #[cfg(feature = "peers")]
    &peers::sbbf::SbbfKind,
    #[cfg(feature = "peers")]
    &peers::binary_fuse::BinaryFuse8Kind,
    #[cfg(feature = "peers")]
    &peers::binary_fuse::BinaryFuse16Kind,
    #[cfg(feature = "peers")]
    &peers::qfilter::QFILTER,
    #[cfg(feature = "peers")]
    &peers::qfilter::QFILTER_RESIZABLE,
    #[cfg(feature = "peers")]
    &peers::cuckoofilter::CuckoofilterKind,
    #[cfg(all(feature = "peers", dedupbench_boost))]
    &peers::boost::MULTIBLOCK32_KIND,
    #[cfg(all(feature = "peers", dedupbench_boost))]
    &peers::boost::MULTIBLOCK64_KIND,
    &remote::redis_bloom::RedisBloomKind,
    &remote::redis_bloom::RedisBloomScalingKind,
    &remote::redis_bitmap::RedisBitmapKind,
    &remote::redis_set::RedisSetKind,
    &remote::redis_set::RedisSetFingerprintKind,
    &external::PY_SET,
    &external::PY_ARTICLE_BLOOM,
    &external::PYBLOOM_LIVE,
    &external::PYBLOOM_LIVE_SCALABLE,
    &external::RBLOOM,
    &external::GUAVA,
    &external::COMMONS_COLLECTIONS,
];

/// The group name that selects every external row (`--structures external`).
pub const EXTERNAL_GROUP: &str = "external";

/// The kind that plays `role`. Every role is held by exactly one registered kind (tested below), so this
/// cannot fail in a build that passed its tests.
pub fn role(role: Role) -> &'static dyn Kind {
    REGISTRY
        .iter()
        .copied()
        .find(|k| k.plays(role))
        .unwrap_or_else(|| panic!("no registered kind plays {role:?}"))
}

/// The id of the kind that plays `role`.
pub fn role_id(role: Role) -> &'static str {
    self::role(role).id()
}

/// The structure `dedup` builds when none is named: the reference Bloom filter, the one every reader of
/// the articles knows.
pub fn default_id() -> &'static str {
    role_id(Role::ReferenceBloom)
}

/// A speed target with the peer it is set against.
#[derive(Clone, Copy, Debug)]
pub struct PeerTarget {
    /// The peer's id.
    pub peer: &'static str,
    /// Our structure's id.
    pub ours: &'static str,
    pub target: &'static SpeedTarget,
}

/// Every speed target of every peer that carries one, in registry order (with or without the `peers`
/// feature: see [`crate::peers::WITH_SPEED_TARGETS`]).
pub fn speed_targets() -> impl Iterator<Item = PeerTarget> {
    crate::peers::WITH_SPEED_TARGETS.iter().flat_map(|d| {
        d.speed_targets.iter().map(|target| PeerTarget {
            peer: d.id,
            ours: role_id(target.ours),
            target,
        })
    })
}

/// The kind registered under `id`.
pub fn find(id: &str) -> Result<&'static dyn Kind> {
    REGISTRY
        .iter()
        .copied()
        .find(|k| k.id() == id)
        .ok_or_else(|| {
            Error::invalid(
                "structure",
                format!("unknown id '{id}'; known ids: {}", ids().join(", ")),
            )
        })
}

/// All registered ids.
pub fn ids() -> Vec<&'static str> {
    REGISTRY.iter().map(|k| k.id()).collect()
}

/// The in-process kinds (every kind but the Redis backends and the external rows).
pub fn local_kinds() -> impl Iterator<Item = &'static dyn Kind> {
    REGISTRY
        .iter()
        .copied()
        .filter(|k| !k.remote() && k.external().is_none())
}

/// The external rows: tools of other languages, each run as its own process.
pub fn external_kinds() -> impl Iterator<Item = &'static dyn Kind> {
    REGISTRY.iter().copied().filter(|k| k.external().is_some())
}

/// The Redis backends.
pub fn remote_kinds() -> impl Iterator<Item = &'static dyn Kind> {
    REGISTRY.iter().copied().filter(|k| k.remote())
}

/// A `--structures` list as parsed: `all`, or the kinds named (groups expanded, in the order given).
#[derive(Clone)]
pub enum Selection {
    /// Every in-process kind and every external row (the Redis backends run when `--redis` names a
    /// server); the default suites cap some rows at their top size.
    All,
    /// The kinds named: each runs at every scale of the suite.
    Named(Vec<&'static dyn Kind>),
}

impl Selection {
    /// Parses `all`, or a comma-separated list of ids and group names (see [`parse_list`]).
    pub fn parse(list: &str) -> Result<Selection> {
        if list.trim() == "all" {
            return Ok(Selection::All);
        }
        named(list).map(Selection::Named)
    }
    /// The list named on the command line (clap's parser).
    pub fn from_arg(list: &str) -> std::result::Result<Selection, String> {
        Selection::parse(list).map_err(|e| e.to_string())
    }
    /// The kinds selected.
    pub fn kinds(&self) -> Vec<&'static dyn Kind> {
        match self {
            Selection::All => local_kinds().chain(external_kinds()).collect(),
            Selection::Named(kinds) => kinds.clone(),
        }
    }
}

impl std::fmt::Debug for Selection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Selection::All => f.write_str("all"),
            Selection::Named(kinds) => f
                .debug_list()
                .entries(kinds.iter().map(|k| k.id()))
                .finish(),
        }
    }
}

/// Parses a comma-separated list of ids and group names (`external`: every external row), or `all`
/// (every in-process kind and every external row; the Redis backends run when `--redis` names a server).
pub fn parse_list(list: &str) -> Result<Vec<&'static dyn Kind>> {
    Selection::parse(list).map(|s| s.kinds())
}

/// The kinds a list other than `all` names, groups expanded, each once, in the order given.
fn named(list: &str) -> Result<Vec<&'static dyn Kind>> {
    let mut kinds: Vec<&'static dyn Kind> = Vec::new();
    for id in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let group: Vec<&'static dyn Kind> = if id == EXTERNAL_GROUP {
            external_kinds().collect()
        } else {
            vec![find(id)?]
        };
        for kind in group {
            if !kinds.iter().any(|k| k.id() == kind.id()) {
                kinds.push(kind);
            }
        }
    }
    if kinds.is_empty() {
        return Err(Error::invalid(
            "--structures",
            format!("empty list; known ids: {}", ids().join(", ")),
        ));
    }
    Ok(kinds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_role_is_played_by_exactly_one_kind() {
        for role in Role::ALL {
            let players: Vec<&str> = REGISTRY
                .iter()
                .filter(|k| k.plays(role))
                .map(|k| k.id())
                .collect();
            assert_eq!(players.len(), 1, "{role:?} is played by {players:?}");
        }
    }

    #[test]
    fn every_peer_crate_names_the_version_cargo_lock_holds() {
        let lock = include_str!("../../Cargo.lock");
        let locked = |name: &str| -> Vec<&str> {
            let entry = format!("name = \"{name}\"\nversion = \"");
            lock.match_indices(&entry)
                .filter_map(|(at, _)| lock[at + entry.len()..].split('"').next())
                .collect()
        };
        let peers: Vec<_> = REGISTRY
            .iter()
            .filter_map(|k| k.descriptor().peer_crate())
            .collect();
        assert_eq!(peers.is_empty(), !cfg!(feature = "peers"));
        for c in peers {
            assert_eq!(locked(c.name), [c.version], "{c:?}");
        }
    }

    #[test]
    fn a_workload_is_served_by_some_in_process_kind_and_the_window_only_by_the_expiring_filter() {
        use crate::workload::Workload;
        for w in Workload::ALL {
            let serving: Vec<&str> = REGISTRY
                .iter()
                .filter(|k| k.descriptor().in_process() && k.descriptor().serves(w))
                .map(|k| k.id())
                .collect();
            assert!(!serving.is_empty(), "{w}");
            if w == Workload::Window {
                assert_eq!(serving, [role_id(Role::ExpiringFilter)]);
            } else {
                assert!(!serving.contains(&role_id(Role::ExpiringFilter)), "{w}");
            }
        }
    }

    #[test]
    fn every_registered_kind_with_speed_targets_is_listed_for_every_build() {
        for k in REGISTRY
            .iter()
            .filter(|k| !k.descriptor().speed_targets.is_empty())
        {
            assert!(
                crate::peers::WITH_SPEED_TARGETS
                    .iter()
                    .any(|d| d.id == k.id()),
                "{}",
                k.id()
            );
        }
    }

    #[test]
    fn a_speed_target_is_set_for_ours_against_a_peer() {
        for t in speed_targets() {
            assert!(!find(t.ours).unwrap().peer(), "{t:?}");
            assert!(find(t.peer).unwrap().peer(), "{t:?}");
        }
    }
}

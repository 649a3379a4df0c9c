//! The workloads the articles name, as a type: what each one does to its structure ([`Operation`]), how
//! the workbench measures it, and how it is named on the command line and in results. A kind serves a
//! workload when its descriptor supports every operation the workload needs
//! ([`crate::kind::Descriptor::supports`]); `bench --workload` and `advise --workload` both read that.
//!
//! Invariant: every workload's name parses back to itself (tested), and every workload but `window` needs
//! a structure that keeps its keys (a filter that forgets after a window serves only `window`).

use crate::{Error, Result};
use std::fmt;

/// What a workload does to its structure, and what a kind can do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operation {
    /// Inserts one key at a time and answers at once whether it was new (a stream).
    InsertIfNew,
    /// Inserts every key it is given, a repeat as another copy where the structure counts: what a
    /// structure that deletes must do, since skipping a key it wrongly calls present would let a later
    /// deletion of the other key take it away (insert-if-new with deletes loses keys).
    Insert,
    /// Removes a key that was inserted.
    Delete,
    /// Built once from the whole list, then only queried.
    BuildOnce,
    /// Keeps its rate however many keys arrive beyond those it was sized for.
    Grow,
    /// Forgets keys older than a window.
    Window,
    /// Written to a file and loaded elsewhere.
    Save,
    /// Shared by several processes or machines (lives on a server).
    Share,
}

impl Operation {
    /// The words a table or message uses.
    pub fn words(self) -> &'static str {
        match self {
            Operation::InsertIfNew => "insert-if-new",
            Operation::Insert => "insert",
            Operation::Delete => "delete",
            Operation::BuildOnce => "build-once",
            Operation::Grow => "grow",
            Operation::Window => "window",
            Operation::Save => "save",
            Operation::Share => "share across processes",
        }
    }
}

/// A workload the articles name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Workload {
    /// Insert-if-new over a stream of URLs: the crawler's frontier (the default).
    #[default]
    Crawl,
    /// Built once from a list, then only queried, mostly by non-members (spam, blocked IPs and
    /// addresses).
    Blocklist,
    /// A steady population with inserts and deletes, queried mostly by members, with bursts of
    /// non-members (the cache-penetration attack the second article names).
    CacheGuard,
    /// Keys expire after a window (re-crawl after N days).
    Window,
    /// Built on one machine and sent to others: serialized bytes, build and load time count as much as
    /// lookups.
    Shipped,
}

impl Workload {
    /// Every workload, in the order the report shows their ladders.
    pub const ALL: [Workload; 5] = [
        Workload::Crawl,
        Workload::Blocklist,
        Workload::CacheGuard,
        Workload::Window,
        Workload::Shipped,
    ];

    /// The name on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Crawl => "crawl",
            Workload::Blocklist => "blocklist",
            Workload::CacheGuard => "cache-guard",
            Workload::Window => "window",
            Workload::Shipped => "shipped",
        }
    }

    /// The words a heading uses.
    pub fn title(self) -> &'static str {
        match self {
            Workload::Crawl => "Crawl (insert-if-new over a stream)",
            Workload::Blocklist => "Blocklist (built once, queried by non-members)",
            Workload::CacheGuard => "Cache guard (inserts, deletes, member lookups)",
            Workload::Window => "Expiry window (keys forgotten after a window)",
            Workload::Shipped => "Shipped filter (built here, loaded elsewhere)",
        }
    }

    /// The operations a structure must support to serve it.
    pub fn needs(self) -> &'static [Operation] {
        match self {
            Workload::Crawl => &[Operation::InsertIfNew],
            Workload::Blocklist => &[Operation::BuildOnce],
            Workload::CacheGuard => &[Operation::Insert, Operation::Delete],
            Workload::Window => &[Operation::InsertIfNew, Operation::Window],
            Workload::Shipped => &[Operation::BuildOnce, Operation::Save],
        }
    }

    /// Whether a structure that forgets keys after a window can serve it (only the window itself).
    pub fn forgets(self) -> bool {
        self == Workload::Window
    }

    /// Which lookups dominate it, for the speed the report's ladder quotes (a blocklist is asked mostly
    /// about strangers, a cache guard mostly about keys it holds, a crawl about both). The cost model
    /// prices the non-member lookup, the only one a false positive can hit.
    pub fn lookups(self) -> Lookups {
        match self {
            Workload::Blocklist => Lookups::NonMembers,
            Workload::CacheGuard => Lookups::Members,
            Workload::Crawl | Workload::Window | Workload::Shipped => Lookups::Mixed,
        }
    }

    /// Parses a name.
    pub fn from_text(text: &str) -> Result<Workload> {
        Workload::ALL
            .into_iter()
            .find(|w| w.name() == text)
            .ok_or_else(|| {
                Error::invalid(
                    "--workload",
                    format!(
                        "unknown workload '{text}'; known: {}",
                        Workload::ALL.map(Workload::name).join(", ")
                    ),
                )
            })
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

crate::results::text_serde!(Workload);

/// Which lookups a workload is asked most.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookups {
    Members,
    NonMembers,
    Mixed,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_bad_names_list_the_known_ones() {
        for w in Workload::ALL {
            assert_eq!(Workload::from_text(w.name()).unwrap(), w);
        }
        let e = Workload::from_text("dns").unwrap_err().to_string();
        assert!(e.contains("--workload") && e.contains("cache-guard"), "{e}");
    }

    #[test]
    fn only_the_window_forgets_and_every_workload_needs_something() {
        for w in Workload::ALL {
            assert!(!w.needs().is_empty());
            assert_eq!(w.forgets(), w.needs().contains(&Operation::Window));
        }
    }
}

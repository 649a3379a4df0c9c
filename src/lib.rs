//! dedupbench: measures when an exact set of seen URLs stops being the right tool, and which probabilistic
//! structure, sized how, should replace it.
//!
//! Data flows one way: [`keys`] generates URLs (streaming, by index) → [`structures`] hold them (every
//! kind named in the [`registry`]) → [`run`] measures every (structure, n) cell → [`results`] stores
//! records → [`analysis`] computes fits, ratios and the regime ladder from them → [`report`] draws them
//! and [`advise`] answers with them.
//! Scale: key sets are never held by the harness; the generator is a pure function of the index, so the
//! same code serves 10⁴ and 10⁹ keys.

pub mod advise;
pub mod analysis;
pub mod atomic_file;
pub mod dedup;
pub mod error;
pub mod expiry;
pub mod external;
pub mod hash;
pub mod input_file;
pub mod keys;
pub mod kind;
pub mod measure;
pub mod mem;
pub mod membership;
pub mod peers;
pub mod persist;
pub mod redis;
pub mod registry;
pub mod remote;
pub mod report;
pub mod results;
pub mod run;
pub mod stats;
pub mod structures;
pub mod theory;
pub mod units;
pub mod workload;

pub use error::{Error, Result};

#[cfg(test)]
#[global_allocator]
static COUNTING: measure::CountingAllocator = measure::CountingAllocator;

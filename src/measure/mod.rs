//! Measurement: exact heap bytes from a counting global allocator, process RSS from sysinfo, machine facts.

pub mod alloc;
pub mod floor;
pub mod machine;

pub use alloc::{heap_snapshot, CountingAllocator, HeapSnapshot};

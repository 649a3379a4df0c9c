//! A counting global allocator: exact live heap bytes (as requested) and glibc's real footprint.
//!
//! Install it in a binary with `#[global_allocator] static A: CountingAllocator = CountingAllocator;`.
//! It wraps the system allocator and keeps three relaxed atomic counters: live requested bytes, live usable
//! bytes (`malloc_usable_size`, which includes glibc's rounding), and live allocations (each costs one more
//! 8-byte chunk header). Where it is not installed, every reading is zero and [`is_installed`] says so.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering::Relaxed};

static REQUESTED: AtomicI64 = AtomicI64::new(0);
static USABLE: AtomicI64 = AtomicI64::new(0);
static LIVE: AtomicI64 = AtomicI64::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// The counting allocator.
pub struct CountingAllocator;

#[inline]
fn usable(ptr: *mut u8) -> i64 {
    // SAFETY: `ptr` was returned by the system allocator (glibc malloc) and is still live.
    unsafe { libc::malloc_usable_size(ptr as *mut libc::c_void) as i64 }
}

#[inline]
fn record(ptr: *mut u8, size: usize) {
    if !ptr.is_null() {
        REQUESTED.fetch_add(size as i64, Relaxed);
        USABLE.fetch_add(usable(ptr), Relaxed);
        LIVE.fetch_add(1, Relaxed);
        INSTALLED.store(true, Relaxed);
    }
}

#[inline]
fn forget(ptr: *mut u8, size: usize) {
    REQUESTED.fetch_sub(size as i64, Relaxed);
    USABLE.fetch_sub(usable(ptr), Relaxed);
    LIVE.fetch_sub(1, Relaxed);
}

// SAFETY: every call is forwarded to `System`; the counters do not affect the memory returned.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = System.alloc(layout);
        record(ptr, layout.size());
        ptr
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let ptr = System.alloc_zeroed(layout);
        record(ptr, layout.size());
        ptr
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        forget(ptr, layout.size());
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old_usable = usable(ptr);
        let new = System.realloc(ptr, layout, new_size);
        if !new.is_null() {
            REQUESTED.fetch_add(new_size as i64 - layout.size() as i64, Relaxed);
            USABLE.fetch_add(usable(new) - old_usable, Relaxed);
        }
        new
    }
}

/// Live heap at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeapSnapshot {
    /// Bytes requested by live allocations.
    pub requested_bytes: i64,
    /// Bytes glibc reserves for them: usable size plus an 8-byte header each.
    pub footprint_bytes: i64,
    /// Live allocations.
    pub allocations: i64,
}

impl HeapSnapshot {
    /// The change from `earlier` to `self`.
    pub fn since(&self, earlier: &HeapSnapshot) -> HeapSnapshot {
        HeapSnapshot {
            requested_bytes: self.requested_bytes - earlier.requested_bytes,
            footprint_bytes: self.footprint_bytes - earlier.footprint_bytes,
            allocations: self.allocations - earlier.allocations,
        }
    }
}

/// The current live heap (zeros where the allocator is not installed).
pub fn heap_snapshot() -> HeapSnapshot {
    let live = LIVE.load(Relaxed);
    HeapSnapshot {
        requested_bytes: REQUESTED.load(Relaxed),
        footprint_bytes: USABLE.load(Relaxed) + 8 * live,
        allocations: live,
    }
}

/// Whether the counting allocator is this process's global allocator (it has seen an allocation).
pub fn is_installed() -> bool {
    INSTALLED.load(Relaxed)
}

//! Memory helpers shared by the in-process structures and the memory floor: software prefetch (one
//! distance for every batched path) and transparent huge pages for large arrays (`madvise`), with the
//! process's huge-page count read back from `/proc/self/smaps_rollup`. Hints only: nothing here changes
//! what an array holds.

/// Keys whose blocks are prefetched ahead in batched paths. The memory floor uses the same distance.
pub const PREFETCH_AHEAD: usize = 32;

/// Prefetches word `index` of `words` (no-op past the end).
#[inline(always)]
pub fn prefetch_word(words: &[u64], index: usize) {
    if let Some(word) = words.get(index) {
        prefetch(word as *const u64);
    }
}

/// Prefetches the cache line at `ptr`.
#[inline(always)]
pub fn prefetch_ptr(ptr: *const u64) {
    prefetch(ptr)
}

#[inline(always)]
fn prefetch(ptr: *const u64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; it never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(ptr as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = ptr;
}

/// Arrays at least this large ask the kernel for transparent huge pages.
pub const HUGE_PAGE_MIN_BYTES: usize = 4 << 20;

/// Asks for transparent huge pages (`madvise(MADV_HUGEPAGE)`) over the 2 MiB-aligned interior of a large
/// array, so random probes into it stop missing the TLB. Best effort: an error is ignored.
pub fn advise_huge_pages<T>(slice: &[T]) {
    if std::mem::size_of_val(slice) >= HUGE_PAGE_MIN_BYTES {
        advise(slice, 2 << 20, libc::MADV_HUGEPAGE);
    }
}

/// `madvise(advice)` over the `align`-aligned interior of `slice` (best effort; errors are ignored).
pub fn advise<T>(slice: &[T], align: usize, advice: libc::c_int) {
    let start = slice.as_ptr() as usize;
    let aligned = start.next_multiple_of(align);
    let end = (start + std::mem::size_of_val(slice)) / align * align;
    if end > aligned {
        // SAFETY: the range lies inside the live allocation of `slice`; these advices change no content.
        unsafe {
            libc::madvise(aligned as *mut libc::c_void, end - aligned, advice);
        }
    }
}

/// Bytes of this process's anonymous memory backed by transparent huge pages (from smaps_rollup).
pub fn anon_huge_page_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/smaps_rollup")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("AnonHugePages:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kib| kib.parse::<u64>().ok())
        })
        .map(|kib| kib * 1024)
        .unwrap_or(0)
}

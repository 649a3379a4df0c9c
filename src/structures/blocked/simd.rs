//! AVX2 kernels for `blocked`, chosen at run time when the CPU has AVX2 (and inlined into their callers
//! when the crate is built for such a CPU, as `.cargo/config.toml` asks).
//!
//! The split layout exists for this: probe j of a round takes 6 bits of that round's 64-bit source at a
//! fixed place ([`super::SHIFTS`]), so a key's 8 word masks are two variable right shifts of the source,
//! an and, and two variable left shifts of ones (a lane past k shifts a zero instead of a one), with no
//! multiply; a block test is two and-nots and one test over the 64-byte line.
//! The masks are bit-for-bit the scalar path's (tested), so a filter built on one path answers
//! identically on the other.

use super::{source, PREFETCH_AHEAD, SHIFTS};
use crate::hash::{reduce, KeyHash};
use std::arch::x86_64::*;

/// Whether this CPU can run these kernels.
pub fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
}

/// The contract of the batch kernels: `body` holds `blocks` blocks and starts on a 64-byte boundary.
fn check_body(body: &[u64], blocks: u64) {
    assert!(body.len() as u64 >= blocks * 8 && (body.as_ptr() as usize).is_multiple_of(64));
}

/// The ones a round's masks are shifted from: lane w of row p is 1 where w < p and 0 elsewhere, so row p
/// lets the first p probes of a round through (a zero shifted stays zero: no lane needs switching off
/// after its shift). A `const`, so the kernels read it from their own constant pool (a `static` is
/// reached through the GOT: one more dependent load per key).
const LANES_ON: [[i64; 8]; 9] = {
    let mut rows = [[0i64; 8]; 9];
    let mut p = 0;
    while p < 9 {
        let mut w = 0;
        while w < p {
            rows[p][w] = 1;
            w += 1;
        }
        p += 1;
    }
    rows
};

/// A key's masks as two vectors (words 0–3 and 4–7): lane w holds the bits that probes w, w + 8, w + 16
/// set in word w.
#[target_feature(enable = "avx2")]
#[inline]
fn mask_vectors(h1: u64, hashes: u32) -> (__m256i, __m256i) {
    let (mut lo, mut hi) = round_masks(h1, 0, hashes.min(8));
    let mut round = 1;
    while round * 8 < hashes {
        let (l, h) = round_masks(h1, round, (hashes - round * 8).min(8));
        lo = _mm256_or_si256(lo, l);
        hi = _mm256_or_si256(hi, h);
        round += 1;
    }
    (lo, hi)
}

/// The masks of round `round`'s first `probes` probes (1 ≤ probes ≤ 8).
#[target_feature(enable = "avx2")]
#[inline]
fn round_masks(h1: u64, round: u32, probes: u32) -> (__m256i, __m256i) {
    let low_six = _mm256_set1_epi64x(63);
    let on = &LANES_ON[probes as usize];
    // SAFETY: SHIFTS and a row of LANES_ON are 8 u64s each; every unaligned 32-byte load reads 4 of them.
    let (shift_lo, shift_hi, on_lo, on_hi) = unsafe {
        (
            _mm256_loadu_si256(SHIFTS.as_ptr() as *const __m256i),
            _mm256_loadu_si256(SHIFTS.as_ptr().add(4) as *const __m256i),
            _mm256_loadu_si256(on.as_ptr() as *const __m256i),
            _mm256_loadu_si256(on.as_ptr().add(4) as *const __m256i),
        )
    };
    let src = _mm256_set1_epi64x(source(h1, round) as i64);
    let bit_lo = _mm256_and_si256(_mm256_srlv_epi64(src, shift_lo), low_six);
    let bit_hi = _mm256_and_si256(_mm256_srlv_epi64(src, shift_hi), low_six);
    (
        _mm256_sllv_epi64(on_lo, bit_lo),
        _mm256_sllv_epi64(on_hi, bit_hi),
    )
}

/// The 8 word masks of one key (the scalar path's masks, computed by the vector unit).
#[target_feature(enable = "avx2")]
pub fn masks(h1: u64, hashes: u32) -> [u64; 8] {
    let mut out = [0u64; 8];
    let (lo, hi) = mask_vectors(h1, hashes);
    // SAFETY: `out` is 64 bytes, written by two unaligned 32-byte stores.
    unsafe {
        _mm256_storeu_si256(out.as_mut_ptr() as *mut __m256i, lo);
        _mm256_storeu_si256(out.as_mut_ptr().add(4) as *mut __m256i, hi);
    }
    out
}

/// Whether the block at `line` has every bit of (lo, hi).
///
/// # Safety
/// `line` is 64-byte aligned and valid for reads of 8 words.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn has_all(line: *const u64, lo: __m256i, hi: __m256i) -> bool {
    // SAFETY: the caller's contract; both halves are 32-byte aligned.
    let (b0, b1) = unsafe {
        (
            _mm256_load_si256(line as *const __m256i),
            _mm256_load_si256(line.add(4) as *const __m256i),
        )
    };
    let missing = _mm256_or_si256(_mm256_andnot_si256(b0, lo), _mm256_andnot_si256(b1, hi));
    _mm256_testz_si256(missing, missing) == 1
}

/// Sets (lo, hi) in the block at `line`; whether any of them was clear.
///
/// # Safety
/// `line` is 64-byte aligned, valid for reads and writes of 8 words, and no other thread touches it.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn set_all(line: *mut u64, lo: __m256i, hi: __m256i) -> bool {
    // SAFETY: the caller's contract; both halves are 32-byte aligned.
    unsafe {
        let (p0, p1) = (line as *mut __m256i, line.add(4) as *mut __m256i);
        let (b0, b1) = (_mm256_load_si256(p0), _mm256_load_si256(p1));
        let missing = _mm256_or_si256(_mm256_andnot_si256(b0, lo), _mm256_andnot_si256(b1, hi));
        _mm256_store_si256(p0, _mm256_or_si256(b0, lo));
        _mm256_store_si256(p1, _mm256_or_si256(b1, hi));
        _mm256_testz_si256(missing, missing) == 0
    }
}

/// Whether one key's bits are all set (the per-key lookup: a handful of instructions, so the core keeps
/// several keys' misses in flight even without prefetching). The line is prefetched as soon as its
/// address is known, before the masks: the two loads that follow would otherwise wait in the scheduler
/// behind the mask arithmetic, and a per-key loop out of cache then keeps fewer misses in flight.
///
/// # Safety
/// `body` is 64-byte aligned and valid for reads of `blocks` blocks of 8 words.
#[target_feature(enable = "avx2")]
#[inline]
pub unsafe fn contains_one(body: *const u64, blocks: u64, hashes: u32, hash: KeyHash) -> bool {
    // SAFETY: reduce(·, blocks) < blocks, so the line lies inside `body` and is 64-byte aligned (the
    // caller's contract).
    let line = unsafe { body.add(reduce(hash.h1, blocks) as usize * 8) };
    crate::mem::prefetch_ptr(line);
    if hashes > 8 {
        // SAFETY: the caller's contract.
        return unsafe { contains_one_rounds(body, blocks, hashes, hash) };
    }
    let (lo, hi) = round_masks(hash.h1, 0, hashes);
    // SAFETY: as above.
    unsafe { has_all(line, lo, hi) }
}

/// Sets one key's bits; returns whether any was clear.
///
/// # Safety
/// `body` is 64-byte aligned and valid for reads and writes of `blocks` blocks of 8 words, and no other
/// thread touches it.
#[target_feature(enable = "avx2")]
#[inline]
pub unsafe fn insert_one(body: *mut u64, blocks: u64, hashes: u32, hash: KeyHash) -> bool {
    // SAFETY: as in `contains_one`.
    let line = unsafe { body.add(reduce(hash.h1, blocks) as usize * 8) };
    crate::mem::prefetch_ptr(line);
    if hashes > 8 {
        // SAFETY: the caller's contract.
        return unsafe { insert_one_rounds(body, blocks, hashes, hash) };
    }
    let (lo, hi) = round_masks(hash.h1, 0, hashes);
    // SAFETY: as in `contains_one`.
    unsafe { set_all(line, lo, hi) }
}

/// [`contains_one`] for k > 8 (rates of about 10⁻³ and below), out of line so that the common case of
/// one round keeps its masks in registers.
///
/// # Safety
/// As [`contains_one`].
#[target_feature(enable = "avx2")]
#[inline(never)]
unsafe fn contains_one_rounds(body: *const u64, blocks: u64, hashes: u32, hash: KeyHash) -> bool {
    let (lo, hi) = mask_vectors(hash.h1, hashes);
    // SAFETY: as in `contains_one`.
    unsafe { has_all(body.add(reduce(hash.h1, blocks) as usize * 8), lo, hi) }
}

/// [`insert_one`] for k > 8, out of line.
///
/// # Safety
/// As [`insert_one`].
#[target_feature(enable = "avx2")]
#[inline(never)]
unsafe fn insert_one_rounds(body: *mut u64, blocks: u64, hashes: u32, hash: KeyHash) -> bool {
    let (lo, hi) = mask_vectors(hash.h1, hashes);
    // SAFETY: as in `contains_one`.
    unsafe { set_all(body.add(reduce(hash.h1, blocks) as usize * 8), lo, hi) }
}

/// Counts the hashes whose bits are all set, prefetching each block [`PREFETCH_AHEAD`] keys ahead.
///
/// `body` must start on a 64-byte boundary and hold `blocks` blocks of 8 words.
#[target_feature(enable = "avx2")]
pub fn contains_batch(body: &[u64], blocks: u64, hashes: u32, batch: &[KeyHash]) -> u64 {
    check_body(body, blocks);
    let mut found = 0u64;
    for (i, hash) in batch.iter().enumerate() {
        if let Some(ahead) = batch.get(i + PREFETCH_AHEAD) {
            // A prefetch never faults, so its address needs no bounds check: reduce(·, blocks) < blocks.
            crate::mem::prefetch_ptr(
                body.as_ptr()
                    .wrapping_add(reduce(ahead.h1, blocks) as usize * 8),
            );
        }
        let (lo, hi) = mask_vectors(hash.h1, hashes);
        let at = reduce(hash.h1, blocks) as usize * 8;
        // SAFETY: reduce(·, blocks) < blocks, so the 8 words at `at` lie inside `body` (checked above),
        // and `at` is a multiple of 8 words from a 64-byte aligned start.
        found += unsafe { has_all(body.as_ptr().add(at), lo, hi) } as u64;
    }
    found
}

/// Sets every hash's bits, prefetching each block [`PREFETCH_AHEAD`] keys ahead; returns how many keys
/// set at least one new bit. Same alignment contract as [`contains_batch`].
#[target_feature(enable = "avx2")]
pub fn insert_batch(body: &mut [u64], blocks: u64, hashes: u32, batch: &[KeyHash]) -> u64 {
    check_body(body, blocks);
    // SAFETY: `body` holds `blocks` blocks (checked) and is borrowed mutably, so nothing else touches it.
    unsafe { insert_batch_raw(body.as_mut_ptr(), blocks, hashes, batch) }
}

/// [`insert_batch`] through a raw pointer, for the owner-writes build where other threads hold the same
/// array but never touch the blocks these hashes fall in.
///
/// # Safety
/// `body` is 64-byte aligned and valid for reads and writes of `blocks` blocks of 8 words; while this
/// runs no other thread reads or writes the blocks `batch` falls in.
#[target_feature(enable = "avx2")]
pub unsafe fn insert_batch_raw(body: *mut u64, blocks: u64, hashes: u32, batch: &[KeyHash]) -> u64 {
    // SAFETY: the caller's contract.
    unsafe { insert_loop(body, blocks, hashes, batch, |_, _| true) }
}

/// Sets every hash's bits in order, prefetching each block [`PREFETCH_AHEAD`] keys ahead (and no second
/// time just before its write, as [`insert_one`] does alone); `each(i, new)` hears whether key i set a new
/// bit and stops the batch after it by returning `false`. Returns how many keys were new. Same alignment
/// contract as [`contains_batch`].
#[target_feature(enable = "avx2")]
pub fn insert_each(
    body: &mut [u64],
    blocks: u64,
    hashes: u32,
    batch: &[KeyHash],
    each: &mut dyn FnMut(usize, bool) -> bool,
) -> u64 {
    check_body(body, blocks);
    // SAFETY: `body` holds `blocks` blocks (checked) and is borrowed mutably, so nothing else touches it.
    unsafe { insert_loop(body.as_mut_ptr(), blocks, hashes, batch, each) }
}

/// The loop of [`insert_batch_raw`] and [`insert_each`], generic over what hears each answer (so the
/// batch build, which hears none, pays no call per key).
///
/// # Safety
/// As [`insert_batch_raw`].
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn insert_loop(
    body: *mut u64,
    blocks: u64,
    hashes: u32,
    batch: &[KeyHash],
    mut each: impl FnMut(usize, bool) -> bool,
) -> u64 {
    let mut new = 0u64;
    for (i, hash) in batch.iter().enumerate() {
        if let Some(ahead) = batch.get(i + PREFETCH_AHEAD) {
            // SAFETY: reduce(·, blocks) < blocks, so the address lies inside `body`; a prefetch never faults.
            let at = reduce(ahead.h1, blocks) as usize * 8;
            crate::mem::prefetch_ptr(unsafe { body.add(at) });
        }
        let (lo, hi) = mask_vectors(hash.h1, hashes);
        let at = reduce(hash.h1, blocks) as usize * 8;
        // SAFETY: reduce(·, blocks) < blocks, so the aligned line at `at` lies inside `body` (the caller's
        // contract), and no other thread touches it.
        let was_new = unsafe { set_all(body.add(at), lo, hi) };
        new += u64::from(was_new);
        if !each(i, was_new) {
            break;
        }
    }
    new
}

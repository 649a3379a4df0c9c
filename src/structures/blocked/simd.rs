//! AVX-512 kernels for `blocked`, chosen at run time when the CPU has AVX-512F and DQ.
//!
//! The salted layout exists for this: the 8 word masks of a key are one vector multiply of h2 by the
//! salts, a shift, and a variable shift of ones (probe i → word i mod 8, as in the scalar `locate`), and a
//! block test is one and-not plus one test over the whole 64-byte line. The masks are bit-for-bit the
//! scalar path's (tested), so a filter built on one path answers identically on the other.

use super::{PREFETCH_AHEAD, SALTS};
use crate::hash::{reduce, KeyHash};
use std::arch::x86_64::*;

/// Whether this CPU can run these kernels.
pub fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512dq")
}

/// The contract of the batch kernels: `body` holds `blocks` blocks and starts on a 64-byte boundary.
fn check_body(body: &[u64], blocks: u64) {
    assert!(body.len() as u64 >= blocks * 8 && (body.as_ptr() as usize).is_multiple_of(64));
}

/// The masks of one key as a vector: lane w holds the bits probe w, w + 8, w + 16 set in word w.
#[target_feature(enable = "avx512f,avx512dq")]
#[inline]
fn mask_vector(h2: u64, hashes: u32) -> __m512i {
    let ones = _mm512_set1_epi64(1);
    let h2 = _mm512_set1_epi64(h2 as i64);
    let mut masks = _mm512_setzero_si512();
    for (chunk, salts) in SALTS.chunks_exact(8).enumerate() {
        let probes = hashes.saturating_sub(chunk as u32 * 8).min(8);
        if probes == 0 {
            break;
        }
        // SAFETY: `salts` is exactly 8 u64s, so the unaligned 64-byte load stays inside it.
        let salts = unsafe { _mm512_loadu_si512(salts.as_ptr() as *const __m512i) };
        let bit = _mm512_srli_epi64::<58>(_mm512_mullo_epi64(h2, salts));
        let active = ((1u32 << probes) - 1) as __mmask8;
        masks = _mm512_or_si512(masks, _mm512_maskz_sllv_epi64(active, ones, bit));
    }
    masks
}

/// The 8 word masks of one key (the scalar path's `locate` masks, computed by the vector unit).
#[target_feature(enable = "avx512f,avx512dq")]
pub fn masks(h2: u64, hashes: u32) -> [u64; 8] {
    let mut out = [0u64; 8];
    // SAFETY: `out` is 64 bytes, written by one unaligned store.
    unsafe { _mm512_storeu_si512(out.as_mut_ptr() as *mut __m512i, mask_vector(h2, hashes)) };
    out
}

/// Whether one key's bits are all set (the per-key lookup: a few instructions, so the core keeps several
/// keys' misses in flight even without prefetching). Same alignment contract as [`contains_batch`].
#[target_feature(enable = "avx512f,avx512dq")]
pub fn contains_one(body: &[u64], blocks: u64, hashes: u32, hash: KeyHash) -> bool {
    let at = reduce(hash.h1, blocks) as usize * 8;
    assert!(at + 8 <= body.len());
    // SAFETY: the 8 words at `at` lie inside `body` (asserted), a multiple of 8 words from its 64-byte
    // aligned start (the callers' contract).
    let block = unsafe { _mm512_load_si512(body.as_ptr().add(at) as *const __m512i) };
    let missing = _mm512_andnot_si512(block, mask_vector(hash.h2, hashes));
    _mm512_test_epi64_mask(missing, missing) == 0
}

/// Sets one key's bits; returns whether any was clear. Same contract as [`contains_one`].
#[target_feature(enable = "avx512f,avx512dq")]
pub fn insert_one(body: &mut [u64], blocks: u64, hashes: u32, hash: KeyHash) -> bool {
    let at = reduce(hash.h1, blocks) as usize * 8;
    assert!(at + 8 <= body.len());
    let masks = mask_vector(hash.h2, hashes);
    // SAFETY: as in `contains_one`; `body` is borrowed mutably, so nothing else sees the store.
    unsafe {
        let line = body.as_mut_ptr().add(at) as *mut __m512i;
        let block = _mm512_load_si512(line as *const __m512i);
        let missing = _mm512_andnot_si512(block, masks);
        _mm512_store_si512(line, _mm512_or_si512(block, masks));
        _mm512_test_epi64_mask(missing, missing) != 0
    }
}

/// Counts the hashes whose bits are all set, prefetching each block [`PREFETCH_AHEAD`] keys ahead.
///
/// `body` must start on a 64-byte boundary and hold `blocks` blocks of 8 words.
#[target_feature(enable = "avx512f,avx512dq")]
pub fn contains_batch(body: &[u64], blocks: u64, hashes: u32, batch: &[KeyHash]) -> u64 {
    check_body(body, blocks);
    let mut found = 0u64;
    for (i, hash) in batch.iter().enumerate() {
        if let Some(ahead) = batch.get(i + PREFETCH_AHEAD) {
            super::prefetch_word(body, reduce(ahead.h1, blocks) as usize * 8);
        }
        let masks = mask_vector(hash.h2, hashes);
        let at = reduce(hash.h1, blocks) as usize * 8;
        // SAFETY: reduce(·, blocks) < blocks, so the 8 words at `at` lie inside `body` (asserted above),
        // and `at` is a multiple of 8 words from a 64-byte aligned start: the aligned load is valid.
        let block = unsafe { _mm512_load_si512(body.as_ptr().add(at) as *const __m512i) };
        let missing = _mm512_andnot_si512(block, masks);
        found += (_mm512_test_epi64_mask(missing, missing) == 0) as u64;
    }
    found
}

/// Sets every hash's bits, prefetching each block [`PREFETCH_AHEAD`] keys ahead; returns how many keys
/// set at least one new bit. Same alignment contract as [`contains_batch`].
#[target_feature(enable = "avx512f,avx512dq")]
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
#[target_feature(enable = "avx512f,avx512dq")]
pub unsafe fn insert_batch_raw(body: *mut u64, blocks: u64, hashes: u32, batch: &[KeyHash]) -> u64 {
    let mut new = 0u64;
    for (i, hash) in batch.iter().enumerate() {
        if let Some(ahead) = batch.get(i + PREFETCH_AHEAD) {
            // SAFETY: reduce(·, blocks) < blocks, so the address lies inside `body`; a prefetch never faults.
            let at = reduce(ahead.h1, blocks) as usize * 8;
            crate::mem::prefetch_ptr(unsafe { body.add(at) });
        }
        let masks = mask_vector(hash.h2, hashes);
        let at = reduce(hash.h1, blocks) as usize * 8;
        // SAFETY: reduce(·, blocks) < blocks, so the aligned line at `at` lies inside `body` (the caller's
        // contract), and no other thread touches it.
        unsafe {
            let line = body.add(at) as *mut __m512i;
            let block = _mm512_load_si512(line as *const __m512i);
            let missing = _mm512_andnot_si512(block, masks);
            new += (_mm512_test_epi64_mask(missing, missing) != 0) as u64;
            _mm512_store_si512(line, _mm512_or_si512(block, masks));
        }
    }
    new
}

//! The expiry experiment: one contender over the re-crawl stream, every answer judged by an exact shadow of
//! its own admissions; only the contender's answers are timed.

use super::contenders::State;
use super::stream::{RecrawlStream, ARRIVALS_PER_WINDOW};
use super::Contender;
use crate::hash::KeyHash;
use crate::keys::UrlGenerator;
use crate::kind::BuildConfig;
use crate::Result;
use std::collections::HashMap;
use std::time::Instant;

/// Keys generated and hashed ahead of one timed batch.
const BATCH: usize = 4096;

/// What one contender did over one stream.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ExpiryRecord {
    pub contender: Contender,
    pub window_keys: u64,
    pub target_fpr: f64,
    pub arrivals: u64,
    pub admitted: u64,
    /// Arrivals the shadow calls new (never admitted, or admitted more than W admissions ago).
    pub truly_new: u64,
    /// Of those, called seen.
    pub wrongly_skipped: u64,
    /// Of the wrongly skipped, URLs never admitted before (false positives, as any filter has).
    pub skipped_never_admitted: u64,
    /// Of the wrongly skipped, URLs admitted more than W admissions ago but still held (the windowed
    /// filter's lag of up to one generation; a counting filter's false positives on them).
    pub skipped_expired: u64,
    /// Arrivals admitted within the last W admissions.
    pub inside_window: u64,
    /// Of those, called new.
    pub wrongly_readmitted: u64,
    /// Bytes held at the end of the stream, and per key of the window.
    pub bytes: u64,
    pub bytes_per_window_key: f64,
    /// Time answering, per arrival (keys generated and hashed beforehand).
    pub ns_per_arrival: f64,
}

/// Runs `contender` over [`ARRIVALS_PER_WINDOW`] × W arrivals of the re-crawl stream.
pub fn run(
    contender: Contender,
    window_keys: u64,
    fpr: f64,
    seed: u64,
    generator: &UrlGenerator,
) -> Result<ExpiryRecord> {
    let arrivals = ARRIVALS_PER_WINDOW * window_keys;
    let mut config = BuildConfig::new(window_keys, fpr, seed);
    config.window_keys = Some(window_keys);
    let mut state = State::new(contender, &config)?;
    // Every contender's keys are hashed as its structure hashes them (the exact map keeps h1).
    let hasher = config.hasher();
    let mut stream = RecrawlStream::new(seed, window_keys);
    // Sized once for every arrival: growing by doubling would hold two tables at the last resize, past
    // the experiment's peak model (one table of 4 windows of entries).
    let mut shadow: HashMap<u64, u64> = HashMap::with_capacity(arrivals as usize);
    let (mut admitted, mut truly_new, mut wrongly_skipped) = (0u64, 0u64, 0u64);
    let (mut inside_window, mut wrongly_readmitted) = (0u64, 0u64);
    let (mut skipped_never_admitted, mut skipped_expired) = (0u64, 0u64);
    let mut timed_ns = 0u128;
    // One batch's keys, back to back in one buffer: no allocation per key.
    let mut bytes: Vec<u8> = Vec::with_capacity(BATCH * 96);
    let mut keys: Vec<(u64, std::ops::Range<usize>, KeyHash)> = Vec::with_capacity(BATCH);
    let mut answers: Vec<bool> = Vec::with_capacity(BATCH);
    let mut done = 0u64;
    while done < arrivals {
        let take = (arrivals - done).min(BATCH as u64);
        keys.clear();
        bytes.clear();
        for index in stream.by_ref().take(take as usize) {
            let start = bytes.len();
            generator.append_member(index, &mut bytes);
            let hash = hasher.hash(&bytes[start..]);
            keys.push((index, start..bytes.len(), hash));
        }
        answers.clear();
        let started = Instant::now();
        for (_, range, hash) in &keys {
            answers.push(state.offer(&bytes[range.clone()], *hash, window_keys));
        }
        timed_ns += started.elapsed().as_nanos();
        for ((index, _, _), new) in keys.iter().zip(&answers) {
            let last = shadow.get(index).copied();
            let inside = last.is_some_and(|tick| admitted - tick <= window_keys);
            if inside {
                inside_window += 1;
                wrongly_readmitted += u64::from(*new);
            } else {
                truly_new += 1;
                if !*new {
                    wrongly_skipped += 1;
                    match last {
                        Some(_) => skipped_expired += 1,
                        None => skipped_never_admitted += 1,
                    }
                }
            }
            if *new {
                admitted += 1;
                shadow.insert(*index, admitted);
            }
        }
        done += take;
    }
    let bytes = state.bytes();
    Ok(ExpiryRecord {
        contender,
        window_keys,
        target_fpr: fpr,
        arrivals,
        admitted,
        truly_new,
        wrongly_skipped,
        skipped_never_admitted,
        skipped_expired,
        inside_window,
        wrongly_readmitted,
        bytes,
        bytes_per_window_key: bytes as f64 / window_keys as f64,
        ns_per_arrival: timed_ns as f64 / arrivals as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expiry::contenders::State;
    use crate::keys::Profile;

    #[test]
    fn no_contender_readmits_inside_its_window_and_the_exact_map_never_errs() {
        let g = UrlGenerator::new(Profile::default_profile(), 42);
        let window = 20_000;
        for contender in Contender::ALL {
            let r = run(contender, window, 0.01, 9, &g).unwrap();
            assert_eq!(r.arrivals, 80_000);
            assert_eq!(r.wrongly_readmitted, 0, "{contender:?}: {r:?}");
            match contender {
                // The exact map answers as a perfect shadow of the stream would, to the arrival.
                Contender::ExactMap => {
                    assert_eq!(r.wrongly_skipped, 0, "{r:?}");
                    assert_eq!(
                        (r.inside_window, r.truly_new),
                        perfect_answers(window, 9),
                        "{r:?}"
                    );
                }
                // A filter skips some new URLs: its false positives, and for the windowed filter keys
                // kept up to a generation past the window.
                _ => assert!(r.wrongly_skipped > 0, "{r:?}"),
            }
        }
    }

    /// (arrivals inside their window, truly new arrivals) of the stream of `seed` answered perfectly.
    fn perfect_answers(window: u64, seed: u64) -> (u64, u64) {
        let mut stream = RecrawlStream::new(seed, window);
        let mut last: HashMap<u64, u64> = HashMap::new();
        let (mut admitted, mut inside, mut new) = (0u64, 0u64, 0u64);
        for _ in 0..ARRIVALS_PER_WINDOW * window {
            let index = stream.next().unwrap();
            if last.get(&index).is_some_and(|t| admitted - t <= window) {
                inside += 1;
            } else {
                new += 1;
                admitted += 1;
                last.insert(index, admitted);
            }
        }
        (inside, new)
    }

    /// The counting filter's skips of truly new URLs are its false positives at the keys it holds when
    /// each arrives: their count matches the sum of those rates both ways (a false alarm of 10⁻⁹, on
    /// enough arrivals to see a rate 20% off). The windowed filter skips more (its lag), for fewer bytes.
    #[test]
    fn the_counting_filter_skips_at_its_rate_and_the_windowed_filter_adds_its_lag() {
        let g = UrlGenerator::new(Profile::default_profile(), 42);
        let (window, fpr, seed) = (60_000u64, 0.01, 9);
        let counting = run(Contender::CountingWithLog, window, fpr, seed, &g).unwrap();
        // The same stream again, summing the filter's own rate at what it holds before each truly new URL.
        let mut config = BuildConfig::new(window, fpr, seed);
        config.window_keys = Some(window);
        let mut state = State::new(Contender::CountingWithLog, &config).unwrap();
        let hasher = config.hasher();
        let mut stream = RecrawlStream::new(seed, window);
        let mut last: HashMap<u64, u64> = HashMap::new();
        let (mut admitted, mut truly_new, mut skipped, mut expected) = (0u64, 0u64, 0u64, 0.0);
        let mut key = Vec::new();
        for _ in 0..ARRIVALS_PER_WINDOW * window {
            let index = stream.next().unwrap();
            key.clear();
            g.append_member(index, &mut key);
            let inside = last.get(&index).is_some_and(|t| admitted - t <= window);
            if !inside {
                truly_new += 1;
                if let State::CountingWithLog { filter, log } = &state {
                    let held = log.len().min(window as usize + 1) as u64;
                    expected += crate::membership::Membership::expected_fpr(filter, held);
                }
            }
            let new = state.offer(&key, hasher.hash(&key), window);
            skipped += u64::from(!inside && !new);
            if new {
                admitted += 1;
                last.insert(index, admitted);
            }
        }
        assert_eq!(
            (skipped, truly_new),
            (counting.wrongly_skipped, counting.truly_new),
            "the replay answers as the experiment did"
        );
        if let Err(e) = crate::stats::check_rate(skipped, truly_new, expected / truly_new as f64) {
            panic!("counting filter with its log: {e}");
        }
        let windowed = run(Contender::Windowed, window, fpr, seed, &g).unwrap();
        assert!(
            windowed.wrongly_skipped > counting.wrongly_skipped,
            "{windowed:?} {counting:?}"
        );
        // Bytes: the log costs the counting design more than the whole windowed filter.
        assert!(windowed.bytes < counting.bytes, "{windowed:?} {counting:?}");
    }
}

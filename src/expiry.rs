//! The expiry experiment: URLs that become eligible again after a window of W admitted URLs. A re-crawl
//! stream ([`RecrawlStream`]) goes through three contenders, each asked "was it new?" per arrival:
//! - [`Contender::Windowed`]: rotating generations of blocked filters ([`crate::structures::windowed`]);
//! - [`Contender::CountingWithLog`]: a counting filter sized for W with an exact log of the hashes it
//!   admitted, in order, to delete each W admissions later (the first article's design: the log is the
//!   memory a filter was meant to save);
//! - [`Contender::ExactMap`]: a hashbrown table of 64-bit fingerprints (the URL's hash, not the URL) with
//!   a queue of them in admission order, to evict each W admissions later.
//!
//! All three admit a URL once and do not refresh it when it recurs inside the window (a crawler skips it):
//! its age counts from the crawl, so the exact contender needs no last-seen time, only the admission order.
//! An entry's admission tick follows from its place in the log or queue (one entry per admission), so no
//! tick is stored. Log, queue and table are allocated for the window up front, so their bytes are the
//! model's, as the filters' are.
//!
//! The clock is each contender's own count of admissions (arrivals it called new). An exact shadow of that
//! contender's admissions (member index → tick, never forgetting) judges every answer:
//! - wrongly skipped: called seen, but not admitted within the last W admissions (a false positive, or a
//!   key kept past its window);
//! - wrongly re-admitted: called new although admitted within the last W admissions (must be zero for all
//!   three: none loses a key inside its window).
//!
//! Only the contender's answers are timed, per batch of keys generated and hashed beforehand; the shadow
//! and the key generation are not. Bytes are each contender's own accounting at the end of the stream
//! (steady state: the stream is [`ARRIVALS_PER_WINDOW`] windows long): filter arrays, the log's and queue's
//! capacity, the map's hashbrown layout.

use crate::hash::KeyHash;
use crate::keys::UrlGenerator;
use crate::kind::{BuildConfig, Kind};
use crate::membership::{Membership, Removable};
use crate::structures::counting::{CountingBloom, CountingKind};
use crate::structures::windowed::{WindowPlan, Windowed, WindowedKind};
use crate::Result;
use hashbrown::HashTable;
use std::collections::{HashMap, VecDeque};
use std::time::Instant;

/// Arrivals per stream, in windows: three windows to fill and rotate, one to measure at steady state.
pub const ARRIVALS_PER_WINDOW: u64 = 4;
/// Share of arrivals that are re-crawls of an earlier URL.
pub const RECRAWL_FRACTION: f64 = 0.5;
/// Re-crawl distances are uniform over 1..=this many windows, counted in distinct URLs; the window counts
/// admissions, re-admitted re-crawls included, so fewer than a third of the re-crawls fall inside it
/// (29% measured at 10⁵).
pub const RECRAWL_SPAN_WINDOWS: u64 = 3;
/// Keys generated and hashed ahead of one timed batch.
const BATCH: usize = 4096;

/// The three ways to forget URLs after a window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Contender {
    Windowed,
    CountingWithLog,
    ExactMap,
}

impl Contender {
    /// Every contender, in report order.
    pub const ALL: [Contender; 3] = [
        Contender::Windowed,
        Contender::CountingWithLog,
        Contender::ExactMap,
    ];

    /// The name in reports and advice.
    pub fn name(self) -> &'static str {
        match self {
            Contender::Windowed => "windowed filter",
            Contender::CountingWithLog => "counting filter + delete log",
            Contender::ExactMap => "exact map with eviction queue",
        }
    }
}

/// A stream position: the member index emitted.
#[derive(Clone, Debug)]
pub struct RecrawlStream {
    window_keys: u64,
    distinct: u64,
    state: u64,
}

impl RecrawlStream {
    /// A stream whose re-crawls reach back up to [`RECRAWL_SPAN_WINDOWS`] × `window_keys` distinct URLs.
    pub fn new(seed: u64, window_keys: u64) -> RecrawlStream {
        RecrawlStream {
            window_keys: window_keys.max(1),
            distinct: 0,
            state: seed ^ 0xBB67_AE85_84CA_A73B,
        }
    }
}

impl Iterator for RecrawlStream {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        let z = crate::hash::splitmix64(&mut self.state);
        let u = (z >> 11) as f64 / (1u64 << 53) as f64;
        let span = RECRAWL_SPAN_WINDOWS * self.window_keys;
        let distance = 1 + crate::hash::reduce(z.rotate_left(29), span);
        if u < RECRAWL_FRACTION && distance <= self.distinct {
            Some(self.distinct - distance)
        } else {
            self.distinct += 1;
            Some(self.distinct - 1)
        }
    }
}

/// One contender's state.
/// Each contender held as its concrete type, so that no arrival pays a dynamic call the exact map does not.
enum State {
    Windowed(Windowed),
    CountingWithLog {
        filter: CountingBloom,
        /// The hashes admitted, oldest first: the last W + 1 admissions (ages 0..=W).
        log: VecDeque<KeyHash>,
    },
    ExactMap {
        set: HashTable<u64>,
        /// The fingerprints admitted, oldest first, as the log.
        queue: VecDeque<u64>,
    },
}

impl State {
    /// The contender's state for a window of `config.window_keys` keys.
    fn new(contender: Contender, config: &BuildConfig) -> Result<State> {
        let window_keys = config.window_keys.unwrap_or(config.expected_keys);
        Ok(match contender {
            Contender::Windowed => {
                State::Windowed(Windowed::new(WindowPlan::of(config), config.hasher()))
            }
            Contender::CountingWithLog => State::CountingWithLog {
                filter: CountingBloom::for_config(config)?,
                log: VecDeque::with_capacity(window_entries(window_keys) + 1),
            },
            Contender::ExactMap => State::ExactMap {
                set: HashTable::with_capacity(window_entries(window_keys) + 1),
                queue: VecDeque::with_capacity(window_entries(window_keys) + 1),
            },
        })
    }

    /// Answers "was it new?" for a key at admission count `admitted` (admitting it if so). An entry of
    /// age more than W admissions is expired: with one entry per admission, that is every entry beyond
    /// the newest W + 1.
    fn offer(&mut self, key: &[u8], hash: KeyHash, window_keys: u64) -> bool {
        let keep = window_entries(window_keys);
        match self {
            State::Windowed(s) => s.insert_hashed(key, hash),
            State::CountingWithLog { filter, log } => {
                while log.len() > keep {
                    if let Some(h) = log.pop_front() {
                        filter.remove_hashed(&[], h);
                    }
                }
                if !filter.insert_if_new(key, hash) {
                    return false;
                }
                log.push_back(hash);
                true
            }
            State::ExactMap { set, queue } => {
                while queue.len() > keep {
                    if let Some(old) = queue.pop_front() {
                        if let Ok(entry) = set.find_entry(old, |v| *v == old) {
                            entry.remove();
                        }
                    }
                }
                let fingerprint = hash.h1;
                match set.entry(fingerprint, |v| *v == fingerprint, |v| *v) {
                    hashbrown::hash_table::Entry::Occupied(_) => return false,
                    hashbrown::hash_table::Entry::Vacant(slot) => {
                        slot.insert(fingerprint);
                    }
                }
                queue.push_back(fingerprint);
                true
            }
        }
    }

    /// Bytes held: arrays, the log's and queue's capacity, the table's hashbrown layout.
    fn bytes(&self) -> u64 {
        match self {
            State::Windowed(s) => s.bytes_held(),
            State::CountingWithLog { filter, log } => {
                filter.bytes_held() + (log.capacity() * std::mem::size_of::<KeyHash>()) as u64
            }
            State::ExactMap { set, queue } => {
                crate::theory::hashbrown_table_bytes(set.capacity() as u64, 8)
                    + (queue.capacity() * std::mem::size_of::<u64>()) as u64
            }
        }
    }
}

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

/// Entries a log or queue consults for a window of W: the last W + 1 admissions (ages 0..=W); one more
/// is held between an admission and the next arrival's eviction.
fn window_entries(window_keys: u64) -> usize {
    window_keys as usize + 1
}

/// Bytes each contender needs for a window of W keys at rate p, from the models: the windowed filter's
/// generations, the counting filter plus a full log, the table at W + 1 fingerprints plus its queue.
pub fn model_bytes(contender: Contender, window_keys: u64, fpr: f64) -> f64 {
    let mut config = BuildConfig::new(window_keys, fpr, 0);
    config.window_keys = Some(window_keys);
    // What `State::new` allocates for the log and the queue.
    let held = window_entries(window_keys) as u64 + 1;
    match contender {
        Contender::Windowed => WindowedKind.predicted_peak_bytes(&config),
        Contender::CountingWithLog => {
            CountingKind.predicted_memory(&config).footprint_bytes
                + held as f64 * std::mem::size_of::<KeyHash>() as f64
        }
        Contender::ExactMap => {
            crate::theory::hashbrown_table_bytes(held, 8) as f64
                + held as f64 * std::mem::size_of::<u64>() as f64
        }
    }
}

/// One contender's standing for a window.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct WindowOption {
    pub contender: Contender,
    pub bytes: f64,
    pub bytes_per_window_key: f64,
    pub fits: bool,
    /// The largest window it holds within the budget.
    pub max_window_keys: f64,
    /// What it gets wrong, in words.
    pub errors: String,
}

/// The advice for a window of W keys at rate p within a budget: every contender from the models, and the
/// pick: the exact map while it fits (it never errs), else the windowed filter (a fraction of the
/// bytes; it also skips re-crawls up to a generation past the window), else the counting filter with its
/// log, which fits only where the windowed filter does too.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct WindowAdvice {
    pub window_keys: u64,
    pub fpr: f64,
    pub budget_bytes: f64,
    pub options: Vec<WindowOption>,
    pub pick: Option<Contender>,
}

/// Advises between the contenders for a window of `window_keys` at `fpr` within `budget_bytes`.
pub fn advise_window(window_keys: u64, fpr: f64, budget_bytes: f64) -> WindowAdvice {
    let lag = crate::structures::windowed::WindowPlan::of(&{
        let mut c = BuildConfig::new(window_keys, fpr, 0);
        c.window_keys = Some(window_keys);
        c
    })
    .generation_keys;
    let options: Vec<WindowOption> = Contender::ALL
        .iter()
        .map(|&c| {
            let bytes = model_bytes(c, window_keys, fpr);
            WindowOption {
                contender: c,
                bytes,
                bytes_per_window_key: bytes / window_keys.max(1) as f64,
                fits: bytes <= budget_bytes,
                max_window_keys: crate::analysis::regimes::largest_n(budget_bytes, |w| {
                    model_bytes(c, w, fpr)
                }),
                errors: match c {
                    Contender::Windowed => format!(
                        "skips ≤ {fpr} of never-seen URLs, and re-crawls up to {} URLs past the window (one generation)",
                        crate::units::human_count(lag as f64)
                    ),
                    Contender::CountingWithLog => {
                        format!("skips ≤ {fpr} of new URLs; the log is most of its bytes")
                    }
                    Contender::ExactMap => "none (64-bit fingerprints)".into(),
                },
            }
        })
        .collect();
    let fits = |c: Contender| options.iter().any(|o| o.contender == c && o.fits);
    let pick = [
        Contender::ExactMap,
        Contender::Windowed,
        Contender::CountingWithLog,
    ]
    .into_iter()
    .find(|c| fits(*c));
    WindowAdvice {
        window_keys,
        fpr,
        budget_bytes,
        options,
        pick,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::Profile;

    #[test]
    fn no_contender_readmits_inside_its_window_and_the_exact_map_never_errs() {
        let g = UrlGenerator::new(Profile::default_profile(), 42);
        let window = 20_000;
        for contender in Contender::ALL {
            let r = run(contender, window, 0.01, 9, &g).unwrap();
            assert_eq!(r.arrivals, 80_000);
            assert_eq!(r.wrongly_readmitted, 0, "{contender:?}: {r:?}");
            // About a third of the re-crawls fall inside the window.
            assert!(r.inside_window > 8_000 && r.inside_window < 20_000, "{r:?}");
            match contender {
                Contender::ExactMap => assert_eq!(r.wrongly_skipped, 0, "{r:?}"),
                // A filter skips some new URLs: its false positives, and for the windowed filter keys
                // kept up to a generation past the window.
                _ => assert!(r.wrongly_skipped > 0, "{r:?}"),
            }
        }
    }

    #[test]
    fn the_counting_filter_skips_at_its_rate_and_the_windowed_filter_adds_its_lag() {
        let g = UrlGenerator::new(Profile::default_profile(), 42);
        let window = 30_000;
        let counting = run(Contender::CountingWithLog, window, 0.01, 9, &g).unwrap();
        let rate = counting.wrongly_skipped as f64 / counting.truly_new as f64;
        // The counting filter holds at most W keys: its rate is at most p (99.9% interval's low end).
        let interval = crate::stats::wilson(counting.wrongly_skipped, counting.truly_new, 0.999);
        assert!(interval.low <= 0.0101, "{rate} {interval:?}");
        let windowed = run(Contender::Windowed, window, 0.01, 9, &g).unwrap();
        assert!(
            windowed.wrongly_skipped > counting.wrongly_skipped,
            "{windowed:?} {counting:?}"
        );
        // Bytes: the log costs the counting design more than the whole windowed filter.
        assert!(windowed.bytes < counting.bytes, "{windowed:?} {counting:?}");
    }

    #[test]
    fn a_week_of_ten_million_urls_a_day_fits_the_windowed_filter_in_a_gib() {
        let a = advise_window(70_000_000, 0.01, (1u64 << 30) as f64);
        assert_eq!(a.pick, Some(Contender::Windowed), "{a:?}");
        let bytes = |c: Contender| a.options.iter().find(|o| o.contender == c).unwrap().bytes;
        assert!(bytes(Contender::Windowed) < 0.2e9, "{a:?}");
        assert!(bytes(Contender::CountingWithLog) > 1.3e9, "{a:?}");
        assert!(bytes(Contender::ExactMap) > 1.5e9, "{a:?}");
        // With 8 GiB the exact map fits and never errs.
        let roomy = advise_window(70_000_000, 0.01, (8u64 << 30) as f64);
        assert_eq!(roomy.pick, Some(Contender::ExactMap));
    }

    #[test]
    fn the_stream_recrawls_half_its_arrivals() {
        let mut stream = RecrawlStream::new(1, 1000);
        let mut distinct = 0u64;
        let mut recrawls = 0u64;
        for _ in 0..100_000 {
            let i = stream.next().unwrap();
            if i == distinct {
                distinct += 1;
            } else {
                recrawls += 1;
            }
        }
        assert!(
            (recrawls as f64 / 100_000.0 - RECRAWL_FRACTION).abs() < 0.02,
            "{recrawls}"
        );
    }
}

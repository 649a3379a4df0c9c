//! The expiry workload: URLs that become eligible again after a window of W admitted URLs. A re-crawl
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

//!
//! The files: [`stream`] the re-crawl stream, [`contenders`] the three structures and their byte models,
//! [`experiment`] the run that judges them, [`advice`] the pick for a window and a budget.

pub mod advice;
pub mod contenders;
pub mod experiment;
pub mod stream;

pub use advice::{
    advise_window, measured_skips, MeasuredSkips, WindowAdvice, WindowOption, WindowTiming,
};
pub use contenders::model_bytes;
pub use experiment::{run, ExpiryRecord};
pub use stream::{RecrawlStream, ARRIVALS_PER_WINDOW, RECRAWL_FRACTION, RECRAWL_SPAN_WINDOWS};

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

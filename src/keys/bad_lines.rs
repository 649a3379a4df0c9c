//! What a URL reader does with a line it cannot take as a key (longer than
//! [`super::file::MAX_LINE_BYTES`], or holding a NUL byte), and the log of the lines it skipped.
//!
//! Invariant: a skipped line costs no more memory than an accepted one (its bytes past the limit are read
//! and dropped, never held), is neither a key nor numbered as one, and is counted exactly once.

use crate::{Error, Result};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

/// The policy for a bad line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BadLines {
    /// Stop with an error naming the file, the line and its start (a corrupt input file).
    #[default]
    Fail,
    /// Leave it out (no key, nothing written), count it, and read on.
    Skip,
}

impl BadLines {
    pub const ALL: [BadLines; 2] = [BadLines::Skip, BadLines::Fail];

    pub fn name(self) -> &'static str {
        match self {
            BadLines::Fail => "fail",
            BadLines::Skip => "skip",
        }
    }

    /// Parses a `--bad-lines` value.
    pub fn from_arg(text: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == text)
            .ok_or_else(|| {
                Error::invalid(
                    "--bad-lines",
                    format!("'{text}' is not a policy; one of: skip, fail"),
                )
            })
    }
}

/// The lines a reader skipped: how many, and the first (its line number and why), shared with whoever
/// reports them while the reading thread goes on (one reader records).
pub struct SkippedLines {
    count: AtomicU64,
    first: Mutex<Option<String>>,
    on_first: Box<dyn Fn(&str) + Send + Sync>,
}

impl SkippedLines {
    /// A log that calls `on_first` with the first skipped line's description, when it is skipped.
    pub fn new(on_first: impl Fn(&str) + Send + Sync + 'static) -> Self {
        SkippedLines {
            count: AtomicU64::new(0),
            first: Mutex::new(None),
            on_first: Box::new(on_first),
        }
    }

    /// Records a skipped line, described as "line N: why".
    pub fn record(&self, description: String) {
        // The first is stored before it is counted, so a reader of a count above 0 finds it.
        if self.count.load(Relaxed) == 0 {
            (self.on_first)(&description);
            if let Ok(mut first) = self.first.lock() {
                *first = Some(description);
            }
        }
        self.count.fetch_add(1, Relaxed);
    }

    /// Lines skipped so far.
    pub fn count(&self) -> u64 {
        self.count.load(Relaxed)
    }

    /// The first skipped line's description.
    pub fn first(&self) -> Option<String> {
        self.first.lock().ok().and_then(|f| f.clone())
    }
}

impl std::fmt::Debug for SkippedLines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkippedLines")
            .field("count", &self.count())
            .field("first", &self.first())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_parse_by_name_and_others_are_refused_with_the_choices() {
        for p in BadLines::ALL {
            assert_eq!(BadLines::from_arg(p.name()).unwrap(), p);
        }
        let e = BadLines::from_arg("pass").unwrap_err().to_string();
        assert!(e.contains("--bad-lines") && e.contains("skip, fail"), "{e}");
    }

    #[test]
    fn the_first_line_is_announced_once_and_every_line_counted() {
        let heard = std::sync::Arc::new(AtomicU64::new(0));
        let h = heard.clone();
        let log = SkippedLines::new(move |_| {
            h.fetch_add(1, Relaxed);
        });
        log.record("line 3: too long".into());
        log.record("line 9: NUL".into());
        assert_eq!(
            (log.count(), heard.load(Relaxed)),
            (2, 1),
            "counted twice, announced once"
        );
        assert_eq!(log.first().as_deref(), Some("line 3: too long"));
    }
}

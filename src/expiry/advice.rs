//! The advice for a sliding window: every contender's bytes from its model against a budget, and the
//! pick (the exact map while it fits, else the windowed filter, else the counting filter with its log).

use super::contenders::model_bytes;
use super::Contender;
use crate::kind::BuildConfig;

/// One contender's standing for a window.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct WindowOption {
    pub contender: Contender,
    #[serde(serialize_with = "crate::units::serde_bytes::serialize")]
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
    /// The window, in admissions: URLs let through (new ones and re-crawls alike).
    pub window_keys: u64,
    pub fpr: f64,
    #[serde(serialize_with = "crate::units::serde_bytes::serialize")]
    pub budget_bytes: f64,
    pub options: Vec<WindowOption>,
    pub pick: Option<Contender>,
    /// How many admissions past its window the windowed filter may still hold a URL (one generation).
    pub lag_admissions: u64,
    /// With an admission rate: the window and the lag as times.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timing: Option<WindowTiming>,
    /// With `--results`: what the run's expiry experiment measured, each contender at each window.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub measured: Vec<MeasuredSkips>,
    /// What the admission rate given implies, when it is suspicious.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// A window at an admission rate.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct WindowTiming {
    pub admissions_per_sec: f64,
    pub window_seconds: f64,
    /// The windowed filter's lag: a URL may come back this much later than the window.
    pub lag_seconds: f64,
}

/// One contender's measured skips at one window of a run.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct MeasuredSkips {
    pub contender: Contender,
    pub window_keys: u64,
    pub target_fpr: f64,
    /// Of the arrivals that were new (never admitted, or admitted more than W admissions ago), the
    /// share called seen; and the part of it from URLs still held past their window.
    pub skipped_share: f64,
    pub skipped_expired_share: f64,
}

/// What a run's expiry experiment measured: each contender at the largest window it ran.
pub fn measured_skips(results: &crate::results::Results) -> Vec<MeasuredSkips> {
    results
        .expiry
        .iter()
        .filter(|r| {
            !results
                .expiry
                .iter()
                .any(|o| o.contender == r.contender && o.window_keys > r.window_keys)
        })
        .map(|r| {
            let new = r.truly_new.max(1) as f64;
            MeasuredSkips {
                contender: r.contender,
                window_keys: r.window_keys,
                target_fpr: r.target_fpr,
                skipped_share: r.wrongly_skipped as f64 / new,
                skipped_expired_share: r.skipped_expired as f64 / new,
            }
        })
        .collect()
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
                max_window_keys: crate::theory::largest_n(budget_bytes, |w| {
                    model_bytes(c, w, fpr)
                }),
                errors: match c {
                    Contender::Windowed => format!(
                        "skips about {} of never-seen URLs (theory), and holds a URL up to {} admissions past its window (one generation): a due re-crawl comes back that much late",
                        crate::units::human_rate(fpr),
                        crate::units::human_count(lag as f64)
                    ),
                    Contender::CountingWithLog => format!(
                        "skips about {} of new URLs (theory); the log is most of its bytes",
                        crate::units::human_rate(fpr)
                    ),
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
        lag_admissions: lag,
        timing: None,
        measured: Vec::new(),
        notes: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}

//! The advice for a sliding window: every contender's bytes from its model against a budget, and the
//! pick (the exact map while it fits, else the windowed filter, else the counting filter with its log).

use super::contenders::model_bytes;
use super::Contender;
use crate::kind::BuildConfig;

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
                max_window_keys: crate::theory::largest_n(budget_bytes, |w| {
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

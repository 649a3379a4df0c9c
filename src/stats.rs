//! Binomial intervals and order statistics for measured rates and timings.
//!
//! Wilson score interval (Wilson 1927): for x successes in q trials at normal quantile z,
//! (p̂ + z²/2q ± z·√(p̂(1−p̂)/q + z²/4q²)) / (1 + z²/q). It keeps its coverage near 0 and 1, where the
//! false-positive rates of good filters live. The normal quantile uses Acklam's rational approximation
//! (relative error ≈ 3e-7) refined by one Halley step
//! against libm's `erfc` (error < 1e-12).
//!
//! The interval of a median is distribution-free: for m independent draws, the order statistics
//! x₍ₖ₎ ≤ median ≤ x₍ₘ₊₁₋ₖ₎ hold with probability 1 − 2·P(Bin(m, ½) < k) whatever the distribution
//! (Conover, *Practical Nonparametric Statistics*, 3rd ed., §3.2); k is the largest that keeps it ≥ 95%.

/// A two-sided interval for a proportion.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

impl Interval {
    /// Whether `value` lies inside the closed interval.
    pub fn contains(&self, value: f64) -> bool {
        self.low <= value && value <= self.high
    }
}

/// The Wilson score interval for `successes` out of `trials` at two-sided `confidence` (e.g. 0.95).
pub fn wilson(successes: u64, trials: u64, confidence: f64) -> Interval {
    if trials == 0 {
        return Interval {
            low: 0.0,
            high: 1.0,
        };
    }
    let z = normal_quantile(1.0 - (1.0 - confidence) / 2.0);
    let q = trials as f64;
    let p = successes as f64 / q;
    let z2 = z * z;
    let centre = p + z2 / (2.0 * q);
    let half = z * (p * (1.0 - p) / q + z2 / (4.0 * q * q)).sqrt();
    let denominator = 1.0 + z2 / q;
    Interval {
        low: if successes == 0 {
            0.0
        } else {
            ((centre - half) / denominator).max(0.0)
        },
        high: if successes == trials {
            1.0
        } else {
            ((centre + half) / denominator).min(1.0)
        },
    }
}

/// The confidence of the test suite's binomial checks: a false alarm of 10⁻⁹ each way.
pub const CHECK_CONFIDENCE: f64 = 1.0 - 2e-9;

/// How far off a rate the test suite's checks must be able to see: 20%.
pub const CHECK_RESOLUTION: f64 = 0.2;

/// Trials enough for a check at [`CHECK_CONFIDENCE`] to tell `rate` from a rate [`CHECK_RESOLUTION`]
/// off it: the interval of an observation at `rate` must exclude `rate` × (1 ± 0.2). At least `floor`.
pub fn check_trials(rate: f64, floor: u64) -> u64 {
    let mut trials = floor.max(100);
    while !resolves(rate, trials) && trials < MAX_CHECK_TRIALS {
        trials = (trials / 4).saturating_mul(5);
    }
    trials
}

/// Beyond this many trials no test runs: a rate that needs more is [`UNOBSERVABLE_RATE`] small.
const MAX_CHECK_TRIALS: u64 = 1 << 50;

/// A rate no test can observe (a 128-bit fingerprint's collisions, say): checked as "none seen".
pub const UNOBSERVABLE_RATE: f64 = 1e-12;

fn resolves(rate: f64, trials: u64) -> bool {
    let at = (rate * trials as f64).round() as u64;
    let interval = wilson(at, trials, CHECK_CONFIDENCE);
    !interval.contains(rate * (1.0 - CHECK_RESOLUTION))
        && !interval.contains((rate * (1.0 + CHECK_RESOLUTION)).min(1.0 - 1e-12))
}

/// The test suite's binomial check: `hits` of `trials` is consistent with `expected` at
/// [`CHECK_CONFIDENCE`] (both ways), and `trials` are enough to see a rate [`CHECK_RESOLUTION`] off
/// `expected`. `Err` says which failed, with the figures.
pub fn check_rate(hits: u64, trials: u64, expected: f64) -> Result<(), String> {
    if expected < UNOBSERVABLE_RATE {
        return match hits {
            0 => Ok(()),
            _ => Err(format!(
                "{hits} of {trials} seen where the rate {expected:.3e} is too small to see one"
            )),
        };
    }
    if expected < 1.0 && !resolves(expected, trials) {
        return Err(format!(
            "{trials} trials cannot tell {expected:.3e} from a rate 20% off at a false alarm of 1e-9 (need {})",
            check_trials(expected, trials)
        ));
    }
    let interval = wilson(hits, trials, CHECK_CONFIDENCE);
    if interval.contains(expected) {
        Ok(())
    } else {
        Err(format!(
            "observed {hits}/{trials} = {:.4e}, its interval at a false alarm of 1e-9 each way [{:.4e}, {:.4e}] excludes {expected:.4e}",
            hits as f64 / trials.max(1) as f64,
            interval.low,
            interval.high
        ))
    }
}

/// The standard normal quantile Φ⁻¹(u) for u in (0, 1).
#[allow(clippy::excessive_precision)]
pub fn normal_quantile(u: f64) -> f64 {
    assert!(
        u > 0.0 && u < 1.0,
        "normal_quantile needs u in (0, 1), got {u}"
    );
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.383577518672690e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] = [
        -5.447609879822406e1,
        1.615858368580409e2,
        -1.556989798598866e2,
        6.680131188771972e1,
        -1.328068155692982e1,
    ];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [
        7.784695709041462e-3,
        3.224671290700398e-1,
        2.445134137142996,
        3.754408661907416,
    ];
    let low = 0.02425;
    let x = if u < low {
        let q = (-2.0 * u.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if u <= 1.0 - low {
        let q = u - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        let q = (-2.0 * (1.0 - u).ln()).sqrt();
        -(((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    // One Halley step against glibc's erfc takes Acklam's 3e-7 to below 1e-12.
    // SAFETY: erfc is a pure function of libm, which std links on every supported target.
    let e = 0.5 * unsafe { erfc(-x / std::f64::consts::SQRT_2) } - u;
    let w = e * (2.0 * std::f64::consts::PI).sqrt() * (x * x / 2.0).exp();
    x - w / (1.0 + x * w / 2.0)
}

extern "C" {
    fn erfc(x: f64) -> f64;
}

/// Median, minimum and maximum of a sample (the median of an even sample is the mean of the middle two).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Summary {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

/// Summarises `values`; an empty sample gives NaNs.
pub fn summarize(values: &[f64]) -> Summary {
    if values.is_empty() {
        return Summary {
            median: f64::NAN,
            min: f64::NAN,
            max: f64::NAN,
        };
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let mid = sorted.len() / 2;
    let median = if sorted.len().is_multiple_of(2) {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    } else {
        sorted[mid]
    };
    Summary {
        median,
        min: sorted[0],
        max: sorted[sorted.len() - 1],
    }
}

/// A median with its distribution-free interval (order statistics; see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MedianInterval {
    pub median: f64,
    pub low: f64,
    pub high: f64,
    /// The interval's exact coverage, 1 − 2·P(Bin(m, ½) < k): at least 0.95.
    pub coverage: f64,
}

/// P(Bin(m, ½) ≤ j), exactly (m ≤ 1000 keeps every term finite in f64).
fn binomial_half_cdf(m: usize, j: usize) -> f64 {
    let mut term = 0.5f64.powi(m as i32);
    let mut sum = 0.0;
    for i in 0..=j.min(m) {
        if i > 0 {
            term *= (m - i + 1) as f64 / i as f64;
        }
        sum += term;
    }
    sum
}

/// The median of `values` and the widest-ranked order statistics around it whose coverage is still at
/// least 95%; `None` with fewer than 6 values (no such pair: 5 give 93.75% at most) or any NaN.
pub fn median_interval(values: &[f64]) -> Option<MedianInterval> {
    let m = values.len();
    if m < 6 || values.iter().any(|v| v.is_nan()) || m > 1000 {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    // The largest k (1-based) with 1 − 2·P(Bin(m, ½) ≤ k − 1) ≥ 0.95.
    let mut k = 1;
    while k < m / 2 && 1.0 - 2.0 * binomial_half_cdf(m, k) >= 0.95 {
        k += 1;
    }
    Some(MedianInterval {
        median: summarize(values).median,
        low: sorted[k - 1],
        high: sorted[m - k],
        coverage: 1.0 - 2.0 * binomial_half_cdf(m, k - 1),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_check_sees_a_rate_twenty_percent_off_and_no_less_data_would_do() {
        let p = 0.01;
        let n = check_trials(p, 1000);
        // About (6 / 0.2)² / p trials, plus the interval's asymmetry.
        assert!(n > 80_000 && n < 200_000, "{n}");
        assert!(check_rate((p * n as f64) as u64, n, p).is_ok());
        assert!(check_rate((1.2 * p * n as f64) as u64, n, p).is_err());
        assert!(check_rate((0.8 * p * n as f64) as u64, n, p).is_err());
        assert!(check_rate((p * (n / 2) as f64) as u64, n / 2, p).is_err());
        // A rate too small to observe: none seen passes, one seen fails, and no loop runs forever.
        assert!(check_rate(0, 1000, 1e-30).is_ok());
        assert!(check_rate(1, 1000, 1e-30).is_err());
        assert!(check_trials(1e-30, 100) >= MAX_CHECK_TRIALS);
    }

    use super::*;

    #[test]
    fn median_intervals_take_the_tabled_ranks() {
        // Conover's table A3 (and by hand): m = 15 gives ranks 4 and 12 at 96.48%; m = 6, the extremes
        // at 96.875%; m = 31, ranks 10 and 22 at 97.06%.
        let values: Vec<f64> = (1..=15).map(f64::from).rev().collect();
        let i = median_interval(&values).unwrap();
        assert_eq!((i.low, i.median, i.high), (4.0, 8.0, 12.0));
        assert!((i.coverage - 0.96484375).abs() < 1e-12, "{i:?}");
        let i = median_interval(&[6.0, 1.0, 5.0, 2.0, 4.0, 3.0]).unwrap();
        assert_eq!((i.low, i.median, i.high), (1.0, 3.5, 6.0));
        assert!((i.coverage - 0.96875).abs() < 1e-12);
        let values: Vec<f64> = (1..=31).map(f64::from).collect();
        let i = median_interval(&values).unwrap();
        assert_eq!((i.low, i.high), (10.0, 22.0));
        assert!((i.coverage - 0.970551).abs() < 1e-6, "{i:?}");
        assert!(median_interval(&[1.0; 5]).is_none());
        assert!(median_interval(&[1.0, 2.0, 3.0, 4.0, 5.0, f64::NAN]).is_none());
    }

    /// Over many samples of a skewed distribution, the interval holds the true median about as often as
    /// its coverage says (seeded; 120,000 samples of 15).
    #[test]
    fn median_intervals_cover_the_true_median_as_promised() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        // Exponential(1): median ln 2.
        let truth = std::f64::consts::LN_2;
        let trials = 120_000;
        let mut held = 0;
        let mut coverage = 0.0;
        for _ in 0..trials {
            let sample: Vec<f64> = (0..15).map(|_| -(1.0 - rng.random::<f64>()).ln()).collect();
            let i = median_interval(&sample).unwrap();
            coverage = i.coverage;
            held += usize::from(i.low <= truth && truth <= i.high);
        }
        let observed = held as f64 / trials as f64;
        // A false alarm at ≈ 10⁻⁹ (6.1 standard errors); a miss rate 20% off (0.7 points) is ≥ 13 of them.
        let bound = 6.1 * (coverage * (1.0 - coverage) / trials as f64).sqrt();
        assert!(
            (observed - coverage).abs() < bound,
            "{observed} vs {coverage} (bound {bound})"
        );
    }

    #[test]
    fn normal_quantiles_match_tables() {
        assert!((normal_quantile(0.975) - 1.959963984540054).abs() < 1e-11);
        assert!((normal_quantile(0.9995) - 3.290526731491926).abs() < 1e-11);
        assert!((normal_quantile(0.5)).abs() < 1e-12);
        assert!((normal_quantile(0.001) + 3.090232306167813).abs() < 1e-11);
    }

    #[test]
    fn wilson_matches_known_values() {
        // 10 successes in 100 trials at 95%: [0.05523, 0.17437] (Newcombe 1998, method 3).
        let i = wilson(10, 100, 0.95);
        assert!((i.low - 0.05523).abs() < 5e-5, "{i:?}");
        assert!((i.high - 0.17437).abs() < 5e-5, "{i:?}");
        // 0 of 100 at 95%: [0, 0.03699].
        let i = wilson(0, 100, 0.95);
        assert_eq!(i.low, 0.0);
        assert!((i.high - 0.03699).abs() < 5e-5, "{i:?}");
        // 1000 of 100000 at 95%, from the formula by hand: [0.0094019, 0.0106358].
        let i = wilson(1000, 100_000, 0.95);
        assert!(
            (i.low - 0.0094019).abs() < 2e-7 && (i.high - 0.0106358).abs() < 2e-7,
            "{i:?}"
        );
    }

    #[test]
    fn summary_of_a_sample() {
        let s = summarize(&[3.0, 1.0, 2.0, 10.0]);
        assert_eq!(
            s,
            Summary {
                median: 2.5,
                min: 1.0,
                max: 10.0
            }
        );
    }
}

//! Parsing and printing of counts (`50M`, `6e9`, `1_000_000`) and byte sizes (`1GiB`, `512MB`).
//!
//! Counts use decimal suffixes k, M, G (or B for billion), T. Sizes accept SI (kB, MB, GB, TB: powers of
//! 1000) and IEC (KiB, MiB, GiB, TiB: powers of 1024) units, and B for bytes; a size without a unit is
//! refused (`--memory 16` is far likelier a slip for 16GiB than a budget of 16 bytes). Byte counts held
//! as `f64` are written to JSON as whole bytes ([`serde_bytes`]).

use crate::{Error, Result};

/// The decimal suffixes of counts and rates.
const COUNT_SUFFIXES: &[(&str, f64)] = &[
    ("k", 1e3),
    ("K", 1e3),
    ("M", 1e6),
    ("G", 1e9),
    ("B", 1e9),
    ("T", 1e12),
];

/// Parses a count such as `50M`, `6e9`, `1_000_000` or `2.5k`. The result must be a whole number.
pub fn parse_count(text: &str) -> Result<u64> {
    let allowed =
        "a whole number such as 1000, 1_000_000, 50M, 6e9 or 2.5k (suffixes k, M, G/B, T)";
    let cleaned: String = text.trim().chars().filter(|c| *c != '_').collect();
    if cleaned.is_empty() {
        return Err(Error::invalid(
            "count",
            format!("empty; expected {allowed}"),
        ));
    }
    let (number, multiplier) = split_suffix(&cleaned, COUNT_SUFFIXES);
    let value: f64 = number
        .parse()
        .map_err(|_| Error::invalid("count", format!("'{text}' is not {allowed}")))?;
    let total = value * multiplier.unwrap_or(1.0);
    if !total.is_finite() || total < 0.0 || total.fract() != 0.0 || total > u64::MAX as f64 {
        return Err(Error::invalid(
            "count",
            format!("'{text}' is not {allowed}"),
        ));
    }
    Ok(total as u64)
}

/// Parses a byte size such as `1GiB`, `512MB`, `64 KiB` or `4096B`; a number without a unit is refused.
pub fn parse_size(text: &str) -> Result<u64> {
    let allowed =
        "a size such as 4096B, 512MB, 64KiB or 1GiB (units B, kB, MB, GB, TB, KiB, MiB, GiB, TiB)";
    let cleaned: String = text
        .trim()
        .chars()
        .filter(|c| *c != '_' && *c != ' ')
        .collect();
    let units: &[(&str, f64)] = &[
        ("KiB", 1024.0),
        ("MiB", 1048576.0),
        ("GiB", 1073741824.0),
        ("TiB", 1099511627776.0),
        ("kB", 1e3),
        ("KB", 1e3),
        ("MB", 1e6),
        ("GB", 1e9),
        ("TB", 1e12),
        ("B", 1.0),
    ];
    let (number, multiplier) = split_suffix(&cleaned, units);
    let value: f64 = number
        .parse()
        .map_err(|_| Error::invalid("size", format!("'{text}' is not {allowed}")))?;
    let Some(multiplier) = multiplier else {
        return Err(Error::invalid(
            "size",
            format!("'{text}' has no unit: write {cleaned}B for bytes, or {allowed}"),
        ));
    };
    let total = (value * multiplier).round();
    if !total.is_finite() || total <= 0.0 || total > u64::MAX as f64 {
        return Err(Error::invalid(
            "size",
            format!("'{text}' is not {allowed} (must be > 0)"),
        ));
    }
    Ok(total as u64)
}

/// The number before the first of `units` that ends `text`, and that unit's multiplier (`None`: no unit).
fn split_suffix<'a>(text: &'a str, units: &[(&str, f64)]) -> (&'a str, Option<f64>) {
    for (suffix, multiplier) in units {
        if let Some(number) = text.strip_suffix(suffix) {
            return (number, Some(*multiplier));
        }
    }
    (text, None)
}

/// Formats bytes in IEC units with three significant digits, e.g. `715 MiB`.
pub fn human_bytes(bytes: f64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = bytes;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{value:.0} B")
    } else {
        format!("{} {}", three_digits(value), units[unit])
    }
}

/// Formats a count with a decimal suffix, e.g. `50M`, `6G`, `1.5k`.
pub fn human_count(count: f64) -> String {
    let units = [("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)];
    for (suffix, scale) in units {
        if count >= scale {
            return format!("{}{suffix}", trim_zeros(three_digits(count / scale)));
        }
    }
    format!("{count:.0}")
}

fn trim_zeros(text: String) -> String {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

fn three_digits(value: f64) -> String {
    if value >= 100.0 {
        format!("{value:.0}")
    } else if value >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

/// Formats a rate (a share of queries, in [0, 1]) in the one format the report and `advise` print
/// rates in, chosen by magnitude: from 0.1% up a percentage (`1.00%`, `63.2%`), below it per million
/// (`251 per million`, `1.92 per million`, `0.0542 per million`); three significant digits either way.
/// Zero is `0`; a positive rate below 0.001 per million (10⁻⁹) is `< 0.001 per million`, past what any
/// run could observe. Not a number reads `n/a`.
pub fn human_rate(rate: f64) -> String {
    if rate.is_nan() {
        return "n/a".into();
    }
    if rate <= 0.0 {
        return "0".into();
    }
    // The switch is on the value as printed, so 0.09996% reads 0.100%, not 1000 per million.
    let per_million = rate * 1e6;
    if significant(per_million, 3).0 >= 1000.0 {
        let (value, decimals) = significant(rate * 100.0, 3);
        return format!("{value:.decimals$}%");
    }
    if per_million < 0.001 {
        return "< 0.001 per million".into();
    }
    let (value, decimals) = significant(per_million, 3);
    format!("{value:.decimals$} per million")
}

/// `value` (> 0) rounded to `digits` significant digits, and the decimals that print exactly them.
fn significant(value: f64, digits: i32) -> (f64, usize) {
    let decimals = |v: f64| (digits - 1 - v.log10().floor() as i32).max(0);
    let first = decimals(value);
    let scale = 10f64.powi(first);
    let rounded = (value * scale).round() / scale;
    // Rounding up can add a digit (9.996 → 10.0): count the decimals again on the rounded value.
    (rounded, decimals(rounded) as usize)
}

/// Seconds in the largest unit that keeps them readable (days, hours, minutes, seconds).
pub fn human_seconds(seconds: f64) -> String {
    if seconds >= 86_400.0 {
        format!("{:.1} days", seconds / 86_400.0)
    } else if seconds >= 3_600.0 {
        format!("{:.1} hours", seconds / 3_600.0)
    } else if seconds >= 60.0 {
        format!("{:.1} minutes", seconds / 60.0)
    } else {
        format!("{seconds:.1} s")
    }
}

/// A clap value parser for counts.
pub fn count_arg(text: &str) -> std::result::Result<u64, String> {
    parse_count(text).map_err(|e| e.to_string())
}

/// A clap value parser for counts held in a narrower type (`--reps`, `--batch`, `--shards`).
pub fn count_arg_as<T: TryFrom<u64>>(text: &str) -> std::result::Result<T, String> {
    let count = count_arg(text)?;
    T::try_from(count).map_err(|_| format!("{count} is too large"))
}

/// Parses a rate per second such as `50k`, `2.5k`, `1.2M`, `1e6` or `1_000`: a number > 0, with the
/// suffixes of counts (it need not be whole).
pub fn parse_rate(text: &str) -> Result<f64> {
    let allowed = "a rate per second such as 800, 50k, 2.5k, 1.2M or 1e6 (suffixes k, M, G/B, T)";
    let cleaned: String = text.trim().chars().filter(|c| *c != '_').collect();
    let (number, multiplier) = split_suffix(&cleaned, COUNT_SUFFIXES);
    let value: f64 = number
        .parse()
        .map_err(|_| Error::invalid("rate", format!("'{text}' is not {allowed}")))?;
    let rate = value * multiplier.unwrap_or(1.0);
    if !(rate.is_finite() && rate > 0.0) {
        return Err(Error::invalid(
            "rate",
            format!("'{text}' is not {allowed} (must be > 0)"),
        ));
    }
    Ok(rate)
}

/// A clap value parser for rates per second (`--inserts-per-sec`, `--arrivals-per-sec`).
pub fn rate_arg(text: &str) -> std::result::Result<f64, String> {
    parse_rate(text).map_err(|e| e.to_string())
}

/// A count of keys, or a range `LOW..HIGH` (`advise --n`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyRange {
    pub low: u64,
    pub high: u64,
}

impl KeyRange {
    /// Parses `N` or `LOW..HIGH`; the range's order is the advisor's to check.
    pub fn parse(text: &str) -> Result<KeyRange> {
        let why = |e: crate::Error| match e {
            crate::Error::Invalid { message, .. } => message,
            other => other.to_string(),
        };
        let count = |t: &str| {
            parse_count(t).map_err(|e| {
                crate::Error::invalid("--n", format!("{}; expected N or LOW..HIGH", why(e)))
            })
        };
        Ok(match text.split_once("..") {
            Some((low, high)) => KeyRange {
                low: count(low)?,
                high: count(high)?,
            },
            None => {
                let n = count(text)?;
                KeyRange { low: n, high: n }
            }
        })
    }
    /// clap's parser. clap's own message names the flag and quotes the text, so this says neither again.
    pub fn from_arg(text: &str) -> std::result::Result<KeyRange, String> {
        KeyRange::parse(text).map_err(|e| without_flag_and_text(e, text))
    }
}

/// An error's message for clap, which already names the flag and quotes the whole text.
fn without_flag_and_text(e: crate::Error, text: &str) -> String {
    let message = match e {
        crate::Error::Invalid { message, .. } => message,
        other => other.to_string(),
    };
    let message = message.replacen(&format!("'{text}': "), "", 1);
    message.replacen(&format!("'{text}' is "), "", 1)
}

/// An expiry window (`advise --window`, `dedup --window`): a count of admissions (URLs let through, new ones
/// and re-crawls alike), or a duration that an admission rate turns into one.
#[derive(Clone, Debug, PartialEq)]
pub enum WindowArg {
    Urls(u64),
    Duration { text: String, seconds: f64 },
}

impl WindowArg {
    /// Parses `70M` or `7d`, `12h`, `30m`, `90s`.
    pub fn parse(text: &str) -> Result<WindowArg> {
        let unit_s = match text.chars().last() {
            Some('d') => Some(86_400.0),
            Some('h') => Some(3_600.0),
            Some('m') => Some(60.0),
            Some('s') => Some(1.0),
            _ => None,
        };
        match unit_s {
            Some(unit) => {
                let amount: f64 = text[..text.len() - 1].parse().map_err(|_| {
                    crate::Error::invalid(
                        "--window",
                        format!(
                            "'{text}': expected a count (70M) or a duration (7d, 12h, 30m, 90s)"
                        ),
                    )
                })?;
                Ok(WindowArg::Duration {
                    text: text.to_string(),
                    seconds: amount * unit,
                })
            }
            None => parse_count(text).map(WindowArg::Urls).map_err(|e| match e {
                crate::Error::Invalid { message, .. } => crate::Error::invalid("--window", message),
                other => other,
            }),
        }
    }
    /// clap's parser (the message names neither the flag nor the whole text, as clap does).
    pub fn from_arg(text: &str) -> std::result::Result<WindowArg, String> {
        WindowArg::parse(text).map_err(|e| without_flag_and_text(e, text))
    }
    /// The window's length in seconds, when it was given as a duration.
    pub fn seconds(&self) -> Option<f64> {
        match self {
            WindowArg::Urls(_) => None,
            WindowArg::Duration { seconds, .. } => Some(*seconds),
        }
    }
    /// The window in admissions (URLs let through, re-crawls included), at `admissions_per_sec` for a
    /// duration; in [1, 2⁴⁷).
    pub fn urls(&self, admissions_per_sec: Option<f64>) -> Result<u64> {
        let window = match self {
            WindowArg::Urls(n) => *n,
            WindowArg::Duration { text, seconds } => {
                let rate = admissions_per_sec.ok_or_else(|| {
                    crate::Error::invalid(
                        "--window",
                        format!("'{text}' is a duration: give --admissions-per-sec too (URLs let through per second, re-crawls included)"),
                    )
                })?;
                if !(rate > 0.0 && rate.is_finite() && *seconds > 0.0 && seconds.is_finite()) {
                    return Err(crate::Error::invalid(
                        "--admissions-per-sec",
                        format!("{rate} with a window of {text}: both must be > 0"),
                    ));
                }
                let urls = (seconds * rate).round();
                if urls >= MAX_EXPECTED_KEYS as f64 {
                    return Err(crate::Error::invalid(
                        "--window",
                        format!(
                            "{text} at {rate} URLs/s is {urls:.3e} URLs, beyond the supported 2^47"
                        ),
                    ));
                }
                urls as u64
            }
        };
        if window == 0 || window >= MAX_EXPECTED_KEYS {
            return Err(crate::Error::invalid(
                "--window",
                format!("{window} URLs: must be in [1, 2^47)"),
            ));
        }
        Ok(window)
    }
}

/// The most keys a structure may be sized for: below 2⁴⁷, where the generator's non-members start
/// (`keys::NON_MEMBER_BASE`, which asserts it is this).
pub const MAX_EXPECTED_KEYS: u64 = 1 << 47;

/// The one rule for `--expected` on every command: a count in [1, 2⁴⁷).
pub fn check_expected(n: u64) -> Result<u64> {
    if n == 0 || n >= MAX_EXPECTED_KEYS {
        return Err(Error::invalid(
            "--expected",
            format!("must be in [1, 2^47), got {n}: a filter sized for 0 keys has a few bits and answers \"present\" to everything"),
        ));
    }
    Ok(n)
}

/// A clap value parser for `--expected` ([`check_expected`]).
pub fn expected_arg(text: &str) -> std::result::Result<u64, String> {
    let n = parse_count(text).map_err(|e| e.to_string())?;
    check_expected(n).map_err(|e| match e {
        Error::Invalid { message, .. } => message,
        other => other.to_string(),
    })
}

/// A clap value parser for sizes.
pub fn size_arg(text: &str) -> std::result::Result<u64, String> {
    parse_size(text).map_err(|e| e.to_string())
}

/// A clap value parser for a false-positive rate in [1e-15, 1): a fraction (`0.001`, `1e-3`) or a
/// percentage (`0.1%`).
pub fn fpr_arg(text: &str) -> std::result::Result<f64, String> {
    let allowed = "a rate such as 0.01, 1e-3 or 0.1% (at least 1e-15, below 1)";
    let trimmed = text.trim();
    let (number, scale) = match trimmed.strip_suffix('%') {
        Some(percent) => (percent.trim_end(), 100.0),
        None => (trimmed, 1.0),
    };
    let value = number
        .parse::<f64>()
        .map_err(|_| format!("'{text}' is not a number; expected {allowed}"))?
        / scale;
    if !(value > 0.0 && value < 1.0) || value < 1e-15 {
        return Err(format!(
            "'{text}' is outside the allowed range; expected {allowed}"
        ));
    }
    Ok(value)
}

/// A clap value parser for a positive duration (`2ms`, `150us`, `1s`), in nanoseconds.
pub fn duration_ns_arg(text: &str) -> std::result::Result<f64, String> {
    let duration = humantime::parse_duration(text.trim()).map_err(|e| {
        format!("'{text}' is not a duration ({e}); expected a number with a unit, such as 2ms, 150us or 1s")
    })?;
    if duration.is_zero() {
        return Err(format!(
            "'{text}' is zero; a false positive that costs nothing needs no filter"
        ));
    }
    Ok(duration.as_nanos() as f64)
}

/// Parses `--hash`: a usable hash id (documented to pass SMHasher and persistent: `xxh3-64`, `xxh3-128`,
/// `rapidhash-v3`).
pub fn hash_arg(text: &str) -> std::result::Result<crate::hash::HashFn, String> {
    crate::hash::HashFn::parse_usable(text.trim())
}

/// A byte count held as `f64` (a model's bytes may have a fraction) serialised as whole bytes, for
/// `#[serde(serialize_with = "crate::units::serde_bytes::serialize")]`: JSON readers get `265014444048`,
/// not `265014444047.99997`.
pub mod serde_bytes {
    use serde::Serializer;

    /// Rounds `bytes` to the nearest whole byte; a value no integer holds (NaN, infinite) is written as
    /// the float it is, which serde_json writes as `null`.
    pub fn serialize<S: Serializer>(bytes: &f64, serializer: S) -> Result<S::Ok, S::Error> {
        let whole = bytes.round();
        if (0.0..=u64::MAX as f64).contains(&whole) {
            serializer.serialize_u64(whole as u64)
        } else if (i64::MIN as f64..0.0).contains(&whole) {
            serializer.serialize_i64(whole as i64)
        } else {
            serializer.serialize_f64(*bytes)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_fractions_or_percentages() {
        assert_eq!(fpr_arg("0.001"), Ok(0.001));
        assert_eq!(fpr_arg("1e-3"), Ok(0.001));
        assert_eq!(fpr_arg("0.1%"), Ok(0.001));
        assert_eq!(fpr_arg(" 1 %"), Ok(0.01));
        assert_eq!(fpr_arg("1e-13%"), Ok(1e-15));
        for bad in [
            "0", "1", "150%", "100%", "0%", "-1%", "%", "1%%", "NaN", "inf%", "1e-16",
        ] {
            assert!(fpr_arg(bad).is_err(), "{bad} should be rejected");
        }
        assert!(fpr_arg("150%").unwrap_err().contains("outside"));
    }

    #[test]
    fn durations_are_nanoseconds_and_nonsense_is_named() {
        assert_eq!(duration_ns_arg("2ms").unwrap(), 2e6);
        assert_eq!(duration_ns_arg("150us").unwrap(), 150e3);
        assert!(duration_ns_arg("0s").unwrap_err().contains("zero"));
        assert!(duration_ns_arg("fast").unwrap_err().contains("such as 2ms"));
    }

    #[test]
    fn counts_parse_in_every_documented_form() {
        assert_eq!(parse_count("50M").unwrap(), 50_000_000);
        assert_eq!(parse_count("6e9").unwrap(), 6_000_000_000);
        assert_eq!(parse_count("1_000_000").unwrap(), 1_000_000);
        assert_eq!(parse_count("2.5k").unwrap(), 2_500);
        assert_eq!(parse_count("6B").unwrap(), 6_000_000_000);
        assert_eq!(parse_count("0").unwrap(), 0);
        for bad in ["", "abc", "-5", "1.5", "1e400", "5Q", "M"] {
            assert!(parse_count(bad).is_err(), "{bad} should be rejected");
        }
    }

    #[test]
    fn rates_take_the_count_suffixes_and_fractions() {
        assert_eq!(parse_rate("50k").unwrap(), 50_000.0);
        assert_eq!(parse_rate("2.5k").unwrap(), 2_500.0);
        assert_eq!(parse_rate("1.2M").unwrap(), 1_200_000.0);
        assert_eq!(parse_rate("1e6").unwrap(), 1e6);
        assert_eq!(parse_rate("0.5").unwrap(), 0.5);
        assert_eq!(parse_rate("1_000").unwrap(), 1_000.0);
        for bad in ["", "0", "-5k", "fast", "k", "inf", "NaN"] {
            assert!(parse_rate(bad).is_err(), "{bad} should be rejected");
        }
    }

    #[test]
    fn narrow_counts_take_the_suffixes_and_refuse_what_does_not_fit() {
        assert_eq!(count_arg_as::<u32>("1k"), Ok(1_000));
        assert_eq!(count_arg_as::<usize>("4k"), Ok(4_000));
        assert!(count_arg_as::<u32>("5G").unwrap_err().contains("too large"));
        assert!(count_arg_as::<u32>("1.5").is_err());
    }

    #[test]
    fn sizes_parse_si_and_iec() {
        assert_eq!(parse_size("1GiB").unwrap(), 1 << 30);
        assert_eq!(parse_size("512MB").unwrap(), 512_000_000);
        assert_eq!(parse_size("64 KiB").unwrap(), 65536);
        assert_eq!(parse_size("4096B").unwrap(), 4096);
        assert_eq!(parse_size("16 B").unwrap(), 16);
        for bad in ["", "0", "0B", "-1GiB", "1XB", "GiB", "B"] {
            assert!(parse_size(bad).is_err(), "{bad} should be rejected");
        }
    }

    #[test]
    fn a_size_without_a_unit_is_refused_and_the_unit_asked_for() {
        for bare in ["16", "4096", "1e9", "1_000"] {
            let message = parse_size(bare).unwrap_err().to_string();
            assert!(message.contains("no unit"), "{bare}: {message}");
        }
        assert!(parse_size("16").unwrap_err().to_string().contains("16B"));
    }

    #[test]
    fn byte_counts_serialise_as_whole_bytes() {
        #[derive(serde::Serialize)]
        struct Sized {
            #[serde(serialize_with = "serde_bytes::serialize")]
            bytes: f64,
        }
        let json = |bytes: f64| serde_json::to_string(&Sized { bytes }).unwrap();
        assert_eq!(json(265014444047.99997), r#"{"bytes":265014444048}"#);
        assert_eq!(json(1198136.0), r#"{"bytes":1198136}"#);
        assert_eq!(json(0.4), r#"{"bytes":0}"#);
        assert_eq!(json(-2.6), r#"{"bytes":-3}"#);
        assert_eq!(json(f64::NAN), r#"{"bytes":null}"#);
    }

    #[test]
    fn rates_read_as_percent_from_a_thousandth_and_per_million_below() {
        assert_eq!(human_rate(0.01), "1.00%");
        assert_eq!(human_rate(0.010_039), "1.00%");
        assert_eq!(human_rate(0.632_1), "63.2%");
        assert_eq!(human_rate(1.0), "100%");
        assert_eq!(human_rate(0.001), "0.100%");
        assert_eq!(human_rate(0.099_96), "10.0%");
        // Just below a thousandth, once rounded it is one: a percentage, never "1000 per million".
        assert_eq!(human_rate(0.000_999_96), "0.100%");
        assert_eq!(human_rate(0.000_999_4), "999 per million");
        assert_eq!(human_rate(2.51e-4), "251 per million");
        assert_eq!(human_rate(1.921e-6), "1.92 per million");
        assert_eq!(human_rate(5.42e-11), "< 0.001 per million");
        assert_eq!(human_rate(5.42e-8), "0.0542 per million");
        assert_eq!(human_rate(1e-9), "0.00100 per million");
        assert_eq!(human_rate(0.0), "0");
        assert_eq!(human_rate(f64::NAN), "n/a");
        // One family: never scientific notation, never "1 in …".
        for rate in [3e-2, 4.4e-5, 7.7e-7, 1.3e-8, 0.5] {
            let text = human_rate(rate);
            assert!(
                !text.contains("e-") && !text.contains("1 in"),
                "{rate}: {text}"
            );
            assert!(
                text.ends_with('%') || text.ends_with("per million"),
                "{text}"
            );
        }
    }

    #[test]
    fn human_units() {
        assert_eq!(human_bytes(6e9 / 8.0), "715 MiB");
        assert_eq!(human_count(5e7), "50M");
        assert_eq!(human_count(6e9), "6G");
    }
}

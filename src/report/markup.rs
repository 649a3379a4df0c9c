//! HTML text helpers shared by the page's sections.

/// `text` with the characters HTML gives meaning to escaped.
pub(super) fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A rate in scientific notation with four significant digits ("0" for zero).
pub(super) fn sci(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else {
        format!("{x:.3e}")
    }
}

/// A rate as a percentage with two decimals, or in scientific notation below 0.1%.
pub(super) fn pct(x: f64) -> String {
    if x >= 0.001 {
        format!("{:.2}%", x * 100.0)
    } else {
        format!("{x:.2e}")
    }
}

/// A false-positive rate in a crawler's terms: new URLs wrongly skipped per million.
pub(super) fn per_million(rate: f64) -> String {
    let skipped = rate * 1e6;
    if skipped >= 10.0 {
        format!("{skipped:.0} per million new URLs skipped")
    } else if skipped >= 0.1 {
        format!("{skipped:.1} per million new URLs skipped")
    } else if skipped > 0.0 {
        format!(
            "1 in {} new URLs skipped",
            crate::units::human_count(1.0 / rate)
        )
    } else {
        "none skipped".to_string()
    }
}

/// New URLs lost in a crawl of `n` new URLs at `rate`.
pub(super) fn lost_in_crawl(rate: f64, n: u64) -> String {
    format!(
        "≈ {} of {} new URLs never crawled",
        crate::units::human_count((rate * n as f64).round()),
        crate::units::human_count(n as f64)
    )
}

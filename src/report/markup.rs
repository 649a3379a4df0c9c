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

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

//! Number and rate wording shared by the page's sections (plain text: the templates escape it).

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
    if x == 0.0 {
        "0".into()
    } else if x >= 0.001 {
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
            crate::units::human_count((1.0 / rate).round())
        )
    } else {
        "none skipped".to_string()
    }
}

/// `skipped` expected new URLs wrongly skipped in a crawl of `n` new URLs, in words.
pub(super) fn lost_in_crawl(skipped: f64, n: u64) -> String {
    let count = if skipped >= 1.0 {
        crate::units::human_count(skipped.round())
    } else if skipped > 0.0 {
        format!("{skipped:.1e}")
    } else {
        "0".to_string()
    };
    format!(
        "≈ {count} of {} new URLs never crawled",
        crate::units::human_count(n as f64)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_read_in_a_crawlers_terms() {
        assert_eq!(per_million(0.01), "10000 per million new URLs skipped");
        assert_eq!(per_million(2.5e-6), "2.5 per million new URLs skipped");
        assert_eq!(per_million(1e-9), "1 in 1G new URLs skipped");
        assert_eq!(per_million(0.0), "none skipped");
        assert_eq!(
            lost_in_crawl(1.7e6, 1_000_000_000),
            "≈ 1.7M of 1G new URLs never crawled"
        );
        assert_eq!(lost_in_crawl(0.0, 100), "≈ 0 of 100 new URLs never crawled");
        assert_eq!(
            lost_in_crawl(0.04, 100),
            "≈ 4.0e-2 of 100 new URLs never crawled"
        );
    }
}

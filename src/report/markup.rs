//! Wording shared by the page's sections (plain text: the templates escape it). Rates have one format,
//! [`crate::units::human_rate`]; this holds what is said in a crawler's terms.

/// An expected count (a mean, so possibly below one): "≈ 1.7M" from one up, two significant digits
/// below it ("≈ 0.027"), "< 0.001" below that, "≈ 0" for none; never scientific notation.
pub(super) fn expected_count(count: f64) -> String {
    if count >= 1.0 {
        format!("≈ {}", crate::units::human_count(count.round()))
    } else if count >= 0.001 {
        let decimals = (1 - count.log10().floor() as i32).max(0) as usize;
        format!("≈ {count:.decimals$}")
    } else if count > 0.0 {
        "< 0.001".to_string()
    } else {
        "≈ 0".to_string()
    }
}

/// `skipped` expected new URLs wrongly skipped in a crawl of `n` new URLs, in words.
pub(super) fn lost_in_crawl(skipped: f64, n: u64) -> String {
    format!(
        "{} of {} new URLs never crawled",
        expected_count(skipped),
        crate::units::human_count(n as f64)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_counts_below_one_keep_two_digits() {
        assert_eq!(expected_count(1.3e-7), "< 0.001");
        assert_eq!(expected_count(0.0123), "≈ 0.012");
        assert_eq!(expected_count(2.4), "≈ 2");
    }

    #[test]
    fn losses_read_as_counts_never_in_scientific_notation() {
        assert_eq!(
            lost_in_crawl(1.7e6, 1_000_000_000),
            "≈ 1.7M of 1G new URLs never crawled"
        );
        assert_eq!(lost_in_crawl(0.0, 100), "≈ 0 of 100 new URLs never crawled");
        assert_eq!(
            lost_in_crawl(0.04, 100),
            "≈ 0.040 of 100 new URLs never crawled"
        );
        assert_eq!(
            lost_in_crawl(0.027, 1_000_000_000),
            "≈ 0.027 of 1G new URLs never crawled"
        );
        assert_eq!(
            lost_in_crawl(0.31, 1_000),
            "≈ 0.31 of 1k new URLs never crawled"
        );
        assert_eq!(
            lost_in_crawl(2e-7, 1_000),
            "< 0.001 of 1k new URLs never crawled"
        );
    }
}

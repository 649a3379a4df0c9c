//! The re-crawl stream: member indices where a share of arrivals are re-crawls of an earlier URL, at a
//! distance uniform over a few windows (counted in distinct URLs). Deterministic from its seed.

/// Arrivals per stream, in windows: three windows to fill and rotate, one to measure at steady state.
pub const ARRIVALS_PER_WINDOW: u64 = 4;
/// Share of arrivals that are re-crawls of an earlier URL.
pub const RECRAWL_FRACTION: f64 = 0.5;
/// Re-crawl distances are uniform over 1..=this many windows, counted in distinct URLs; the window counts
/// admissions, re-admitted re-crawls included, so fewer than a third of the re-crawls fall inside it.
pub const RECRAWL_SPAN_WINDOWS: u64 = 3;
/// A stream position: the member index emitted.
#[derive(Clone, Debug)]
pub struct RecrawlStream {
    window_keys: u64,
    distinct: u64,
    state: u64,
}

impl RecrawlStream {
    /// A stream whose re-crawls reach back up to [`RECRAWL_SPAN_WINDOWS`] × `window_keys` distinct URLs.
    pub fn new(seed: u64, window_keys: u64) -> RecrawlStream {
        RecrawlStream {
            window_keys: window_keys.max(1),
            distinct: 0,
            state: seed ^ 0xBB67_AE85_84CA_A73B,
        }
    }
}

impl Iterator for RecrawlStream {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        let z = crate::hash::splitmix64(&mut self.state);
        let u = (z >> 11) as f64 / (1u64 << 53) as f64;
        let span = RECRAWL_SPAN_WINDOWS * self.window_keys;
        let distance = 1 + crate::hash::reduce(z.rotate_left(29), span);
        if u < RECRAWL_FRACTION && distance <= self.distinct {
            Some(self.distinct - distance)
        } else {
            self.distinct += 1;
            Some(self.distinct - 1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    /// Once the stream has made more distinct URLs than a re-crawl reaches back, every draw under
    /// [`RECRAWL_FRACTION`] is a re-crawl: their share is that fraction, checked at a false alarm of 10⁻⁹
    /// each way on enough arrivals to see it 20% off. Before that, a draw reaching past the first URL
    /// makes a new one, so the warm-up is left out.
    fn the_stream_recrawls_half_its_arrivals() {
        let window = 1000;
        let mut stream = RecrawlStream::new(1, window);
        let (mut distinct, mut recrawls, mut counted) = (0u64, 0u64, 0u64);
        for _ in 0..200_000 {
            let warm = distinct >= RECRAWL_SPAN_WINDOWS * window;
            let i = stream.next().unwrap();
            let recrawl = i != distinct;
            distinct += u64::from(!recrawl);
            if warm {
                counted += 1;
                recrawls += u64::from(recrawl);
            }
        }
        if let Err(e) = crate::stats::check_rate(recrawls, counted, RECRAWL_FRACTION) {
            panic!("{e}");
        }
    }
}

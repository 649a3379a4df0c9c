//! What `gen` writes: generated URLs one per line (members, non-members, or members with repeats), and
//! the length distribution of the same URLs.

use super::stream::RepeatStream;
use super::UrlGenerator;
use std::io::Write;

/// Which URLs, in which order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LineOrder {
    /// Members 0, 1, 2, …
    Members,
    /// Non-members 0, 1, 2, …
    NonMembers,
    /// Members in order, each line repeating an earlier member with probability `fraction`.
    WithRepeats { fraction: f64 },
}

/// Generated URLs in a [`LineOrder`].
pub struct UrlLines<'g> {
    generator: &'g UrlGenerator,
    order: LineOrder,
    stream: RepeatStream,
    next: u64,
}

impl<'g> UrlLines<'g> {
    /// The lines of `generator` in `order`; `seed` drives the repeats.
    pub fn new(generator: &'g UrlGenerator, order: LineOrder, seed: u64) -> Self {
        let fraction = match order {
            LineOrder::WithRepeats { fraction } => fraction,
            _ => 0.0,
        };
        UrlLines {
            generator,
            order,
            stream: RepeatStream::new(seed, fraction),
            next: 0,
        }
    }

    /// Writes the next URL into `buf` (replacing what it held).
    pub fn next_into(&mut self, buf: &mut Vec<u8>) {
        let i = self.next;
        self.next += 1;
        match self.order {
            LineOrder::NonMembers => self.generator.non_member(i, buf),
            LineOrder::Members => self.generator.member(i, buf),
            LineOrder::WithRepeats { .. } => {
                let index = self.stream.next().map(|e| e.index()).unwrap_or(i);
                self.generator.member(index, buf);
            }
        }
    }

    /// Writes `n` lines to `out`.
    pub fn write(&mut self, n: u64, out: &mut dyn Write) -> std::io::Result<()> {
        let mut buf = Vec::with_capacity(256);
        for _ in 0..n {
            self.next_into(&mut buf);
            buf.push(b'\n');
            out.write_all(&buf)?;
        }
        Ok(())
    }

    /// How many of the next `n` URLs have each length in bytes (the last slot counts 65,536 and more).
    pub fn length_histogram(&mut self, n: u64) -> Vec<u64> {
        let mut histogram = vec![0u64; 65_537];
        let mut buf = Vec::with_capacity(256);
        for _ in 0..n {
            self.next_into(&mut buf);
            histogram[buf.len().min(65_536)] += 1;
        }
        histogram
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::Profile;

    #[test]
    fn lines_are_the_generators_urls_in_order() {
        let g = UrlGenerator::new(Profile::default_profile(), 3);
        let mut out = Vec::new();
        UrlLines::new(&g, LineOrder::Members, 3)
            .write(3, &mut out)
            .unwrap();
        let mut want = Vec::new();
        let mut buf = Vec::new();
        for i in 0..3 {
            g.member(i, &mut buf);
            want.extend_from_slice(&buf);
            want.push(b'\n');
        }
        assert_eq!(out, want);
        let histogram = UrlLines::new(&g, LineOrder::NonMembers, 3).length_histogram(100);
        assert_eq!(histogram.iter().sum::<u64>(), 100);
    }
}

//! The dedup-cli experiment's check of a tool's output against the exact answer: the stream's distinct
//! lines in order of first sight, compared by xxh3-128 (odds of a collision among 10⁷ lines about
//! 10⁻²⁵): lines missing, lines repeated or foreign, and whether the order was kept.

use crate::run::Runner;
use crate::{Error, Result};
use std::io::BufRead;
use std::path::Path;

/// What a tool's output held against the exact answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Check {
    pub lines_out: u64,
    pub wrongly_dropped: u64,
    pub wrongly_passed: u64,
    pub order_kept: bool,
}

/// The exact answer: each distinct line's xxh3-128 and its place in the order of first sight.
pub(super) struct Expected {
    place: hashbrown::HashMap<u128, u32>,
}

impl Expected {
    /// Members 0..distinct are the stream's distinct lines, in order of first sight.
    pub fn of(runner: &Runner<'_>, distinct: u64) -> Self {
        let mut place = hashbrown::HashMap::with_capacity(distinct as usize);
        let mut buf = Vec::with_capacity(256);
        for i in 0..distinct {
            runner.source.generator.member(i, &mut buf);
            place.insert(line_hash(&buf), i as u32);
        }
        Expected { place }
    }

    /// Reads `output` and compares it with the answer.
    pub fn check(&self, output: &Path) -> Result<Check> {
        let file = std::fs::File::open(output).map_err(|e| Error::io(output, e))?;
        let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
        let mut seen = vec![false; self.place.len()];
        let mut check = Check {
            order_kept: true,
            ..Check::default()
        };
        let (mut matched, mut last) = (0u64, None::<u32>);
        let mut line = Vec::with_capacity(256);
        loop {
            line.clear();
            let read = reader
                .read_until(b'\n', &mut line)
                .map_err(|e| Error::io(output, e))?;
            if read == 0 {
                break;
            }
            if line.last() == Some(&b'\n') {
                line.pop();
            }
            check.lines_out += 1;
            match self.place.get(&line_hash(&line)) {
                Some(&at) if !seen[at as usize] => {
                    seen[at as usize] = true;
                    matched += 1;
                    if last.is_some_and(|l| at < l) {
                        check.order_kept = false;
                    }
                    last = Some(at);
                }
                _ => check.wrongly_passed += 1,
            }
        }
        check.wrongly_dropped = self.place.len() as u64 - matched;
        Ok(check)
    }
}

fn line_hash(line: &[u8]) -> u128 {
    xxhash_rust::xxh3::xxh3_128(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expected_of(lines: &[&str]) -> Expected {
        Expected {
            place: lines
                .iter()
                .enumerate()
                .map(|(i, l)| (line_hash(l.as_bytes()), i as u32))
                .collect(),
        }
    }

    fn check_of(expected: &Expected, output: &str) -> Check {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        std::fs::write(&path, output).unwrap();
        expected.check(&path).unwrap()
    }

    #[test]
    fn the_check_counts_drops_repeats_strangers_and_order() {
        let e = expected_of(&["a", "b", "c", "d"]);
        let exact = check_of(&e, "a\nb\nc\nd\n");
        assert_eq!(
            exact,
            Check {
                lines_out: 4,
                wrongly_dropped: 0,
                wrongly_passed: 0,
                order_kept: true
            }
        );
        let filter = check_of(&e, "a\nc\nd\n");
        assert_eq!((filter.wrongly_dropped, filter.wrongly_passed), (1, 0));
        let repeats = check_of(&e, "a\nb\na\nx\nc\nd");
        assert_eq!((repeats.wrongly_dropped, repeats.wrongly_passed), (0, 2));
        assert!(repeats.order_kept);
        let sorted = check_of(&e, "d\nc\nb\na\n");
        assert_eq!((sorted.wrongly_dropped, sorted.order_kept), (0, false));
    }
}

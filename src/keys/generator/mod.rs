//! The URL generator: `url(seed, i)` is a pure function of the index, so key sets stream in O(1) memory and
//! split across threads by index range.
//!
//! Invariants:
//! 1. Every index below [`INDEX_LIMIT`] gives a distinct URL: the last path segment ends in `-<token>`, where
//!    the token is a bijective scramble of the index (48-bit multiply/xor-shift rounds) written in base 36,
//!    and nothing after that last `-` but the token, an optional `.ext` and an optional `?query`.
//! 2. Members are indices `[0, n)`; non-members are `NON_MEMBER_BASE + j`, a disjoint half of the index space,
//!    so a non-member is guaranteed never to have been inserted and ground truth needs no exact set.
//! 3. No allocation per key: URLs are written into a caller's reused buffer.
//!
//! Shape: scheme, a host drawn from a Zipf-like population (rank r has weight r^−s, sampled by the continuous
//! inverse CDF), a TLD from a weighted list, 1–6 path segments of pseudo-words, an optional query, and a total
//! length drawn from the profile's quantile table (the generator pads the slug or drops parts to meet it).

mod writer;

use super::profile::Profile;
use super::KeyBatch;
use writer::{base36, splitmix, Cursor, Rng, Word};

/// Indices below this limit give distinct URLs (2^48).
pub const INDEX_LIMIT: u64 = 1 << 48;
/// Non-member index j is `NON_MEMBER_BASE + j`; members must stay below it (2^47 ≈ 1.4·10¹⁴ keys).
pub const NON_MEMBER_BASE: u64 = 1 << 47;

const MASK48: u64 = INDEX_LIMIT - 1;

/// TLDs with weights roughly as crawls see them.
const TLDS: &[(&str, u32)] = &[
    ("com", 460),
    ("org", 55),
    ("net", 45),
    ("de", 45),
    ("co.uk", 25),
    ("ru", 25),
    ("jp", 20),
    ("br", 18),
    ("fr", 16),
    ("it", 14),
    ("nl", 12),
    ("pl", 11),
    ("au", 10),
    ("in", 10),
    ("io", 9),
    ("es", 9),
    ("ca", 8),
    ("info", 8),
    ("cn", 8),
    ("edu", 7),
    ("gov", 4),
    ("ch", 5),
    ("se", 5),
    ("co", 5),
];
const EXTENSIONS: &[&str] = &[
    ".html", ".html", ".html", ".php", ".htm", ".aspx", ".jsp", ".pdf",
];
const QUERY_KEYS: &[&str] = &[
    "id",
    "page",
    "ref",
    "q",
    "sort",
    "lang",
    "utm_source",
    "session",
    "p",
    "cat",
];
const SYLLABLES: &[&str] = &[
    "ka", "ri", "to", "ne", "sa", "mo", "lu", "en", "ar", "is", "po", "de", "ve", "li", "on", "ta",
    "ma", "re", "co", "in", "st", "ch", "el", "an", "ro", "be", "ul", "tr", "om", "pe", "gi", "fa",
    "new", "art", "net", "web", "log", "bit", "top", "blog", "shop", "news", "data", "home",
    "info", "post", "view", "list", "page", "item",
];

/// Number of words in the vocabulary (a power of two).
const VOCABULARY: usize = 4096;

/// Writes URLs for indices, as a pure function of (profile, seed, index).
#[derive(Clone, Debug)]
pub struct UrlGenerator {
    profile: Profile,
    seed: u64,
    scramble_key: u64,
    words: Vec<Word>,
    tld_cumulative: Vec<u32>,
    segment_cumulative: Vec<f64>,
    ln_hosts: f64,
}

impl UrlGenerator {
    /// A generator for `profile` keyed by `seed`.
    pub fn new(profile: Profile, seed: u64) -> Self {
        let mut state = 0x005E_ED0F_7751_0DD5_u64;
        let mut words = Vec::with_capacity(VOCABULARY);
        while words.len() < VOCABULARY {
            let parts = 1 + (splitmix(&mut state) % 3) as usize;
            let mut word = Word {
                bytes: [0; 16],
                len: 0,
            };
            for _ in 0..parts {
                let syllable =
                    SYLLABLES[(splitmix(&mut state) % SYLLABLES.len() as u64) as usize].as_bytes();
                word.bytes[word.len as usize..word.len as usize + syllable.len()]
                    .copy_from_slice(syllable);
                word.len += syllable.len() as u8;
            }
            words.push(word);
        }
        let mut total = 0;
        let tld_cumulative = TLDS
            .iter()
            .map(|(_, w)| {
                total += w;
                total
            })
            .collect();
        let weight_sum: f64 = profile.path_segment_weights.iter().sum();
        let mut acc = 0.0;
        let segment_cumulative = profile
            .path_segment_weights
            .iter()
            .map(|w| {
                acc += w / weight_sum;
                acc
            })
            .collect();
        let mut key_state = seed ^ 0xD1B5_4A32_D192_ED03;
        let ln_hosts = (profile.hosts as f64).ln();
        UrlGenerator {
            profile,
            seed,
            scramble_key: splitmix(&mut key_state) & MASK48,
            words,
            tld_cumulative,
            segment_cumulative,
            ln_hosts,
        }
    }

    /// The profile this generator draws from.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Writes member `i` (0 ≤ i < [`NON_MEMBER_BASE`]) into `buf`, replacing its content.
    #[inline]
    pub fn member(&self, i: u64, buf: &mut Vec<u8>) {
        debug_assert!(i < NON_MEMBER_BASE);
        self.write(i, buf);
    }

    /// Writes non-member `j`, which no member index can produce, into `buf`.
    #[inline]
    pub fn non_member(&self, j: u64, buf: &mut Vec<u8>) {
        debug_assert!(j < NON_MEMBER_BASE);
        self.write(NON_MEMBER_BASE + j, buf);
    }

    /// Scrambles a 48-bit index bijectively under this generator's key.
    #[inline]
    pub fn scramble(&self, index: u64) -> u64 {
        let mut x = (index ^ self.scramble_key) & MASK48;
        x = x.wrapping_mul(0x9E37_79B9_7F4B) & MASK48;
        x ^= x >> 23;
        x = x.wrapping_mul(0xC2B2_AE3D_27D5) & MASK48;
        x ^= x >> 25;
        x = x.wrapping_mul(0x1656_67B1_9E37) & MASK48;
        x ^= x >> 24;
        x
    }

    /// Writes the URL of raw index `index` (< [`INDEX_LIMIT`]) into `buf`, replacing its content.
    pub fn write(&self, index: u64, buf: &mut Vec<u8>) {
        buf.clear();
        self.append(index, buf);
    }

    /// Appends member `i` to `buf` (for batches that keep keys back to back).
    #[inline]
    pub fn append_member(&self, i: u64, buf: &mut Vec<u8>) {
        debug_assert!(i < NON_MEMBER_BASE);
        self.append(i, buf);
    }

    /// Appends non-member `j` to `buf`.
    #[inline]
    pub fn append_non_member(&self, j: u64, buf: &mut Vec<u8>) {
        debug_assert!(j < NON_MEMBER_BASE);
        self.append(NON_MEMBER_BASE + j, buf);
    }

    /// Appends members `range` to `batch`, back to back (one key per index).
    pub fn fill_members(&self, range: std::ops::Range<u64>, batch: &mut KeyBatch) {
        for i in range {
            batch.push_with(|buf| self.append_member(i, buf));
        }
    }

    /// Appends non-members `range` to `batch`.
    pub fn fill_non_members(&self, range: std::ops::Range<u64>, batch: &mut KeyBatch) {
        for j in range {
            batch.push_with(|buf| self.append_non_member(j, buf));
        }
    }

    /// Appends the URL of raw index `index` to `buf`.
    ///
    /// Every part's length is known before it is written, so the buffer grows once per URL and words are
    /// copied as fixed 16-byte blocks (one vector move each) instead of a `memmove` call per word.
    pub fn append(&self, index: u64, buf: &mut Vec<u8>) {
        let token = self.scramble(index);
        let mut rng = Rng(token ^ self.seed.rotate_left(17) ^ 0xA076_1D64_78BD_642F);
        let profile = &self.profile;
        let target = profile.length_at(rng.unit());
        let mut out = Cursor::new(buf, 8 + MAX_HOST_BYTES);

        if profile.with_scheme {
            let scheme: &[u8] = if rng.unit() < profile.https_fraction {
                b"https://"
            } else {
                b"http://"
            };
            out.bytes(scheme);
        }
        self.write_host(&mut rng, &mut out);

        // Decide the parts after the host, then fit the slug to the target length.
        let u = rng.unit();
        let segments = (1 + self
            .segment_cumulative
            .iter()
            .take_while(|c| **c < u)
            .count())
        .min(self.segment_cumulative.len());
        let mut middle = [0u16; 5];
        for slot in middle.iter_mut().take(segments - 1) {
            *slot = (rng.next() as usize % VOCABULARY) as u16;
        }
        let extension = if rng.unit() < profile.extension_fraction {
            EXTENSIONS[(rng.next() % EXTENSIONS.len() as u64) as usize]
        } else {
            ""
        };
        let with_query = rng.unit() < profile.query_fraction;
        let query_words = 1 + rng.next() % 3;
        let query_seed = rng.next();

        let mut token_digits = [0u8; 10];
        let token_len = base36(token, &mut token_digits);
        let mut middle_total: usize = middle[..segments - 1]
            .iter()
            .map(|w| 1 + self.words[*w as usize].len as usize)
            .sum();
        let mut query_len = if with_query {
            self.query_len(query_seed, query_words)
        } else {
            0
        };
        let fixed = out.written() + 1 + 1 + token_len + extension.len();
        let mut used_middle = segments - 1;
        // Too long: drop the query, then middle segments, before shrinking the slug below one word.
        if fixed + middle_total + query_len + 1 > target && query_len > 0 {
            query_len = 0;
        }
        while used_middle > 0 && fixed + middle_total + query_len + 1 > target {
            used_middle -= 1;
            middle_total -= 1 + self.words[middle[used_middle] as usize].len as usize;
        }
        let slug_len = target
            .saturating_sub(fixed + middle_total + query_len)
            .max(1);
        out.reserve(middle_total + 1 + slug_len + 1 + token_len + extension.len() + query_len);

        for w in &middle[..used_middle] {
            out.byte(b'/');
            out.word(&self.words[*w as usize], usize::MAX);
        }
        out.byte(b'/');
        self.write_slug(&mut rng, slug_len, &mut out);
        out.byte(b'-');
        out.bytes(&token_digits[10 - token_len..]);
        out.bytes(extension.as_bytes());
        if query_len > 0 {
            self.write_query(query_seed, query_words, &mut out);
        }
        out.finish();
    }

    /// The URL of raw index `index` as a new vector (allocates; for tests and examples).
    pub fn write_to_vec(&self, index: u64) -> Vec<u8> {
        let mut buf = Vec::new();
        self.write(index, &mut buf);
        buf
    }

    fn write_host(&self, rng: &mut Rng, out: &mut Cursor) {
        let profile = &self.profile;
        // Continuous Zipf inverse CDF: P(rank ≤ x) ∝ ∫₁ˣ t^−s dt.
        let u = rng.unit();
        let s = profile.host_zipf;
        let x = if (s - 1.0).abs() < 1e-9 {
            (u * self.ln_hosts).exp()
        } else {
            let a = 1.0 - s;
            ((((a * self.ln_hosts).exp() - 1.0) * u + 1.0).ln() / a).exp()
        };
        let rank = (x as u64).clamp(1, profile.hosts);
        let mut host = Rng(rank.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x2545_F491_4F6C_DD1D);
        if host.unit() < profile.www_fraction {
            out.bytes(b"www.");
        }
        let parts = 1 + (host.next() % 2) as usize;
        for p in 0..parts {
            if p > 0 {
                out.byte(b'-');
            }
            out.word(&self.words[(host.next() as usize) % VOCABULARY], usize::MAX);
        }
        let pick = (host.next() % *self.tld_cumulative.last().unwrap_or(&1) as u64) as u32;
        let tld = self
            .tld_cumulative
            .iter()
            .position(|c| pick < *c)
            .unwrap_or(0);
        out.byte(b'.');
        out.bytes(TLDS[tld].0.as_bytes());
    }

    fn write_slug(&self, rng: &mut Rng, len: usize, out: &mut Cursor) {
        let start = out.written();
        while out.written() - start < len {
            if out.written() > start {
                out.byte(b'-');
            }
            let room = len - (out.written() - start);
            out.word(&self.words[(rng.next() as usize) % VOCABULARY], room);
        }
        // A slug never ends in '-': a word cut to nothing leaves one letter instead.
        out.replace_last(b'-', b'x');
    }

    fn query_len(&self, query_seed: u64, words: u64) -> usize {
        let mut q = Rng(query_seed);
        let mut len = 0;
        for _ in 0..words {
            len += 1 + QUERY_KEYS[(q.next() % QUERY_KEYS.len() as u64) as usize].len() + 1;
            len += self.words[(q.next() as usize) % VOCABULARY].len as usize;
        }
        len
    }

    fn write_query(&self, query_seed: u64, words: u64, out: &mut Cursor) {
        let mut q = Rng(query_seed);
        for i in 0..words {
            out.byte(if i == 0 { b'?' } else { b'&' });
            out.bytes(QUERY_KEYS[(q.next() % QUERY_KEYS.len() as u64) as usize].as_bytes());
            out.byte(b'=');
            out.word(&self.words[(q.next() as usize) % VOCABULARY], usize::MAX);
        }
    }
}

/// The longest host the generator writes ("www." + two 12-byte words + "-" + "." + TLD, with slack).
const MAX_HOST_BYTES: usize = 64;

/// Recovers the scrambled token from a generated URL (the text after the last `-` of the last segment).
pub fn token_of(url: &[u8]) -> Option<&[u8]> {
    let end = url.iter().position(|b| *b == b'?').unwrap_or(url.len());
    let path = &url[..end];
    let last = &path[path.iter().rposition(|b| *b == b'/')? + 1..];
    let token = &last[last.iter().rposition(|b| *b == b'-')? + 1..];
    Some(&token[..token.iter().position(|b| *b == b'.').unwrap_or(token.len())])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::Profile;

    fn lengths(g: &UrlGenerator, n: u64) -> Vec<usize> {
        let mut buf = Vec::new();
        let mut out: Vec<usize> = (0..n)
            .map(|i| {
                g.member(i, &mut buf);
                buf.len()
            })
            .collect();
        out.sort_unstable();
        out
    }

    #[test]
    fn generation_is_deterministic_and_seeded() {
        let a = UrlGenerator::new(Profile::default_profile(), 1);
        let b = UrlGenerator::new(Profile::default_profile(), 1);
        let c = UrlGenerator::new(Profile::default_profile(), 2);
        let (mut x, mut y, mut z) = (Vec::new(), Vec::new(), Vec::new());
        for i in [0, 1, 999, 1 << 40] {
            a.member(i, &mut x);
            b.member(i, &mut y);
            c.member(i, &mut z);
            assert_eq!(x, y);
            assert_ne!(x, z);
        }
        assert_eq!(
            crate::keys::url(1, 5),
            String::from_utf8(a.write_to_vec(5)).unwrap()
        );
    }

    #[test]
    fn a_million_members_are_distinct_and_disjoint_from_non_members() {
        let g = UrlGenerator::new(Profile::default_profile(), 42);
        let mut seen = hashbrown::HashSet::with_capacity(2_000_000);
        let mut buf = Vec::new();
        for i in 0..1_000_000 {
            g.member(i, &mut buf);
            assert!(buf.is_ascii());
            assert_eq!(
                token_of(&buf).map(|t| t.to_vec()),
                Some(base36_vec(g.scramble(i))),
                "{:?}",
                String::from_utf8_lossy(&buf)
            );
            assert!(seen.insert(buf.clone()), "member {i} repeats");
        }
        for j in 0..1_000_000 {
            g.non_member(j, &mut buf);
            assert!(
                seen.insert(buf.clone()),
                "non-member {j} equals an earlier URL"
            );
        }
    }

    #[test]
    fn lengths_follow_the_crawl_statistics() {
        let g = UrlGenerator::new(Profile::default_profile(), 42);
        let l = lengths(&g, 200_000);
        let mean = l.iter().sum::<usize>() as f64 / l.len() as f64;
        let q = |p: f64| l[((l.len() - 1) as f64 * p) as usize] as f64;
        // Documented bands (datasets/README.md): mean 77 ± 3, median 67 ± 3, p95 157 ± 6, p99 199 ± 8.
        assert!((mean - 77.0).abs() <= 3.0, "mean {mean}");
        assert!((q(0.5) - 67.0).abs() <= 3.0, "median {}", q(0.5));
        assert!((q(0.95) - 157.0).abs() <= 6.0, "p95 {}", q(0.95));
        assert!((q(0.99) - 199.0).abs() <= 8.0, "p99 {}", q(0.99));
        assert!(*l.last().unwrap() <= 993);
    }

    #[test]
    fn short_key_profile_is_short() {
        let g = UrlGenerator::new(Profile::load("short-keys").unwrap(), 3);
        let l = lengths(&g, 50_000);
        let median = l[l.len() / 2] as f64;
        assert!((median - 30.0).abs() <= 3.0, "median {median}");
    }

    fn base36_vec(v: u64) -> Vec<u8> {
        let mut d = [0u8; 10];
        let n = base36(v, &mut d);
        d[10 - n..].to_vec()
    }
}

//! The key generator: `url(seed, i)` is a pure function of the index, so key sets stream in O(1) memory and
//! split across threads by index range. URLs are written here and in [`compose`]; the profile's
//! [`Shape`] may ask for e-mail addresses ([`email`]), IPv4 ([`ipv4`]) or IPv6 ([`ipv6`]) addresses
//! instead, each a pure function of the index too, each with its own index space
//! ([`Shape::member_limit`]) in which every index gives a distinct key. The invariants below are the URLs';
//! each shape's module states its own.
//!
//! Invariants:
//! 1. Every index below [`INDEX_LIMIT`] gives a distinct URL: the last path segment ends in `-<token>`, where
//!    the token is a bijective scramble of the index (48-bit multiply/xor-shift rounds) written as ten
//!    base-32 digits, and nothing after that last `-` but the token, an optional `.ext` and an optional
//!    `?query`.
//! 2. Members are indices `[0, n)`; non-members are `NON_MEMBER_BASE + j`, a disjoint half of the index space,
//!    so a non-member is guaranteed never to have been inserted and ground truth needs no exact set.
//! 3. No allocation per key: URLs are written into a caller's reused buffer.
//!
//! Shape: scheme, a host drawn from a Zipf-like population (rank r has weight r^−s, sampled by the continuous
//! inverse CDF, tabulated at 1025 points and interpolated), a TLD from a weighted list, 1–6 path segments of
//! pseudo-words, an optional query, and a total length drawn from the profile's quantile table (the
//! generator fits the slug or drops parts to meet it). [`compose`] writes one URL from tables built once.

mod compose;
mod email;
mod ipv4;
mod ipv6;
mod permute;
mod writer;

use super::profile::Profile;
use super::shape::Shape;
use super::KeyBatch;
use compose::Tables;
use email::EmailWriter;
use ipv4::Ipv4Writer;
use ipv6::Ipv6Writer;

pub use email::MEMBER_LIMIT as EMAIL_MEMBER_LIMIT;
pub use ipv4::MEMBER_LIMIT as IPV4_MEMBER_LIMIT;
#[cfg(test)]
use writer::base32;
use writer::splitmix;

/// Indices below this limit give distinct URLs (2^48).
pub const INDEX_LIMIT: u64 = 1 << 48;
/// Non-member index j is `NON_MEMBER_BASE + j`; members must stay below it (2^47 ≈ 1.4·10¹⁴ keys).
pub const NON_MEMBER_BASE: u64 = 1 << 47;
const _: () = assert!(NON_MEMBER_BASE == crate::units::MAX_EXPECTED_KEYS);

const MASK48: u64 = INDEX_LIMIT - 1;
/// Batches of at least this many URLs (the harness's batches, 4096 and more) start by fetching the tables'
/// hot parts into the core's caches ([`compose`]'s `prefetch_hot`); smaller ones, whose URLs would not
/// read most of those lines, do not.
const PREFETCH_MIN_KEYS: u64 = 4096;

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

/// Whether the CPU has what [`UrlGenerator::fill_v3`] is compiled for.
fn cpu_has_v3() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("bmi2")
            && std::arch::is_x86_feature_detected!("lzcnt")
            && std::arch::is_x86_feature_detected!("popcnt")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// What writes the keys of one shape (built once, with the generator).
#[derive(Clone, Debug)]
enum ShapeWriter {
    Url(Box<Tables>),
    Email(EmailWriter),
    Ipv4(Ipv4Writer),
    Ipv6(Ipv6Writer),
}

/// Writes keys for indices, as a pure function of (profile, seed, index): URLs, or the keys of the
/// profile's other [`Shape`].
#[derive(Clone, Debug)]
pub struct UrlGenerator {
    profile: Profile,
    seed: u64,
    scramble_key: u64,
    writer: ShapeWriter,
    /// Members are the indices below this ([`Shape::member_limit`]).
    member_limit: u64,
    /// Whether this CPU runs [`UrlGenerator::fill_v3`] (found once, when the generator is built).
    v3: bool,
}

impl UrlGenerator {
    /// A generator for `profile` keyed by `seed`.
    pub fn new(profile: Profile, seed: u64) -> Self {
        let mut key_state = seed ^ 0xD1B5_4A32_D192_ED03;
        let writer = match profile.shape {
            Shape::Url => ShapeWriter::Url(Box::new(Tables::new(&profile))),
            Shape::Email => ShapeWriter::Email(EmailWriter::new(&profile, seed)),
            Shape::Ipv4 => ShapeWriter::Ipv4(Ipv4Writer::new(seed)),
            Shape::Ipv6 => ShapeWriter::Ipv6(Ipv6Writer::new(&profile, seed)),
        };
        UrlGenerator {
            writer,
            member_limit: profile.shape.member_limit(),
            profile,
            seed,
            scramble_key: splitmix(&mut key_state) & MASK48,
            v3: cpu_has_v3(),
        }
    }

    /// Members are the indices below this, and non-members `j` below it too: 2^47 for URLs and IPv6
    /// addresses, fewer for e-mail and IPv4 addresses ([`Shape::member_limit`]).
    pub fn member_limit(&self) -> u64 {
        self.member_limit
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

    /// Writes the key of raw index `index` (< [`INDEX_LIMIT`]) into `buf`, replacing its content.
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
        debug_assert!(range.end <= NON_MEMBER_BASE);
        self.fill(range.start..range.end, batch);
    }

    /// Appends non-members `range` to `batch`.
    pub fn fill_non_members(&self, range: std::ops::Range<u64>, batch: &mut KeyBatch) {
        debug_assert!(range.end <= NON_MEMBER_BASE);
        self.fill(
            NON_MEMBER_BASE + range.start..NON_MEMBER_BASE + range.end,
            batch,
        );
    }

    /// Appends the keys of raw indices `range`. For URLs on a CPU with AVX2 (x86-64-v3) the loop is
    /// compiled for it, once, at run time's choice: the same arithmetic, so the same URLs, with 32-byte
    /// copies for the 48-, 64- and 80-byte blocks a URL is written from (half the moves of the baseline's
    /// 16 bytes). The shape is matched once per batch, not per key.
    fn fill(&self, range: std::ops::Range<u64>, batch: &mut KeyBatch) {
        let tables = match &self.writer {
            ShapeWriter::Url(tables) => tables,
            ShapeWriter::Email(writer) => {
                for index in range {
                    batch.push_with(|buf| writer.append(self.space_index(index), buf));
                }
                return;
            }
            ShapeWriter::Ipv4(writer) => {
                for index in range {
                    batch.push_with(|buf| writer.append(self.space_index(index), buf));
                }
                return;
            }
            ShapeWriter::Ipv6(writer) => {
                for index in range {
                    batch.push_with(|buf| writer.append(self.space_index(index), buf));
                }
                return;
            }
        };
        if range.end - range.start >= PREFETCH_MIN_KEYS {
            tables.prefetch_hot();
        }
        #[cfg(target_arch = "x86_64")]
        if self.v3 {
            // SAFETY: the CPU has the features the function is compiled for (`cpu_has_v3`).
            unsafe { self.fill_v3(tables, range, batch) };
            return;
        }
        self.fill_with(tables, range, batch);
    }

    /// [`UrlGenerator::fill_with`] compiled for x86-64-v3's integer and vector instructions.
    ///
    /// # Safety
    /// The CPU has AVX2, BMI1, BMI2, LZCNT and POPCNT.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
    unsafe fn fill_v3(&self, tables: &Tables, range: std::ops::Range<u64>, batch: &mut KeyBatch) {
        self.fill_with(tables, range, batch);
    }

    #[inline(always)]
    fn fill_with(&self, tables: &Tables, range: std::ops::Range<u64>, batch: &mut KeyBatch) {
        for index in range {
            batch.push_with(|buf| self.append_url(tables, index, buf));
        }
    }

    /// Appends the key of raw index `index` to `buf`.
    #[inline(always)]
    pub fn append(&self, index: u64, buf: &mut Vec<u8>) {
        match &self.writer {
            ShapeWriter::Url(tables) => self.append_url(tables, index, buf),
            ShapeWriter::Email(writer) => writer.append(self.space_index(index), buf),
            ShapeWriter::Ipv4(writer) => writer.append(self.space_index(index), buf),
            ShapeWriter::Ipv6(writer) => writer.append(self.space_index(index), buf),
        }
    }

    /// The index of the shape's space that raw index `index` stands for: members as they are, non-member
    /// j (raw `NON_MEMBER_BASE + j`) at `member_limit + j`. Panics past the shape's space, where keys
    /// would repeat (the commands check their counts against [`UrlGenerator::member_limit`] first).
    #[inline]
    fn space_index(&self, index: u64) -> u64 {
        let (base, offset) = match index.checked_sub(NON_MEMBER_BASE) {
            Some(j) => (self.member_limit, j),
            None => (0, index),
        };
        assert!(
            offset < self.member_limit,
            "index {offset} is past the {} shape's {} members (or non-members)",
            self.profile.shape,
            self.member_limit
        );
        base + offset
    }

    /// Appends the URL of raw index `index` to `buf` (see [`compose`] for how it is written).
    #[inline(always)]
    fn append_url(&self, tables: &Tables, index: u64, buf: &mut Vec<u8>) {
        let token = self.scramble(index);
        let stream = self.seed.rotate_left(17) ^ 0xA076_1D64_78BD_642F;
        let max = tables.max_url_bytes;
        buf.reserve(max);
        let written = tables.write_url(token, stream, &mut buf.spare_capacity_mut()[..max]);
        // SAFETY: `write_url` initialised every byte of the spare capacity before `written` (the cursor's
        // invariant) and `written` is within the `max` bytes reserved above.
        unsafe { buf.set_len(buf.len() + written) };
    }

    /// `count` distinct keys of exactly `bytes` (≥ 10) bytes, for timing a hash at one key length: member
    /// URL i cut or repeated to `bytes − 10` bytes, then i in ten decimal digits. The hash study and its
    /// criterion benchmark time the same keys.
    pub fn keys_of_length(&self, count: u64, bytes: usize) -> Vec<Vec<u8>> {
        let mut url = Vec::new();
        (0..count)
            .map(|i| {
                self.member(i, &mut url);
                let mut key: Vec<u8> = url
                    .iter()
                    .copied()
                    .cycle()
                    .take(bytes.saturating_sub(10))
                    .collect();
                key.extend_from_slice(format!("{i:010}").as_bytes());
                key
            })
            .collect()
    }

    /// The key of raw index `index` as a new vector (allocates; for tests and examples).
    pub fn write_to_vec(&self, index: u64) -> Vec<u8> {
        let mut buf = Vec::new();
        self.write(index, &mut buf);
        buf
    }
}

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

    /// Hosts copied from the table built with the generator are the hosts written from their ranks, so a
    /// URL is the same with the table or without it.
    #[test]
    fn cached_hosts_write_the_same_urls_as_hosts_written_from_their_rank() {
        for profile in [
            Profile::default_profile(),
            Profile::load("short-keys").unwrap(),
        ] {
            let cached = UrlGenerator::new(profile.clone(), 42);
            let mut uncached = UrlGenerator::new(profile, 42);
            let ShapeWriter::Url(tables) = &mut uncached.writer else {
                unreachable!("a URL profile")
            };
            tables.without_host_cache();
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for i in 0..200_000 {
                cached.member(i, &mut a);
                uncached.member(i, &mut b);
                assert_eq!(a, b, "member {i}");
            }
        }
    }

    /// A batch filled at once (compiled for AVX2 where the CPU has it) holds the URLs written one by one.
    #[test]
    fn filled_batches_hold_the_urls_written_one_by_one() {
        for profile in [
            Profile::default_profile(),
            Profile::load("short-keys").unwrap(),
        ] {
            let g = UrlGenerator::new(profile, 42);
            let mut batch = KeyBatch::with_capacity(4096, 80);
            let mut one = Vec::new();
            for (start, non_members) in [(0, false), (1 << 40, false), (0, true), (77, true)] {
                batch.clear();
                if non_members {
                    g.fill_non_members(start..start + 50_000, &mut batch);
                } else {
                    g.fill_members(start..start + 50_000, &mut batch);
                }
                for (k, i) in (start..start + 50_000).enumerate() {
                    if non_members {
                        g.non_member(i, &mut one);
                    } else {
                        g.member(i, &mut one);
                    }
                    assert_eq!(
                        batch.key(k),
                        &one[..],
                        "index {i}, non-member {non_members}"
                    );
                }
            }
        }
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
                Some(base32_vec(g.scramble(i))),
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
        // Documented bands (datasets/README.md): mean 77 ± 2, median 67 ± 3, p95 157 ± 6, p99 199 ± 8.
        assert!((mean - 77.0).abs() <= 2.0, "mean {mean}");
        assert!((q(0.5) - 67.0).abs() <= 3.0, "median {}", q(0.5));
        assert!((q(0.95) - 157.0).abs() <= 6.0, "p95 {}", q(0.95));
        assert!((q(0.99) - 199.0).abs() <= 8.0, "p99 {}", q(0.99));
        assert!(*l.last().unwrap() <= 993);
    }

    /// The shares of https, of an extension (which fitting never drops) and of both are the profile's,
    /// inside the 99.9% Wilson interval of 2·10⁵ URLs (±0.26–0.34 percentage points at these shares).
    #[test]
    fn https_and_extension_shares_follow_the_profile() {
        let profile = Profile::default_profile();
        let g = UrlGenerator::new(profile.clone(), 42);
        let (n, mut https, mut extension, mut both) = (200_000u64, 0, 0, 0);
        let mut buf = Vec::new();
        for i in 0..n {
            g.member(i, &mut buf);
            let is_https = buf.starts_with(b"https://");
            let path = buf.split(|b| *b == b'?').next().unwrap_or(&[]);
            let last = path.rsplit(|b| *b == b'/').next().unwrap_or(&[]);
            let has_extension = last.contains(&b'.');
            https += u64::from(is_https);
            extension += u64::from(has_extension);
            both += u64::from(is_https && has_extension);
        }
        // Both at once: the product of the shares, as for independent choices (fields of the draws that
        // overlapped would tie them).
        let (p_https, p_extension) = (profile.https_fraction, profile.extension_fraction);
        for (name, count, share) in [
            ("https", https, p_https),
            ("extension", extension, p_extension),
            ("https and extension", both, p_https * p_extension),
        ] {
            let interval = crate::stats::wilson(count, n, crate::stats::CHECK_CONFIDENCE);
            assert!(
                interval.contains(share),
                "{name}: {count} of {n}, {interval:?}"
            );
        }
    }

    #[test]
    fn short_key_profile_is_short() {
        let g = UrlGenerator::new(Profile::load("short-keys").unwrap(), 3);
        let l = lengths(&g, 50_000);
        let median = l[l.len() / 2] as f64;
        assert!((median - 30.0).abs() <= 3.0, "median {median}");
    }

    /// Profiles built in code skip the parser's checks: extreme lengths, lengths that fall, quantiles
    /// that start late, every optional part, a steep Zipf law. Every write stays inside the reserved
    /// room (debug builds check each one) and every URL keeps its token.
    #[test]
    fn extreme_profiles_stay_inside_the_reserved_room() {
        let base = Profile::default_profile();
        let with = |edit: &dyn Fn(&mut Profile)| {
            let mut p = base.clone();
            edit(&mut p);
            p
        };
        let cases = [
            (
                with(&|p| p.length_quantiles = vec![(0.0, 1.0), (0.5, 30_000.0), (1.0, 65_536.0)]),
                300,
            ),
            (
                with(&|p| p.length_quantiles = vec![(0.0, 1000.0), (1.0, 10.0)]),
                5_000,
            ),
            (
                with(&|p| p.length_quantiles = vec![(0.3, 50.0), (1.0, 90.0)]),
                5_000,
            ),
            (
                with(&|p| {
                    p.with_scheme = false;
                    p.path_segment_weights = vec![0.0, 0.0, 0.0, 0.0, 0.0, 1.0];
                    p.query_fraction = 1.0;
                    p.extension_fraction = 1.0;
                    p.www_fraction = 1.0;
                }),
                5_000,
            ),
            (
                with(&|p| {
                    p.host_zipf = 3.0;
                    p.hosts = 1_000_000_000;
                }),
                5_000,
            ),
        ];
        for (profile, count) in cases {
            let g = UrlGenerator::new(profile, 5);
            let mut buf = Vec::new();
            for i in 0..count {
                g.member(i, &mut buf);
                assert!(buf.is_ascii());
                assert_eq!(
                    token_of(&buf).map(|t| t.to_vec()),
                    Some(base32_vec(g.scramble(i)))
                );
            }
        }
    }

    /// For each shape beside URLs (whose test above takes 10⁶): 10⁵ members distinct, 10⁵ non-members
    /// distinct and none a member, at the start of the space and just below the member limit; a batch
    /// holds the keys written one by one; the same seed gives the same keys and another seed others.
    #[test]
    fn every_shape_keeps_members_distinct_and_disjoint_from_non_members() {
        for name in ["email", "ipv4", "ipv6"] {
            let g = UrlGenerator::new(Profile::load(name).unwrap(), 42);
            let limit = g.member_limit();
            assert_eq!(limit, g.profile().shape.member_limit());
            for start in [0, limit - 100_000] {
                let mut members = hashbrown::HashSet::with_capacity(100_000);
                let mut batch = KeyBatch::with_capacity(4096, 40);
                g.fill_members(start..start + 100_000, &mut batch);
                let mut one = Vec::new();
                for (k, i) in (start..start + 100_000).enumerate() {
                    g.member(i, &mut one);
                    assert_eq!(batch.key(k), &one[..], "{name} member {i}");
                    assert!(one.is_ascii(), "{name}");
                    assert!(members.insert(one.clone()), "{name}: member {i} repeats");
                }
                let mut non_members = hashbrown::HashSet::with_capacity(100_000);
                for j in start..start + 100_000 {
                    g.non_member(j, &mut one);
                    assert!(
                        !members.contains(&one),
                        "{name}: non-member {j} is a member"
                    );
                    assert!(
                        non_members.insert(one.clone()),
                        "{name}: non-member {j} repeats"
                    );
                }
            }
            let same = UrlGenerator::new(Profile::load(name).unwrap(), 42);
            let other = UrlGenerator::new(Profile::load(name).unwrap(), 43);
            let differ = (0..1000)
                .filter(|i| {
                    assert_eq!(g.write_to_vec(*i), same.write_to_vec(*i), "{name}");
                    g.write_to_vec(*i) != other.write_to_vec(*i)
                })
                .count();
            assert!(
                differ > 990,
                "{name}: {differ} of 1000 differ between seeds"
            );
        }
    }

    /// Past a shape's member limit the keys would repeat: the generator refuses the index.
    #[test]
    #[should_panic(expected = "past the ipv4 shape's")]
    fn an_index_past_the_space_panics_instead_of_repeating_a_key() {
        let g = UrlGenerator::new(Profile::load("ipv4").unwrap(), 42);
        g.non_member(g.member_limit(), &mut Vec::new());
    }

    /// The length bands datasets/README.md states, on 2·10⁵ keys of each shape: e-mail median 23 (the
    /// surveys' mean is 21.9 to 23, 80% up to 28, 95% up to 31), IPv4 median 13, IPv6 median 25.
    #[test]
    fn lengths_of_each_shape_fall_in_their_documented_bands() {
        for (name, median, mean, p95) in [
            ("email", 22.0..=24.0, 22.0..=24.0, 28.0..=31.0),
            ("ipv4", 13.0..=14.0, 13.0..=13.5, 15.0..=15.0),
            ("ipv6", 24.0..=26.0, 29.0..=31.0, 36.0..=38.0),
        ] {
            let g = UrlGenerator::new(Profile::load(name).unwrap(), 42);
            let l = lengths(&g, 200_000);
            let m = l.iter().sum::<usize>() as f64 / l.len() as f64;
            let q = |p: f64| l[((l.len() - 1) as f64 * p) as usize] as f64;
            assert!(median.contains(&q(0.5)), "{name}: median {}", q(0.5));
            assert!(mean.contains(&m), "{name}: mean {m}");
            assert!(p95.contains(&q(0.95)), "{name}: p95 {}", q(0.95));
        }
    }

    fn base32_vec(v: u64) -> Vec<u8> {
        base32(v).bytes().to_vec()
    }
}

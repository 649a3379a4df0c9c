//! One URL from its scrambled token: the shape's choices drawn from a token-seeded stream and written
//! without a data-dependent branch except the slug's copy loop and whether the host's rank is cached.
//!
//! Everything a URL is made of is tabulated when the generator is built ([`Tables`]): host words and fixed
//! strings as 16-byte blocks, each probability as a threshold on a field of a draw (16 or 64 bits), the
//! length quantiles' starting segment per slice of (0, 1), the TLD per weighted draw, the Zipf host-rank
//! inverse CDF at 1025 points, and three [`Corpus`] texts of vocabulary words joined by '/', '-' and
//! "&key=": the middle segments, the slug and the query are each one copy of a run of consecutive corpus
//! words starting at a drawn word.
//! Optional parts are written always and the cursor advances past them only when present, so a URL's cost
//! does not hinge on branch prediction. What building each part word by word cost instead is in
//! `docs/notes.md`; `keys/generate` in `benches/structures.rs` measures today's figure.

use super::writer::{base32, Cursor, Host, Rng, Word, LONG_COPY_BYTES};
use super::{EXTENSIONS, QUERY_KEYS, SYLLABLES, TLDS, VOCABULARY};
use crate::keys::profile::Profile;
use std::mem::MaybeUninit;

/// Slices of the unit interval that index the length quantile table's starting segment.
const LENGTH_BUCKETS: usize = 1024;
/// Intervals of the tabulated Zipf inverse CDF; between points the rank is interpolated linearly, which
/// for 10⁹ hosts at s = 1 is within 5·10⁻⁵ of the exact rank, relatively.
const ZIPF_POINTS: usize = 1024;
/// A slice whose end rank exceeds its start rank by more than this factor is too curved to interpolate
/// (at s > 1 the last slices span decades of ranks); its draws take the exact inverse CDF. At s ≤ 1 and
/// up to 10⁹ hosts no slice exceeds it, so the fast path is every draw.
const ZIPF_MAX_SLICE_RATIO: f64 = 1.1;
/// Target lengths are clamped to this (the profile parser's own limit).
const MAX_TARGET_BYTES: usize = 65_536;
/// The most middle path segments (the profile allows 1–6 segments; the last is the slug).
const MAX_MIDDLE: usize = 5;
/// An upper bound on a URL's bytes beyond its target length: scheme (8), host (≤ 35: "www.", two 12-byte
/// words, '-', '.', a TLD), the middle run's copy (80), '/', '-', the token (10), an extension (5), the
/// query run's copy (80) and the slug's copy overshoot (64), with slack.
const MAX_PARTS_BYTES: usize = 384;
/// Words in each corpus (a power of two); a run starts at one of the first `CORPUS_STARTS` words.
const CORPUS_WORDS: usize = 8192;
const CORPUS_STARTS: usize = 4096;
/// Host ranks whose hosts are written once, when the tables are built, and copied after: with 10⁵ hosts
/// at Zipf s = 1 they are 72% of the draws, in 192 KiB. 2¹⁶ ranks (96% of draws, 3 MiB) made generation
/// slower: each host's length, which every later write's position waits on, then came from L3 (the
/// figures are in docs/notes.md; `keys/generate` in `benches/structures.rs` measures it).
const CACHED_HOSTS: u64 = 1 << 12;
/// Cached hosts [`Tables::prefetch_hot`] fetches before a batch: ranks 1–1024 (at Zipf s = 1 over 10⁵
/// hosts, rank 1024 is drawn 0.35 times per 4096 URLs; the ranks past it are mostly not drawn in a batch).
const PREFETCHED_HOSTS: usize = 1024;
/// Bytes copied for a middle path or a query: more than 5 × 13 and 3 × 24.
const RUN_COPY_BYTES: usize = 80;
/// Bits of a draw that pick a corpus run's first word (`CORPUS_STARTS` = 2^12).
const START_BITS: u32 = 12;
/// Bits of a draw that decide an optional part (https, an extension, a query): shares to 1/65536.
const FLAG_BITS: u32 = 16;
/// Bits of a draw that pick the number of query pairs (1–3: shares within 1/4096 of a third).
const PAIR_BITS: u32 = 12;
/// Bits of a draw that pick the number of path segments: shares to 1/65536.
const SEGMENT_BITS: u32 = 16;
// The shape draw's fields: three run starts, the query's pair count, the segment count; the flags draw's:
// https, an extension, a query, and which extension.
const _: () = assert!(
    CORPUS_STARTS == 1 << START_BITS
        && 3 * START_BITS + PAIR_BITS + SEGMENT_BITS <= 64
        && 4 * FLAG_BITS <= 64
        && EXTENSIONS.len() <= 1 << FLAG_BITS
);

/// Vocabulary words joined by a separator, each preceded by it, with every word's offset.
#[derive(Clone, Debug)]
struct Corpus {
    text: Vec<u8>,
    /// `starts[i]` is the offset of word i's separator; one more entry than words.
    starts: Box<[u32; CORPUS_WORDS + 1]>,
}

impl Corpus {
    /// `CORPUS_WORDS` words drawn from `words` by `state`, each written as `prefix(i)` then the word, padded
    /// so that a copy of up to `pad` bytes from any start stays inside the text.
    fn new(
        words: &[Vec<u8>],
        state: &mut u64,
        prefix: impl Fn(u64) -> Vec<u8>,
        pad: usize,
    ) -> Corpus {
        let mut text = Vec::new();
        let mut starts = Vec::with_capacity(CORPUS_WORDS + 1);
        for _ in 0..CORPUS_WORDS {
            starts.push(text.len() as u32);
            let draw = super::splitmix(state);
            text.extend_from_slice(&prefix(draw));
            text.extend_from_slice(&words[(draw >> 20) as usize % words.len()]);
        }
        starts.push(text.len() as u32);
        text.resize(text.len() + pad, b'x');
        let starts = boxed(starts);
        Corpus { text, starts }
    }

    /// The starts of words `draw % CORPUS_STARTS` and the five after it: the run of k words from there
    /// spans `ends[0]..ends[k]`.
    #[inline(always)]
    fn ends(&self, draw: u64) -> &[u32; MAX_MIDDLE + 1] {
        let i = draw as usize % CORPUS_STARTS;
        self.starts[i..i + MAX_MIDDLE + 1]
            .try_into()
            .expect("CORPUS_STARTS + 5 < CORPUS_WORDS")
    }

    /// Prefetches what [`Corpus::ends`] and a run's copy read: the starts of the words a run can begin
    /// at and the five after, and the text from the first start to the last plus the longest copy past
    /// it. Returns the number of cache lines.
    fn prefetch_runs(&self) -> usize {
        let starts = &self.starts[..CORPUS_STARTS + MAX_MIDDLE + 1];
        let copied_end =
            starts[CORPUS_STARTS + MAX_MIDDLE] as usize + RUN_COPY_BYTES.max(LONG_COPY_BYTES);
        prefetch(starts) + prefetch(&self.text[..copied_end.min(self.text.len())])
    }

    /// The offset and length of the run of `count` words (≤ 5) from word `draw % CORPUS_STARTS`.
    #[inline(always)]
    fn run(&self, draw: u64, count: usize) -> (usize, usize) {
        let ends = self.ends(draw);
        (ends[0] as usize, (ends[count] - ends[0]) as usize)
    }
}

/// Asks the core to bring every cache line `items` touches into its caches (a hint: it reads nothing
/// and changes no result; nothing is asked off x86-64). Returns the number of lines.
fn prefetch<T>(items: &[T]) -> usize {
    let start = items.as_ptr() as usize;
    let first_line = start & !63;
    let end = start + std::mem::size_of_val(items);
    #[cfg(target_arch = "x86_64")]
    for line in (first_line..end).step_by(64) {
        // SAFETY: a prefetch neither reads memory nor faults, whatever the address.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(line as *const i8)
        };
    }
    (end - first_line).div_ceil(64)
}

/// The generator's precomputed tables (a pure function of the profile).
#[derive(Clone, Debug)]
pub(super) struct Tables {
    words: Box<[Word; VOCABULARY]>,
    /// "http://" and "https://", indexed by whether the URL is https.
    schemes: [Word; 2],
    www: Word,
    tlds: [Word; TLDS.len()],
    /// TLD index for each value of a draw below the TLD weights' sum.
    tld_by_draw: Vec<u8>,
    /// "/word" runs for the middle segments, "-word" runs for the slug, "&key=word" runs for the query.
    middle: Corpus,
    slug: Corpus,
    query: Corpus,
    /// Extension blocks; the last is empty (no extension).
    extensions: Vec<Word>,
    /// The shares of https, of an extension and of a query as thresholds on a [`FLAG_BITS`]-bit field of a
    /// draw (a field below its threshold has the part; 2^16 for a share of 1).
    https_below: u64,
    extension_below: u64,
    query_below: u64,
    /// A threshold on a whole 64-bit draw (for hosts written from their rank).
    www_below: u64,
    /// Cumulative shares of 1, 2, … path segments as thresholds on a [`SEGMENT_BITS`]-bit field, the last
    /// the profile gives and the padding after it `u64::MAX` (reached by no draw), so that the count of
    /// thresholds a draw reaches is at most the profile's segments less one, in one unrolled sum.
    segment_below: [u64; MAX_MIDDLE + 1],
    /// The length quantiles as thresholds on a 64-bit draw (1 saturates to `u64::MAX`).
    length_below: Vec<u64>,
    /// `length_lines[j]`: the length at quantile point j − 1 (plus one half, for rounding) in 48-bit fixed
    /// point, and the bytes per 2⁻³² of quantile up to point j in 16-bit fixed point.
    length_lines: Vec<(u128, u64)>,
    /// For each of [`LENGTH_BUCKETS`] slices of (0, 1), the first quantile segment that can hold it.
    length_segment_start: Box<[u32; LENGTH_BUCKETS]>,
    /// The host-rank inverse CDF at [`ZIPF_POINTS`] + 1 evenly spaced points, in 16-bit fixed point.
    host_rank_at: Box<[u64; ZIPF_POINTS + 1]>,
    hosts: u64,
    with_scheme: bool,
    /// An upper bound on one URL's bytes, plus a block's slack: the capacity reserved before writing one.
    pub(super) max_url_bytes: usize,
    /// No target length exceeds this (the largest length of the profile's points, plus one).
    longest_target: usize,
    /// Slices of the Zipf table too curved for linear interpolation (rank ratio across the slice above
    /// [`ZIPF_MAX_SLICE_RATIO`]): their ranks come from the exact inverse CDF.
    zipf_exact: Box<[bool; ZIPF_POINTS]>,
    host_zipf: f64,
    /// The hosts of ranks 1..=min(hosts, [`CACHED_HOSTS`]), entry r − 1 for rank r.
    cached_hosts: Vec<Host>,
}

/// A vector of exactly `N` items as a boxed array, so that indexing it with a masked index needs no check.
fn boxed<T, const N: usize>(items: Vec<T>) -> Box<[T; N]> {
    match items.into_boxed_slice().try_into() {
        Ok(array) => array,
        Err(_) => unreachable!("tables are built with their declared sizes"),
    }
}

/// An index below `n` from a uniform value of `bits` bits (a multiply instead of a division): uniform
/// when `n` is a power of two, otherwise within `n / 2^bits` of it.
#[inline(always)]
fn pick_below(value: u64, bits: u32, n: usize) -> usize {
    ((value * n as u64) >> bits) as usize
}

/// `fraction` as a threshold on a uniform 64-bit draw.
fn threshold(fraction: f64) -> u64 {
    if fraction >= 1.0 {
        u64::MAX
    } else {
        (fraction.max(0.0) * 18_446_744_073_709_551_616.0) as u64
    }
}

/// `fraction` as a threshold on a uniform field of `bits` (< 64) bits: 2^bits, above every value, for 1.
fn threshold_bits(fraction: f64, bits: u32) -> u64 {
    (fraction.clamp(0.0, 1.0) * (1u64 << bits) as f64).round() as u64
}

/// Bits `shift..shift + bits` of a draw.
#[inline(always)]
fn field(draw: u64, shift: u32, bits: u32) -> u64 {
    (draw >> shift) & ((1 << bits) - 1)
}

/// The continuous Zipf inverse CDF over ranks 1..=`hosts` with exponent `s`: P(rank ≤ x) ∝ ∫₁ˣ t^−s dt.
pub(super) fn zipf_inverse_cdf(hosts: u64, s: f64, u: f64) -> f64 {
    let ln_hosts = (hosts as f64).ln();
    if (s - 1.0).abs() < 1e-9 {
        (u * ln_hosts).exp()
    } else {
        let a = 1.0 - s;
        ((((a * ln_hosts).exp() - 1.0) * u + 1.0).ln() / a).exp()
    }
}

impl Tables {
    pub(super) fn new(profile: &Profile) -> Tables {
        let mut state = 0x005E_ED0F_7751_0DD5_u64;
        let mut vocabulary = Vec::with_capacity(VOCABULARY);
        while vocabulary.len() < VOCABULARY {
            let parts = 1 + (super::splitmix(&mut state) % 3) as usize;
            let mut word = Vec::with_capacity(12);
            for _ in 0..parts {
                let pick = (super::splitmix(&mut state) % SYLLABLES.len() as u64) as usize;
                word.extend_from_slice(SYLLABLES[pick].as_bytes());
            }
            vocabulary.push(word);
        }
        let words = boxed(vocabulary.iter().map(|w| Word::new(w)).collect());
        // The longest length any point names: a profile built in code need not be increasing (the parser
        // checks it), and every target is clamped to this, so the room reserved per URL holds whatever it says.
        let longest_target = profile
            .length_quantiles
            .iter()
            .map(|p| p.1)
            .fold(0.0, f64::max)
            .min(MAX_TARGET_BYTES as f64) as usize
            + 1;
        let middle = Corpus::new(&vocabulary, &mut state, |_| b"/".to_vec(), RUN_COPY_BYTES);
        let slug = Corpus::new(
            &vocabulary,
            &mut state,
            |_| b"-".to_vec(),
            longest_target + LONG_COPY_BYTES,
        );
        let query = Corpus::new(
            &vocabulary,
            &mut state,
            |draw| format!("&{}=", QUERY_KEYS[draw as usize % QUERY_KEYS.len()]).into_bytes(),
            RUN_COPY_BYTES,
        );
        let mut extensions: Vec<Word> =
            EXTENSIONS.iter().map(|e| Word::new(e.as_bytes())).collect();
        extensions.push(Word::new(b""));
        let weight_sum: f64 = profile.path_segment_weights.iter().sum();
        let mut acc = 0.0;
        let segments: Vec<u64> = profile
            .path_segment_weights
            .iter()
            .take(MAX_MIDDLE + 1)
            .map(|w| {
                acc += w / weight_sum;
                threshold_bits(acc, SEGMENT_BITS)
            })
            .collect();
        let mut segment_below = [u64::MAX; MAX_MIDDLE + 1];
        let last = segments.len() - 1;
        segment_below[..last].copy_from_slice(&segments[..last]);
        let points = profile.length_quantiles.clone();
        let length_below: Vec<u64> = points.iter().map(|p| threshold(p.0)).collect();
        let length_segment_start: Vec<u32> = (0..LENGTH_BUCKETS as u64)
            .map(|k| {
                let low = k << (64 - LENGTH_BUCKETS.trailing_zeros());
                (1..points.len() - 1)
                    .find(|j| length_below[*j] > low)
                    .unwrap_or(points.len() - 1) as u32
            })
            .collect();
        let length_lines = std::iter::once((0, 0))
            .chain(points.windows(2).map(|w| {
                let slope = (w[1].1 - w[0].1) / (w[1].0 - w[0].0);
                let base = ((w[0].1 + 0.5) * 65536.0) as u128;
                (base << 32, (slope * 65536.0) as u64)
            }))
            .collect();
        let host_rank_at: Vec<u64> = (0..=ZIPF_POINTS)
            .map(|k| {
                let x = zipf_inverse_cdf(
                    profile.hosts,
                    profile.host_zipf,
                    k as f64 / ZIPF_POINTS as f64,
                );
                (x * 65536.0) as u64
            })
            .collect();
        let mut tables = Tables {
            words,
            schemes: [Word::new(b"http://"), Word::new(b"https://")],
            www: Word::new(b"www."),
            tlds: std::array::from_fn(|i| Word::new(TLDS[i].0.as_bytes())),
            tld_by_draw: TLDS
                .iter()
                .enumerate()
                .flat_map(|(i, (_, w))| std::iter::repeat_n(i as u8, *w as usize))
                .collect(),
            middle,
            slug,
            query,
            extensions,
            https_below: threshold_bits(profile.https_fraction, FLAG_BITS),
            extension_below: threshold_bits(profile.extension_fraction, FLAG_BITS),
            query_below: threshold_bits(profile.query_fraction, FLAG_BITS),
            www_below: threshold(profile.www_fraction),
            segment_below,
            length_below,
            length_lines,
            length_segment_start: boxed(length_segment_start),
            host_rank_at: boxed(host_rank_at.clone()),
            hosts: profile.hosts,
            with_scheme: profile.with_scheme,
            max_url_bytes: longest_target + MAX_PARTS_BYTES + 16,
            longest_target,
            zipf_exact: boxed(
                host_rank_at
                    .windows(2)
                    .map(|w| w[1] as f64 > w[0] as f64 * ZIPF_MAX_SLICE_RATIO + 65536.0)
                    .collect(),
            ),
            host_zipf: profile.host_zipf,
            cached_hosts: Vec::new(),
        };
        let mut scratch: Vec<u8> = Vec::with_capacity(256);
        tables.cached_hosts = (1..=profile.hosts.min(CACHED_HOSTS))
            .map(|rank| {
                let mut out = Cursor::new(&mut scratch.spare_capacity_mut()[..256]);
                tables.write_host_of_rank(rank, &mut out);
                let len = out.written();
                // SAFETY: the cursor initialised every byte before `written` (its invariant), within the
                // 256 bytes of capacity (a host is at most 35 bytes, plus a block's slack).
                unsafe { scratch.set_len(len) };
                let host = Host::new(&scratch);
                scratch.clear();
                host
            })
            .collect();
        tables
    }

    /// Asks the core to bring the parts of the tables a batch of URLs reads most into its caches, all at
    /// once, before the batch: each corpus's starts and the text its runs copy (the slug's up to a
    /// 64-byte copy past its run), the first [`PREFETCHED_HOSTS`] cached hosts, the vocabulary and the
    /// TLDs when some hosts are written from their rank, and the small per-URL tables. Between two
    /// batches a build's inserts evict them; fetched one miss at a time, inside the URLs that need them,
    /// they cost ≈ 5% more per URL than fetched together here (docs/notes.md). Returns the
    /// number of cache lines asked for.
    pub(super) fn prefetch_hot(&self) -> usize {
        let mut lines = 0;
        for corpus in [&self.middle, &self.slug, &self.query] {
            lines += corpus.prefetch_runs();
        }
        lines += prefetch(&self.cached_hosts[..self.cached_hosts.len().min(PREFETCHED_HOSTS)]);
        if self.hosts > self.cached_hosts.len() as u64 {
            lines += prefetch(&self.words[..]) + prefetch(&self.tld_by_draw) + prefetch(&self.tlds);
        }
        lines += prefetch(&self.host_rank_at[..])
            + prefetch(&self.zipf_exact[..])
            + prefetch(&self.length_segment_start[..])
            + prefetch(&self.length_below)
            + prefetch(&self.length_lines)
            + prefetch(&self.extensions);
        lines
    }

    #[inline(always)]
    fn word(&self, draw: u64) -> &Word {
        &self.words[draw as usize % VOCABULARY]
    }

    /// The target length at the quantile `draw / 2⁶⁴`: the profile's piecewise-linear inverse CDF, rounded,
    /// in fixed point, with its segment found from a table instead of a scan from the start.
    #[inline(always)]
    fn length_at(&self, draw: u64) -> usize {
        let below = &self.length_below;
        let mut j = self.length_segment_start[(draw >> 54) as usize % LENGTH_BUCKETS] as usize;
        while j < below.len() - 1 && below[j] <= draw {
            j += 1;
        }
        let (base, slope) = self.length_lines[j];
        let into = draw.saturating_sub(below[j - 1]) >> 32;
        ((base + slope as u128 * into as u128) >> 48) as usize
    }

    /// Writes the URL of scrambled `token` into `spare` (at least `max_url_bytes` long); returns its length.
    #[inline(always)]
    pub(super) fn write_url(
        &self,
        token: u64,
        stream: u64,
        spare: &mut [MaybeUninit<u8>],
    ) -> usize {
        // The one check that the unchecked writes below stay inside `spare` (see `MAX_PARTS_BYTES`).
        assert!(
            spare.len() >= self.max_url_bytes,
            "room for the longest URL"
        );
        // Four draws: the target length and the host take whole ones; the rest share two, in disjoint
        // bit fields (a draw costs about as much as the choices made from it).
        let mut rng = Rng(token ^ stream);
        let target = self.length_at(rng.next()).min(self.longest_target);
        let host_draw = rng.next();
        let shape = rng.next();
        let flags = rng.next();
        let https = field(flags, 0, FLAG_BITS) < self.https_below;
        let mut out = Cursor::new(spare);
        out.word_if(&self.schemes[usize::from(https)], self.with_scheme);
        self.write_host(host_draw, &mut out);

        // Decide the parts after the host, then fit the slug to the target length.
        let middle_wanted = self.middle_segments(field(shape, 64 - SEGMENT_BITS, SEGMENT_BITS));
        let with_extension = field(flags, FLAG_BITS, FLAG_BITS) < self.extension_below;
        let extension_pick = pick_below(
            field(flags, 3 * FLAG_BITS, FLAG_BITS),
            FLAG_BITS,
            EXTENSIONS.len(),
        );
        // A select, not a branch: whether a URL has an extension is a coin toss no predictor learns.
        let extension = &self.extensions[if with_extension {
            extension_pick
        } else {
            EXTENSIONS.len()
        }];
        let wants_query = field(flags, 2 * FLAG_BITS, FLAG_BITS) < self.query_below;
        let query_pairs = 1 + pick_below(field(shape, 3 * START_BITS, PAIR_BITS), PAIR_BITS, 3);
        let (query_at, query_len) = self.query.run(shape >> (2 * START_BITS), query_pairs);

        let token_digits = base32(token);
        let fixed = out.written() + 1 + 1 + token_digits.len() + extension.len();
        // The ends of the middle run's first 0..=5 words, from one slice of the corpus's word starts.
        let middle_ends = self.middle.ends(shape);
        let middle_len = |k: usize| (middle_ends[k] - middle_ends[0]) as usize;
        // Too long: drop the query, then middle segments from the end, before shrinking the slug below a word.
        let with_query = wants_query & (fixed + middle_len(middle_wanted) + query_len < target);
        let query_len = usize::from(with_query) * query_len;
        // The runs of 1..=5 words that fit: shorter than the room the other parts leave (which may be
        // none), compared as ends against one limit (the ends increase, so this counts a prefix).
        let room = target.saturating_sub(fixed + query_len);
        let limit = middle_ends[0] as usize + room;
        let fits: usize = middle_ends[1..]
            .iter()
            .map(|end| usize::from((*end as usize) < limit))
            .sum();
        let (middle_at, middle_len) =
            (middle_ends[0] as usize, middle_len(middle_wanted.min(fits)));
        let slug_len = target.saturating_sub(fixed + middle_len + query_len).max(1);

        out.copy_run(
            &self.middle.text[middle_at..middle_at + RUN_COPY_BYTES],
            middle_len,
        );
        out.byte(b'/');
        let (slug_at, _) = self.slug.run(shape >> START_BITS, 0);
        // Skip the run's leading '-' so the slug starts with a letter.
        let slug_text = &self.slug.text[slug_at + 1..slug_at + 1 + slug_len + LONG_COPY_BYTES];
        out.copy_long(slug_text, slug_len);
        // The slug's last byte, read from the corpus (not back from the store just made): a '-' there
        // would run into the token's separator.
        let last = slug_text[slug_len - 1];
        out.put_last(if last == b'-' { b'x' } else { last });
        out.byte(b'-');
        out.word_if(&token_digits, true);
        out.word_if(extension, true);
        let query_start = out.written();
        out.copy_run(
            &self.query.text[query_at..query_at + RUN_COPY_BYTES],
            query_len,
        );
        // Without a query nothing was kept past `query_start`: the byte written there is past the URL.
        out.put_at(query_start, b'?');
        out.written()
    }

    /// The middle path segments (all but the last) of a URL whose segment field is `draw`: how many
    /// cumulative shares it reaches, so that 1 + k segments come with the profile's share for them.
    #[inline(always)]
    fn middle_segments(&self, draw: u64) -> usize {
        self.segment_below
            .iter()
            .map(|t| usize::from(*t <= draw))
            .sum()
    }

    /// The host of a Zipf rank drawn at the quantile `draw / 2⁶⁴`: a pure function of the rank.
    #[inline(always)]
    fn write_host(&self, draw: u64, out: &mut Cursor) {
        let k = (draw >> 54) as usize % ZIPF_POINTS;
        let rank = if self.zipf_exact[k] {
            let u = (draw >> 11) as f64 / (1u64 << 53) as f64;
            zipf_inverse_cdf(self.hosts, self.host_zipf, u) as u64
        } else {
            let (x0, x1) = (self.host_rank_at[k], self.host_rank_at[k + 1]);
            let into = (draw >> 22) as u32 as u128;
            (x0 + ((x1.saturating_sub(x0) as u128 * into) >> 32) as u64) >> 16
        };
        let rank = rank.clamp(1, self.hosts);
        match self.cached_hosts.get(rank as usize - 1) {
            Some(host) => out.word_if(host, true),
            None => self.write_host_of_rank(rank, out),
        }
    }

    /// Drops the cached hosts, so that every host is written from its rank (for tests of the cache).
    #[cfg(test)]
    pub(super) fn without_host_cache(&mut self) {
        self.cached_hosts.clear();
    }

    /// The host of Zipf rank `rank` (1-based): a pure function of the rank.
    #[inline(always)]
    fn write_host_of_rank(&self, rank: u64, out: &mut Cursor) {
        let mut host = Rng(rank.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x2545_F491_4F6C_DD1D);
        let www = host.next() < self.www_below;
        let shape = host.next();
        out.word_if(&self.www, www);
        out.word_if(self.word(shape >> 1), true);
        out.sep_word_if(b'-', self.word(shape >> 13), shape & 1 == 1);
        let tld = self.tld_by_draw[pick_below(host.next() >> 32, 32, self.tld_by_draw.len())];
        out.sep_word_if(b'.', &self.tlds[tld as usize], true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value of the segment field, for profiles that give one count always, never, or half the time:
    /// each count comes exactly as often as its share says (shares are multiples of 2⁻¹⁶ here).
    #[test]
    fn segment_counts_come_with_their_shares_exactly() {
        let cases: [(&[f64], [u64; MAX_MIDDLE + 1]); 4] = [
            (&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0], [65_536, 0, 0, 0, 0, 0]),
            (&[0.0, 0.0, 0.0, 0.0, 0.0, 1.0], [0, 0, 0, 0, 0, 65_536]),
            (&[0.0, 1.0], [0, 65_536, 0, 0, 0, 0]),
            (&[1.0, 1.0, 0.0, 2.0], [16_384, 16_384, 0, 32_768, 0, 0]),
        ];
        for (weights, expected) in cases {
            let mut profile = Profile::default_profile();
            profile.path_segment_weights = weights.to_vec();
            let tables = Tables::new(&profile);
            let mut counts = [0u64; MAX_MIDDLE + 1];
            for draw in 0..1u64 << SEGMENT_BITS {
                counts[tables.middle_segments(draw)] += 1;
            }
            assert_eq!(counts, expected, "weights {weights:?}");
        }
    }

    /// What a batch prefetches stays within half of a 1 MiB L2 (8192 lines), for both profiles, and
    /// leaves out the vocabulary when every host is cached.
    #[test]
    fn the_prefetched_tables_fit_half_an_l2() {
        for profile in [
            Profile::default_profile(),
            Profile::load("short-keys").unwrap(),
        ] {
            let tables = Tables::new(&profile);
            let lines = tables.prefetch_hot();
            assert!((2_000..8_192).contains(&lines), "{lines} lines");
            let mut few_hosts = profile.clone();
            few_hosts.hosts = CACHED_HOSTS;
            let without_words = Tables::new(&few_hosts).prefetch_hot();
            // The vocabulary alone is 4096 16-byte words: 1024 lines.
            assert!(
                lines >= without_words + 1024,
                "{lines} against {without_words}"
            );
        }
    }

    /// Shares of 0 and 1 for https, an extension and a query: never and always, for every flag value.
    #[test]
    fn flag_shares_of_zero_and_one_are_never_and_always() {
        for (share, always) in [(0.0, false), (1.0, true)] {
            let below = threshold_bits(share, FLAG_BITS);
            for value in 0..1u64 << FLAG_BITS {
                assert_eq!(value < below, always, "share {share}, value {value}");
            }
        }
        assert_eq!(threshold_bits(0.25, FLAG_BITS), 16_384);
    }
}

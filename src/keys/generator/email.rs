//! E-mail keys: `local-part@domain`, with the local parts people and spammers use and the domains of a
//! few big providers and a long tail of companies.
//!
//! Invariants:
//! 1. Index k of the shape's space (members below [`MEMBER_LIMIT`] = 2^35, non-member j at
//!    `MEMBER_LIMIT + j`) becomes a 36-bit token by a seeded bijection, and the local part alone encodes
//!    the token: distinct indices give distinct addresses whatever their domains, so members and
//!    non-members never meet.
//! 2. The token's range picks the local part's template (its share of the space is the template's share);
//!    the templates never write the same string, because each has a mark the others lack:
//!    - `first.last` (also `first_last`, `first-last`): the only one with a separator;
//!    - `firstlast`: letters (at least four syllables, 8 letters) then perhaps digits;
//!    - initials and digits: two or three letters then digits;
//!    - a random token: a letter, a digit, a letter, then letters and digits: the only one with a digit
//!      before a letter.
//! 3. Inside a template, the offset of the token in its range is a mixed-radix number whose digits are
//!    the choices (a first name, a last name, whether digits follow; initials and a number; the token's
//!    characters), and the string gives the choices back: names are syllables (a consonant run, then a
//!    vowel run) with an optional final consonant run, so a name splits into its parts at the runs, and
//!    in `firstlast` the first name has exactly two syllables and no final consonant, so the last name
//!    starts at the third consonant run.
//! 4. What the encoding leaves free is drawn per address and changes nothing above: the domain, the
//!    separator, the digits after a name (only whether there are any is encoded), the random token's
//!    length (each length encodes the whole range).
//!
//! Lengths: a survey of 90 million addresses (FreshAddress, 2015) found a mean of 21.9 characters, 80%
//! up to 28 and 95% up to 31; a 2008 survey of 50,496 found a mean of 23. The shares of the templates,
//! the names' syllables and the digits are assumptions chosen to meet those figures (datasets/README.md).

use super::compose::zipf_inverse_cdf;
use super::ipv4::push_decimal;
use super::permute::{spread, Permutation};
use super::writer::Rng;
use super::{SYLLABLES, TLDS};
use crate::keys::profile::Profile;

/// Bits of the token: the shape's space is `[0, 2^36)`.
const SPACE_BITS: u32 = 36;
/// Members are the indices below this: half the space.
pub const MEMBER_LIMIT: u64 = 1 << (SPACE_BITS - 1);

/// Salt of the permutation's key and of the per-address stream.
const SALT: u64 = 0x3C6E_F372_FE94_F82B;

/// Syllable onsets (consonant runs), vowel runs, and final consonant runs. No letter is in both a
/// consonant and a vowel list, so a name splits into runs one way.
const ONSETS: [&str; 24] = [
    "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "ch",
    "sh", "th", "br", "st", "tr",
];
const NUCLEI: [&str; 10] = ["a", "e", "i", "o", "u", "ai", "ea", "ie", "io", "ou"];
const CODAS: [&str; 12] = [
    "n", "r", "s", "l", "m", "t", "k", "x", "nd", "rt", "st", "ng",
];
const SYLLABLE_CHOICES: u64 = (ONSETS.len() * NUCLEI.len()) as u64;

/// One kind of name: `syllables` syllables, with a final consonant run or not, and how many of the
/// set's values it takes (at most the strings of that kind).
#[derive(Clone, Copy, Debug)]
struct NameKind {
    syllables: u32,
    coda: bool,
    count: u64,
}

impl NameKind {
    /// How many distinct names of this kind there are.
    const fn capacity(&self) -> u64 {
        let codas = if self.coda { CODAS.len() as u64 } else { 1 };
        SYLLABLE_CHOICES.pow(self.syllables) * codas
    }
}

/// First names in `first.last`: 2^17 of them, 44% two open syllables ("kamo"), 56% closed ("kamor").
const FIRST: [NameKind; 2] = [
    NameKind {
        syllables: 2,
        coda: false,
        count: 57_600,
    },
    NameKind {
        syllables: 2,
        coda: true,
        count: 73_472,
    },
];
/// First names in `firstlast`: two open syllables, so the last name starts at the third consonant run.
const FIRST_JOINED: [NameKind; 1] = [NameKind {
    syllables: 2,
    coda: false,
    count: 57_600,
}];
/// Last names: 2^18 of them, 22% two open syllables, 50% two and a final consonant, 28% three.
const LAST: [NameKind; 3] = [
    NameKind {
        syllables: 2,
        coda: false,
        count: 57_600,
    },
    NameKind {
        syllables: 2,
        coda: true,
        count: 131_072,
    },
    NameKind {
        syllables: 3,
        coda: false,
        count: 73_472,
    },
];

const fn names(kinds: &[NameKind]) -> u64 {
    let mut total = 0;
    let mut i = 0;
    while i < kinds.len() {
        assert!(kinds[i].count <= kinds[i].capacity());
        total += kinds[i].count;
        i += 1;
    }
    total
}

/// The local part's templates, in the order their ranges follow each other in the space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Template {
    /// `first.last`, `first_last`, `first-last`, perhaps with digits.
    Separated,
    /// `firstlast`, perhaps with digits.
    Joined,
    /// Two or three letters and digits.
    Initials,
    /// A letter, a digit, a letter, then 5 to 9 letters and digits.
    Random,
}

/// Each template's share of the space, in twentieths (assumptions: see datasets/README.md).
const TEMPLATES: [(Template, u64); 4] = [
    (Template::Separated, 8),
    (Template::Joined, 3),
    (Template::Initials, 3),
    (Template::Random, 6),
];

/// Share of the name templates' addresses without digits, in twentieths (65%).
const PLAIN_TWENTIETHS: u64 = 13;

/// Two and three letters.
const INITIALS: u64 = 26 * 26 + 26 * 26 * 26;

/// Big mail providers, by rank: the domain of Zipf rank r ≤ 30 is entry r − 1 (the order is an
/// assumption after published shares of consumer lists: Gmail first, Yahoo and Microsoft's next).
const PROVIDERS: [&str; 30] = [
    "gmail.com",
    "yahoo.com",
    "hotmail.com",
    "outlook.com",
    "aol.com",
    "icloud.com",
    "hotmail.co.uk",
    "live.com",
    "msn.com",
    "mail.ru",
    "yandex.ru",
    "gmx.de",
    "web.de",
    "yahoo.co.uk",
    "comcast.net",
    "me.com",
    "qq.com",
    "163.com",
    "protonmail.com",
    "orange.fr",
    "free.fr",
    "t-online.de",
    "libero.it",
    "yahoo.fr",
    "naver.com",
    "rambler.ru",
    "att.net",
    "verizon.net",
    "sbcglobal.net",
    "gmx.net",
];

/// Writes e-mail keys: a pure function of (profile, seed, index).
#[derive(Clone, Debug)]
pub(super) struct EmailWriter {
    permutation: Permutation,
    stream: u64,
    hosts: u64,
    host_zipf: f64,
    /// Where each template's range starts, and the space's end last.
    starts: [u64; TEMPLATES.len() + 1],
}

impl EmailWriter {
    pub(super) fn new(profile: &Profile, seed: u64) -> Self {
        let total: u64 = TEMPLATES.iter().map(|t| t.1).sum();
        let mut starts = [0u64; TEMPLATES.len() + 1];
        let mut sum = 0;
        for (i, (_, share)) in TEMPLATES.iter().enumerate() {
            sum += share;
            starts[i + 1] = ((1u128 << SPACE_BITS) * u128::from(sum) / u128::from(total)) as u64;
        }
        EmailWriter {
            permutation: Permutation::new(SPACE_BITS, seed, SALT),
            stream: seed.rotate_left(41) ^ SALT,
            hosts: profile.hosts,
            host_zipf: profile.host_zipf,
            starts,
        }
    }

    /// Appends the address of index `k` of the shape's space (< 2^36).
    pub(super) fn append(&self, k: u64, buf: &mut Vec<u8>) {
        let token = self.permutation.apply(k);
        let mut rng = Rng(token ^ self.stream);
        let at = self.starts.partition_point(|s| *s <= token) - 1;
        let (template, range) = (TEMPLATES[at].0, self.starts[at + 1] - self.starts[at]);
        let offset = token - self.starts[at];
        match template {
            Template::Separated | Template::Joined => {
                let (first, separator) = if template == Template::Separated {
                    let separator = match rng.next() % 10 {
                        0..=6 => b'.',
                        7 | 8 => b'_',
                        _ => b'-',
                    };
                    (&FIRST[..], Some(separator))
                } else {
                    (&FIRST_JOINED[..], None)
                };
                // The first part of the range has no digits, the rest has them; each part is a pair of
                // names, spread over all the pairs.
                let plain = range / 20 * PLAIN_TWENTIETHS;
                let (pair, digits) = if offset < plain {
                    (offset, false)
                } else {
                    (offset - plain, true)
                };
                let (n_first, n_last) = (names(first), names(&LAST));
                let pair = spread(pair, n_first * n_last);
                push_name(first, pair % n_first, buf);
                if let Some(separator) = separator {
                    buf.push(separator);
                }
                push_name(&LAST, pair / n_first, buf);
                if digits {
                    push_drawn_digits(rng.next(), buf);
                }
            }
            Template::Initials => {
                let (letters, number) = (offset % INITIALS, offset / INITIALS);
                if letters < 26 * 26 {
                    push_letters(letters, 2, buf);
                } else {
                    push_letters(letters - 26 * 26, 3, buf);
                }
                if number > 0 {
                    push_decimal(number, buf);
                }
            }
            Template::Random => {
                let len = 8 + (rng.next() % 5) as u32;
                let capacity = 26 * 10 * 26 * 36u64.pow(len - 3);
                let mut x = spread(offset, capacity);
                buf.push(b'a' + (x % 26) as u8);
                x /= 26;
                buf.push(b'0' + (x % 10) as u8);
                x /= 10;
                buf.push(b'a' + (x % 26) as u8);
                x /= 26;
                for _ in 3..len {
                    buf.push(b"0123456789abcdefghijklmnopqrstuvwxyz"[(x % 36) as usize]);
                    x /= 36;
                }
                debug_assert_eq!(x, 0);
            }
        }
        buf.push(b'@');
        let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
        let rank = (zipf_inverse_cdf(self.hosts, self.host_zipf, u) as u64).clamp(1, self.hosts);
        match PROVIDERS.get(rank as usize - 1) {
            Some(provider) => buf.extend_from_slice(provider.as_bytes()),
            None => push_company_domain(rank, buf),
        }
    }
}

/// Appends name `value` (below the kinds' total) of `kinds`.
fn push_name(kinds: &[NameKind], value: u64, buf: &mut Vec<u8>) {
    let mut value = value;
    let kind = kinds
        .iter()
        .find(|k| {
            let inside = value < k.count;
            if !inside {
                value -= k.count;
            }
            inside
        })
        .expect("the value is below the kinds' total");
    // Spread over every name of the kind, so that the last syllables vary as much as the first.
    let mut x = spread(value, kind.capacity());
    for _ in 0..kind.syllables {
        buf.extend_from_slice(ONSETS[(x % ONSETS.len() as u64) as usize].as_bytes());
        x /= ONSETS.len() as u64;
        buf.extend_from_slice(NUCLEI[(x % NUCLEI.len() as u64) as usize].as_bytes());
        x /= NUCLEI.len() as u64;
    }
    if kind.coda {
        buf.extend_from_slice(CODAS[(x % CODAS.len() as u64) as usize].as_bytes());
    }
}

/// Appends `count` letters, the base-26 digits of `value`.
fn push_letters(value: u64, count: u32, buf: &mut Vec<u8>) {
    let mut x = value;
    for _ in 0..count {
        buf.push(b'a' + (x % 26) as u8);
        x /= 26;
    }
}

/// Appends the digits people put after a name: two (half), a year (a quarter), one, or three.
fn push_drawn_digits(draw: u64, buf: &mut Vec<u8>) {
    let value = draw >> 8;
    match draw % 100 {
        0..=49 => {
            buf.push(b'0' + (value / 10 % 10) as u8);
            buf.push(b'0' + (value % 10) as u8);
        }
        50..=74 => push_decimal(1950 + value % 60, buf),
        75..=87 => push_decimal(1 + value % 9, buf),
        _ => push_decimal(100 + value % 900, buf),
    }
}

/// Appends the company domain of Zipf rank `rank` (beyond the providers): one or two made-up words and
/// a TLD drawn by the URL hosts' weights, a pure function of the rank.
fn push_company_domain(rank: u64, buf: &mut Vec<u8>) {
    let mut rng = Rng(rank.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ SALT);
    let word = |rng: &mut Rng, buf: &mut Vec<u8>| {
        let draw = rng.next();
        for i in 0..2 + draw % 2 {
            let pick = (draw >> (8 + 8 * i)) as usize % SYLLABLES.len();
            buf.extend_from_slice(SYLLABLES[pick].as_bytes());
        }
    };
    word(&mut rng, buf);
    if rng.next() % 100 < 15 {
        buf.push(b'-');
        word(&mut rng, buf);
    }
    let total: u64 = TLDS.iter().map(|t| u64::from(t.1)).sum();
    let mut pick = rng.next() % total;
    for (tld, weight) in TLDS {
        if pick < u64::from(*weight) {
            buf.push(b'.');
            buf.extend_from_slice(tld.as_bytes());
            return;
        }
        pick -= u64::from(*weight);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writer(seed: u64) -> EmailWriter {
        EmailWriter::new(&Profile::load("email").unwrap(), seed)
    }

    fn address(g: &EmailWriter, k: u64) -> String {
        let mut buf = Vec::new();
        g.append(k, &mut buf);
        String::from_utf8(buf).unwrap()
    }

    /// Which template wrote a local part, by the marks the module's invariant names.
    fn template_of(local: &str) -> Template {
        let bytes = local.as_bytes();
        if local.contains(['.', '_', '-']) {
            return Template::Separated;
        }
        if bytes
            .windows(2)
            .any(|w| w[0].is_ascii_digit() && w[1].is_ascii_lowercase())
        {
            return Template::Random;
        }
        let letters = bytes.iter().take_while(|b| b.is_ascii_lowercase()).count();
        if letters <= 3 {
            Template::Initials
        } else {
            Template::Joined
        }
    }

    /// The inverse of [`spread`]: `value · STRIDE⁻¹ mod capacity`.
    fn unspread(value: u64, capacity: u64) -> u64 {
        // STRIDE's inverse modulo the capacity, by the extended Euclidean algorithm.
        let (mut r0, mut r1, mut t0, mut t1) =
            (capacity as i128, 1_000_003 % capacity as i128, 0i128, 1i128);
        while r1 != 0 {
            let q = r0 / r1;
            (r0, r1, t0, t1) = (r1, r0 - q * r1, t1, t0 - q * t1);
        }
        assert_eq!(r0, 1, "the stride is prime to {capacity}");
        let inverse = t0.rem_euclid(capacity as i128) as u128;
        (value as u128 * inverse % capacity as u128) as u64
    }

    fn is_vowel(b: u8) -> bool {
        b"aeiou".contains(&b)
    }

    /// The value of `name` among `kinds`' names: its runs give the syllables, the final consonants and
    /// each choice, the choices the mixed-radix number that `spread` made.
    fn name_value(kinds: &[NameKind], name: &[u8]) -> u64 {
        let mut runs: Vec<&[u8]> = Vec::new();
        let mut start = 0;
        for i in 1..=name.len() {
            if i == name.len() || is_vowel(name[i]) != is_vowel(name[start]) {
                runs.push(&name[start..i]);
                start = i;
            }
        }
        let index = |list: &[&str], run: &[u8]| {
            list.iter().position(|x| x.as_bytes() == run).unwrap() as u64
        };
        let (syllables, coda) = (runs.len() as u32 / 2, runs.len() % 2 == 1);
        let (mut x, mut radix) = (0u64, 1u64);
        for pair in runs.chunks(2).take(syllables as usize) {
            x += radix * index(&ONSETS, pair[0]);
            radix *= ONSETS.len() as u64;
            x += radix * index(&NUCLEI, pair[1]);
            radix *= NUCLEI.len() as u64;
        }
        if coda {
            x += radix * index(&CODAS, runs.last().unwrap());
        }
        let mut before = 0;
        for kind in kinds {
            if (kind.syllables, kind.coda) == (syllables, coda) {
                let w = unspread(x, kind.capacity());
                assert!(w < kind.count, "{}", String::from_utf8_lossy(name));
                return before + w;
            }
            before += kind.count;
        }
        panic!("no kind of name has {syllables} syllables (coda {coda})")
    }

    /// The token an address was written from, read back from its local part alone (the module's
    /// invariants 2 and 3, as a decoder).
    fn token_of(g: &EmailWriter, address: &str) -> u64 {
        let local = address.split_once('@').unwrap().0.as_bytes();
        let template = template_of(std::str::from_utf8(local).unwrap());
        let at = TEMPLATES.iter().position(|t| t.0 == template).unwrap();
        let range = g.starts[at + 1] - g.starts[at];
        let letters = local.iter().take_while(|b| b.is_ascii_lowercase()).count();
        let offset = match template {
            Template::Separated | Template::Joined => {
                let (first, names_end) = if template == Template::Separated {
                    (
                        &FIRST[..],
                        local.iter().position(|b| b"._-".contains(b)).unwrap(),
                    )
                } else {
                    // Two syllables: a consonant run, a vowel run, twice; the last name starts after.
                    let mut runs = 0;
                    let end = (1..letters)
                        .find(|i| {
                            runs += usize::from(is_vowel(local[*i]) != is_vowel(local[i - 1]));
                            runs == 4
                        })
                        .unwrap();
                    (&FIRST_JOINED[..], end)
                };
                let last_start = names_end + usize::from(template == Template::Separated);
                let last_end = last_start
                    + local[last_start..]
                        .iter()
                        .take_while(|b| b.is_ascii_lowercase())
                        .count();
                let (n_first, n_last) = (names(first), names(&LAST));
                let pair = name_value(first, &local[..names_end])
                    + n_first * name_value(&LAST, &local[last_start..last_end]);
                let plain = range / 20 * PLAIN_TWENTIETHS;
                unspread(pair, n_first * n_last) + if last_end < local.len() { plain } else { 0 }
            }
            Template::Initials => {
                let mut l = local[..letters]
                    .iter()
                    .rev()
                    .fold(0, |v, b| v * 26 + u64::from(b - b'a'));
                if letters == 3 {
                    l += 26 * 26;
                }
                let number: u64 = std::str::from_utf8(&local[letters..])
                    .unwrap()
                    .parse()
                    .unwrap_or(0);
                number * INITIALS + l
            }
            Template::Random => {
                let digit = |b: u8| {
                    b"0123456789abcdefghijklmnopqrstuvwxyz"
                        .iter()
                        .position(|c| *c == b)
                        .unwrap() as u64
                };
                let mut x = 0;
                for b in local[3..].iter().rev() {
                    x = x * 36 + digit(*b);
                }
                x = ((x * 26 + u64::from(local[2] - b'a')) * 10 + u64::from(local[1] - b'0')) * 26
                    + u64::from(local[0] - b'a');
                unspread(x, 26 * 10 * 26 * 36u64.pow(local.len() as u32 - 3))
            }
        };
        assert!(offset < range, "{address}");
        g.starts[at] + offset
    }

    /// Every address gives back the token it was written from, from its local part alone: the map from
    /// token to address is injective whatever was drawn, and tokens are a bijection of the index.
    #[test]
    fn local_parts_give_back_their_tokens() {
        let g = writer(42);
        let near_limit = MEMBER_LIMIT - 50_000..MEMBER_LIMIT + 50_000;
        for k in (0..100_000)
            .chain(near_limit)
            .chain((1 << SPACE_BITS) - 1000..1 << SPACE_BITS)
        {
            let a = address(&g, k);
            assert_eq!(token_of(&g, &a), g.permutation.apply(k), "{k}: {a}");
        }
    }

    #[test]
    fn every_kind_of_name_fits_its_strings_and_the_templates_fit_their_ranges() {
        assert_eq!(names(&FIRST), 1 << 17);
        assert_eq!(names(&LAST), 1 << 18);
        let g = writer(1);
        let total: u64 = TEMPLATES.iter().map(|t| t.1).sum();
        for (i, (template, _)) in TEMPLATES.iter().enumerate() {
            let range = g.starts[i + 1] - g.starts[i];
            let capacity = match template {
                Template::Separated => {
                    let plain = range / total * PLAIN_TWENTIETHS;
                    assert!(plain.max(range - plain) <= names(&FIRST) * names(&LAST));
                    continue;
                }
                Template::Joined => names(&FIRST_JOINED) * names(&LAST),
                // The number after the initials is unbounded: any range fits.
                Template::Initials => u64::MAX,
                Template::Random => 26 * 10 * 26 * 36u64.pow(5),
            };
            assert!(range <= capacity, "{template:?}: {range} > {capacity}");
        }
        assert_eq!(g.starts[TEMPLATES.len()], 1 << SPACE_BITS);
    }

    /// Addresses are lower-case ASCII with one '@', each template's shape with about its share of the
    /// space, and the big providers take most of them.
    #[test]
    fn addresses_have_the_templates_shapes_and_shares() {
        let g = writer(42);
        let n = 100_000u64;
        let mut counts = [0u64; TEMPLATES.len()];
        let (mut gmail, mut providers) = (0u64, 0u64);
        for k in 0..n {
            let a = address(&g, k);
            let (local, domain) = a.split_once('@').unwrap();
            assert!(!domain.contains('@') && domain.contains('.'), "{a}");
            assert!(
                a.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"@._-".contains(&b)),
                "{a}"
            );
            assert!((2..=30).contains(&local.len()), "{a}");
            let template = template_of(local);
            counts[TEMPLATES.iter().position(|t| t.0 == template).unwrap()] += 1;
            gmail += u64::from(domain == "gmail.com");
            providers += u64::from(PROVIDERS.contains(&domain));
        }
        for ((template, share), count) in TEMPLATES.iter().zip(counts) {
            let expected = *share as f64 / 20.0;
            assert!(
                (count as f64 / n as f64 - expected).abs() < 0.01,
                "{template:?}: {count} of {n}"
            );
        }
        // Zipf s = 1.4 over 10⁶ domains: rank 1 takes 1 − 2^−0.4 ≈ 24%, the 30 providers ≈ 75%.
        let (gmail, providers) = (gmail as f64 / n as f64, providers as f64 / n as f64);
        assert!((gmail - 0.242).abs() < 0.01, "{gmail}");
        assert!((providers - 0.747).abs() < 0.01, "{providers}");
    }
}

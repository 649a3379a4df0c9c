//! Sizing and expected false-positive rates, one function per formula, each cited.
//!
//! Notation: `m` bits (or counters), `n` distinct keys inserted, `k` probes per key, `p` target rate.
//! - Standard Bloom sizing: m = ⌈−n·ln p / (ln 2)²⌉, k = the better of the integers either side of (m/n)·ln 2 (Bloom 1970; Broder &
//!   Mitzenmacher 2004). Rate at fill n: (1 − (1 − 1/m)^(k·n))^k, evaluated without the e^(−kn/m) shortcut.
//! - Raw bitmap (k = 1): 1 − (1 − 1/m)^n.
//! - Counting Bloom (Fan, Cao, Almeida, Broder 2000): the Bloom rate with the same m, k.
//! - Blocked Bloom, sectorised (Putze, Sanders, Singler 2007, per word): Σᵢ Pois(i; 512·n/m) ·
//!   Π_w E[(X_w/64)^c_w], word w taking c_w of a key's probes and X_w its set bits after c_w·i draws.
//! - Scalable Bloom (Almeida, Baquero, Preguiça, Hutchison 2007): slice i holds n₀·sⁱ keys at rate p₀·rⁱ with
//!   p₀ = p·(1 − r); compound rate 1 − ∏(1 − pᵢ) ≤ p.
//! - Cuckoo filter (Fan, Andersen, Kaminsky, Mitzenmacher 2014): b-slot buckets of f-bit fingerprints drawn
//!   from the 2^f − 1 non-zero values (ε = 1/(2^f − 1)), two candidate buckets per key; at load α a
//!   non-member meets 2b·α fingerprints on average: 1 − (1 − ε)^(2b·α) ≤ 2b·α·ε. At the actual table:
//!   the mean over pairs of distinct buckets (a, b) of 1 − (1 − ε)^(c_a + c_b), from the histogram of
//!   bucket occupancies.
//! - 64-bit fingerprints: a non-member collides with one of n uniform fingerprints: 1 − (1 − 2⁻⁶⁴)ⁿ ≈ n/2⁶⁴.
//! - The exact set's bytes come from hashbrown's layout: buckets = the smallest power of two ≥ 4 whose
//!   capacity (7/8 of the buckets from 8 on) holds n; one control byte per bucket plus a 16-byte group tail.

use std::f64::consts::LN_2;

/// Slices of a fill that [`lost_over_fill`] sums over.
pub const FILL_STEPS: u64 = 200;

/// Keys a structure wrongly calls seen while it fills from empty to `keys` new ones: Σ of its rate
/// after each fill, ≈ ∫₀ᵏᵉʸˢ rate(x) dx by the midpoint rule over [`FILL_STEPS`] slices (None when
/// `rate_after` has no figure for some fill).
pub fn lost_over_fill(keys: f64, rate_after: impl Fn(u64) -> Option<f64>) -> Option<f64> {
    let slice = keys / FILL_STEPS as f64;
    (0..FILL_STEPS)
        .map(|i| rate_after(((i as f64 + 0.5) * slice) as u64).map(|r| r * slice))
        .sum()
}

/// Bits of a standard Bloom filter for `n` keys at rate `p`: ⌈−n·ln p / (ln 2)²⌉, at least 1.
pub fn bloom_bits(n: u64, p: f64) -> u64 {
    let bits = (-(n.max(1) as f64) * p.ln() / (LN_2 * LN_2)).ceil();
    (bits as u64).max(1)
}

/// The best probe count for `m` bits and `n` keys: of the integers either side of (m/n)·ln 2 (where the
/// continuous rate has its minimum), the one with the lower [`bloom_fpr`]; at least 1. Rounding alone is
/// not always best at a few bits per key.
pub fn bloom_hashes(m: u64, n: u64) -> u32 {
    let k = (m as f64 / n.max(1) as f64 * LN_2).clamp(1.0, u32::MAX as f64 - 1.0);
    let (low, high) = ((k.floor() as u32).max(1), k.ceil() as u32);
    if bloom_fpr(m, high, n) < bloom_fpr(m, low, n) {
        high
    } else {
        low
    }
}

/// Expected false-positive rate of a standard (or counting) Bloom filter: (1 − (1 − 1/m)^(k·n))^k.
pub fn bloom_fpr(m: u64, k: u32, n: u64) -> f64 {
    let fill = bit_set_probability(m, k as f64 * n as f64);
    fill.powi(k as i32)
}

/// Probability that a given bit of `m` is set after `draws` uniform draws: 1 − (1 − 1/m)^draws.
pub fn bit_set_probability(m: u64, draws: f64) -> f64 {
    if m == 0 {
        return 1.0;
    }
    -(draws * (-1.0 / m as f64).ln_1p()).exp_m1()
}

/// Expected false-positive rate of the raw bitmap (one probe per key): 1 − (1 − 1/m)^n.
pub fn bitmap_fpr(m: u64, n: u64) -> f64 {
    bit_set_probability(m, n as f64)
}

/// Expected false-positive rate of a set of `n` uniform 64-bit fingerprints: 1 − (1 − 2⁻⁶⁴)ⁿ.
pub fn fingerprint_fpr(n: u64) -> f64 {
    fingerprint_fpr_bits(n, 64)
}

/// The same for `bits`-bit fingerprints: 1 − (1 − 2^−bits)ⁿ.
pub fn fingerprint_fpr_bits(n: u64, bits: i32) -> f64 {
    -(n as f64 * (-(2f64.powi(-bits))).ln_1p()).exp_m1()
}

/// 1 − (1 − ε)^draws: the chance that one of `draws` fingerprints, each uniform over 1/ε values, equals a
/// given one.
fn one_of_matches(epsilon: f64, draws: f64) -> f64 {
    -(draws * (-epsilon).ln_1p()).exp_m1()
}

/// Expected false-positive rate of a cuckoo filter (Fan et al. 2014) of b = `slots_per_bucket` slots per
/// bucket and f = `fingerprint_bits`-bit non-zero fingerprints at load α = `load` (share of slots held):
/// a non-member's fingerprint is compared with the 2b·α fingerprints of its two buckets on average,
/// each equal with ε = 1/(2^f − 1): 1 − (1 − ε)^(2b·α).
pub fn cuckoo_fpr(fingerprint_bits: u32, slots_per_bucket: u32, load: f64) -> f64 {
    let epsilon = cuckoo_epsilon(fingerprint_bits);
    one_of_matches(epsilon, 2.0 * slots_per_bucket as f64 * load)
}

/// The chance that two uniform non-zero `fingerprint_bits`-bit fingerprints are equal: 1/(2^f − 1).
pub fn cuckoo_epsilon(fingerprint_bits: u32) -> f64 {
    1.0 / ((2f64).powi(fingerprint_bits as i32) - 1.0)
}

/// The rate of a cuckoo filter at its actual table: `occupancy[c]` buckets hold c fingerprints, and a
/// non-member's two buckets are a uniform pair of distinct buckets (a, b), whose c_a + c_b fingerprints
/// each equal its own with ε: the mean over those pairs of 1 − (1 − ε)^(c_a + c_b), from the histogram
/// in O(b²) as [Σ_{c,d} H_c·H_d·r(c + d) − Σ_c H_c·r(2c)] / (m(m − 1)), r(j) = 1 − (1 − ε)^j. A
/// fingerprint kept outside the table with its bucket (a cuckoo filter's victim slot) is met by a
/// non-member whose pair holds that bucket, 2/m of them: each adds a chance 2ε/m, independently.
pub fn cuckoo_fill_fpr(fingerprint_bits: u32, occupancy: &[u64], outside: u64) -> f64 {
    let epsilon = cuckoo_epsilon(fingerprint_bits);
    let m: u64 = occupancy.iter().sum();
    if m < 2 {
        return 0.0;
    }
    let r = |j: usize| one_of_matches(epsilon, j as f64);
    let mut pairs = 0.0;
    for (c, &hc) in occupancy.iter().enumerate() {
        for (d, &hd) in occupancy.iter().enumerate() {
            pairs += hc as f64 * hd as f64 * r(c + d);
        }
        pairs -= hc as f64 * r(2 * c);
    }
    let m = m as f64;
    let in_table = pairs / (m * (m - 1.0));
    let outside_hit = one_of_matches(2.0 * epsilon / m, outside as f64);
    in_table + (1.0 - in_table) * outside_hit
}

/// Bits of the cache-line blocks of the `blocked` filter.
pub const BLOCK_BITS: u64 = 512;
/// Words per block and bits per word of the `blocked` filter.
pub const BLOCK_WORDS: u32 = 8;
const WORD_BITS: f64 = 64.0;
/// Probe counts the `blocked` sizing chooses from.
pub const BLOCKED_HASH_CHOICES: &[u32] = &[2, 4, 6, 8, 12, 16, 24];

/// Expected rate of the sectorised blocked filter: a key picks one 512-bit block (8 words of 64 bits) and
/// sets k bits in it, probe i in word i mod 8 at a uniform position (with replacement). With i keys in the
/// block (Poisson, λ = 512·n/m), word w takes D = c_w·i uniform draws, and a query's c_w probes all land on
/// set bits with probability E[(X/64)^c_w], X the word's set bits ([`word_probes_all_set`]); the words are
/// independent given i, so FPR = Σᵢ Pois(i; λ) · Π_w E[(X_w/64)^c_w] (Putze, Sanders, Singler 2007, per-word
/// form). Where a word takes one probe this is the classic 1 − (1 − 1/64)^D; with two or three it is
/// higher than (mean fill)^c, which would under-estimate the rate.
pub fn blocked_sector_fpr(m: u64, k: u32, n: u64) -> f64 {
    let lambda = BLOCK_BITS as f64 * n as f64 / m.max(1) as f64;
    // k mod 8 words take one probe more than the others: two distinct word terms per block.
    let (fewer, more) = (k / BLOCK_WORDS, k / BLOCK_WORDS + 1);
    let with_more = (k % BLOCK_WORDS) as i32;
    poisson_mixture(lambda, |i| {
        let word = |c: u32| word_probes_all_set(WORD_BITS as u32, c, c as u64 * i);
        let rest = word(fewer).powi(BLOCK_WORDS as i32 - with_more);
        if with_more == 0 {
            rest
        } else {
            rest * word(more).powi(with_more)
        }
    })
}

/// The most probes [`word_probes_all_set`] takes in one word (24 probes over 8 words need 3).
pub const MAX_WORD_PROBES: u32 = 24;

/// Probability that `probes` uniform positions (with replacement) of a `bits`-bit word all hit set bits,
/// after `draws` uniform draws set bits in it: E[(X/bits)^c] for the occupancy X. Counting the probe
/// tuples by their j distinct positions (Stirling numbers of the second kind S(c, j), falling factorial
/// (bits)_j) and the chance that j given bits are all set by inclusion–exclusion:
/// Σ_j S(c, j)·(bits)_j/bits^c · Σ_l (−1)^l·C(j, l)·(1 − l/bits)^draws.
pub fn word_probes_all_set(bits: u32, probes: u32, draws: u64) -> f64 {
    if probes == 0 {
        return 1.0;
    }
    let b = bits as f64;
    if probes == 1 {
        return bit_set_probability(bits as u64, draws as f64);
    }
    assert!(
        probes <= MAX_WORD_PROBES,
        "at most {MAX_WORD_PROBES} probes per word"
    );
    // Stirling numbers of the second kind, row `probes`: S(c, j) = j·S(c−1, j) + S(c−1, j−1).
    let mut stirling = [0.0f64; MAX_WORD_PROBES as usize + 1];
    stirling[0] = 1.0;
    for c in 1..=probes as usize {
        for j in (1..=c).rev() {
            stirling[j] = j as f64 * stirling[j] + stirling[j - 1];
        }
        stirling[0] = 0.0;
    }
    let mut total = 0.0;
    let mut falling = 1.0;
    for (j, ways) in stirling
        .iter()
        .enumerate()
        .take(probes.min(bits) as usize + 1)
        .skip(1)
    {
        falling *= (b - (j - 1) as f64) / b;
        let mut all_set = 0.0;
        let mut binomial = 1.0;
        for l in 0..=j {
            let unset = draws as f64 * (-(l as f64) / b).ln_1p();
            let sign = if l % 2 == 0 { 1.0 } else { -1.0 };
            all_set += sign * binomial * unset.exp();
            binomial = binomial * (j - l) as f64 / (l + 1) as f64;
        }
        total += ways * falling * b.powi(j as i32 - probes as i32) * all_set;
    }
    total
}

/// Size of the `blocked` filter for `n` keys at rate `p`: for each k in [`BLOCKED_HASH_CHOICES`], the fewest
/// whole blocks whose rate is ≤ p (bisection on bits per key), keeping the k that needs the fewest blocks.
pub fn blocked_sizing(n: u64, p: f64) -> (u64, u32) {
    let n = n.max(1);
    let mut best = (u64::MAX, 8);
    for &k in BLOCKED_HASH_CHOICES {
        let (mut low, mut high) = (0.5f64, 256.0f64);
        if blocked_sector_fpr((high * n as f64) as u64, k, n) > p {
            continue;
        }
        for _ in 0..50 {
            let mid = (low + high) / 2.0;
            if blocked_sector_fpr((mid * n as f64) as u64, k, n) > p {
                low = mid;
            } else {
                high = mid;
            }
        }
        let blocks = ((high * n as f64) / BLOCK_BITS as f64).ceil().max(1.0) as u64;
        if blocks < best.0 {
            best = (blocks, k);
        }
    }
    if best.0 == u64::MAX {
        best = (((256.0 * n as f64) / BLOCK_BITS as f64).ceil() as u64, 24);
    }
    best
}

/// Fan, Cao, Almeida and Broder's (2000) bound on the counters of a counting Bloom filter of `m` counters
/// that reach `value` after `n` distinct keys with `k` probes each: the expected number is at most
/// m·C(n·k, j)/m^j ≤ m·(e·n·k/(j·m))^j, j = `value` (≈ m·(e·ln 2/j)^j at the optimal k).
pub fn counting_saturation_bound(m: u64, k: u32, n: u64, value: u32) -> f64 {
    let j = value as f64;
    let ratio = std::f64::consts::E * n as f64 * k as f64 / (j * m.max(1) as f64);
    m as f64 * ratio.powi(value as i32)
}

/// Σᵢ Pois(i; λ)·f(i), summed over the mass that matters (|i − λ| ≤ 12√λ + 30).
pub fn poisson_mixture(lambda: f64, f: impl Fn(u64) -> f64) -> f64 {
    if lambda <= 0.0 {
        return f(0);
    }
    let spread = 12.0 * lambda.sqrt() + 30.0;
    let low = (lambda - spread).max(0.0).floor() as u64;
    let high = (lambda + spread).ceil() as u64;
    let mut total = 0.0;
    for i in low..=high {
        let ln_pmf = -lambda + i as f64 * lambda.ln() - ln_factorial(i);
        total += ln_pmf.exp() * f(i);
    }
    total
}

/// ln(n!) by Stirling's series (exact table below 16; error < 1e-12 above).
pub fn ln_factorial(n: u64) -> f64 {
    if n < 16 {
        return (1..=n).map(|i| (i as f64).ln()).sum();
    }
    let x = n as f64 + 1.0;
    (x - 0.5) * x.ln() - x + 0.5 * (2.0 * std::f64::consts::PI).ln() + 1.0 / (12.0 * x)
        - 1.0 / (360.0 * x.powi(3))
        + 1.0 / (1260.0 * x.powi(5))
}

/// The parameters a standard Bloom filter gets for `n` keys at rate `p`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BloomSizing {
    pub bits: u64,
    pub hashes: u32,
}

impl BloomSizing {
    /// m and k from the standard formulas.
    pub fn for_rate(n: u64, p: f64) -> Self {
        let bits = bloom_bits(n, p);
        BloomSizing {
            bits,
            hashes: bloom_hashes(bits, n),
        }
    }

    /// The best filter that fits `bits`: k chosen optimally for that m and n.
    pub fn for_bits(n: u64, bits: u64) -> Self {
        BloomSizing {
            bits,
            hashes: bloom_hashes(bits, n),
        }
    }

    /// Bytes of the bit array (whole 64-bit words).
    pub fn bytes(&self) -> u64 {
        self.bits.div_ceil(64) * 8
    }

    /// Expected rate with `n` keys inserted.
    pub fn fpr(&self, n: u64) -> f64 {
        bloom_fpr(self.bits, self.hashes, n)
    }
}

/// Growth and tightening of a scalable Bloom filter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScalableParams {
    /// Capacity of the first slice, n₀.
    pub initial_capacity: u64,
    /// Target compound rate p.
    pub fpr: f64,
    /// Capacity growth per slice, s.
    pub growth: f64,
    /// Error tightening per slice, r.
    pub tightening: f64,
}

impl ScalableParams {
    /// Capacity and sizing of slice `i`: n₀·sⁱ keys at p·(1 − r)·rⁱ.
    pub fn slice(&self, i: u32) -> (u64, BloomSizing) {
        let capacity = (self.initial_capacity as f64 * self.growth.powi(i as i32))
            .ceil()
            .max(1.0) as u64;
        let rate = self.fpr * (1.0 - self.tightening) * self.tightening.powi(i as i32);
        (capacity, BloomSizing::for_rate(capacity, rate))
    }

    /// The slices needed to hold `n` keys, each with the number of keys it would hold.
    pub fn plan(&self, n: u64) -> Vec<(u64, BloomSizing, u64)> {
        let mut slices = Vec::new();
        let mut left = n;
        let mut i = 0;
        loop {
            let (capacity, sizing) = self.slice(i);
            let held = left.min(capacity);
            slices.push((capacity, sizing, held));
            left -= held;
            if left == 0 {
                break;
            }
            i += 1;
        }
        slices
    }

    /// Predicted bytes of the bit arrays after `n` inserts.
    pub fn bytes(&self, n: u64) -> u64 {
        self.plan(n).iter().map(|(_, s, _)| s.bytes()).sum()
    }

    /// Predicted compound rate after `n` inserts, slices filled in order.
    pub fn fpr(&self, n: u64) -> f64 {
        compound_fpr(self.plan(n).iter().map(|(_, s, held)| s.fpr(*held)))
    }
}

/// 1 − ∏(1 − pᵢ): the rate of a query that is positive when any part is.
pub fn compound_fpr(rates: impl IntoIterator<Item = f64>) -> f64 {
    1.0 - rates.into_iter().map(|p| 1.0 - p).product::<f64>()
}

/// The bucket count hashbrown ends with after `n` inserts (no reserve): the smallest power of two ≥ 4 whose
/// capacity holds n (capacity = buckets − 1 below 8 buckets, 7/8 of them from 8 on).
pub fn hashbrown_buckets(n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    let mut buckets = 4u64;
    loop {
        let capacity = if buckets < 8 {
            buckets - 1
        } else {
            buckets / 8 * 7
        };
        if capacity >= n {
            return buckets;
        }
        buckets *= 2;
    }
}

/// Bytes of hashbrown's table for `n` entries of `slot_bytes` each: slots + one control byte per bucket +
/// the 16-byte group tail.
pub fn hashbrown_table_bytes(n: u64, slot_bytes: u64) -> u64 {
    let buckets = hashbrown_buckets(n);
    if buckets == 0 {
        return 0;
    }
    (buckets * slot_bytes).div_ceil(16) * 16 + buckets + 16
}

/// The heap footprint glibc's malloc gives a request of `len` bytes: max(32, (len + 8 + 15) & !15).
pub fn glibc_chunk_bytes(len: u64) -> u64 {
    ((len + 8 + 15) & !15).max(32)
}

/// Largest n for which `bytes(n) ≤ budget` (bytes non-decreasing in n), by doubling then bisection.
pub fn largest_n(budget: f64, bytes: impl Fn(u64) -> f64) -> f64 {
    if bytes(1) > budget {
        return 0.0;
    }
    let mut high = 2u64;
    while bytes(high) <= budget {
        if high > 1 << 50 {
            return high as f64;
        }
        high *= 2;
    }
    let mut low = high / 2;
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if bytes(mid) <= budget {
            low = mid;
        } else {
            high = mid;
        }
    }
    low as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproduces_the_articles_numbers() {
        // 50M URLs at 1%: ≈ 479.3 million bits, ≈ 59.9 MB, k = 7.
        let s = BloomSizing::for_rate(50_000_000, 0.01);
        assert_eq!(s.bits, 479_252_919);
        assert_eq!((s.bits as f64 / 1e6 * 10.0).round() / 10.0, 479.3);
        assert_eq!((s.bits as f64 / 8.0 / 1e6 * 10.0).round() / 10.0, 59.9);
        assert_eq!(s.hashes, 7);
        // The bitmap holding 6·10⁹ keys in 6·10⁹ bits answers "seen" for 63.2% of new keys.
        let fpr = bitmap_fpr(6_000_000_000, 6_000_000_000);
        assert_eq!((fpr * 1000.0).round() / 1000.0, 0.632);
        assert!((fpr - (1.0 - (-1f64).exp())).abs() < 1e-9);
    }

    #[test]
    fn bloom_rate_at_design_fill_is_near_target() {
        let s = BloomSizing::for_rate(1_000_000, 0.01);
        assert!((s.fpr(1_000_000) - 0.01).abs() < 0.0005);
        assert_eq!(bloom_fpr(16, 2, 4), (1.0 - (15f64 / 16.0).powi(8)).powi(2));
    }

    /// E[(X/b)^c] from the occupancy distribution, by its Markov chain (each draw sets a new bit with
    /// probability (b − X)/b): an independent computation of [`word_probes_all_set`].
    fn occupancy_moment(bits: u32, probes: u32, draws: u64) -> f64 {
        let b = bits as usize;
        let mut pmf = vec![0.0f64; b + 1];
        pmf[0] = 1.0;
        for _ in 0..draws {
            let mut next = vec![0.0f64; b + 1];
            for (x, p) in pmf.iter().enumerate() {
                next[x] += p * x as f64 / b as f64;
                if x < b {
                    next[x + 1] += p * (b - x) as f64 / b as f64;
                }
            }
            pmf = next;
        }
        pmf.iter()
            .enumerate()
            .map(|(x, p)| p * (x as f64 / b as f64).powi(probes as i32))
            .sum()
    }

    #[test]
    fn probes_in_one_word_follow_the_occupancy_distribution() {
        for probes in 0..=3 {
            for draws in [0, 1, 2, 5, 20, 64, 150, 400] {
                let inclusion_exclusion = word_probes_all_set(64, probes, draws);
                let chain = occupancy_moment(64, probes, draws);
                assert!(
                    (inclusion_exclusion - chain).abs() <= 1e-12 + 1e-9 * chain,
                    "c={probes} D={draws}: {inclusion_exclusion} vs {chain}"
                );
            }
        }
        // Two probes in a word: E[(X/64)²] exceeds (E[X]/64)² by 0.50% at 40 draws, the bias of the
        // mean-fill shortcut (eight such words compound it to ≈ 3% of the rate).
        let mean_fill = bit_set_probability(64, 40.0);
        let ratio = word_probes_all_set(64, 2, 40) / (mean_fill * mean_fill);
        assert!((ratio - 1.00499).abs() < 1e-4, "{ratio}");
    }

    #[test]
    fn blocked_rate_counts_the_spread_of_a_words_load() {
        // At p = 10⁻⁴ the sizing needs 16 probes (two per word): with the mean-fill shortcut it chose
        // 22.80 bits per key, where the expectation over the word's load gives 1.0317·10⁻⁴.
        let n = 10_000_000u64;
        let (blocks, k) = blocked_sizing(n, 1e-4);
        assert_eq!(k, 16);
        let bits_per_key = (blocks * BLOCK_BITS) as f64 / n as f64;
        assert!((bits_per_key - 22.885).abs() < 0.01, "{bits_per_key}");
        assert!(blocked_sector_fpr(blocks * BLOCK_BITS, k, n) <= 1e-4);
        let old_bits = (22.799 * n as f64) as u64;
        let at_old = blocked_sector_fpr(old_bits, 16, n);
        assert!((at_old / 1e-4 - 1.0317).abs() < 0.001, "{at_old}");
    }

    #[test]
    fn bloom_probe_count_is_the_best_integer() {
        for bits_per_key in [1.0, 2.15, 2.5, 3.58, 5.03, 9.585, 10.81, 16.0] {
            let n = 1_000_000u64;
            let m = (bits_per_key * n as f64) as u64;
            let chosen = bloom_hashes(m, n);
            let best = (1..=40)
                .min_by(|a, b| bloom_fpr(m, *a, n).total_cmp(&bloom_fpr(m, *b, n)))
                .unwrap();
            assert_eq!(chosen, best, "{bits_per_key} bits per key");
        }
        // Rounding (m/n)·ln 2 = 1.49 would give 1 probe at 2.15 bits per key; 2 is better.
        assert_eq!(bloom_hashes(2_150_000, 1_000_000), 2);
    }

    #[test]
    fn blocked_sizing_pays_a_small_penalty_over_bloom() {
        // k = 8, one bit per word: 10.10 bits per key for 1% (a standard Bloom filter: 9.59).
        let (blocks, k) = blocked_sizing(1_000_000, 0.01);
        assert_eq!(k, 8);
        let bits_per_key = blocks as f64 * 512.0 / 1e6;
        assert!((bits_per_key - 10.10).abs() < 0.02, "{bits_per_key}");
        assert!(blocked_sector_fpr(blocks * 512, k, 1_000_000) <= 0.01);
        // With one probe per word the per-word form equals the classic blocked formula's structure:
        // more bits per key always lowers the rate.
        assert!(
            blocked_sector_fpr(20_000_000, 8, 1_000_000)
                < blocked_sector_fpr(10_000_000, 8, 1_000_000)
        );
    }

    #[test]
    fn scalable_compound_rate_stays_below_target() {
        let params = ScalableParams {
            initial_capacity: 1000,
            fpr: 0.01,
            growth: 2.0,
            tightening: 0.9,
        };
        for n in [10, 1000, 64_000, 1_000_000] {
            assert!(params.fpr(n) <= 0.01, "n={n}");
        }
        assert_eq!(params.plan(1000).len(), 1);
        assert_eq!(params.plan(3000).len(), 2);
    }

    #[test]
    fn fingerprint_rate_is_n_over_2_64() {
        let n = 10_000_000u64;
        let expected = n as f64 / 2f64.powi(64);
        assert!((fingerprint_fpr(n) / expected - 1.0).abs() < 1e-6);
    }

    #[test]
    fn hashbrown_bucket_model() {
        assert_eq!(hashbrown_buckets(1), 4);
        assert_eq!(hashbrown_buckets(3), 4);
        assert_eq!(hashbrown_buckets(4), 8);
        assert_eq!(hashbrown_buckets(7), 8);
        assert_eq!(hashbrown_buckets(8), 16);
        assert_eq!(hashbrown_buckets(14), 16);
        assert_eq!(hashbrown_buckets(15), 32);
        assert_eq!(glibc_chunk_bytes(77), 96);
        assert_eq!(glibc_chunk_bytes(1), 32);
    }
}

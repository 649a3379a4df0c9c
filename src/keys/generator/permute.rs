//! Keyed bijections of an index space, for the shapes whose keys carry their index (e-mail and IP
//! addresses): distinct indices give distinct tokens by construction, not by the luck of a hash.
//!
//! Invariants:
//! 1. [`Permutation::apply`] is a bijection of `[0, 2^bits)`: each round xors a key (a bijection), multiplies
//!    by an odd constant modulo 2^bits (a bijection, odd numbers being units) and xors the value with
//!    itself shifted right (a bijection: the top bits are kept and give back the rest).
//! 2. [`Permutation::apply_below`] is a bijection of `[0, n)` for any n ≤ 2^bits, by cycle walking
//!    (Black and Rogaway, "Ciphers with arbitrary finite domains", CT-RSA 2002): apply until the value
//!    falls below n. The walk ends, because the cycle through the start comes back to it, and two starts
//!    never meet, because the permutation's inverse retraces the walk. It takes 2^bits / n steps on average.
//! 3. [`spread`] maps `[0, count)` injectively into `[0, capacity)` for count ≤ capacity, so that the
//!    values of a sub-range use the top digits of a mixed radix as well as the bottom ones.

/// Odd multipliers of the three rounds (the 64-bit golden ratio and two of MurmurHash3's finaliser's).
const MULTIPLIERS: [u64; 3] = [
    0x9E37_79B9_7F4A_7C15,
    0xFF51_AFD7_ED55_8CCD,
    0xC4CE_B9FE_1A85_EC53,
];

/// A keyed bijection of the integers below 2^bits.
#[derive(Clone, Debug)]
pub(super) struct Permutation {
    mask: u64,
    shift: u32,
    keys: [u64; 3],
}

impl Permutation {
    /// The permutation of `[0, 2^bits)` (16 ≤ bits ≤ 63) keyed by `seed` and a shape's `salt`.
    pub(super) fn new(bits: u32, seed: u64, salt: u64) -> Self {
        assert!((16..64).contains(&bits), "{bits} bits");
        let mask = (1u64 << bits) - 1;
        let mut state = seed ^ salt;
        Permutation {
            mask,
            shift: bits / 2 + 1,
            keys: std::array::from_fn(|_| super::splitmix(&mut state) & mask),
        }
    }

    /// The image of `x` (< 2^bits).
    #[inline]
    pub(super) fn apply(&self, x: u64) -> u64 {
        debug_assert!(x <= self.mask);
        let mut x = x;
        for (key, multiplier) in self.keys.iter().zip(MULTIPLIERS) {
            x = ((x ^ key).wrapping_mul(multiplier)) & self.mask;
            x ^= x >> self.shift;
        }
        x
    }

    /// The image of `x` under the bijection of `[0, n)` this permutation induces (x < n ≤ 2^bits).
    #[inline]
    pub(super) fn apply_below(&self, x: u64, n: u64) -> u64 {
        debug_assert!(x < n && n - 1 <= self.mask);
        let mut y = self.apply(x);
        while y >= n {
            y = self.apply(y);
        }
        y
    }
}

/// A prime larger than every factor of the capacities [`spread`] is used with (they are products of 2, 3,
/// 5 and 13), so it is a unit modulo each of them.
const STRIDE: u128 = 1_000_003;

/// `value · STRIDE mod capacity`: injective on `[0, capacity)`, since STRIDE is prime to the capacity.
#[inline]
pub(super) fn spread(value: u64, capacity: u64) -> u64 {
    debug_assert!(value < capacity && !(capacity as u128).is_multiple_of(STRIDE));
    (value as u128 * STRIDE % capacity as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value of small spaces, keyed two ways: each image once, and the keys give other orders.
    #[test]
    fn permutations_and_their_cycle_walks_are_bijections() {
        for bits in [16, 17, 20] {
            let size = 1u64 << bits;
            let (a, b) = (Permutation::new(bits, 1, 7), Permutation::new(bits, 2, 7));
            let mut seen = vec![false; size as usize];
            let mut same = 0;
            for x in 0..size {
                let y = a.apply(x);
                assert!(y < size && !seen[y as usize], "{bits} bits: {x} → {y}");
                seen[y as usize] = true;
                same += u64::from(y == b.apply(x));
            }
            assert!(same < size / 100, "{bits} bits: {same} equal images");
            for n in [size, size - 1, size / 2 + 3, 3 * size / 4] {
                let mut seen = vec![false; n as usize];
                for x in 0..n {
                    let y = a.apply_below(x, n);
                    assert!(
                        y < n && !seen[y as usize],
                        "{bits} bits below {n}: {x} → {y}"
                    );
                    seen[y as usize] = true;
                }
            }
        }
    }

    /// Consecutive indices land far apart: the top bit of the image is set for about half of them.
    #[test]
    fn consecutive_indices_scatter() {
        let p = Permutation::new(36, 42, 9);
        let high = (0..100_000u64).filter(|x| p.apply(*x) >> 35 == 1).count() as f64;
        assert!((high / 100_000.0 - 0.5).abs() < 0.01, "{high}");
    }

    #[test]
    fn spread_is_injective_below_its_capacity() {
        let capacity = 26 * 10 * 26 * 36;
        let mut seen = vec![false; capacity as usize];
        for v in 0..capacity {
            let s = spread(v, capacity);
            assert!(!seen[s as usize], "{v}");
            seen[s as usize] = true;
        }
    }
}

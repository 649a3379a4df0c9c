//! IPv6 keys: global unicast addresses in RFC 5952 canonical text, as blocklists hold them.
//!
//! Invariants:
//! 1. Index k (< 2^48, members below 2^47 as for URLs) becomes a 48-bit token by a seeded bijection, and
//!    every address carries its token whole: distinct indices give distinct addresses, so members and
//!    non-members never meet. The three forms place it so that an address tells its form, and with it
//!    where the token is:
//!    - server (`…::c3f1`): the /64's last 32 bits are the token's high 32 and the interface identifier
//!      its low 16, so the identifier is below 2^16;
//!    - privacy (RFC 4941 temporary, `…:3f2e:91ab:c4d0:77e1`): the identifier is a drawn non-zero 16 bits
//!      with the universal/local bit (bit 6 of its first byte) clear, then the token, so it is at least
//!      2^48 and that bit is 0;
//!    - EUI-64 (`…:21e:c2ff:fe3a:9b1c`): the identifier is a MAC address's with `ff:fe` in the middle and
//!      the universal/local bit set (RFC 4291 appendix A), its 46 free bits the token's low 46 and the
//!      /64's last group the high 2.
//! 2. The first 32 bits are a network in a block IANA gave a regional registry (2001::/16 past the
//!    special-purpose 2001::/23 and the documentation 2001:db8::/32, 2400::/12, 2600::/12, 2800::/12,
//!    2a00::/12, 2c00::/12): every address is global unicast (2000::/3) and none is documentation-only.
//! 3. Privacy and EUI-64 addresses sit in a /64 drawn from a population of `hosts` subnets whose rank has
//!    Zipf weight r^−s (the profile's `host_zipf`): popular subnets hold many addresses, as a blocklist
//!    holds many of one abuser's /64. Four consecutive ranks share a /48 and sixteen a /32, so addresses
//!    also share /48s and networks without sharing a /64.
//! 4. The text is RFC 5952's: lower-case hex without leading zeros, the longest run of two or more zero
//!    groups (the first of equal runs) written `::`, a lone zero group written `0`.

use super::compose::zipf_inverse_cdf;
use super::permute::Permutation;
use super::writer::Rng;
use crate::keys::profile::Profile;

/// Salt of the permutation's key and of the per-address stream, so that a seed gives other orders here.
const SALT: u64 = 0x6A5D_39EA_C1B4_7F02;

/// Shares of the forms, per 1024 (assumptions: a blocklist's IPv6 entries are mostly servers and
/// rented hosts, then residential privacy addresses, few still derived from a MAC address).
const SERVER_PER_1024: u64 = 512;
const PRIVACY_PER_1024: u64 = 410;

/// Regional registries' blocks: (first group of the block, its /16s, weight). 2001::/16 is one /16 whose
/// second group is drawn from 0x0200 up; the /12s span sixteen first groups. The weights are assumptions
/// (RIPE and ARIN hold most allocated /32s).
const BLOCKS: [(u16, u16, u64); 6] = [
    (0x2a00, 16, 40),
    (0x2600, 16, 25),
    (0x2400, 16, 20),
    (0x2800, 16, 7),
    (0x2c00, 16, 3),
    (0x2001, 1, 5),
];

/// Writes IPv6 keys: a pure function of (profile, seed, index).
#[derive(Clone, Debug)]
pub(super) struct Ipv6Writer {
    permutation: Permutation,
    stream: u64,
    hosts: u64,
    host_zipf: f64,
}

/// How an address's interface identifier is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    Server,
    Privacy,
    Eui64,
}

impl Ipv6Writer {
    pub(super) fn new(profile: &Profile, seed: u64) -> Self {
        Ipv6Writer {
            permutation: Permutation::new(48, seed, SALT),
            stream: seed.rotate_left(29) ^ SALT,
            hosts: profile.hosts,
            host_zipf: profile.host_zipf,
        }
    }

    /// The address of index `k` (< 2^48) as eight groups.
    pub(super) fn groups(&self, k: u64) -> [u16; 8] {
        let token = self.permutation.apply(k);
        let mut rng = Rng(token ^ self.stream);
        // The subnet's rank, from the URL hosts' continuous Zipf law, evaluated exactly for each address.
        let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
        let rank = (zipf_inverse_cdf(self.hosts, self.host_zipf, u) as u64).clamp(1, self.hosts);
        let draw = rng.next();
        let form = match draw & 1023 {
            x if x < SERVER_PER_1024 => Form::Server,
            x if x < SERVER_PER_1024 + PRIVACY_PER_1024 => Form::Privacy,
            _ => Form::Eui64,
        };
        let network = network_of(rank >> 4);
        let site = (mix(rank >> 2) >> 48) as u16;
        let mut g = [0u16; 8];
        g[0] = (network >> 16) as u16;
        g[1] = network as u16;
        match form {
            Form::Server => {
                g[2] = (token >> 32) as u16;
                g[3] = (token >> 16) as u16;
                g[7] = token as u16;
            }
            Form::Privacy => {
                g[2] = site;
                g[3] = (rank & 3) as u16;
                // Non-zero, with the universal/local bit (0x0200 of the first group) clear.
                let first = ((draw >> 16) as u16 & !0x0200).max(1);
                g[4] = first;
                g[5] = (token >> 32) as u16;
                g[6] = (token >> 16) as u16;
                g[7] = token as u16;
            }
            Form::Eui64 => {
                g[2] = site;
                g[3] = (token >> 46) as u16;
                let mac = token & ((1 << 46) - 1);
                // The MAC's first byte: six token bits, the universal/local bit set, the group bit clear.
                let b0 = ((mac >> 40) as u16) << 2 | 0x02;
                g[4] = b0 << 8 | ((mac >> 32) & 0xff) as u16;
                g[5] = (((mac >> 24) & 0xff) as u16) << 8 | 0xff;
                g[6] = 0xfe00 | ((mac >> 16) & 0xff) as u16;
                g[7] = mac as u16;
            }
        }
        g
    }

    /// Appends the address of index `k` in RFC 5952 text.
    #[inline]
    pub(super) fn append(&self, k: u64, buf: &mut Vec<u8>) {
        push_canonical(&self.groups(k), buf);
    }
}

/// A 64-bit mix of `x` (splitmix64's finaliser, salted).
fn mix(x: u64) -> u64 {
    let mut state = x ^ SALT;
    super::splitmix(&mut state)
}

/// The first 32 bits of network `n`: a block drawn by weight, a /16 in it, and a drawn second group.
fn network_of(n: u64) -> u32 {
    let h = mix(n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let total: u64 = BLOCKS.iter().map(|b| b.2).sum();
    let mut pick = ((h & 0xffff) * total) >> 16;
    let &(first, spans, _) = BLOCKS
        .iter()
        .find(|b| {
            let inside = pick < b.2;
            pick = pick.wrapping_sub(b.2);
            inside
        })
        .expect("the pick is below the weights' sum");
    let top = first + ((h >> 16) % u64::from(spans)) as u16;
    let second = if first == 0x2001 {
        // Past 2001::/23 (special purpose), and never 2001:db8::/32 (documentation).
        match 0x0200 + ((h >> 32) % (0x1_0000 - 0x0200)) as u16 {
            0x0db8 => 0x0db9,
            s => s,
        }
    } else {
        (h >> 32) as u16
    };
    u32::from(top) << 16 | u32::from(second)
}

/// Appends `groups` as RFC 5952 text.
fn push_canonical(groups: &[u16; 8], buf: &mut Vec<u8>) {
    // The longest run of zero groups, the first of equal ones; shorter than two is not compressed.
    let (mut best_at, mut best_len, mut run_at, mut run_len) = (8, 0, 0, 0);
    for (i, g) in groups.iter().enumerate() {
        if *g == 0 {
            if run_len == 0 {
                run_at = i;
            }
            run_len += 1;
            if run_len > best_len {
                (best_at, best_len) = (run_at, run_len);
            }
        } else {
            run_len = 0;
        }
    }
    if best_len < 2 {
        best_at = 8;
    }
    let mut i = 0;
    while i < 8 {
        if i == best_at {
            buf.extend_from_slice(b"::");
            i += best_len;
            continue;
        }
        if i > 0 && i != best_at + best_len {
            buf.push(b':');
        }
        push_hex(groups[i], buf);
        i += 1;
    }
}

/// Appends `value` in lower-case hex without leading zeros.
fn push_hex(value: u16, buf: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digits = (16 - value.leading_zeros()).div_ceil(4).max(1);
    for d in (0..digits).rev() {
        buf.push(HEX[usize::from(value >> (4 * d) & 0xf)]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv6Addr;

    fn address(groups: &[u16; 8]) -> Ipv6Addr {
        Ipv6Addr::from(*groups)
    }

    fn text(groups: &[u16; 8]) -> String {
        let mut buf = Vec::new();
        push_canonical(groups, &mut buf);
        String::from_utf8(buf).unwrap()
    }

    /// RFC 5952's cases: leading zeros dropped, the longest run compressed (the first of equal runs), a
    /// lone zero group kept; the standard library's text (RFC 5952 too) is the oracle.
    #[test]
    fn canonical_text_follows_rfc_5952() {
        let cases: [([u16; 8], &str); 7] = [
            ([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1], "2001:db8::1"),
            ([0x2001, 0xdb8, 0, 1, 1, 1, 1, 1], "2001:db8:0:1:1:1:1:1"),
            ([0x2001, 0xdb8, 0, 0, 1, 0, 0, 1], "2001:db8::1:0:0:1"),
            ([0x2001, 0, 0, 1, 0, 0, 0, 1], "2001:0:0:1::1"),
            (
                [0x2a01, 0x4f8, 0xc17, 0xb0f0, 0, 0, 0, 0],
                "2a01:4f8:c17:b0f0::",
            ),
            ([0, 0, 0, 0, 0, 0, 0, 0], "::"),
            (
                [0xABCD, 0x0ef, 1, 0x10, 0x100, 0x1000, 0xffff, 0],
                "abcd:ef:1:10:100:1000:ffff:0",
            ),
        ];
        for (groups, expected) in cases {
            assert_eq!(text(&groups), expected);
            assert_eq!(address(&groups).to_string(), expected);
        }
    }

    /// The token an address carries, read back by its form (the module's invariant 1, as a decoder).
    fn token_of(groups: &[u16; 8]) -> u64 {
        let g = |i: usize| u64::from(groups[i]);
        let iid = g(4) << 48 | g(5) << 32 | g(6) << 16 | g(7);
        if iid < 1 << 16 {
            g(2) << 32 | g(3) << 16 | g(7)
        } else if iid >> 57 & 1 == 0 {
            iid & ((1 << 48) - 1)
        } else {
            // The identifier's bytes: the MAC's first (shifted past its two flag bits), second and
            // third, ff, fe, then its fourth to sixth.
            let b = |shift: u32| iid >> shift & 0xff;
            g(3) << 46
                | (b(56) >> 2) << 40
                | b(48) << 32
                | b(40) << 24
                | b(16) << 16
                | b(8) << 8
                | b(0)
        }
    }

    /// Every address gives back the token it was written from: the map from index to address is
    /// injective whatever was drawn (the permutation's bijection is tested in `permute`).
    #[test]
    fn addresses_give_back_their_tokens() {
        let g = Ipv6Writer::new(&Profile::load("ipv6").unwrap(), 42);
        for k in (0..100_000).chain((1 << 47) - 50_000..(1 << 47) + 50_000) {
            assert_eq!(token_of(&g.groups(k)), g.permutation.apply(k), "{k}");
        }
    }

    /// Generated addresses: canonical, global unicast in a registry's block, never documentation-only,
    /// and their form's identifier is what the module's invariant says.
    #[test]
    fn addresses_are_canonical_global_unicast_in_registry_blocks() {
        let profile = Profile::load("ipv6").unwrap();
        let g = Ipv6Writer::new(&profile, 42);
        let (mut forms, mut buf) = ([0u64; 3], Vec::new());
        for k in (0..100_000).chain((1 << 47)..(1 << 47) + 1000) {
            let groups = g.groups(k);
            buf.clear();
            g.append(k, &mut buf);
            let text = std::str::from_utf8(&buf).unwrap();
            assert_eq!(text, address(&groups).to_string());
            assert_eq!(text.parse::<Ipv6Addr>().unwrap(), address(&groups));
            assert_eq!(groups[0] >> 13, 0b001, "{text}");
            assert!(
                BLOCKS.iter().any(|b| (b.0..b.0 + b.1).contains(&groups[0])),
                "{text}"
            );
            if groups[0] == 0x2001 {
                assert!(groups[1] >= 0x0200 && groups[1] != 0x0db8, "{text}");
            }
            let iid = u64::from(groups[4]) << 48
                | u64::from(groups[5]) << 32
                | u64::from(groups[6]) << 16
                | u64::from(groups[7]);
            let form = if iid < 1 << 16 {
                0
            } else if iid >> 57 & 1 == 0 {
                1
            } else {
                assert_eq!((iid >> 24) & 0xffff, 0xfffe, "{text}");
                assert_eq!(iid >> 56 & 1, 0, "{text}: the group bit");
                2
            };
            forms[form] += 1;
        }
        // Each form comes with about its share (0.5, 0.4, 0.1 of 101,000: within 1.5 points).
        let n = forms.iter().sum::<u64>() as f64;
        for (count, share) in forms.iter().zip([512.0, 410.0, 102.0]) {
            assert!(
                (*count as f64 / n - share / 1024.0).abs() < 0.015,
                "{forms:?}"
            );
        }
    }
}

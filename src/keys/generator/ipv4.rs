//! IPv4 keys: dotted quads drawn without repetition from the public unicast space.
//!
//! Invariants:
//! 1. The addresses are the 3,702,258,432 of 0.0.0.0/0 outside the special-purpose blocks of the IANA
//!    IPv4 Special-Purpose Address Registry (RFC 6890 and its updates) and multicast: none of them
//!    appears in a list of hosts seen on the Internet, so a generated list has none either.
//! 2. Index k of the shape's space (members below [`MEMBER_LIMIT`], non-member j at `MEMBER_LIMIT + j`)
//!    is the address of rank `π(k)` among the public ones, π a seeded bijection of `[0, PUBLIC)`
//!    ([`Permutation::apply_below`]): distinct indices give distinct addresses, members and non-members
//!    never meet, and the members of any prefix of the indices scatter over the whole space.
//! 3. The text is the usual dotted decimal: four octets without leading zeros (7 to 15 bytes).
//!
//! Real blocklists cluster in hosting and residential ranges; these addresses are uniform over the public
//! space instead, which gives the same per-octet digit counts (what a key's length depends on) and keeps
//! the bijection exact.

use super::permute::Permutation;

/// Special-purpose and multicast blocks as (first address, prefix length), in address order.
const EXCLUDED: [(u32, u32); 15] = [
    (0x0000_0000, 8),  // 0.0.0.0/8 "this network"
    (0x0A00_0000, 8),  // 10.0.0.0/8 private use
    (0x6440_0000, 10), // 100.64.0.0/10 shared address space (carrier-grade NAT)
    (0x7F00_0000, 8),  // 127.0.0.0/8 loopback
    (0xA9FE_0000, 16), // 169.254.0.0/16 link local
    (0xAC10_0000, 12), // 172.16.0.0/12 private use
    (0xC000_0000, 24), // 192.0.0.0/24 IETF protocol assignments
    (0xC000_0200, 24), // 192.0.2.0/24 documentation (TEST-NET-1)
    (0xC058_6300, 24), // 192.88.99.0/24 6to4 relay anycast (deprecated)
    (0xC0A8_0000, 16), // 192.168.0.0/16 private use
    (0xC612_0000, 15), // 198.18.0.0/15 benchmarking
    (0xC633_6400, 24), // 198.51.100.0/24 documentation (TEST-NET-2)
    (0xCB00_7100, 24), // 203.0.113.0/24 documentation (TEST-NET-3)
    (0xE000_0000, 4),  // 224.0.0.0/4 multicast
    (0xF000_0000, 4),  // 240.0.0.0/4 reserved, with the limited broadcast 255.255.255.255
];

/// How many addresses lie outside [`EXCLUDED`].
pub const PUBLIC: u64 = {
    let mut public = 1u64 << 32;
    let mut i = 0;
    while i < EXCLUDED.len() {
        public -= 1 << (32 - EXCLUDED[i].1);
        i += 1;
    }
    public
};

/// Members are the indices below this: half the public addresses.
pub const MEMBER_LIMIT: u64 = PUBLIC / 2;

/// Salt of the permutation's key, so that a seed gives other orders here than in other shapes.
const SALT: u64 = 0x1F4B_0C6D_95E2_A317;

/// Writes IPv4 keys: a pure function of (seed, index).
#[derive(Clone, Debug)]
pub(super) struct Ipv4Writer {
    permutation: Permutation,
    /// The public ranges as (rank of their first address among the public ones, first address), in order.
    ranges: Vec<(u64, u32)>,
}

impl Ipv4Writer {
    pub(super) fn new(seed: u64) -> Self {
        let mut ranges = Vec::with_capacity(EXCLUDED.len() + 1);
        let (mut next, mut rank) = (0u64, 0u64);
        for (start, prefix) in EXCLUDED {
            let start = u64::from(start);
            if start > next {
                ranges.push((rank, next as u32));
                rank += start - next;
            }
            next = start + (1 << (32 - prefix));
        }
        debug_assert!(next == 1 << 32 && rank == PUBLIC);
        Ipv4Writer {
            permutation: Permutation::new(32, seed, SALT),
            ranges,
        }
    }

    /// The public address of rank `rank` (< [`PUBLIC`]).
    fn address_of_rank(&self, rank: u64) -> u32 {
        let at = self.ranges.partition_point(|(first, _)| *first <= rank) - 1;
        let (first_rank, first_address) = self.ranges[at];
        first_address + (rank - first_rank) as u32
    }

    /// The address of index `k` of the shape's space (< [`PUBLIC`]).
    pub(super) fn address(&self, k: u64) -> u32 {
        self.address_of_rank(self.permutation.apply_below(k, PUBLIC))
    }

    /// Appends the address of index `k` of the shape's space in dotted decimal.
    #[inline]
    pub(super) fn append(&self, k: u64, buf: &mut Vec<u8>) {
        let octets = self.address(k).to_be_bytes();
        for (i, octet) in octets.into_iter().enumerate() {
            if i > 0 {
                buf.push(b'.');
            }
            push_decimal(u64::from(octet), buf);
        }
    }
}

/// Appends `value` in decimal, without leading zeros.
#[inline]
pub(super) fn push_decimal(value: u64, buf: &mut Vec<u8>) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut v = value;
    loop {
        at -= 1;
        digits[at] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[at..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn excluded(address: u32) -> bool {
        EXCLUDED
            .iter()
            .any(|(start, prefix)| address >> (32 - prefix) == start >> (32 - prefix))
    }

    #[test]
    fn the_public_space_is_what_the_blocks_leave() {
        assert_eq!(PUBLIC, 3_702_258_432);
        // The blocks are in order and disjoint, each aligned to its prefix.
        for w in EXCLUDED.windows(2) {
            assert!(u64::from(w[0].0) + (1 << (32 - w[0].1)) <= u64::from(w[1].0));
        }
        for (start, prefix) in EXCLUDED {
            assert_eq!(u64::from(start) % (1 << (32 - prefix)), 0);
        }
        let g = Ipv4Writer::new(1);
        // Every range runs from just after an excluded block to just before one, with no gap inside.
        for (i, (first_rank, first)) in g.ranges.iter().enumerate() {
            let end = g.ranges.get(i + 1).map_or(PUBLIC, |r| r.0);
            let last = g.address_of_rank(end - 1);
            assert_eq!(g.address_of_rank(*first_rank), *first);
            assert_eq!(u64::from(last - first), end - 1 - first_rank);
            assert!(!excluded(*first) && excluded(first - 1), "{first:#x}");
            assert!(!excluded(last) && excluded(last + 1), "{last:#x}");
        }
    }

    /// An address gives back its rank, and the rank is the index's image under the permutation: the map
    /// from index to address is injective (the permutation's bijection is tested in `permute`).
    #[test]
    fn addresses_give_back_their_ranks() {
        let g = Ipv4Writer::new(42);
        let rank_of = |address: u32| {
            let at = g.ranges.partition_point(|(_, first)| *first <= address) - 1;
            g.ranges[at].0 + u64::from(address - g.ranges[at].1)
        };
        for k in (0..100_000).chain(MEMBER_LIMIT - 50_000..MEMBER_LIMIT + 50_000) {
            assert_eq!(
                rank_of(g.address(k)),
                g.permutation.apply_below(k, PUBLIC),
                "{k}"
            );
        }
    }

    #[test]
    fn addresses_are_public_and_written_as_dotted_quads() {
        let g = Ipv4Writer::new(42);
        let mut buf = Vec::new();
        for k in (0..200_000)
            .chain(MEMBER_LIMIT..MEMBER_LIMIT + 1000)
            .chain(PUBLIC - 1000..PUBLIC)
        {
            let address = g.address(k);
            assert!(!excluded(address), "{address:#x}");
            buf.clear();
            g.append(k, &mut buf);
            let text = std::str::from_utf8(&buf).unwrap();
            assert_eq!(
                text.parse::<std::net::Ipv4Addr>().unwrap(),
                std::net::Ipv4Addr::from(address)
            );
            assert_eq!(text, std::net::Ipv4Addr::from(address).to_string());
        }
    }
}

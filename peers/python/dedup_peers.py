"""The Python tools the articles' readers use, on the harness's own keys: one cell, one JSON line.

Run by `dedupbench bench` (src/external/): it writes the cell's n member lines, then its non-member lines,
to stdin, and reads one JSON object from stdout in the shape of its cell record. Every key is read into a
list first, so the timed loops hold only the tool's own calls (the CPython interpreter loop included:
that is what a Python caller pays). Lines are decoded as UTF-8, a byte that is not UTF-8 becoming U+FFFD
(the tools take str).

Rows:
  py-set                a Python set of the URL strings; bytes by tracemalloc (the set and its str objects,
                        built again with tracing on), as a crawler's `seen = set()` holds them
  py-article-bloom      the first article's algorithm, written fresh: k seeded mmh3 hashes over a bytearray,
                        m = -n ln p / ln^2 2, k = round(m/n ln 2)
  pybloom-live          pybloom_live.BloomFilter(capacity=n, error_rate=p)
  pybloom-live-scalable pybloom_live.ScalableBloomFilter(error_rate=p), its other parameters as shipped
                        (initial capacity 100, LARGE_SET_GROWTH: each new filter 4x the capacity and 0.9x
                        the rate of the last, the first at 0.9p)
  rbloom                rbloom.Bloom(n, p) (Rust behind a Python API; Python's hash() of the str); its k is
                        read off the library (a sibling filter's saved header)

Member queries run on fresh copies of the member strings: CPython caches a str's hash on the object, so
querying the very objects the insert loop hashed would leave the hashing out of the query's time.

Usage: dedup_peers.py STRUCTURE --n N --queries Q --fpr P
"""

import argparse
import json
import math
import platform
import sys
import time
import tracemalloc
from importlib import metadata

LN2 = math.log(2)


def bloom_rate(m, k, n):
    """(1 - e^{-kn/m})^k: a Bloom filter's rate after n distinct keys."""
    return (1.0 - math.exp(-k * n / m)) ** k


class ArticleBloom:
    """The first article's Bloom filter (k seeded murmur3 hashes over a bytearray); add also says whether
    a bit was clear, so the harness can count keys reported new."""

    def __init__(self, size_bits, num_hashes):
        import mmh3

        self._hash = mmh3.hash
        self.size = size_bits
        self.k = num_hashes
        self.bits = bytearray(size_bits // 8 + 1)

    def _positions(self, item):
        for i in range(self.k):
            yield self._hash(item, seed=i) % self.size

    def add(self, item):
        new = False
        for pos in self._positions(item):
            mask = 1 << (pos % 8)
            if not self.bits[pos // 8] & mask:
                new = True
                self.bits[pos // 8] |= mask
        return new

    def __contains__(self, item):
        return all(self.bits[pos // 8] & (1 << (pos % 8)) for pos in self._positions(item))


def read_lines(count):
    out = []
    readline = sys.stdin.buffer.readline
    for _ in range(count):
        line = readline()
        if not line:
            sys.exit(f"error: stdin ended after {len(out)} of {count} lines")
        out.append(line.rstrip(b"\r\n").decode("utf-8", "replace"))
    return out


def timed(loop):
    started = time.perf_counter_ns()
    result = loop()
    return result, time.perf_counter_ns() - started


def build(structure, n, fpr):
    """The empty structure, its library and version."""
    if structure == "py-set":
        return set(), "builtin set", ""
    if structure == "py-article-bloom":
        m = max(8, math.ceil(-n * math.log(fpr) / LN2**2))
        k = max(1, round(m / n * LN2))
        return ArticleBloom(m, k), "mmh3", metadata.version("mmh3")
    if structure == "pybloom-live":
        import pybloom_live

        f = pybloom_live.BloomFilter(capacity=n, error_rate=fpr)
        return f, "pybloom-live", metadata.version("pybloom-live")
    if structure == "pybloom-live-scalable":
        import pybloom_live

        f = pybloom_live.ScalableBloomFilter(error_rate=fpr)
        return f, "pybloom-live", metadata.version("pybloom-live")
    if structure == "rbloom":
        import rbloom

        return rbloom.Bloom(n, fpr), "rbloom", metadata.version("rbloom")
    sys.exit(f"error: unknown structure {structure!r}")


def insert(structure, f, members):
    """One add per key, as the tool is called; returns how many keys it reported new."""
    if structure == "py-set":
        add = f.add
        for u in members:
            add(u)
        return len(f)
    if structure == "rbloom":
        # rbloom's add returns nothing: the keys reported new are counted after the timed loop.
        add = f.add
        for u in members:
            add(u)
        return None
    add = f.add
    new = 0
    if structure == "py-article-bloom":
        for u in members:
            if add(u):
                new += 1
    else:
        # pybloom-live's add returns whether the key was already there.
        for u in members:
            if not add(u):
                new += 1
    return new


def rbloom_reported_new(n, fpr, members):
    """What rbloom answers "was it new?" with (contains, then add), on a second filter, untimed."""
    import rbloom

    g = rbloom.Bloom(n, fpr)
    new = 0
    for u in members:
        if u not in g:
            g.add(u)
            new += 1
    return new


def geometry(structure, f, n_sized, fpr, n_distinct):
    """(bits, hashes, theory at this fill, bytes, how the bytes were counted)."""
    if structure == "py-article-bloom":
        return f.size, f.k, bloom_rate(f.size, f.k, n_distinct), len(f.bits), "len(bytearray)"
    if structure == "pybloom-live":
        m = f.num_slices * f.bits_per_slice
        # One bit per key in each of k slices of m/k bits.
        rate = (1.0 - (1.0 - 1.0 / f.bits_per_slice) ** n_distinct) ** f.num_slices
        return m, f.num_slices, rate, (len(f.bitarray) + 7) // 8, "the bit array's length"
    if structure == "pybloom-live-scalable":
        m = sum(x.num_slices * x.bits_per_slice for x in f.filters)
        keep = 1.0
        for x in f.filters:
            keep *= 1.0 - (1.0 - (1.0 - 1.0 / x.bits_per_slice) ** x.count) ** x.num_slices
        nbytes = sum((len(x.bitarray) + 7) // 8 for x in f.filters)
        method = f"the bit arrays' length ({len(f.filters)} filters)"
        return m, None, 1.0 - keep, nbytes, method
    if structure == "rbloom":
        m = f.size_in_bits
        k = rbloom_hashes(n_sized, fpr)
        return m, k, bloom_rate(m, k, n_distinct), (m + 7) // 8, "size_in_bits / 8"
    return None, None, 0.0, None, None


def peak_rss_bytes():
    """This process's peak resident set since exec (VmHWM). Not getrusage: on Linux its ru_maxrss keeps
    the parent's resident set at fork across exec."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return None


def rbloom_hashes(n, fpr):
    """rbloom's k, read off the library: a filter built alike but with a hash function of ours can be
    saved, and its saved bytes start with k (a little-endian u64). (rbloom 1.5.4 truncates (m/n) ln 2: k = 6
    at 1%.)"""
    import rbloom

    sibling = rbloom.Bloom(n, fpr, hash_func=lambda x: hash(x))
    return int.from_bytes(sibling.save_bytes()[:8], "little")


def set_bytes(members):
    """tracemalloc's bytes for a set built from these strings, with str objects of its own."""
    tracemalloc.start()
    s = set()
    for u in members:
        s.add(u.encode().decode())
    size, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del s
    return size


def main():
    p = argparse.ArgumentParser()
    p.add_argument("structure")
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--queries", type=int, required=True)
    p.add_argument("--fpr", type=float, required=True)
    a = p.parse_args()
    members = read_lines(a.n)
    non_members = read_lines(a.queries)
    f, library, version = build(a.structure, a.n, a.fpr)
    new, insert_ns = timed(lambda: insert(a.structure, f, members))
    queried = [u.encode().decode() for u in members]
    found, member_ns = timed(lambda: sum(1 for u in queried if u in f))
    del queried
    false_positives, non_member_ns = timed(lambda: sum(1 for u in non_members if u in f))
    if new is None:
        new = rbloom_reported_new(a.n, a.fpr, members)
    n_distinct = len(set(members))
    bits, hashes, theory, nbytes, method = geometry(a.structure, f, a.n, a.fpr, n_distinct)
    if a.structure == "py-set":
        del f
        nbytes = set_bytes(members)
        method = "tracemalloc: the set and its str objects (bytes requested; pymalloc's rounding not included)"
    print(
        json.dumps(
            {
                "structure": a.structure,
                "n": a.n,
                "n_distinct": n_distinct,
                "n_reported_new": new,
                "insert_ns_per_key": insert_ns / max(1, a.n),
                "member_query_ns_per_key": member_ns / max(1, a.n),
                "non_member_query_ns_per_key": non_member_ns / max(1, a.queries),
                "n_member_queries": a.n,
                "false_negatives": a.n - found,
                "n_non_member_queries": a.queries,
                "n_false_positives": false_positives,
                "bits": bits,
                "hashes": hashes,
                "expected_fpr": theory,
                "bytes": nbytes,
                "bytes_method": method,
                "runtime": f"CPython {platform.python_version()}",
                "library": f"{library} {version}".strip(),
                "timing": "one call per key from a CPython loop (the interpreter included)",
                "peak_rss_bytes": peak_rss_bytes(),
            }
        )
    )


if __name__ == "__main__":
    main()

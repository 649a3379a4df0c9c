#!/usr/bin/env bash
# Are the speed verdicts stable? Runs the same comparison several times in a row (3 by default) and
# prints, for each pair, op and path, every run's ratio [95% interval] and verdict, then whether any pair
# was called `faster` in one run and `slower` in another, and whether each pair's intervals overlap.
# A check you run by hand on a quiet machine, not a test: it takes about a minute a run.
#
#   bash scripts/speed-stability.sh                    # bench --scales 1e7 --structures bloom,blocked,fastbloom,sbbf --reps 3
#   RUNS=5 bash scripts/speed-stability.sh --rounds 31  # more runs; extra arguments go to every bench
#
# Runs go to target/speed-stability/run-N (replaced each time). Exits 1 when a verdict flips or two
# intervals of one pair do not overlap.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-3}
root=target/speed-stability
cargo build --release --quiet
rm -rf "$root"
mkdir -p "$root"
for i in $(seq 1 "$runs"); do
    echo "run $i of $runs" >&2
    target/release/dedupbench bench --scales 1e7 --structures bloom,blocked,fastbloom,sbbf --reps 3 \
        --no-experiments --quiet --out "$root/run-$i" "$@" >"$root/run-$i.log" 2>&1 || {
        echo "error: run $i failed; see $root/run-$i.log" >&2
        exit 2
    }
done
python3 - "$root" "$runs" <<'EOF'
import json, sys
root, runs = sys.argv[1], int(sys.argv[2])
rows = {}
for i in range(1, runs + 1):
    with open(f"{root}/run-{i}/analysis.json") as f:
        for q in json.load(f)["speed_ratios"]:
            key = (q["n"], q["ours"], q["peer"], q["op"], q["path"])
            rows.setdefault(key, []).append(q)
if not rows:
    print("no speed ratios in the runs: the structures hold no compared pair")
    sys.exit(2)
flipped, apart, widths = [], [], []
print(f"{'pair, op, path':<52} " + " ".join(f"{'run ' + str(i):<30}" for i in range(1, runs + 1)))
for key, qs in sorted(rows.items()):
    n, ours, peer, op, path = key
    cells = [f"{q['ratio_median']:.2f} [{q['ratio_low']:.2f}, {q['ratio_high']:.2f}] {q['verdict']}" for q in qs]
    print(f"{ours + ' / ' + peer + ', ' + op + ', ' + path:<52} " + " ".join(f"{c:<30}" for c in cells))
    verdicts = {q["verdict"] for q in qs}
    if {"faster", "slower"} <= verdicts:
        flipped.append(key)
    if max(q["ratio_low"] for q in qs) > min(q["ratio_high"] for q in qs):
        apart.append(key)
    widths += [(q["ratio_high"] - q["ratio_low"]) / q["ratio_median"] for q in qs]
    if len(qs) != runs:
        apart.append(key)
widths.sort()
print(f"\n{len(rows)} rows over {runs} runs; interval width / median: median {widths[len(widths) // 2]:.3f}, largest {widths[-1]:.3f}")
print(f"verdicts flipped (faster in one run, slower in another): {len(flipped)}")
for k in flipped:
    print(f"  {k}")
print(f"pairs whose intervals do not all overlap: {len(apart)}")
for k in apart:
    print(f"  {k}")
sys.exit(1 if flipped or apart else 0)
EOF

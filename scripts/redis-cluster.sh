#!/usr/bin/env bash
# Starts (up) or stops (down) a throwaway Redis Cluster on loopback: N masters (default 3) with R replicas
# each (default 0), each a `redis-server --cluster-enabled yes` on a free port whose bus port (+10000) is
# free too, with the RedisBloom module when scripts/fetch-redisbloom.sh has fetched it, joined by
# `redis-cli --cluster create … --cluster-yes`. `up` waits for cluster_state:ok on every node, prints the
# node URLs comma-separated (as --redis-cluster takes them) and writes them to target/redis-cluster/urls.
#
#   scripts/redis-cluster.sh up [MASTERS [REPLICAS]]
#   scripts/redis-cluster.sh down
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/redis-common.sh
dir=$PWD/target/redis-cluster
free_pair() {
    python3 - <<'PY'
import socket
for _ in range(200):
    a = socket.socket(); a.bind(("127.0.0.1", 0)); port = a.getsockname()[1]
    if port > 55000:
        a.close(); continue
    b = socket.socket()
    try:
        b.bind(("127.0.0.1", port + 10000))
    except OSError:
        a.close(); continue
    b.close(); a.close(); print(port); break
PY
}
case "${1:-}" in
up)
    masters=${2:-3}
    replicas=${3:-0}
    [[ "$masters" =~ ^[0-9]+$ && "$masters" -ge 3 ]] || { echo "error: MASTERS must be a number ≥ 3 (Redis Cluster needs 3), got '$masters'" >&2; exit 2; }
    [[ "$replicas" =~ ^[0-9]+$ && "$replicas" -le 2 ]] || { echo "error: REPLICAS must be 0, 1 or 2, got '$replicas'" >&2; exit 2; }
    command -v redis-server >/dev/null && command -v redis-cli >/dev/null || {
        echo "error: redis-server and redis-cli are needed (apt-get install -y redis-server)" >&2
        exit 2
    }
    if [ -f "$dir/urls" ]; then
        echo "error: a cluster is up already ($(cat "$dir/urls")); scripts/redis-cluster.sh down first" >&2
        exit 2
    fi
    mkdir -p "$dir"
    redis_module_args
    nodes=()
    for _ in $(seq $((masters * (1 + replicas)))); do
        port=$(free_pair)
        mkdir -p "$dir/$port"
        start_redis "$port" "$dir/$port" \
            --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 2000
        nodes+=("127.0.0.1:$port")
    done
    redis-cli --cluster create "${nodes[@]}" --cluster-replicas "$replicas" --cluster-yes >"$dir/create.log" 2>&1 || {
        echo "error: redis-cli --cluster create failed; see $dir/create.log" >&2
        exit 1
    }
    for _ in $(seq 600); do
        ok=1
        for n in "${nodes[@]}"; do
            redis-cli -p "${n#*:}" cluster info 2>/dev/null | grep -q 'cluster_state:ok' || ok=0
        done
        [ "$ok" = 1 ] && break
        sleep 0.1
    done
    [ "$ok" = 1 ] || { echo "error: the cluster did not reach cluster_state:ok in 60 s" >&2; exit 1; }
    urls=$(printf 'redis://%s,' "${nodes[@]}")
    echo "${urls%,}" | tee "$dir/urls"
    ;;
down)
    for pid in "$dir"/*/redis.pid; do
        [ -f "$pid" ] && { kill "$(cat "$pid")" 2>/dev/null || true; }
    done
    rm -rf "$dir"
    ;;
*)
    echo "usage: scripts/redis-cluster.sh up [MASTERS [REPLICAS]] | down" >&2
    exit 2
    ;;
esac

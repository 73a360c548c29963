#!/usr/bin/env bash
# The client benchmarks (benches/bench.py) against the sandbox, run as a separate process with
# the benchmark documents (benches/fixture.py), and against a static nginx site serving the same
# documents; plus the Rust floor (benches/floor). Results go to stdout and BENCH_JSON (if set).
#
#   benches/run.sh [PYTHON] [bench.py options]      e.g. benches/run.sh .venv-bench/bin/python
#
# PYTHON must have the package (a release build: `make bench` installs one into .venv-bench)
# and the peers of the `bench` extra. nginx (Debian package `nginx`) is installed with apt-get
# when missing and we are root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
python=${1:-python}
shift || true

if ! command -v nginx >/dev/null; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null
    else
        echo "nginx is not installed (apt-get install nginx); benchmarking the sandbox only" >&2
    fi
fi

echo "# building the Rust floor and its blocking reference (release)" >&2
CARGO_TARGET_DIR="$root/target/bench-floor" cargo build -q --release \
    --manifest-path "$here/floor/Cargo.toml"
export BENCH_FLOOR="$root/target/bench-floor/release/bench-floor"
export BENCH_FLOOR_BLOCKING="$root/target/bench-floor/release/bench-floor-blocking"

work=$(mktemp -d)
chmod 755 "$work"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$python" "$here/fixture.py" "$work" "http://127.0.0.1:$port"

"$python" -m recurring_payments serve --resources "$work/sandbox.json" --journal-limit 100 \
    >"$work/serve.out" &
pids+=($!)
for _ in $(seq 100); do grep -q APP_SECRET "$work/serve.out" && break; sleep 0.1; done
eval "$(grep '^export ' "$work/serve.out")"
export BENCH_SANDBOX=$RECURRING_PAYMENTS_BASE_URL

if command -v nginx >/dev/null; then
    mkdir -p "$work/nginx"
    sed -e "s|@PORT@|$port|g" -e "s|@ROOT@|$work/site|g" -e "s|@TMP@|$work/nginx|g" \
        -e "s|@USER@|$(id -un)|g" -e "s|@PROFILE@|http://127.0.0.1:$port/alps/v1|g" \
        "$here/nginx.conf.in" >"$work/nginx.conf"
    nginx -c "$work/nginx.conf" -e stderr &
    pids+=($!)
    for _ in $(seq 50); do
        "$python" -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$port/')" \
            2>/dev/null && break
        sleep 0.1
    done
    export BENCH_NGINX="http://127.0.0.1:$port"
fi

"$python" "$here/bench.py" "$@"

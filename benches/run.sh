#!/usr/bin/env bash
# The client benchmarks (benches/bench.py) against the sandbox, run as a separate process with
# the benchmark documents (benches/fixture.py), and against a static nginx site serving the same
# documents over HTTP and over HTTPS (a throw-away CA made with openssl); plus the Rust floors
# (benches/floor: reqwest, hyper-util, ureq, and a blocking socket). Results go to stdout (and
# to a file with --json FILE).
#
#   benches/run.sh [PYTHON] [bench.py options]      e.g. benches/run.sh .venv-bench/bin/python
#   BENCH_NO_FLOOR=1 benches/run.sh PYTHON --quick   a smoke run of every peer, no Rust build
#
# PYTHON must have the package (a release build: `make bench` installs one into .venv-bench)
# and the peers of the `bench` extra. nginx (Debian package `nginx`) is installed with apt-get
# when missing and we are root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
python=${1:-python}
shift || true

# niquests depends on urllib3-future, whose wheel installs a .pth that copies itself over
# urllib3 at each start of the interpreter: requests and the urllib3 peer would then measure
# urllib3-future. Reinstalled without that override (from its sdist), niquests uses
# urllib3_future and everything else the real urllib3.
purelib=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
if [ -e "$purelib/urllib3_future.pth" ]; then
    echo "# urllib3-future overrides urllib3: reinstalling both without the override" >&2
    URLLIB3_NO_OVERRIDE=1 "$python" -m pip install -q --force-reinstall --no-deps \
        --no-binary urllib3-future urllib3-future urllib3
fi
# The module imported as urllib3 must be the distribution of that name.
"$python" "$here/peers_check.py"

if ! command -v nginx >/dev/null; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null
    else
        echo "nginx is not installed (apt-get install nginx); benchmarking the sandbox only" >&2
    fi
fi

# BENCH_NO_FLOOR=1: no Rust floor (a smoke run that should not build it in release).
if [ -z "${BENCH_NO_FLOOR:-}" ]; then
    echo "# building the Rust floors (release)" >&2
    CARGO_TARGET_DIR="$root/target/bench-floor" cargo build -q --release \
        --manifest-path "$here/floor/Cargo.toml"
    export BENCH_FLOOR="$root/target/bench-floor/release/bench-floor"
    export BENCH_FLOOR_HYPER="$root/target/bench-floor/release/bench-floor-hyper"
    export BENCH_FLOOR_UREQ="$root/target/bench-floor/release/bench-floor-ureq"
    export BENCH_FLOOR_BLOCKING="$root/target/bench-floor/release/bench-floor-blocking"
fi

work=$(mktemp -d)
chmod 755 "$work"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

free_port() {
    "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
port=$(free_port)
tls_port=$(free_port)
"$python" "$here/fixture.py" "$work" "http://127.0.0.1:$port"
# The same documents for the HTTPS server: only the entry point's absolute hrefs differ.
"$python" "$here/fixture.py" "$work/tls" "https://127.0.0.1:$tls_port"

# A CA and a certificate for 127.0.0.1 that it signs (rustls refuses a CA as the server's own).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -keyout "$work/ca.key" -out "$work/ca.pem" -subj /CN=bench-ca \
    -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
printf '%s\n' subjectAltName=IP:127.0.0.1 subjectKeyIdentifier=hash \
    authorityKeyIdentifier=keyid,issuer basicConstraints=critical,CA:FALSE \
    keyUsage=critical,digitalSignature extendedKeyUsage=serverAuth >"$work/server.ext"
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=127.0.0.1 \
    -keyout "$work/server.key" -out "$work/server.csr" 2>/dev/null
openssl x509 -req -in "$work/server.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" \
    -set_serial 1 -days 2 -extfile "$work/server.ext" -out "$work/server.pem" 2>/dev/null

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
        -e "s|@TLS_PORT@|$tls_port|g" -e "s|@TLS_ROOT@|$work/tls/site|g" \
        -e "s|@CERT@|$work/server.pem|g" -e "s|@KEY@|$work/server.key|g" \
        "$here/nginx.conf.in" >"$work/nginx.conf"
    nginx -c "$work/nginx.conf" -e stderr &
    pids+=($!)
    for _ in $(seq 50); do
        "$python" -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$port/')" \
            2>/dev/null && break
        sleep 0.1
    done
    export BENCH_NGINX="http://127.0.0.1:$port"
    export BENCH_NGINX_TLS="https://127.0.0.1:$tls_port" BENCH_CA="$work/ca.pem"
fi

"$python" "$here/bench.py" "$@"

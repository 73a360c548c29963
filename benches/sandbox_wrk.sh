#!/usr/bin/env bash
# Requests per second of the sandbox server on a static resource (the entry point, rendered
# once and cached), 32 keep-alive connections, measured with wrk (Debian package `wrk`).
#
#   benches/sandbox_wrk.sh [DURATION] [PYTHON]     e.g. benches/sandbox_wrk.sh 5s .venv/bin/python
#
# Build the extension in release mode first (`maturin develop --release`): a debug build
# measures the debug build. The server runs in its own process (`serve --demo`), as it does
# when a client benchmark uses it.
set -euo pipefail

duration=${1:-5s}
python=${2:-python}
# Installed with apt-get when missing and we are root, as benches/run.sh does nginx.
if ! command -v wrk >/dev/null && [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
fi
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 1; }

out=$(mktemp)
"$python" -m recurring_payments serve --demo >"$out" &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server 2>/dev/null; rm -f "$out"' EXIT
for _ in $(seq 100); do grep -q APP_SECRET "$out" && break; sleep 0.1; done
eval "$(grep '^export ' "$out")"

token=$("$python" - <<'PY'
import base64, json, os, urllib.request
env = lambda name: os.environ["RECURRING_PAYMENTS_" + name]
basic = base64.b64encode(f"{env('APP_NAME')}:{env('APP_SECRET')}".encode()).decode()
request = urllib.request.Request(
    env("BASE_URL") + "/oauth/token",
    data=b"grant_type=client_credentials&scope=api",
    headers={
        "Accept": "application/json",
        "Authorization": "Basic " + basic,
        "Content-Type": "application/x-www-form-urlencoded",
    },
)
print(json.load(urllib.request.urlopen(request))["access_token"])
PY
)

accept="Accept: application/hal+json; profile=\"$RECURRING_PAYMENTS_PROFILE\""
# One checked request first: a benchmark of 401s or 406s would be meaningless.
"$python" - "$RECURRING_PAYMENTS_BASE_URL/" "$accept" "$token" <<'PY'
import sys, urllib.request
url, accept, token = sys.argv[1:]
name, _, value = accept.partition(": ")
urllib.request.urlopen(urllib.request.Request(url, headers={name: value, "Authorization": "Bearer " + token}))
PY
wrk -t2 -c32 -d"$duration" --latency -H "$accept" -H "Authorization: Bearer $token" \
    "$RECURRING_PAYMENTS_BASE_URL/"

#!/usr/bin/env bash
# Instruction counts per operation of our client's workloads (BENCHMARKS.md, "Where the time
# goes"): each workload of benches/profile.py runs under callgrind N times and 0 times against
# the sandbox (a separate process, so its instructions are not counted), and
# benches/callgrind_diff.py prints the difference per operation, by function and component;
# then benches/anatomy.py times the steps of a follow by wall clock.
#
#   benches/profile.sh PYTHON [WORKLOAD...]     e.g. benches/profile.sh .venv/bin/python follow
#
# Use a build with symbols: `make dev` (profile `quick`); the release build is stripped.
# Needs valgrind (Debian package `valgrind`). Output also goes to target/profile/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
python=${1:?usage: benches/profile.sh PYTHON [WORKLOAD...]}
shift
workloads=("${@:-follow mandates wide wide-all export async}")
read -r -a workloads <<<"${workloads[*]}"
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }

out="$root/target/profile"
mkdir -p "$out"
work=$(mktemp -d)
server=""
cleanup() {
    [ -n "$server" ] && { kill -TERM "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; }
    rm -rf "$work"
}
trap cleanup EXIT

"$python" "$here/fixture.py" "$work" "http://127.0.0.1:9"
"$python" -m recurring_payments serve --resources "$work/sandbox.json" --journal-limit 100 \
    >"$work/serve.out" &
server=$!
for _ in $(seq 100); do grep -q APP_SECRET "$work/serve.out" && break; sleep 0.1; done
eval "$(grep '^export ' "$work/serve.out")"
BENCH_CHILD_SERVER=$("$python" -c 'import json, os
e = os.environ
p = "RECURRING_PAYMENTS_"
print(json.dumps(["sandbox", e[p + "BASE_URL"], e[p + "PROFILE"], [e[p + "APP_NAME"], e[p + "APP_SECRET"]]]))')
export BENCH_CHILD_SERVER

for workload in "${workloads[@]}"; do
    case $workload in
        *follow | *async) n=2048 ;;
        *) n=5 ;;
    esac
    for count in 0 "$n"; do
        # One hash seed for both runs: str hashes decide dict layouts, and so what each lookup
        # costs; a seed per process moved a follow's count by about 2k instructions.
        PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file="$out/$workload-$count.cg" \
            "$python" "$here/profile.py" "$workload" "$count" >"$out/$workload-$count.log" 2>&1
    done
    echo "== $workload: callgrind, per operation ($n operations minus none)"
    python3 "$here/callgrind_diff.py" "$out/$workload-0.cg" "$out/$workload-$n.cg" "$n" \
        | tee "$out/$workload.txt"
done
echo "== the steps of a warm follow, by wall clock (µs, medians)"
[ -n "${PROFILE_NO_ANATOMY:-}" ] || "$python" "$here/anatomy.py" 9 2000

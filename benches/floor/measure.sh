#!/usr/bin/env bash
# The floors' numbers in one sitting (BENCHMARKS.md, "Instructions per follow"): every floor of
# benches/floor, and our client when PYTHON is given, doing the benchmark's follow against a
# static nginx site over HTTP and over HTTPS (a throw-away CA, as benches/run.sh makes it):
#
# 1. instructions per follow under callgrind: N follows minus none (start-up, the entry point
#    and the warm-up cancel out); nginx runs in its own process, not counted, and neither is the
#    kernel's share (socket I/O, system calls);
# 2. system calls per follow (strace -f -c, N follows minus none), when strace is installed:
#    the kernel's share, which callgrind does not count;
# 3. µs per follow on one vCPU: nginx and every program under `taskset -c 0`, ROUNDS rounds,
#    each program once a round (N follows in a fresh process, in rotated order), medians.
#
#   benches/floor/measure.sh [PYTHON] [ROUNDS]      e.g. benches/floor/measure.sh .venv/bin/python
#
# FLOOR_ONLY=instructions, syscalls or times runs one of the three; FLOOR_CG_FOLLOWS (2048) and
# FLOOR_TIMED_FOLLOWS (2000) set N.
# PYTHON must have the package (`make dev`: its `quick` build, as benches/profile.sh counts
# ours). Needs valgrind, nginx, openssl and taskset (Debian: valgrind nginx openssl util-linux),
# and strace for the system calls.
# Results go to stdout and target/profile/floors/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
benches=$(dirname "$here")
root=$(dirname "$benches")
python=${1:-}
# absolute, not resolved (a venv's python is a symbolic link)
[ -n "$python" ] && python="$(cd "$(dirname "$python")" && pwd)/$(basename "$python")"
rounds=${2:-7}
cg_follows=${FLOOR_CG_FOLLOWS:-2048}
timed_follows=${FLOOR_TIMED_FOLLOWS:-2000}
for tool in valgrind nginx openssl taskset; do
    command -v "$tool" >/dev/null || { echo "$tool is not installed" >&2; exit 1; }
done

echo "# building the floors (release)" >&2
CARGO_TARGET_DIR="$root/target/bench-floor" cargo build -q --release \
    --manifest-path "$here/Cargo.toml"
bin="$root/target/bench-floor/release"
# name, program; the blocking reference speaks plain HTTP only.
floors=(reqwest:bench-floor hyper-util:bench-floor-hyper ureq:bench-floor-ureq
    blocking-socket:bench-floor-blocking)

out="$root/target/profile/floors"
mkdir -p "$out"
work=$(mktemp -d)
chmod 755 "$work"
nginx_pid=""
cleanup() {
    if [ -n "$nginx_pid" ]; then
        kill -TERM "$nginx_pid" 2>/dev/null || true
        wait "$nginx_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
port=$(free_port)
tls_port=$(free_port)
python3 "$benches/fixture.py" "$work" "http://127.0.0.1:$port"
python3 "$benches/fixture.py" "$work/tls" "https://127.0.0.1:$tls_port"
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

profile="http://127.0.0.1:$port/alps/v1"
mkdir -p "$work/nginx"
sed -e "s|@PORT@|$port|g" -e "s|@ROOT@|$work/site|g" -e "s|@TMP@|$work/nginx|g" \
    -e "s|@USER@|$(id -un)|g" -e "s|@PROFILE@|$profile|g" \
    -e "s|@TLS_PORT@|$tls_port|g" -e "s|@TLS_ROOT@|$work/tls/site|g" \
    -e "s|@CERT@|$work/server.pem|g" -e "s|@KEY@|$work/server.key|g" \
    "$benches/nginx.conf.in" >"$work/nginx.conf"
taskset -c 0 nginx -c "$work/nginx.conf" -e stderr &
nginx_pid=$!
for _ in $(seq 50); do
    python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$port/')" 2>/dev/null && break
    sleep 0.1
done
token=nginx-bench-token  # nginx checks no token
# scheme -> base URL and the extra argument (the CA bundle) of an HTTPS run
declare -A base=([http]="http://127.0.0.1:$port" [https]="https://127.0.0.1:$tls_port")
declare -A ca=([http]="" [https]="$work/ca.pem")

# The environment (VAR=VALUE words) and the command of program NAME over SCHEME for N follows
# (no command: it does not speak SCHEME). No spaces in either: they are split into words.
env_of() {
    local name=$1 scheme=$2
    if [ "$name" = ours ]; then
        # One hash seed for every run (benches/profile.sh says why).
        printf 'PYTHONHASHSEED=0 BENCH_CHILD_SERVER=["nginx","%s","%s",["bench","bench"]%s]\n' \
            "${base[$scheme]}" "$profile" "${ca[$scheme]:+,\"${ca[$scheme]}\"}"
    fi
}
command_of() {
    local name=$1 scheme=$2 n=$3
    if [ "$name" = ours ]; then
        echo "$python $here/ours.py $n"
        return
    fi
    [ "${name%%:*}" = blocking-socket ] && [ "$scheme" = https ] && return
    local program=${name#*:}
    echo "$bin/$program ${base[$scheme]} $profile $token $n ${ca[$scheme]}"
}

programs=("${floors[@]}")
[ -n "$python" ] && programs+=(ours)
label() { echo "${1%%:*}"; }

# One table of a count per follow: for each program and scheme, `run_under TOOL_OUT CMD...` runs
# the program for 0 and for N follows (TOOL_OUT: the tool's output file) and `count_of FILE`
# reads the total; the difference over N cancels start-up, the entry point and the warm-up.
per_follow_table() {
    local run_under=$1 count_of=$2 ext=$3
    printf '%-18s %12s %12s\n' program http https
    for name in "${programs[@]}"; do
        local row prefix
        row=$(printf '%-18s' "$(label "$name")")
        for scheme in http https; do
            if [ -z "$(command_of "$name" "$scheme" 0)" ]; then
                row+=$(printf ' %12s' -)
                continue
            fi
            prefix="$out/$(label "$name")-$scheme"
            for run in 0 n; do
                local n=0
                [ $run = n ] && n=$cg_follows
                # shellcheck disable=SC2046  # the environment and command are words by design
                (
                    [ -n "$(env_of "$name" "$scheme")" ] && export $(env_of "$name" "$scheme")
                    "$run_under" "$prefix-$run.$ext" $(command_of "$name" "$scheme" "$n")
                )
            done
            row+=$(printf ' %12s' "$(python3 -c "print(f'{($($count_of "$prefix-n.$ext") - \
                $($count_of "$prefix-0.$ext")) / $cg_follows:.${4:-0}f}')")")
        done
        echo "$row"
    done
}

under_callgrind() {
    local file=$1
    shift
    valgrind --tool=callgrind --callgrind-out-file="$file" "$@" >"${file%.cg}.log" 2>&1
}
instructions_in() { awk '/^(summary|totals):/ { print $2; exit }' "$1"; }
under_strace() {
    local file=$1
    shift
    strace -f -c -o "$file" "$@" >/dev/null 2>&1
}
calls_in() { awk '$NF == "total" { print $4; exit }' "$1"; }

if [ "${FLOOR_ONLY:-instructions}" = instructions ]; then
    echo "== instructions per follow (callgrind, $cg_follows follows minus none)"
    per_follow_table under_callgrind instructions_in cg | tee "$out/instructions.txt"
fi

# The kernel's share that callgrind does not see, as a count that load does not move either.
if [ "${FLOOR_ONLY:-syscalls}" = syscalls ] && command -v strace >/dev/null; then
    echo "== system calls per follow (strace -f -c, $cg_follows follows minus none)"
    per_follow_table under_strace calls_in strace 1 | tee "$out/syscalls.txt"
fi
[ "${FLOOR_ONLY:-times}" = times ] || exit 0

echo "== µs per follow, one vCPU (taskset -c 0; median of $rounds rounds of $timed_follows follows)"
results="$work/times"
: >"$results"
for r in $(seq 0 $((rounds - 1))); do
    count=${#programs[@]}
    for k in $(seq 0 $((count - 1))); do
        name=${programs[$(((k + r) % count))]}  # rotated: each program runs first in turn
        for scheme in http https; do
            cmd=$(command_of "$name" "$scheme" "$timed_follows")
            [ -z "$cmd" ] && continue
            # shellcheck disable=SC2086,SC2046
            us=$(env $(env_of "$name" "$scheme") taskset -c 0 $cmd)
            echo "$r $(label "$name") $scheme $us" >>"$results"
        done
    done
done
python3 - "$results" <<'PY' | tee "$out/times.txt"
import statistics, sys
times, by_round = {}, {}
for line in open(sys.argv[1]):
    r, name, scheme, us = line.split()
    times.setdefault(name, {}).setdefault(scheme, []).append(float(us))
    by_round[(int(r), name, scheme)] = float(us)
# Ours' time over each program's in the same round (its load), median over the rounds.
def ratio(name, scheme):
    pairs = [(us, by_round.get((r, "ours", scheme))) for (r, n, s), us in by_round.items()
             if n == name and s == scheme]
    ratios = [o / us for us, o in pairs if o]
    return f" ({statistics.median(ratios):.2f})" if ratios and name != "ours" else ""
print(f"{'program':18} {'http':>30} {'https':>30}")
for name, by_scheme in times.items():
    cells = []
    for scheme in ("http", "https"):
        values = by_scheme.get(scheme)
        cells.append(
            f"{statistics.median(values):7.1f} [{min(values):.1f}..{max(values):.1f}]"
            + ratio(name, scheme) if values else "-"
        )
    print(f"{name:18} {cells[0]:>30} {cells[1]:>30}")
print("(in brackets: the range over the rounds; in parentheses, with PYTHON: ours' time over the")
print(" program's in the same round, median over the rounds)")
PY
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"

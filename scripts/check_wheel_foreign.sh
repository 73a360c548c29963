#!/usr/bin/env bash
# Install a wheel of dist/ where this machine's own Pythons cannot: in a Debian root filesystem
# (scripts/rootfs.sh), in a fresh venv, with no Rust toolchain, then run the demo and tests
# against the installed package (RP_WHEEL_CHECK=1: tests/package/test_wheel.py fails if they
# import anything else).
#
#   scripts/check_wheel_foreign.sh arm64   # the manylinux aarch64 wheel, on Debian 12 arm64's
#                                          # CPython 3.11 under qemu-user: the demo and the
#                                          # client, token, HAL, sandbox and public-surface tests
#   scripts/check_wheel_foreign.sh sid     # the manylinux x86_64 wheel on Debian sid's CPython
#                                          # 3.14 and 3.15: the demo and the whole suite
#
# RP_FOREIGN_TESTS replaces the list of test paths (both modes), e.g. for a quick try.
# Under emulation a test runs 5-20 times slower, so the arm64 run is the subset above; its
# per-test timeout is raised. The musl x86_64 wheel runs on this machine, on a CPython built
# against musl: scripts/check_wheel_musl.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
ROOTS=${RP_ROOTFS_DIR:-/var/cache/recurring-payments/rootfs}

case ${1:-} in
    arm64)
        rootfs=arm64-bookworm
        platform=manylinux_2_17_aarch64
        pythons="3.11"
        tests=${RP_FOREIGN_TESTS:-"tests/client tests/hal tests/sandbox tests/cli/test_demo_cli.py
            tests/package/test_public_surface.py tests/package/test_wheel.py"}
        timeout=600
        extra="test"  # pip under emulation is slow: the test tools only
        ;;
    sid)
        rootfs=amd64-sid
        platform=manylinux_2_17_x86_64
        pythons="3.14 3.15"
        tests=${RP_FOREIGN_TESTS:-tests}
        timeout=60
        extra="dev"
        ;;
    *) sed -n '2,16p' "$0" >&2; exit 2 ;;
esac
wheels=(dist/*[-.]"$platform".whl)
[ -f "${wheels[0]}" ] || { echo "check_wheel_foreign: no $platform wheel in dist/ (make dist)" >&2; exit 1; }
wheel=$(basename "${wheels[0]}")

bash scripts/rootfs.sh build "$rootfs"

# The tests and what they read (not the Rust sources: nothing is built inside).
stage=$ROOTS/$rootfs/root/rp
rm -rf "$stage"
mkdir -p "$stage/dist"
git ls-files -co --exclude-standard -z -- . ':!crates' ':!vendor' ':!fuzz' \
    | xargs -0 cp --parents -t "$stage"
cp "dist/$wheel" "$stage/dist/"

# Run inside the rootfs, from /root/rp, per CPython: a fresh venv, the wheel with its extra,
# then the demo and the tests. When the `dev` extra does not install whole, its tools that
# have no wheel for a new CPython yet (nothing may be compiled) are named; their tests skip.
inner='
set -uo pipefail
wheel=$1 extra=$2 timeout=$3 tests=$4
shift 4
cd /root/rp
failed=()
for version in "$@"; do
    start=$SECONDS
    printf "\n--- CPython %s (%s), %s\n" "$version" "$(uname -m)" "$wheel"
    venv=/root/venv-$version
    rm -rf "$venv"
    python$version -m venv "$venv"
    pip() { "$venv/bin/python" -m pip install -q --only-binary=:all: "$@"; }
    if ! pip "dist/$wheel[$extra]" 2>/dev/null; then
        if ! pip "dist/$wheel[test]"; then failed+=("$version: install"); continue; fi
        for requirement in $("$venv/bin/python" -c "import tomllib
print(*tomllib.load(open(\"pyproject.toml\", \"rb\"))[\"project\"][\"optional-dependencies\"][\"$extra\"])"); do
            pip "$requirement" 2>/dev/null || echo "no wheel of $requirement for CPython $version"
        done
    fi
    export PATH=$venv/bin:$PATH RP_WHEEL_CHECK=1
    "$venv/bin/python" -c "import sys, recurring_payments as rp
print(f\"{sys.version.split()[0]}: recurring_payments {rp.__version__} from {rp._core.__file__}\")"
    recurring-payments demo >/tmp/demo.out 2>&1 && grep -q "120 mandates in all" /tmp/demo.out \
        || { cat /tmp/demo.out; failed+=("$version: demo"); }
    # shellcheck disable=SC2086
    python -m pytest -q -p no:cacheprovider -o timeout="$timeout" $tests \
        || failed+=("$version: tests")
    export PATH=${PATH#"$venv/bin:"}
    echo "CPython $version: $((SECONDS - start)) s"
done
if [ ${#failed[@]} -gt 0 ]; then
    printf "check_wheel_foreign FAILED: %s\n" "${failed[@]}" >&2
    exit 1
fi
'
# shellcheck disable=SC2086
bash scripts/rootfs.sh run "$rootfs" bash -c "$inner" inner "$wheel" "$extra" "$timeout" \
    "$(echo $tests)" $pythons
echo "check_wheel_foreign $1: $wheel works on CPython $pythons ($(uname -m) host)"

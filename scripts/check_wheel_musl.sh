#!/usr/bin/env bash
# Run the musllinux x86_64 wheel of dist/ on musl: a CPython built against musl
# (scripts/musl_python.sh) with Debian's musl as the C library, no Rust toolchain on PATH. The
# demo, then the client (tokens included), HAL, sandbox and public-surface tests against the
# installed package (RP_WHEEL_CHECK=1: tests/package/test_wheel.py fails if they import anything
# else, and checks the wheel's musllinux tag).
#
#   scripts/check_wheel_musl.sh
#
# That interpreter has no ssl module for pip, so this machine's pip installs the wheel and the
# `test` extra for it (--platform musllinux_1_2_x86_64, wheels only) into a fresh folder on its
# PYTHONPATH. RP_FOREIGN_TESTS replaces the list of test paths. The aarch64 musl wheel is built
# and audited by `make dist` but not run here: that would need this interpreter cross-built for
# aarch64 and the tests under qemu-user, beyond CI's time (docs/install.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
platform=musllinux_1_2_x86_64
tests=${RP_FOREIGN_TESTS:-"tests/client tests/hal tests/sandbox tests/cli/test_demo_cli.py
    tests/package/test_public_surface.py tests/package/test_wheel.py"}
pip_python=${RP_PIP_PYTHON:-.venv-dist/bin/python}

wheels=(dist/*-"$platform".whl)
[ -f "${wheels[0]}" ] || { echo "check_wheel_musl: no $platform wheel in dist/ (make dist)" >&2; exit 1; }
wheel=${wheels[0]}

python=$(bash scripts/musl_python.sh)
version=$("$python" -c 'import sys; print("{}.{}".format(*sys.version_info))')

site=$(mktemp -d)
trap 'rm -rf "$site"' EXIT
start=$SECONDS
"$pip_python" -m pip install -q --target "$site" --platform "$platform" --python-version "$version" \
    --implementation cp --only-binary=:all: "${wheel}[test]"

# A clean environment: no Rust on PATH, nothing of the host's Python but what is in $site.
run() {
    env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$HOME" LANG=C.UTF-8 TERM=dumb CI="${CI:-}" \
        PYTHONPATH="$site" PYTHONNOUSERSITE=1 PYTHONDONTWRITEBYTECODE=1 RP_WHEEL_CHECK=1 \
        "$python" "$@"
}
run -c "import sys, recurring_payments as rp
print(f'{sys.version.split()[0]} on musl: recurring_payments {rp.__version__} from {rp._core.__file__}')"
failed=()
demo=$(mktemp)
run -m recurring_payments demo >"$demo" 2>&1 && grep -q "120 mandates in all" "$demo" \
    || { cat "$demo"; failed+=(demo); }
rm -f "$demo"
# shellcheck disable=SC2086
run -m pytest -q -p no:cacheprovider $tests || failed+=(tests)
echo "musl CPython $version: $((SECONDS - start)) s"
if [ ${#failed[@]} -gt 0 ]; then
    echo "check_wheel_musl FAILED: ${failed[*]}" >&2
    exit 1
fi
echo "check_wheel_musl: $(basename "$wheel") works on musl CPython $version"

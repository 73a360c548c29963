#!/usr/bin/env bash
# Install the wheel into a fresh venv per CPython version, with no Rust toolchain on PATH, and
# run the tests against the installed package (tests/package/test_wheel.py fails if they import this
# source tree instead): on 3.10, the oldest, the demo and the client, HAL, sandbox and
# public-surface tests; the demo and the public-surface tests on 3.11, 3.12 and 3.13 (what fits
# in .ci/run's time; the whole suite runs on the wheel with 3.14 and 3.15). CPython 3.14 and 3.15, and the aarch64 wheel:
# scripts/check_wheel_foreign.sh.
#
#   scripts/check_wheel.sh [WHEEL]                 # default: dist/'s manylinux x86_64 wheel
#   RP_WHEEL_PYTHONS="3.12:full" scripts/check_wheel.sh
#
# Interpreters come from pyenv ($PYENV_ROOT/versions/X.Y.Z) or PATH (pythonX.Y). One that is
# missing FAILS the run, naming it: a supported version that was not tested is not supported.
# RP_WHEEL_PYTHONS narrows the list on purpose ("VERSION:MODE" words, MODE one of full, core
# and surface).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

wheels=(dist/*.manylinux_2_17_x86_64.whl)
wheel=$(realpath "${1:-${wheels[0]}}")
[ -f "$wheel" ] || { echo "check_wheel: no wheel (run 'make dist' first)" >&2; exit 1; }
plan=${RP_WHEEL_PYTHONS:-"3.10:core 3.11:surface 3.12:surface 3.13:surface"}

# PATH without cargo/rustc: the wheel must install and work where no Rust toolchain exists.
no_rust_path=
IFS=: read -ra dirs <<<"$PATH"
for dir in "${dirs[@]}"; do
    [ -x "$dir/cargo" ] || [ -x "$dir/rustc" ] || no_rust_path=${no_rust_path:+$no_rust_path:}$dir
done

find_python() {  # the newest CPython X.Y (not a free-threaded "t" build) from pyenv, else PATH
    local version=$1 candidate
    for candidate in $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/* 2>/dev/null | sort -rV); do
        if [[ $(basename "$candidate") =~ ^${version//./\\.}\.[0-9]+$ ]] \
            && [ -x "$candidate/bin/python" ]; then
            echo "$candidate/bin/python"
            return 0
        fi
    done
    candidate=$(command -v "python$version") || return 1
    # A pyenv shim for a version that is not installed fails here.
    "$candidate" -c "import sys; sys.exit(f'{sys.version_info[0]}.{sys.version_info[1]}' != '$version')" \
        2>/dev/null && echo "$candidate"
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=()
echo "wheel: $(basename "$wheel") ($(du -k "$wheel" | cut -f1) kB)"

for item in $plan; do
    version=${item%%:*}
    mode=${item#*:}
    start=$SECONDS
    printf '\n--- CPython %s: %s\n' "$version" "$mode"
    if ! python=$(find_python "$version"); then
        echo "FAIL: CPython $version not found (pyenv versions/$version.* or python$version on" \
            "PATH); install it, or leave it out with RP_WHEEL_PYTHONS" >&2
        failed+=("$version: interpreter missing")
        continue
    fi
    venv=$work/venv-$version
    extra=$([ "$mode" = full ] && echo dev || echo test)
    run() { env PATH="$venv/bin:$no_rust_path" VIRTUAL_ENV="$venv" RP_WHEEL_CHECK=1 "$@"; }
    # The venv's own pip, as a user's would be; wheels only: nothing may be compiled.
    if ! "$python" -m venv "$venv" \
        || ! run python -m pip install -q --disable-pip-version-check --only-binary=:all: \
            "$wheel[$extra]"; then
        failed+=("$version: install")
        continue
    fi
    run python -c 'import sys, recurring_payments as rp
print(f"{sys.version.split()[0]}: recurring_payments {rp.__version__} from {rp._core.__file__}")'
    if [ "$mode" = full ]; then
        run python -m pytest -q -p no:cacheprovider || failed+=("$version: test suite")
    else
        run recurring-payments demo >"$work/demo.out" 2>&1 \
            && grep -q "120 mandates in all" "$work/demo.out" \
            || { cat "$work/demo.out"; failed+=("$version: demo"); }
        # shellcheck disable=SC2046
        run python -m pytest -q -p no:cacheprovider tests/package/test_wheel.py \
            tests/package/test_public_surface.py tests/cli/test_demo_cli.py \
            $([ "$mode" = core ] && echo tests/client tests/hal tests/sandbox) \
            || failed+=("$version: tests")
    fi
    echo "CPython $version: $((SECONDS - start)) s"
done

if [ ${#failed[@]} -gt 0 ]; then
    printf '\ncheck_wheel FAILED:\n' >&2
    printf '  %s\n' "${failed[@]}" >&2
    exit 1
fi
printf '\ncheck_wheel: the wheel works on %s\n' "$plan"

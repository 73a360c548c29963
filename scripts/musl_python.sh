#!/usr/bin/env bash
# A CPython that runs on musl, so that the musllinux x86_64 wheel can be run here
# (scripts/check_wheel_musl.sh):
#
#   scripts/musl_python.sh        # build it when missing; prints the interpreter's path
#
# No registry this machine reaches ships one (Alpine's packages and python.org are out of reach;
# PyPI and Debian carry no musl interpreter), so it is compiled: upstream CPython 3.11, zlib
# (hypothesis imports it) and libffi (ctypes, which OpenTelemetry's SDK imports) from the orig
# tarballs of Debian 12's python3.11, zlib and libffi source packages (`apt-get source`, through
# a deb-src list of its own: the system's apt sources are left alone), with Debian's musl-gcc
# (musl-tools) and the kernel headers of linux-libc-dev; the two libraries are static, linked
# into CPython's modules. At run time the C library is Debian's musl (/lib/ld-musl-x86_64.so.1,
# musl 1.2.3: what a musllinux_1_2 wheel may ask for). Modules that need another library (ssl,
# sqlite3, bz2, lzma, ...) are left out: the tests run with it need none, and the check
# installs the wheel with this machine's pip. The interpreter runs from its build tree (no
# `make install`). Cached under $RP_MUSL_PYTHON_DIR (default
# /var/cache/recurring-payments/musl-python) while this recipe is unchanged; a build takes 4 to
# 6 minutes on two cores (more when they are busy). Needs root (apt-get).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
DIR=${RP_MUSL_PYTHON_DIR:-/var/cache/recurring-payments/musl-python}
MIRROR=${RP_DEBIAN_MIRROR:-http://deb.debian.org/debian}
RECIPE="python3.11 zlib libffi -O2 $(sha256sum "$0" | cut -c1-16)"
python=$DIR/build/python

if [ -x "$python" ] && [ "$(cat "$DIR/.recipe" 2>/dev/null)" = "$RECIPE" ]; then
    echo "$python"
    exit 0
fi

# musl: the loader and libc; musl-dev and musl-tools: headers and musl-gcc. make and gcc are
# there already wherever Rust builds.
missing=()
for package in musl musl-dev musl-tools linux-libc-dev make; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq >&2 && apt-get install -y -qq "${missing[@]}" >/dev/null
fi

rm -rf "$DIR"
mkdir -p "$DIR/apt/lists/partial" "$DIR/src"
echo "deb-src $MIRROR bookworm main" >"$DIR/apt/sources.list"
apt_options=(-o "Dir::Etc::SourceList=$DIR/apt/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
    -o "Dir::State::Lists=$DIR/apt/lists" -o "APT::Sandbox::User=root")
{
    apt-get "${apt_options[@]}" update -qq
    cd "$DIR/src" && apt-get "${apt_options[@]}" source --download-only -qq python3.11 zlib libffi
} >&2
for package in python3.11:build zlib:zlib-src libffi:libffi-src; do
    mkdir -p "$DIR/${package#*:}"
    tar -xf "$(ls "$DIR"/src/"${package%:*}"_*.orig.tar.*)" -C "$DIR/${package#*:}" \
        --strip-components=1
done

# musl-gcc searches only musl's headers: the wrapper adds the kernel's (linux/, asm/) after them
# (in the compiler's command: setup.py, which builds most modules, ignores configure's CPPFLAGS).
# Debian's musl-gcc answers -print-multiarch with glibc's triplet, which CPython's configure
# compares with musl's, and from which setup.py takes glibc's headers and libraries: the wrapper
# answers musl's. No pkg-config either: the libraries it knows of are built for glibc.
arch=$(uname -m)
mkdir -p "$DIR/kernel-headers"
ln -s /usr/include/linux /usr/include/asm-generic "$DIR/kernel-headers/"
ln -s "/usr/include/$arch-linux-gnu/asm" "$DIR/kernel-headers/asm"
cat >"$DIR/cc" <<EOF
#!/bin/sh
case "\$1" in -print-multiarch | --print-multiarch) echo $arch-linux-musl; exit 0 ;; esac
exec musl-gcc -idirafter "$DIR/kernel-headers" "\$@"
EOF
chmod +x "$DIR/cc"

start=$SECONDS
{
    cd "$DIR/zlib-src"
    CC="$DIR/cc" CFLAGS="-O2 -fPIC" ./configure --static --prefix="$DIR/deps"
    make -s -j"$(nproc)" install
    cd "$DIR/libffi-src"
    ./configure -q CC="$DIR/cc" CFLAGS="-O2 -fPIC" --disable-shared --disable-docs \
        --prefix="$DIR/deps" --libdir="$DIR/deps/lib"
    make -s -j"$(nproc)" install
    cd "$DIR/build"
    ./configure -q --without-ensurepip --disable-test-modules CC="$DIR/cc" \
        OPT="-DNDEBUG -fwrapv -O2" PKG_CONFIG=false CPPFLAGS="-I$DIR/deps/include" \
        LDFLAGS="-L$DIR/deps/lib"
    make -s -j"$(nproc)"
} >"$DIR/build.log" 2>&1 || { tail -40 "$DIR/build.log" >&2; exit 1; }
"$python" -c "import zlib, ctypes, socket, select, asyncio, _posixsubprocess" \
    || { tail -40 "$DIR/build.log" >&2; exit 1; }
readelf -l "$python" | grep -q "interpreter: /lib/ld-musl-$arch.so.1" \
    || { echo "musl_python: $python is not linked against musl" >&2; exit 1; }
"$python" -c "import sys
print(f'musl CPython {sys.version.split()[0]} built in $((SECONDS - start)) s', file=sys.stderr)"
echo "$RECIPE" >"$DIR/.recipe"
cd "$root"
echo "$python"

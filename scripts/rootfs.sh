#!/usr/bin/env bash
# Debian root filesystems in which CI installs the wheels on interpreters or CPUs this machine
# does not have, without a Rust toolchain (scripts/check_wheel_foreign.sh uses them):
#
#   scripts/rootfs.sh build NAME          # make it if missing (debootstrap; a few minutes)
#   scripts/rootfs.sh run NAME CMD...     # run CMD inside it (chroot), as root
#
# NAME is one of
#   arm64-bookworm   Debian 12 for arm64 (aarch64) with its python3 (3.11), run by qemu-user
#   amd64-sid        Debian sid with python3.14 and python3.15
# Both have redis-server and openssl for the fleet and TLS tests. They live under
# $RP_ROOTFS_DIR (default /var/cache/recurring-payments/rootfs) and are reused while their
# package list is unchanged; a fresh machine builds them (debootstrap and qemu-user-static are
# installed with apt-get when missing). Needs root.
#
# Inside, the environment is made anew (env -i): the host's PIP_FIND_LINKS and the like point at
# folders that do not exist there. The rootfs gets the host's CA bundle (pip behind a proxy that
# re-signs TLS needs it), /etc/hosts (or `localhost` does not resolve) and /etc/resolv.conf.
# /proc, /dev, /dev/pts, /dev/shm (multiprocessing's semaphores) and /sys are bind-mounted for
# the run and unmounted after it.
set -euo pipefail

MIRROR=${RP_DEBIAN_MIRROR:-http://deb.debian.org/debian}
ROOTS=${RP_ROOTFS_DIR:-/var/cache/recurring-payments/rootfs}
COMMON=ca-certificates,redis-server,openssl,procps

spec() {  # NAME -> "ARCH SUITE PACKAGES"
    case $1 in
        arm64-bookworm) echo "arm64 bookworm $COMMON,python3,python3-venv" ;;
        amd64-sid) echo "amd64 sid $COMMON,python3.14,python3.14-venv,python3.15,python3.15-venv" ;;
        *) echo "rootfs: unknown NAME '$1' (arm64-bookworm, amd64-sid)" >&2; return 1 ;;
    esac
}

need() {  # install a Debian package providing command $1 when it is missing
    command -v "$1" >/dev/null && return 0
    apt-get update -qq && apt-get install -y -qq "$2" >/dev/null
}

# qemu-user runs arm64 programs through binfmt_misc; the F flag opens the (static) emulator now,
# so it also works inside the chroot, where no qemu binary exists.
register_qemu() {
    need qemu-aarch64-static qemu-user-static
    local dir=/proc/sys/fs/binfmt_misc
    [ -e $dir/register ] || mount -t binfmt_misc binfmt_misc $dir
    [ -e $dir/qemu-aarch64 ] && return 0
    local magic='\x7f\x45\x4c\x46\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
    local mask='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'
    printf ':qemu-aarch64:M::%s:%s:%s:F\n' "$magic" "$mask" "$(command -v qemu-aarch64-static)" \
        >$dir/register
}

build() {
    local name=$1 arch suite packages root stamp
    read -r arch suite packages <<<"$(spec "$name")"
    root=$ROOTS/$name
    stamp=$root/.rp-rootfs
    [ "$arch" = amd64 ] || register_qemu
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$packages" ]; then
        echo "rootfs $name: reused ($root)"
        return 0
    fi
    need debootstrap debootstrap
    # A run that was killed may have left its mounts: never delete through them. (None is the
    # usual case, where grep exits 1: not a failure.)
    { grep -o " $root/[^ ]*" /proc/mounts || true; } | sort -r | xargs -r -n1 umount -l
    rm -rf --one-file-system "$root"
    mkdir -p "$ROOTS"
    echo "rootfs $name: debootstrap $suite ($arch) into $root"
    debootstrap --variant=minbase --arch="$arch" --include="$packages" "$suite" "$root" \
        "$MIRROR" >"$ROOTS/$name.log" 2>&1 \
        || { tail -30 "$ROOTS/$name.log" >&2; exit 1; }
    # The package cache is only needed once (about 100 MB).
    rm -rf "$root"/var/cache/apt/archives/*.deb
    echo "$packages" >"$stamp"
}

run() {
    local name=$1 root=$ROOTS/$1 mounted=()
    shift
    [ -f "$root/.rp-rootfs" ] || { echo "rootfs $name: not built (rootfs.sh build $name)" >&2; exit 1; }
    [ "$name" = amd64-sid ] || register_qemu
    cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
    cp /etc/hosts /etc/resolv.conf "$root/etc/"
    unmount() {
        local i
        for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" || true; done
    }
    trap unmount EXIT
    local fs
    for fs in proc sys dev dev/pts dev/shm; do
        mkdir -p "$root/$fs"
        case $fs in
            proc) mount -t proc proc "$root/proc" ;;
            *) mount --bind "/$fs" "$root/$fs" ;;
        esac
        mounted+=("$root/$fs")
    done
    local status=0
    env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 TERM=dumb \
        CI="${CI:-}" SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
        PIP_CERT=/etc/ssl/certs/ca-certificates.crt PIP_DISABLE_PIP_VERSION_CHECK=1 \
        PIP_DEFAULT_TIMEOUT=180 PYTHONDONTWRITEBYTECODE=1 \
        "$(command -v chroot)" "$root" "$@" || status=$?
    unmount
    trap - EXIT
    return $status
}

case ${1:-} in
    build) build "$2" ;;
    run) run "${@:2}" ;;
    *) sed -n '2,9p' "$0" >&2; exit 2 ;;
esac

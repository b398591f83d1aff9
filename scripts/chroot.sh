#!/usr/bin/env bash
# Debian roots for the PostgreSQL majors Debian 12 does not ship. Each root is
# made once with debootstrap from Debian's archive, kept under a cache
# directory and reused; packages are installed in it with its own apt-get.
# Commands run in it as root, in a mount and PID namespace of their own, so the
# mounts (/proc, /dev, /dev/shm) and every process left behind (a server a test
# forgot to stop) go when the command ends, however it ends. Needs root.
#
#   scripts/chroot.sh create ROOT         make the root if it is missing; print its directory
#   scripts/chroot.sh sync ROOT           copy this source tree to /src/claimqueue in the root
#   scripts/chroot.sh run ROOT CMD...     run CMD in the root (cwd /src/claimqueue if synced)
#   scripts/chroot.sh offline ROOT CMD... the same with a network of its own (loopback only), so
#                                         the root's servers take any port without meeting the host's
#   scripts/chroot.sh remove ROOT
#
# ROOT is a PostgreSQL major (15: bookworm, 17: trixie, 18: sid) or "upgrade"
# (trixie with bookworm's archive added, for PostgreSQL 15 next to 17).
#   CLAIMQUEUE_CHROOTS   where roots are kept (default /var/cache/claimqueue-chroots)
#   DEBIAN_MIRROR        debootstrap's mirror (default: debootstrap's own)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cache=${CLAIMQUEUE_CHROOTS:-/var/cache/claimqueue-chroots}

die() { echo "chroot: $*" >&2; exit 1; }

[ $# -ge 2 ] || die "usage: $0 create|sync|run|remove ROOT [CMD...]"
cmd=$1
name=$2
shift 2

case "$name" in
    15) suite=bookworm ;;
    17) suite=trixie ;;
    18) suite=sid ;;
    upgrade) suite=trixie ;;
    *) die "no Debian suite known for '$name' (15, 17, 18 or upgrade)" ;;
esac
root="$cache/$name"

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot, mounts)"

create() {
    [ -f "$root/.claimqueue-root" ] && return 0
    # debootstrap makes the root; ip (iproute2) brings up the tests' loopback.
    local need=()
    command -v debootstrap >/dev/null || need+=(debootstrap)
    command -v ip >/dev/null || need+=(iproute2)
    if [ ${#need[@]} -gt 0 ]; then
        echo "chroot: installing ${need[*]}" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null 2>&1 ||
            { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null; }
    fi
    mkdir -p "$cache"
    rm -rf "$root.new"
    echo "chroot: debootstrap $suite into $root" >&2
    local t0=$SECONDS
    debootstrap --variant=minbase "$suite" "$root.new" ${DEBIAN_MIRROR:-} >"$cache/$name.debootstrap.log" 2>&1 ||
        { tail -20 "$cache/$name.debootstrap.log"; die "debootstrap $suite failed"; }
    # Unstable's Release file can be past its Valid-Until date.
    if [ "$suite" = sid ]; then
        echo 'Acquire::Check-Valid-Until "false";' >"$root.new/etc/apt/apt.conf.d/90claimqueue-valid-until"
    fi
    # The upgrade root: trixie (PostgreSQL 17) plus bookworm's archive for
    # postgresql-15 and the libraries it was built against. Trixie's own
    # packages keep precedence; bookworm's are taken only where trixie has none.
    if [ "$name" = upgrade ]; then
        sed 's/ trixie / bookworm /' "$root.new/etc/apt/sources.list" >"$root.new/etc/apt/sources.list.d/bookworm.list"
        printf 'Package: *\nPin: release n=bookworm\nPin-Priority: 100\n' >"$root.new/etc/apt/preferences.d/bookworm"
    fi
    # No daemons started by package scripts: the tests start their own servers.
    printf '#!/bin/sh\nexit 101\n' >"$root.new/usr/sbin/policy-rc.d"
    chmod 755 "$root.new/usr/sbin/policy-rc.d"
    echo "$suite" >"$root.new/.claimqueue-root"
    mv "$root.new" "$root"
    echo "chroot: $name made in $((SECONDS - t0)) s" >&2
}

sync_tree() {
    local dest="$root/src/claimqueue"
    rm -rf "$dest"
    mkdir -p "$dest"
    # The tracked and new files, not the host's build products (PGXS builds in
    # the tree, and the host's objects are for another major).
    if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
        (cd "$src" && git ls-files -z --cached --others --exclude-standard |
            while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
            tar --null -T - -cf -) | tar -xf - -C "$dest"
    else
        tar -C "$src" --exclude=./build --exclude='*.o' --exclude='*.so' --exclude=.deps \
            --exclude=node_modules --exclude=results --exclude=output_iso -cf - . | tar -xf - -C "$dest"
    fi
}

run_in() {
    local net=$1
    shift
    [ -f "$root/.claimqueue-root" ] || die "no root $root (run: $0 create $name)"
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    [ -s "$root/etc/hosts" ] || printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
    local wd=/ ca=
    [ -d "$root/src/claimqueue" ] && wd=/src/claimqueue
    # Behind a TLS-inspecting proxy the host trusts a CA that the root's
    # ca-certificates lacks: node and npm in the root (the node tests fetch
    # node-postgres) trust the host's bundle.
    # (A new root has no /etc/ssl/certs until ca-certificates is installed.)
    if [ -s /etc/ssl/certs/ca-certificates.crt ]; then
        mkdir -p "$root/etc/ssl/certs"
        cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/host-ca-certificates.crt"
        ca=/etc/ssl/certs/host-ca-certificates.crt
    fi
    # A private mount namespace: the mounts vanish with it. A PID namespace: when
    # CMD (its process 1) ends, the kernel ends every process left in it; and
    # if unshare itself is killed (CI's time-out, ^C), so is CMD.
    unshare --mount --pid --fork --kill-child --propagation private $net -- /bin/bash -c '
        set -e
        root=$1; wd=$2; ca=$3; net=$4; shift 4
        [ -z "$net" ] || ip link set lo up
        mount -t proc proc "$root/proc"
        mount --rbind /dev "$root/dev"
        mount -t tmpfs -o mode=1777,size=1g shm "$root/dev/shm"
        mount -t tmpfs -o mode=1777 tmp "$root/tmp"
        exec chroot "$root" /usr/bin/env -i \
            HOME=/root LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive \
            PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
            CI="${CI:-}" STRESS_JOBS="${STRESS_JOBS:-}" SOAK_JOBS="${SOAK_JOBS:-}" \
            CITUS_TARBALL="${CITUS_TARBALL:-}" \
            ${ca:+NODE_EXTRA_CA_CERTS=$ca npm_config_cafile=$ca} \
            /bin/bash -c "cd \"\$0\" && exec \"\$@\"" "$wd" "$@"
    ' _ "$root" "$wd" "$ca" "$net" "$@"
}

case "$cmd" in
    create) create; echo "$root" ;;
    sync) create; sync_tree ;;
    run) run_in "" "$@" ;;
    offline) run_in --net "$@" ;;
    remove) rm -rf "$root" "$root.new" ;;
    *) die "unknown command $cmd" ;;
esac

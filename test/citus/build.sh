#!/usr/bin/env bash
# Builds Citus from a source tarball and installs it into this major's
# PostgreSQL, once: a stamp (the tarball's sha256 and the major) next to the
# installed library says it is there, and a second run skips the build. Citus
# is a test dependency only: nothing of it is copied into claimqueue; users
# install it from Citus's own packages.
#
#   bash test/citus/build.sh --deps   install the build's Debian packages (needs the network)
#   bash test/citus/build.sh          build and install, unless the stamp says it is done
#   bash test/citus/build.sh --check  exit 0 when Citus is installed for this major
#
#   CITUS_TARBALL  the source tarball (Citus 14 for PostgreSQL 16 to 18)
#   PG_CONFIG      this major's pg_config
set -euo pipefail
pg_config=${PG_CONFIG:-pg_config}
major=$("$pg_config" --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')
pkglib=$("$pg_config" --pkglibdir)
sharedir=$("$pg_config" --sharedir)
stamp="$pkglib/citus.claimqueue-build"

installed() { [ -f "$pkglib/citus.so" ] && [ -f "$sharedir/extension/citus.control" ]; }

case "${1:-}" in
    --check) installed; exit ;;
    --deps)
        packages=("postgresql-server-dev-$major" flex libcurl4-openssl-dev liblz4-dev libzstd-dev libkrb5-dev libicu-dev)
        missing=()
        for p in "${packages[@]}"; do
            dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
        done
        [ ${#missing[@]} -eq 0 ] && exit 0
        echo "citus: installing ${missing[*]}"
        SUDO=""
        [ "$(id -u)" -eq 0 ] || SUDO="sudo"
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
            { $SUDO apt-get update -qq &&
              DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
        exit ;;
    "") ;;
    *) echo "usage: $0 [--deps|--check]" >&2; exit 2 ;;
esac

tarball=${CITUS_TARBALL:-}
[ -n "$tarball" ] && [ -r "$tarball" ] || { echo "citus: CITUS_TARBALL names no readable file ('$tarball')" >&2; exit 1; }
want="$(sha256sum "$tarball" | awk '{print $1}') pg$major"
if installed && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    echo "citus: already built from this tarball for PostgreSQL $major"
    exit 0
fi

work=$(mktemp -d /tmp/citus-build.XXXXXX)
trap 'rm -rf "$work"' EXIT
t0=$SECONDS
tar -xzf "$tarball" -C "$work"
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -1)
log="$work/build.log"
echo "citus: building $(basename "$src") for PostgreSQL $major"
if ! (cd "$src" && ./configure PG_CONFIG="$pg_config" >"$log" 2>&1 &&
      nice make -j2 >>"$log" 2>&1 && make install >>"$log" 2>&1); then
    grep -E "error|Error" "$log" | tail -20
    echo "citus: the build failed" >&2
    exit 1
fi
echo "$want" >"$stamp"
echo "citus: built and installed in $((SECONDS - t0)) s"

#!/usr/bin/env bash
# The Debian package, the way a user gets it: builds postgresql-N-claimqueue
# with dpkg-buildpackage from a clean copy of the tree, takes out the files a
# `make install` left, installs the .deb with apt-get into this system, and
# smoke-tests it in a fresh cluster with the library preloaded: CREATE
# EXTENSION, enqueue, dequeue, complete, and the reaper returns an expired
# lease. Prints TAP-style "ok"/"not ok" lines.
#
#   bash test/package/run.sh 17          (--deps: only install the build tools)
#
# Run as root in a throwaway system only (scripts/test.sh runs it in the Debian
# root of that major): it installs packages and removes claimqueue's files from
# PostgreSQL's directories.
set -uo pipefail
cd "$(dirname "$0")/../.."
src=$(pwd)
major=${1:?usage: $0 MAJOR}
deadline=60
. test/lib/tap.sh

# The smoke test, run by the part below inside pg_virtualenv (PG* variables).
# The reaper is a background worker: a SET in one session does not move its
# clock, so the test moves the server's clock (ALTER SYSTEM, reload) an hour
# past the job's lease instead of waiting for the lease to run out.
if [ "${2:-}" = --smoke ]; then
    version=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" claimqueue.control)
    q() { psql -X -q -At -v ON_ERROR_STOP=1 -d postgres "$@"; }
    is() { [ "$(q -c "$1")" = "$2" ]; }
    check "CREATE EXTENSION claimqueue" q -c "CREATE EXTENSION claimqueue"
    check "the extension is at $version" is "SELECT extversion FROM pg_extension WHERE extname = 'claimqueue'" "$version"
    check "this database's reaper is running" until_true is "SELECT preloaded AND pid IS NOT NULL FROM reaper_stats" t
    q -c "SELECT create_queue('smoke', lease => '10 minutes')" >/dev/null
    first=$(q -c "SELECT enqueue('smoke', '{\"n\": 1}')")
    second=$(q -c "SELECT enqueue('smoke', '{\"n\": 2}')")
    check "enqueue returns job ids" test -n "$first" -a -n "$second"
    check "dequeue claims the first job" is "SELECT id || ' ' || attempt FROM dequeue('smoke', 'w1')" "$first 1"
    check "complete finishes it" q -c "SELECT complete($first, 1)"
    check "it is done" is "SELECT state FROM queue_jobs WHERE id = $first" done
    check "dequeue claims the second job, under a 10-minute lease" is "SELECT id FROM dequeue('smoke', 'w2')" "$second"
    q -c "ALTER SYSTEM SET claimqueue.debug_clock_offset = '1h'" -c "SELECT pg_reload_conf()" >/dev/null
    check "with the server's clock an hour on, the reaper returns the expired lease" \
        until_true is "SELECT state FROM queue_jobs WHERE id = $second" ready
    check "with 'lease expired' as that attempt's error" \
        is "SELECT last_error FROM queue_jobs WHERE id = $second" "lease expired (worker w2, attempt 1)"
    q -c "ALTER SYSTEM RESET claimqueue.debug_clock_offset" -c "SELECT pg_reload_conf()" >/dev/null
    # Its retry is due after a backoff on the reaper's clock: claim two hours on.
    check "the returned job is claimed again, with attempt 2" \
        is "SET claimqueue.debug_clock_offset = '2h'; SELECT id || ' ' || attempt FROM dequeue('smoke', 'w3')" "$second 2"
    check "and completed" q -c "SET claimqueue.debug_clock_offset = '2h'; SELECT complete($second, 2)"
    [ "$failed" -eq 0 ]
    exit
fi

[ "$(id -u)" -eq 0 ] || { echo "package test: run as root in a throwaway system"; exit 1; }
export DEBIAN_FRONTEND=noninteractive
pg_config=/usr/lib/postgresql/$major/bin/pg_config
version=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" claimqueue.control)

# --- build
# The build dependencies of debian/control (apt-get build-dep), and dpkg-dev.
if ! dpkg-checkbuilddeps 2>/dev/null; then
    echo "# installing the build dependencies"
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends dpkg-dev >/dev/null &&
      apt-get build-dep -y -qq --no-install-recommends "$src" >/dev/null; } ||
        { echo "package test: installing the build dependencies failed"; exit 1; }
fi
[ "${2:-}" = --deps ] && exit 0   # only the build tools (scripts/test.sh, with the network)

check "debian/changelog is at the control file's version ($version)" \
    test "$(dpkg-parsechangelog -S Version)" = "$version"

# --- no claimqueue files in the system: neither a package from an earlier run
# (apt-get would keep it as it is) nor make install's. So the build-time check
# runs against the package's own files (pg_buildext points the server at them,
# extension_destdir), not at an installed copy, and the install starts clean.
dpkg --purge "postgresql-$major-claimqueue" >/dev/null 2>&1
make -s -C "$src" uninstall PG_CONFIG="$pg_config" >/dev/null 2>&1
leftover=$(ls "$("$pg_config" --pkglibdir)"/claimqueue* "$("$pg_config" --sharedir)"/extension/claimqueue* 2>/dev/null)
check "no claimqueue files before the package is built" test -z "$leftover"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The build-time check's server runs as another user (pg_buildext's NONROOT)
# and reads the package's files in the tree: mktemp's 0700 kept it out (then
# CREATE EXTENSION amcheck, which lists the extension directories for its
# update path, failed with "Permission denied").
chmod 755 "$work"
tree="$work/claimqueue-$version"
mkdir -p "$tree"
# The sources without the products of a build in this tree.
tar -C "$src" --exclude=./build --exclude='*.o' --exclude='*.so' --exclude=.deps \
    --exclude=node_modules --exclude=./results --exclude=./output_iso --exclude=.git \
    --exclude='./regression.*' -cf - . | tar -xf - -C "$tree"
(
    cd "$tree" &&
    export PG_SUPPORTED_VERSIONS=$major &&
    pg_buildext updatecontrol &&
    dpkg-buildpackage -b -uc -us
) >"$work/build.log" 2>&1
rc=$?
[ $rc -eq 0 ] || tail -40 "$work/build.log"
grep -oE "(All [0-9]+ tests passed|[0-9]+ of [0-9]+ tests failed)" "$work/build.log" | sed 's/^/# build-time installcheck: /'
check "dpkg-buildpackage builds postgresql-$major-claimqueue" test $rc -eq 0
deb=$(ls "$work"/postgresql-"$major"-claimqueue_"$version"_*.deb 2>/dev/null | head -1)
check "it made postgresql-${major}-claimqueue_${version}_*.deb" test -n "$deb"
[ -n "$deb" ] || { echo "# no package: stopping"; exit 1; }
mkdir -p "$src/build"
cp "$deb" "$src/build/"
echo "# $(basename "$deb"), $(stat -c %s "$deb") bytes"

# --- install the package into the system left clean above
apt-get install -y -qq "$deb" >"$work/install.log" 2>&1
rc=$?
[ $rc -eq 0 ] || tail -20 "$work/install.log"
check "apt-get install ./$(basename "$deb")" test $rc -eq 0
# owned PATH: the file is there and the package owns it.
owned() { [ -f "$1" ] && dpkg -S "$1" | grep -q "^postgresql-$major-claimqueue:"; }
check "the package installed the library" owned "$("$pg_config" --pkglibdir)/claimqueue.so"
check "the package installed the control file" owned "$("$pg_config" --sharedir)/extension/claimqueue.control"
check "the package installed the install script of $version" \
    owned "$("$pg_config" --sharedir)/extension/claimqueue--$version.sql"

# --- smoke test in a fresh cluster with the library preloaded (this script
# again, inside pg_virtualenv)
pg_virtualenv -v "$major" -o shared_preload_libraries=claimqueue bash "$0" "$major" --smoke
rc=$?
check "the smoke test passed" test $rc -eq 0
echo "# package: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

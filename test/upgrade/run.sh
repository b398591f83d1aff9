#!/usr/bin/env bash
# Upgrade test: for every released version (test/upgrade/released/), installs
# it, runs ALTER EXTENSION claimqueue UPDATE with the installed upgrade script,
# and compares the result (test/upgrade/describe.sql: every member object,
# definition, privilege, comment, config-dump mark and the default queue) with
# a fresh CREATE EXTENSION of the current version. Needs a running cluster
# (PG* variables) and a superuser; creates and drops databases claimqueue_up_*.
set -euo pipefail
cd "$(dirname "$0")/../.."
source test/lib/released.sh

current=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" claimqueue.control)
work=$(mktemp -d)
ext=""
trap 'rm -rf "$work" $ext; for d in claimqueue_up_fresh claimqueue_up_old; do psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $d WITH (FORCE)" >/dev/null 2>&1; done' EXIT

# The released scripts are history: refuse to test with one that changed.
(cd test/upgrade/released && sha256sum --quiet -c SHA256SUMS) ||
    { echo "FAIL: test/upgrade/released/ differs from its SHA256SUMS (never edit those scripts)"; exit 1; }
# Every release with an upgrade script is tested, and every tested release has one.
releases=$(sh src/sql/build.sh releases "$current")
if [ "$releases" != "$(released_versions)" ]; then
    echo "FAIL: the releases with an upgrade script (src/sql/updates) are $(tr '\n' ' ' <<<"$releases")," \
         "but test/upgrade/released/ holds $(released_versions | tr '\n' ' ')"
    exit 1
fi

ext=$(released_extension_dir)
export PGOPTIONS="-c extension_destdir=$ext"

q() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }

q -d postgres -c "DROP DATABASE IF EXISTS claimqueue_up_fresh" -c "CREATE DATABASE claimqueue_up_fresh"
q -d claimqueue_up_fresh -c "SET client_min_messages = error" -c "CREATE EXTENSION claimqueue"
q -d claimqueue_up_fresh -f test/upgrade/describe.sql >"$work/fresh.txt"

failed=0
checked=0
for old in $(released_versions); do
    q -d postgres -c "DROP DATABASE IF EXISTS claimqueue_up_old" -c "CREATE DATABASE claimqueue_up_old"
    q -d claimqueue_up_old -c "SET client_min_messages = error" \
        -c "CREATE EXTENSION claimqueue VERSION '$old'" \
        -c "ALTER EXTENSION claimqueue UPDATE"
    q -d claimqueue_up_old -f test/upgrade/describe.sql >"$work/updated.txt"
    checked=$((checked + 1))
    if diff -u "$work/fresh.txt" "$work/updated.txt" >"$work/diff.txt"; then
        echo "ok: $old -> $current matches a fresh install ($(grep -c '^member ' "$work/fresh.txt") member objects)"
    else
        echo "FAIL: $old -> $current differs from a fresh install (- fresh, + updated):"
        cat "$work/diff.txt"
        failed=$((failed + 1))
    fi
done
[ "$checked" -gt 0 ] || { echo "FAIL: no released version in test/upgrade/released"; exit 1; }
echo "upgrade: $checked checked, $failed failed"
[ "$failed" -eq 0 ]

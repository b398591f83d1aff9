#!/usr/bin/env bash
# Upgrade test: for every earlier version with a full install script, installs
# it, runs ALTER EXTENSION claimqueue UPDATE, and compares the result
# (test/upgrade/describe.sql: every member object, definition, privilege,
# comment, config-dump mark and the default queue) with a fresh CREATE
# EXTENSION of the current version. Needs a running cluster (PG* variables) and
# a superuser; creates and drops databases claimqueue_up_*.
set -euo pipefail
cd "$(dirname "$0")/../.."

current=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" claimqueue.control)
sharedir=$(pg_config --sharedir)/extension
work=$(mktemp -d)
trap 'rm -rf "$work"; for d in claimqueue_up_fresh claimqueue_up_old; do psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $d WITH (FORCE)" >/dev/null 2>&1; done' EXIT

q() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }

q -d postgres -c "DROP DATABASE IF EXISTS claimqueue_up_fresh" -c "CREATE DATABASE claimqueue_up_fresh"
q -d claimqueue_up_fresh -c "SET client_min_messages = error" -c "CREATE EXTENSION claimqueue"
q -d claimqueue_up_fresh -f test/upgrade/describe.sql >"$work/fresh.txt"

failed=0
checked=0
for script in "$sharedir"/claimqueue--*.sql; do
    base=$(basename "$script" .sql)
    old=${base#claimqueue--}
    case "$old" in *--*) continue ;; esac           # upgrade scripts
    [ "$old" = "$current" ] && continue
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
[ "$checked" -gt 0 ] || { echo "FAIL: no earlier version installed in $sharedir"; exit 1; }
echo "upgrade: $checked checked, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# Runs no_preload.sql against a cluster WITHOUT claimqueue in
# shared_preload_libraries (PG* variables from pg_virtualenv) and compares the
# output with expected.out.
set -euo pipefail
cd "$(dirname "$0")"
out=$(mktemp)
psql -X -q -d "${PGDATABASE:-postgres}" -c 'DROP DATABASE IF EXISTS claimqueue_no_preload' >/dev/null
psql -X -q -d "${PGDATABASE:-postgres}" -c 'CREATE DATABASE claimqueue_no_preload' >/dev/null
psql -X -a -d claimqueue_no_preload -f no_preload.sql >"$out" 2>&1 || true
psql -X -q -d "${PGDATABASE:-postgres}" -c 'DROP DATABASE claimqueue_no_preload' >/dev/null
# psql prefixes messages with the script's name and line: drop that part.
sed -i 's/^psql:no_preload.sql:[0-9]*: //' "$out"
if diff -u expected.out "$out"; then
    echo "no_preload: ok"
    rm -f "$out"
else
    echo "no_preload: FAILED (output differs from expected.out; actual in $out)"
    exit 1
fi

#!/usr/bin/env bash
# Waiting dequeue against polling: latency from enqueue commit to the worker's
# return (p50/p99), and idle CPU of 32 waiting vs 32 polling workers over a
# minute, in a throwaway cluster of its own. About 3 minutes. See
# bench/README.md ("Waiting dequeue") and bench/wait_latency.mjs.
#
#   bash bench/wait_latency.sh            # JOBS=500 WORKERS=4 IDLE=32 IDLE_SECONDS=60
#
# Needs claimqueue built and installed, pg_virtualenv, node and npm (the
# node-postgres client of examples/node-worker). Writes
# bench/results/<timestamp>-wait.md and bench/results/latest-wait.md (not
# tracked: bench/README.md keeps the tables worth keeping).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ "${1:-}" != --inner ]; then
    for tool in pg_virtualenv psql node npm pg_config; do
        command -v "$tool" >/dev/null || { echo "wait bench: $tool not found in PATH" >&2; exit 2; }
    done
    [ -d "$here/../examples/node-worker/node_modules/pg" ] ||
        (cd "$here/../examples/node-worker" && npm install --no-audit --no-fund --silent >/dev/null)
    stamp=$(date -u +%Y%m%dT%H%M%SZ)
    out=$here/results/$stamp-wait.md
    mkdir -p "$here/results"
    # As bench/run.sh: durable commits (pg_virtualenv's default is fsync=off).
    pg_virtualenv -t -o shared_preload_libraries=claimqueue -o max_connections=100 -o fsync=on \
        bash "$here/wait_latency.sh" --inner "$out"
    cp "$out" "$here/results/latest-wait.md"
    echo "wait bench: wrote ${out#"$here/../"}"
    exit 0
fi

out=$2
psql -X -q -v ON_ERROR_STOP=1 -d postgres <<'SQL' >/dev/null
CREATE EXTENSION claimqueue;
SELECT create_queue('lat_wait'), create_queue('lat_poll'), create_queue('idle');
SQL
{
    echo "# Waiting dequeue vs polling ($(date -u +%Y-%m-%dT%H:%MZ))"
    echo
    echo "commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) cores, PostgreSQL $(psql -X -At -d postgres -c 'SHOW server_version'), fsync=$(psql -X -At -d postgres -c 'SHOW fsync'), synchronous_commit=$(psql -X -At -d postgres -c 'SHOW synchronous_commit'), reaper_interval=$(psql -X -At -d postgres -c 'SHOW claimqueue.reaper_interval')"
    echo
    PGDATABASE=postgres node "$here/wait_latency.mjs"
} | tee "$out"

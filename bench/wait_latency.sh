#!/usr/bin/env bash
# Waiting dequeue against polling: latency from enqueue commit to the worker's
# return (p50/p99), and idle CPU of 32 waiting vs 32 polling workers over a
# minute, in a throwaway cluster of its own. About 3 minutes. See
# bench/README.md ("The other scripts") and bench/wait_latency.mjs.
#
#   bash bench/wait_latency.sh            # JOBS=500 WORKERS=4 IDLE=32 IDLE_SECONDS=60
#
# Needs claimqueue built and installed, pg_virtualenv, node and npm (the
# node-postgres client of examples/node-worker). Writes
# bench/results/<timestamp>-wait.md and bench/results/latest-wait.md (not
# tracked: docs/performance.md keeps the figures the project stands behind).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ "${1:-}" != --inner ]; then
    . "$here/latency_cluster.sh"
    run_in_cluster wait "$here/wait_latency.sh"
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

#!/usr/bin/env bash
# await_jobs() wake latency: from the commit that finishes a job to the return
# of the CALL await_jobs() that waits for it (p50/p99), for one job and for a
# fan-in of ten, in a throwaway cluster of its own. About a minute. See
# bench/README.md ("The other scripts") and bench/await_latency.mjs.
#
#   bash bench/await_latency.sh           # ROUNDS=300 FANIN_ROUNDS=50
#
# Needs claimqueue built and installed, pg_virtualenv, node and npm (the
# node-postgres client of examples/node-worker). Writes
# bench/results/<timestamp>-await.md and bench/results/latest-await.md (not
# tracked: docs/performance.md keeps the figures the project stands behind).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ "${1:-}" != --inner ]; then
    . "$here/latency_cluster.sh"
    run_in_cluster await "$here/await_latency.sh"
    exit 0
fi

out=$2
psql -X -q -v ON_ERROR_STOP=1 -d postgres <<'SQL' >/dev/null
CREATE EXTENSION claimqueue;
SELECT create_queue('lat_await');
SQL
{
    echo "# await_jobs wake latency ($(date -u +%Y-%m-%dT%H:%MZ))"
    echo
    echo "commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) cores, PostgreSQL $(psql -X -At -d postgres -c 'SHOW server_version'), fsync=$(psql -X -At -d postgres -c 'SHOW fsync'), synchronous_commit=$(psql -X -At -d postgres -c 'SHOW synchronous_commit')"
    echo
    PGDATABASE=postgres node "$here/await_latency.mjs"
} | tee "$out"

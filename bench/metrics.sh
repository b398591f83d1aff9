#!/usr/bin/env bash
# What a monitoring query costs as finished jobs pile up: SELECT * FROM
# queue_metrics (shared memory, one probe per lane at its claim cursor) against
# SELECT * FROM queue_stats (counts the table), with 0 and then 10 million
# finished jobs kept, 1,000 jobs ready and 10 running each time. A throwaway
# cluster (pg_virtualenv, claimqueue preloaded, the installed build); one
# pgbench client per query. Figures only, nothing asserted; docs/performance.md
# keeps the figures the project stands behind.
#
#   bash bench/metrics.sh              (BENCH_HISTORY=10000000, BENCH_SECONDS=20)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# CLAIMQUEUE_BENCH_IN_CLUSTER=1 with PG* variables: a cluster already running
# (preloaded) instead of pg_virtualenv's.
if [ -z "${CLAIMQUEUE_BENCH_IN_CLUSTER:-}" ]; then
    major=$("${PG_CONFIG:-pg_config}" --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')
    CLAIMQUEUE_BENCH_IN_CLUSTER=1 exec pg_virtualenv -v "$major" -t \
        -o shared_preload_libraries=claimqueue -o shared_buffers=1GB -o max_wal_size=8GB \
        bash "$0"
fi

history=${BENCH_HISTORY:-10000000}
seconds=${BENCH_SECONDS:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
q() { psql -qXAt -v ON_ERROR_STOP=1 -c "$1"; }

q "CREATE EXTENSION claimqueue" 2>/dev/null
q "SELECT create_queue('bench', lease => '1 day')" >/dev/null  # the claims outlast the run
q "SELECT count(*) FROM enqueue_batch('bench', array_fill('{}'::jsonb, ARRAY[1010]))" >/dev/null
q "SELECT count(*) FROM dequeue('bench', 'w', batch => 10)" >/dev/null
echo 'SELECT * FROM queue_metrics;' >"$work/metrics.sql"
echo 'SELECT * FROM queue_stats;' >"$work/stats.sql"

# latency SCRIPT: pgbench's average latency in ms, one client for $seconds.
latency() {
    pgbench -n -c 1 -T "$seconds" -f "$1" 2>&1 | sed -n 's/^latency average = \([0-9.]*\) ms$/\1/p'
}

measure() {
    q "VACUUM ANALYZE claimqueue.jobs"
    q "SELECT claimqueue.recount_queue_metrics()" >/dev/null
    local jobs size m s
    jobs=$(q "SELECT count(*) FROM claimqueue.jobs")
    size=$(q "SELECT pg_size_pretty(pg_total_relation_size('claimqueue.jobs'))")
    m=$(latency "$work/metrics.sql")
    s=$(latency "$work/stats.sql")
    echo "| $1 | $jobs | $size | $m | $s |"
    q "SELECT queue, ready_or_scheduled, running, oldest_ready_age IS NOT NULL AS has_oldest FROM queue_metrics WHERE queue = 'bench'" |
        sed 's/^/  queue_metrics: /' >&2
}

echo "claimqueue metrics bench, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(psql -qXAt -c 'SHOW server_version')"
echo
echo "| finished jobs kept | rows in claimqueue.jobs | table and indexes | queue_metrics ms/query | queue_stats ms/query |"
echo "|--:|--:|--:|--:|--:|"
measure 0
t0=$SECONDS
q "INSERT INTO claimqueue.jobs (queue_id, state, attempt, max_attempts, run_at, created_at,
                                started_at, finished_at, worker, payload)
   SELECT q.queue_id, 'done', 1, 5, now(), now(), now(), now(), 'history',
          jsonb_build_object('n', g)
   FROM claimqueue.queues q, generate_series(1, $history) g WHERE q.name = 'bench'"
echo "  ($history finished jobs inserted in $((SECONDS - t0)) s)" >&2
measure "$history"

#!/usr/bin/env bash
# A limited queue under a held snapshot: a queue with max_running and one
# without, each drained by one client (dequeue, then complete) in windows of
# BENCH_WINDOW jobs, taken in turns while another session holds a REPEATABLE
# READ snapshot (BENCH_HOLD=0: no snapshot held, the baseline). A limited
# claim counts the queue's running jobs from jobs_running_key_idx, and reads
# there the entries of every job finished since the snapshot (README,
# "Limits and old snapshots"). A throwaway cluster (pg_virtualenv,
# claimqueue preloaded, the installed build), synchronous_commit = off.
# Figures only, nothing asserted; bench/README.md keeps the latest run's.
#
#   bash bench/held_limits.sh     (BENCH_WINDOW=10000 BENCH_WINDOWS=6 BENCH_HOLD=1)
set -euo pipefail

if [ -z "${CLAIMQUEUE_BENCH_IN_CLUSTER:-}" ]; then
    major=$("${PG_CONFIG:-pg_config}" --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')
    CLAIMQUEUE_BENCH_IN_CLUSTER=1 exec pg_virtualenv -v "$major" \
        -o shared_preload_libraries=claimqueue -o synchronous_commit=off bash "$0"
fi

window=${BENCH_WINDOW:-10000}
windows=${BENCH_WINDOWS:-6}
hold=${BENCH_HOLD:-1}
work=$(mktemp -d)
holder=""
trap '[ -z "$holder" ] || kill "$holder" 2>/dev/null; rm -rf "$work"' EXIT

psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
CREATE EXTENSION claimqueue;
SELECT create_queue('limited', max_running => 100);
SELECT create_queue('unlimited');
SQL
for q in limited unlimited; do
    psql -X -q -v ON_ERROR_STOP=1 -c "SELECT count(*) FROM enqueue_batch('$q',
        (SELECT array_agg(jsonb_build_object('n', g)) FROM generate_series(1, $((window * windows))) g))" >/dev/null
    echo "SELECT complete(id, attempt) FROM dequeue('$q', 'w1');" >"$work/$q.sql"
done
psql -X -q -c "VACUUM ANALYZE claimqueue.jobs"
if [ "$hold" = 1 ]; then
    psql -X -q -c "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM claimqueue.queues;
                   SELECT pg_sleep(86400)" >/dev/null 2>&1 &
    holder=$!
    sleep 1
fi
echo "# $(psql -X -At -c 'SELECT version()'); snapshot held: $([ "$hold" = 1 ] && echo yes || echo no)"
echo "| window | limited (max_running 100), jobs/s | unlimited, jobs/s |"
echo "|--:|--:|--:|"
for w in $(seq 1 "$windows"); do
    row="| $w"
    for q in limited unlimited; do
        tps=$(pgbench -n -M prepared -c 1 -t "$window" -f "$work/$q.sql" 2>&1 |
              sed -n 's/^tps = \([0-9]*\)\..*/\1/p' | head -1)
        row="$row | $tps"
    done
    echo "$row |"
done

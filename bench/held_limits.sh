#!/usr/bin/env bash
# Limited queues under a held snapshot: three queues, each drained by one
# client (dequeue, then complete) in windows of BENCH_WINDOW jobs, taken in
# turns while another session holds a REPEATABLE READ snapshot (BENCH_HOLD=0:
# no snapshot held, the baseline): one with max_running 100 (below its limit:
# its claims add to the bound kept in shared memory and count about once in
# 100), one whose jobs share one key with max_running_per_key 1 (at its limit
# after every claim: each claim counts), one without limits. A count reads
# the entries of every job finished since the snapshot (docs/flow-control.md,
# "Limits and old snapshots"). A throwaway cluster (pg_virtualenv,
# claimqueue preloaded, the installed build), synchronous_commit = off.
# Figures only, nothing asserted; docs/performance.md keeps the figures
# the project stands behind.
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
SELECT create_queue('at_limit', max_running_per_key => 1);
SELECT create_queue('unlimited');
SQL
for q in limited at_limit unlimited; do
    key=NULL
    [ "$q" = at_limit ] && key="'tenant'"
    psql -X -q -v ON_ERROR_STOP=1 -c "SELECT count(*) FROM enqueue_batch('$q',
        (SELECT array_agg(jsonb_build_object('n', g)) FROM generate_series(1, $((window * windows))) g),
        concurrency_key => $key)" >/dev/null
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
echo "| window | max_running 100, jobs/s | one key, max_running_per_key 1, jobs/s | no limits, jobs/s |"
echo "|--:|--:|--:|--:|"
for w in $(seq 1 "$windows"); do
    row="| $w"
    for q in limited at_limit unlimited; do
        tps=$(pgbench -n -M prepared -c 1 -t "$window" -f "$work/$q.sql" 2>&1 |
              sed -n 's/^tps = \([0-9]*\)\..*/\1/p' | head -1)
        row="$row | $tps"
    done
    echo "$row |"
done

#!/usr/bin/env bash
# What the dashboard costs, with many finished jobs kept and a drain running:
# each page's render time (as a client times the whole response, median and
# 95th percentile of BENCH_FETCHES fetches) and the drain's throughput with
# and without the dashboard being watched (one browser's worth of polling:
# every page, every BENCH_POLL seconds, as its live updates do). A throwaway
# cluster (pg_virtualenv, claimqueue preloaded, the installed build). Figures
# only, nothing asserted; docs/dashboard.md keeps them.
#
#   bash bench/dashboard.sh    (BENCH_HISTORY=10000000 finished jobs, BENCH_SECONDS=30 per drain,
#                               BENCH_FETCHES=20 per page, BENCH_POLL=5, BENCH_CLIENTS=2 drainers)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)

if [ -z "${CLAIMQUEUE_BENCH_IN_CLUSTER:-}" ]; then
    major=$("${PG_CONFIG:-pg_config}" --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')
    (cd "$root/clients/dashboard" && npm run -s build)
    CLAIMQUEUE_BENCH_IN_CLUSTER=1 exec pg_virtualenv -v "$major" -t \
        -o shared_preload_libraries=claimqueue -o shared_buffers=512MB -o max_wal_size=8GB \
        -o max_connections=50 bash "$0"
fi

history=${BENCH_HISTORY:-10000000}
seconds=${BENCH_SECONDS:-30}
fetches=${BENCH_FETCHES:-20}
poll=${BENCH_POLL:-5}
clients=${BENCH_CLIENTS:-2}
work=$(mktemp -d)
dash_pid=""
watch_pid=""
cleanup() {
    [ -n "$watch_pid" ] && kill "$watch_pid" 2>/dev/null
    [ -n "$dash_pid" ] && kill "$dash_pid" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
q() { psql -qXAt -v ON_ERROR_STOP=1 -c "$1"; }

q "CREATE EXTENSION claimqueue" 2>/dev/null
q "SELECT create_queue('bench', lease => '1 hour', max_attempts => 1)" >/dev/null
q "SELECT create_queue('other')" >/dev/null
t0=$SECONDS
# The history: done jobs, and one in 100 failed (the dead letters' index).
q "INSERT INTO claimqueue.jobs (queue_id, state, attempt, max_attempts, run_at, created_at,
                                started_at, finished_at, worker, payload, last_error)
   SELECT q.queue_id, CASE WHEN g % 100 = 0 THEN 'failed' ELSE 'done' END, 1, 1,
          now() - interval '1 day', now() - interval '1 day', now() - interval '1 day',
          now() - interval '1 day' + g * interval '1 ms', 'history', jsonb_build_object('n', g),
          CASE WHEN g % 100 = 0 THEN 'boom' END
   FROM claimqueue.queues q, generate_series(1, $history) g WHERE q.name = 'bench'"
load_s=$((SECONDS - t0))
q "VACUUM ANALYZE claimqueue.jobs"
q "SELECT claimqueue.recount_queue_metrics()" >/dev/null
q "SELECT claimqueue.sample_queue_history()" >/dev/null
size=$(q "SELECT pg_size_pretty(pg_total_relation_size('claimqueue.jobs'))")

# The drain: each transaction claims one job and completes it.
cat >"$work/drain.sql" <<'SQL'
SELECT id, attempt FROM dequeue('bench', 'drain') \gset
SELECT complete(:id, :attempt);
SQL
refill() {
    q "SELECT count(*) FROM enqueue_batch('bench', array_fill('{}'::jsonb, ARRAY[$1]))" >/dev/null
}
# drain: jobs per second over $seconds with $clients clients (ready jobs topped up first,
# more than the drain can take).
drain() {
    refill $((seconds * 8000))
    pgbench -n -c "$clients" -j "$clients" -T "$seconds" -f "$work/drain.sql" 2>&1 |
        sed -n 's/^tps = \([0-9.]*\) .*/\1/p' | head -1
}

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
node "$root/clients/dashboard/dist/cli.js" dashboard --port "$port" >"$work/dashboard.log" 2>&1 &
dash_pid=$!
base="http://127.0.0.1:$port"
for _ in $(seq 1 100); do curl -fsS "$base/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
failed_id=$(q "SELECT id FROM queue_jobs WHERE queue_id = (SELECT queue_id FROM queue_settings WHERE queue = 'bench') AND state = 'failed' ORDER BY finished_at DESC LIMIT 1")
pages=("/" "/queues/bench" "/queues/bench?state=ready" "/queues/bench?state=running"
       "/queues/bench?state=done" "/queues/bench?state=failed" "/jobs/$failed_id" "/dead-letters"
       "/dead-letters?queue=bench&error=boom" "/schedules" "/claims" "/reapers" "/locks" "/api/history.json")

# The watcher: every page once per $poll seconds, as a browser left open would.
watch() {
    while :; do
        for p in "${pages[@]}"; do curl -fsS -o /dev/null "$base$p" || true; done
        sleep "$poll"
    done
}

echo "claimqueue dashboard bench, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, PostgreSQL $(q 'SHOW server_version')"
echo "  $history finished jobs kept ($size, loaded in $load_s s), a drain of $clients clients"
echo

# Drains alternate, without and with the watcher, to spread the machine's noise over both.
without=()
with=()
for round in 1 2; do
    without+=("$(drain)")
    watch & watch_pid=$!
    with+=("$(drain)")
    kill "$watch_pid" 2>/dev/null; wait "$watch_pid" 2>/dev/null || true; watch_pid=""
done

# Page times while a drain runs.
refill $((seconds * 16000))
pgbench -n -c "$clients" -j "$clients" -T $((seconds * 2)) -f "$work/drain.sql" >/dev/null 2>&1 &
bg=$!
sleep 2
echo "| page | median ms | p95 ms |"
echo "|---|--:|--:|"
for p in "${pages[@]}"; do
    for _ in $(seq 1 "$fetches"); do
        curl -fsS -o /dev/null -w '%{time_total}\n' "$base$p"
    done | sort -n | awk -v page="$p" '{ t[NR] = $1 * 1000 } END {
        printf "| `%s` | %.1f | %.1f |\n", page, t[int((NR + 1) / 2)], t[int(NR * 0.95 + 0.5)] }'
done
wait "$bg" || true

echo
avg() { printf '%s\n' "$@" | awk '{ s += $1 } END { printf "%.0f", s / NR }'; }
w=$(avg "${without[@]}")
d=$(avg "${with[@]}")
echo "drain without the dashboard: ${without[*]} jobs/s (mean $w)"
echo "drain with the dashboard watched every ${poll} s: ${with[*]} jobs/s (mean $d)"
awk -v w="$w" -v d="$d" 'BEGIN { printf "the dashboard costs the drain %.1f %%\n", (w - d) / w * 100 }'

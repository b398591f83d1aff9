#!/usr/bin/env bash
# What the dashboard costs, with many finished jobs kept and a drain running:
#
# 1. each page's render time while a drain runs (as a client times the whole
#    response: median and 95th percentile of BENCH_FETCHES fetches), and the
#    CPU a fetch of it takes (the dashboard's Node process and backends);
# 2. the CPU the dashboard takes while it is watched during a drain: its Node
#    process and its PostgreSQL backends (their own role, cq_dashboard, so
#    their process titles tell them apart), against the drain's backends and
#    pgbench, from /proc/PID/stat over BENCH_CPU_SECONDS (bench/cpu_share.py).
#    On a machine the drain keeps busy, that share is what the dashboard takes
#    from it;
# 3. the drain's jobs per second without and with the dashboard watched,
#    BENCH_ROUNDS pairs of BENCH_SECONDS drains, the order swapped each round,
#    the ratio pair by pair: wall clock, which spreads by tens of per cent
#    between runs on a shared machine, so supporting evidence only.
#
# Watched means one browser's worth of polling per page, every page at once:
# each page fetched every BENCH_POLL seconds, as the live updates of a page
# left open do (static/app.js refetches its page every 5 s) — 17 pages, so 17
# times what one open browser tab asks. bench/dashboard_instructions.sh counts
# what the watching costs the drain's own backends (callgrind). A throwaway
# cluster (bench/dashboard_cluster.sh). Figures only, nothing asserted.
#
#   bash bench/dashboard.sh    (BENCH_HISTORY=10000000 finished jobs, BENCH_FETCHES=20 per page,
#                               BENCH_POLL=5, BENCH_CPU_SECONDS=60, BENCH_ROUNDS=6 pairs of
#                               BENCH_SECONDS=10 drains, BENCH_CLIENTS=2 drainers)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/dashboard_cluster.sh"

history=${BENCH_HISTORY:-10000000}
fetches=${BENCH_FETCHES:-20}
poll=${BENCH_POLL:-5}
cpu_seconds=${BENCH_CPU_SECONDS:-60}
rounds=${BENCH_ROUNDS:-6}
seconds=${BENCH_SECONDS:-10}
clients=${BENCH_CLIENTS:-2}

load_history "$history"
q "SELECT create_queue('other')" >/dev/null
# A job with a dedup key, due tomorrow, behind every ready job the drain gets:
# what the key filter looks for.
q "SELECT enqueue('bench', '{}', run_at => now() + interval '1 day', dedup_key => 'needle')" >/dev/null
q "VACUUM ANALYZE claimqueue.jobs"
q "SELECT claimqueue.recount_queue_metrics()" >/dev/null
q "SELECT claimqueue.sample_queue_history()" >/dev/null
size=$(q "SELECT pg_size_pretty(pg_total_relation_size('claimqueue.jobs'))")
# The dashboard and the drain under roles of their own: a backend's process
# title names its role.
q "CREATE ROLE cq_dashboard LOGIN SUPERUSER PASSWORD '$PGPASSWORD'"
q "CREATE ROLE cq_drain LOGIN SUPERUSER PASSWORD '$PGPASSWORD'"
start_dashboard "postgres://cq_dashboard:$PGPASSWORD@${PGHOST:-localhost}:${PGPORT:-5432}/${PGDATABASE:-postgres}"

failed_id=$(q "SELECT id FROM claimqueue.jobs WHERE state = 'failed' ORDER BY id DESC LIMIT 1")
mid_id=$(q "SELECT id FROM claimqueue.jobs WHERE state = 'done' AND id > $((history / 2)) ORDER BY id LIMIT 1")
later=$(printf '["%s"]' "$mid_id" | base64 -w0 | tr '+/' '-_' | tr -d '=')
pages=("/" "/queues/bench" "/queues/bench?state=ready" "/queues/bench?state=scheduled"
       "/queues/bench?state=running" "/queues/bench?state=done" "/queues/bench?state=done&after=$later"
       "/queues/bench?state=failed" "/queues/bench?key=needle" "/jobs/$failed_id" "/dead-letters"
       "/dead-letters?queue=bench&error=boom" "/schedules" "/claims" "/reapers" "/locks" "/api/history.json")

# The watcher: every page once per $poll seconds.
watch() {
    while :; do
        for p in "${pages[@]}"; do curl -fsS -o /dev/null "$base$p" || true; done
        sleep "$poll"
    done
}
start_watch() { watch & watch_pid=$!; background+=("$watch_pid"); }
stop_watch() { kill "$watch_pid" 2>/dev/null; wait "$watch_pid" 2>/dev/null || true; }

# The drain: each loop claims one job (a transaction) and completes it
# (another), as cq_drain. Its rate is the queue's completed count over the
# run, the backlog topped up first.
completed() { q "SELECT completed FROM queue_metrics WHERE queue = 'bench'"; }
top_up() {
    local ready
    ready=$(q "SELECT ready_or_scheduled FROM queue_metrics WHERE queue = 'bench'")
    [ "${ready:-0}" -ge "$1" ] || refill $(($1 - ${ready:-0}))
}
drain_for() { pgbench -n -M prepared -U cq_drain -c "$clients" -j "$clients" -T "$1" -f "$bench/sql/cq_drain.sql" >/dev/null 2>&1; }
drain() {
    top_up $((seconds * 25000))
    local c0 c1
    c0=$(completed)
    drain_for "$seconds"
    c1=$(completed)
    echo $(( (c1 - c0) / seconds ))
}

echo "claimqueue dashboard bench, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, PostgreSQL $(q 'SHOW server_version')"
echo "  $history finished jobs kept ($size, loaded in $load_s s), a drain of $clients clients"
echo

# 1. Page times while a drain runs.
top_up 2000000
pgbench -n -M prepared -U cq_drain -c "$clients" -j "$clients" -T 100000 -f "$bench/sql/cq_drain.sql" >/dev/null 2>&1 &
drain_pid=$!; background+=("$drain_pid")
sleep 2
# Each page's time, then the CPU one fetch of it takes: the dashboard's Node
# process and its backends, over $fetches more fetches.
dash_cpu() { python3 "$bench/cpu_share.py" --now "pid:$dash_pid" "title: cq_dashboard "; }
echo "| page | median ms | p95 ms | CPU ms a fetch |"
echo "|---|--:|--:|--:|"
: >"$work/page_cpu"
for p in "${pages[@]}"; do
    row=$(page "$p" "\`$p\`")
    c0=$(dash_cpu)
    for _ in $(seq 1 "$fetches"); do curl -fsS -o /dev/null "$base$p"; done
    c1=$(dash_cpu)
    echo $((c1 - c0)) "$fetches" >>"$work/page_cpu"
    echo "$row $(awk -v c=$((c1 - c0)) -v n="$fetches" 'BEGIN { printf "%.1f |", c / n }')"
done
echo

# 2. The dashboard's CPU, watched during the same drain.
start_watch
sleep 2
python3 "$bench/cpu_share.py" "$cpu_seconds" \
    node="pid:$dash_pid" pgbench=comm:pgbench dashboard_backends="title: cq_dashboard " \
    drain_backends="title: cq_drain " server_other=comm:postgres >"$work/cpu"
stop_watch
kill "$drain_pid" 2>/dev/null; wait "$drain_pid" 2>/dev/null || true
cpu() { awk -v g="$1" '$1 == g { print $2 }' "$work/cpu"; }
read -r round lo hi < <(awk '{ c = $1 / $2; s += c; if (NR == 1 || c < lo) lo = c; if (c > hi) hi = c }
    END { printf "%.1f %.1f %.1f\n", s, lo, hi }' "$work/page_cpu")
awk -v node="$(cpu node)" -v back="$(cpu dashboard_backends)" -v dback="$(cpu drain_backends)" \
    -v bench="$(cpu pgbench)" -v other="$(cpu server_other)" -v cores="$(nproc)" -v poll="$poll" \
    -v n="${#pages[@]}" -v s="$cpu_seconds" -v round="$round" -v lo="$lo" -v hi="$hi" 'BEGIN {
    dash = node + back; drain = dback + bench
    printf "CPU over %d s of a drain, every page (%d) watched every %d s, in CPU seconds per second:\n", s, n, poll
    printf "  the dashboard: %.4f (Node %.4f, its backends %.4f)\n", dash, node, back
    printf "  the drain: %.4f (its backends %.4f, pgbench %.4f); the server'\''s other processes %.4f\n", drain, dback, bench, other
    printf "  the dashboard'\''s share: %.2f %% of the drain'\''s CPU, %.2f %% of the %d cores\n", dash / drain * 100, dash / cores * 100, cores
    printf "  one round of the %d pages (the table): %.1f ms of CPU; one page open in a browser, refreshed every %d s:\n", n, round, poll
    printf "    %.3f %% to %.3f %% of the %d cores, %.2f %% to %.2f %% of the drain'\''s CPU\n", lo / (poll * 1000) / cores * 100, hi / (poll * 1000) / cores * 100, cores, lo / (poll * 1000) / drain * 100, hi / (poll * 1000) / drain * 100
}'
echo

# 3. Wall clock: pairs of drains without and with the watcher, the order
# swapped each round.
without=()
with=()
ratios=()
for round in $(seq 1 "$rounds"); do
    if [ $((round % 2)) = 1 ]; then
        a=$(drain); start_watch; b=$(drain); stop_watch
    else
        start_watch; b=$(drain); stop_watch; a=$(drain)
    fi
    without+=("$a"); with+=("$b")
    ratios+=("$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b / a }')")
done
stats() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1; s += $1 }
    END { printf "median %s, min %s, max %s, mean %.3f", v[int((NR + 1) / 2)], v[1], v[NR], s / NR }'; }
echo "drain jobs/s without the dashboard: ${without[*]}"
echo "drain jobs/s with it watched:       ${with[*]}"
echo "with/without, pair by pair: ${ratios[*]} ($(stats "${ratios[@]}"))"

#!/usr/bin/env bash
# The dashboard's page of done jobs (/queues/Q?state=done), which starts its
# walk of the primary key at queue_metrics.done_id_bound, against today's
# statement without the bound and against an index of done jobs by queue and
# finish time, jobs_done_idx (queue_id, finished_at, id)
# WHERE state = 'done': the page's statement today (by id, newest first: the
# primary key) and the same page by finish time (newest first: the index),
# their plans and their times while a drain runs, and what the index costs the
# drain (every completion then writes one more index entry). A throwaway
# cluster (bench/dashboard_cluster.sh). Drains
# alternate without and with the index, the order swapped each round, to
# spread the machine's noise over both; a drain's rate is the jobs it
# completed. bench/instructions.sh with SETUP_SQL creating the index gives the
# cost without the noise. The queue is counted (recount_queue_metrics()) after
# the history is loaded and before the ready jobs are enqueued, as on a server
# that has run a while: its bound is then below the ready jobs, and the drain's
# completions raise it. (Counted after a restart with a backlog, the bound is
# the newest job's id, and the first page walks as it did without it until
# the drain's completions pass it.)
# Figures only, nothing asserted.
#
#   bash bench/done_page.sh    (BENCH_HISTORY=2000000 finished jobs, BENCH_AHEAD=500000 ready
#                               jobs enqueued after them, BENCH_ROUNDS=4 pairs of drains (0: none),
#                               BENCH_SECONDS=20 per drain, BENCH_FETCHES=20 per page,
#                               BENCH_CLIENTS=2 drainers)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/dashboard_cluster.sh"

history=${BENCH_HISTORY:-2000000}
ahead=${BENCH_AHEAD:-500000}
rounds=${BENCH_ROUNDS:-4}
seconds=${BENCH_SECONDS:-20}
fetches=${BENCH_FETCHES:-20}
clients=${BENCH_CLIENTS:-2}
index_on() { q "CREATE INDEX IF NOT EXISTS jobs_done_idx ON claimqueue.jobs (queue_id, finished_at, id) WHERE state = 'done'" 2>/dev/null; }
index_off() { q "DROP INDEX IF EXISTS claimqueue.jobs_done_idx" 2>/dev/null; }

t0=$SECONDS
load_history "$history"
q "SELECT claimqueue.recount_queue_metrics()" >/dev/null
# Ready jobs after the history: a page of done jobs read by the primary key,
# newest first, passes all of them before it reaches the first done job.
for _ in $(seq 1 $((ahead / 100000))); do refill 100000; done
load_s=$((SECONDS - t0))
q "VACUUM ANALYZE claimqueue.jobs"
size=$(q "SELECT pg_size_pretty(pg_total_relation_size('claimqueue.jobs'))")
queue_id=$(q "SELECT queue_id FROM queue_settings WHERE queue = 'bench'")

start_dashboard

echo "claimqueue done-page bench, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, PostgreSQL $(q 'SHOW server_version')"
echo "  $history finished jobs and $ahead ready ones after them ($size, loaded in $load_s s)"
echo

# The page's statement (Inspector.jobsQuery, state done) as it is today, by id
# (the primary key), and by finish time (what jobs_done_idx serves), each for
# the first page and for a page in the middle of the history.
cols="id, state, attempt, finished_at, worker, last_error"
by_id="SELECT $cols FROM queue_jobs WHERE queue_id = $queue_id AND state = 'done'"
mid=$(q "SELECT id || ' ' || finished_at FROM claimqueue.jobs WHERE queue_id = $queue_id AND state = 'done' ORDER BY id LIMIT 1 OFFSET $((history / 2))")
mid_id=${mid%% *}
mid_at=${mid#* }
declare -A stmt=(
    [id_first]="$by_id ORDER BY id DESC LIMIT 51"
    [id_later]="$by_id AND id < $mid_id ORDER BY id DESC LIMIT 51"
    [bound_first]="$by_id AND id <= coalesce((SELECT done_id_bound FROM queue_metrics WHERE queue = 'bench'), 9223372036854775807) ORDER BY id DESC LIMIT 51"
    [finished_first]="$by_id ORDER BY finished_at DESC, id DESC LIMIT 51"
    [finished_later]="$by_id AND (finished_at, id) < ('$mid_at', $mid_id) ORDER BY finished_at DESC, id DESC LIMIT 51")
plan() { q "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, SUMMARY OFF) ${stmt[$1]}" | grep -E 'Scan|Rows Removed|Sort|Buffers' | head -4; }
# Median and 95th percentile of $fetches runs of a statement, in psql.
timed() {
    { echo '\timing on'; for _ in $(seq 1 "$fetches"); do echo "${stmt[$1]};"; done; } |
        psql -qXAt -o /dev/null 2>&1 | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | sort -n |
        awk -v label="$2" '{ t[NR] = $1 } END { printf "| %s | %.1f | %.1f |\n", label, t[int((NR + 1) / 2)], t[int(NR * 0.95 + 0.5)] }'
}

# The drain: each loop claims one job (a transaction) and completes it (another).
# Its rate is the queue's completed total over the run (a loop that found the
# queue empty completes nothing), the backlog topped up first.
completed() { q "SELECT completed FROM queue_metrics WHERE queue = 'bench'"; }
drain() {
    local ready
    ready=$(q "SELECT count(*) FROM claimqueue.jobs WHERE queue_id = $queue_id AND state = 'ready'")
    [ "$ready" -ge $((seconds * 25000)) ] || refill $((seconds * 25000 - ready))
    q "CHECKPOINT"
    local c0 c1
    c0=$(completed)
    pgbench -n -M prepared -c "$clients" -j "$clients" -T "$seconds" -f "$bench/sql/cq_drain.sql" >/dev/null 2>&1
    c1=$(completed)
    echo $(( (c1 - c0) / seconds ))
}

index_off
echo "Plans without jobs_done_idx (done_id_bound $(q "SELECT done_id_bound FROM queue_metrics WHERE queue = 'bench'")):"
for k in id_first bound_first id_later finished_first; do echo "  $k:"; plan "$k" | sed 's/^/    /'; done
t1=$SECONDS; index_on; build_s=$((SECONDS - t1))
echo "Plans with jobs_done_idx (built in $build_s s, $(q "SELECT pg_size_pretty(pg_relation_size('claimqueue.jobs_done_idx'))")):"
for k in id_first finished_first finished_later; do echo "  $k:"; plan "$k" | sed 's/^/    /'; done
echo

# Times while a drain runs (in the background, as long as the fetches take).
refill $((seconds * 25000))
pgbench -n -M prepared -c "$clients" -j "$clients" -T $((seconds * 6)) -f "$bench/sql/cq_drain.sql" >/dev/null 2>&1 &
bg=$!
sleep 2
echo "While a drain of $clients clients runs:"
echo
echo "| what | median ms | p95 ms |"
echo "|---|--:|--:|"
index_off
page "/queues/bench?state=done" "page \`/queues/bench?state=done\` (from done_id_bound, no index)"
later_cursor=$(printf '["%s"]' "$mid_id" | base64 -w0 | tr '+/' '-_' | tr -d '=')
page "/queues/bench?state=done&after=$later_cursor" "its page after id $mid_id"
timed id_first "statement by id, first page, no index, without the bound"
timed bound_first "statement by id, first page, no index, from done_id_bound"
timed id_later "statement by id, after id $mid_id, no index"
index_on
timed finished_first "statement by finish time, first page, jobs_done_idx"
timed finished_later "statement by finish time, a middle page, jobs_done_idx"
wait "$bg" || true
echo

[ "$rounds" -gt 0 ] || exit 0
without=()
with=()
for round in $(seq 1 "$rounds"); do
    if [ $((round % 2)) = 1 ]; then
        index_off; without+=("$(drain)")
        index_on; with+=("$(drain)")
    else
        index_on; with+=("$(drain)")
        index_off; without+=("$(drain)")
    fi
done
stats() { printf '%s\n' "$@" | awk '{ s += $1; if (NR == 1 || $1 < lo) lo = $1; if ($1 > hi) hi = $1 }
    END { printf "mean %.0f, min %.0f, max %.0f, spread %.1f %% of the mean", s / NR, lo, hi, (hi - lo) / (s / NR) * 100 }'; }
mean() { printf '%s\n' "$@" | awk '{ s += $1 } END { printf "%.1f", s / NR }'; }
echo "drain jobs/s (completed) without the index: ${without[*]} ($(stats "${without[@]}"))"
echo "drain jobs/s (completed) with the index:    ${with[*]} ($(stats "${with[@]}"))"
awk -v w="$(mean "${without[@]}")" -v d="$(mean "${with[@]}")" 'BEGIN { printf "the index costs the drain %.1f %% (means)\n", (w - d) / w * 100 }'

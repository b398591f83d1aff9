#!/usr/bin/env bash
# Stress test: concurrent workers drain a queue through pgbench; afterwards
# every job must be done exactly once with exactly one recorded effect.
# See README.md in this directory.
#
# Connection: the usual PG* variables (PGHOST, PGPORT, PGUSER, PGPASSWORD),
# as pg_virtualenv sets them; the user must be a superuser (CREATE EXTENSION
# claimqueue requires one).
#
#   cd /path/to/claimqueue
#   pg_virtualenv -t -o shared_preload_libraries=claimqueue bash test/stress/run.sh
#
# Environment:
#   STRESS_JOBS       jobs to enqueue and drain (default 50000)
#   STRESS_CLIENTS    pgbench clients, i.e. concurrent workers (default 8)
#   STRESS_THREADS    pgbench threads (default 2)
#   STRESS_TIMEOUT    give up draining after this many seconds (default 600)
#   STRESS_DB         database to create (default claimqueue_stress)
#   STRESS_KEEP_DB    1 keeps the database afterwards for inspection (default 0)
#   STRESS_ROLLBACK_PCT  percentage of worker transactions that roll back
#                     instead of committing, simulating crashed workers (default 0)
#   STRESS_SCRIPT     pgbench script to run instead of test/stress/worker.sql
#   CLAIMQUEUE_ADMIN_DB  database to connect to for CREATE/DROP DATABASE (default postgres)
# Exits non-zero when a check fails, pgbench reports errors, or the queue is
# not drained in time.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo_root"

jobs=${STRESS_JOBS:-50000}
clients=${STRESS_CLIENTS:-8}
threads=${STRESS_THREADS:-2}
timeout_s=${STRESS_TIMEOUT:-600}
rollback_pct=${STRESS_ROLLBACK_PCT:-0}
db=${STRESS_DB:-claimqueue_stress}
keep_db=${STRESS_KEEP_DB:-0}
admin_db=${CLAIMQUEUE_ADMIN_DB:-postgres}
script=${STRESS_SCRIPT:-test/stress/worker.sql}
batch=5000   # payloads per enqueue_batch() call

if ! [[ $rollback_pct =~ ^[0-9]+$ ]] || [ "$rollback_pct" -gt 50 ]; then
    echo "stress: STRESS_ROLLBACK_PCT must be an integer from 0 to 50, not '$rollback_pct'" >&2
    exit 2
fi
name=stress
. "$repo_root/test/stress/lib.sh"
positive_integers jobs clients threads timeout_s
for tool in psql pgbench timeout; do
    command -v "$tool" >/dev/null || { echo "stress: $tool not found in PATH" >&2; exit 2; }
done

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# --- setup -------------------------------------------------------------------
fresh_db

sql <<'SQL'
CREATE EXTENSION claimqueue;
SELECT create_queue('stress') \g /dev/null
-- The side effect of each job. Deliberately no unique key: a job whose effect
-- is recorded twice must show up in the reconciliation, not be prevented.
CREATE TABLE effects (
    job_id      bigint NOT NULL,
    attempt     integer NOT NULL,
    worker      text NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
SQL

echo "stress: enqueueing $jobs jobs into queue 'stress' (enqueue_batch, $batch per call)"
t0=$(now)
enqueued=0
while [ "$enqueued" -lt "$jobs" ]; do
    hi=$(( enqueued + batch < jobs ? enqueued + batch : jobs ))
    n=$(val "SELECT count(*) FROM enqueue_batch('stress',
                 ARRAY(SELECT jsonb_build_object('n', g) FROM generate_series($enqueued + 1, $hi) g))")
    enqueued=$(( enqueued + n ))
    [ "$n" -gt 0 ] || { echo "stress: enqueue_batch returned no ids" >&2; exit 1; }
done
sql -c "VACUUM ANALYZE claimqueue.jobs"
echo "stress: enqueued $enqueued jobs in $(secs "$t0" "$(now)") s"

# --- drain -------------------------------------------------------------------
# Rounds of pgbench, each with enough transactions per client to drain what is
# left; a transaction that finds nothing claimable does nothing, so later
# rounds only pick up stragglers. Bounded by STRESS_TIMEOUT overall.
ready() { val "SELECT count(*) FROM claimqueue.jobs WHERE state = 'ready'"; }

echo "stress: draining with pgbench -c $clients -j $threads -M prepared" \
     "(rollback ${rollback_pct}%, timeout ${timeout_s}s)"
pgbench_failed=0
stalled=""   # why draining stopped early, if it did
round=0
idle=0
max_rounds=20
t_start=$(now)
deadline=$(( $(date +%s) + timeout_s ))
left=$(ready)
while [ "$left" -gt 0 ]; do
    budget=$(( deadline - $(date +%s) ))
    if [ "$budget" -le 0 ]; then
        stalled="not drained within ${timeout_s}s"
        break
    fi
    if [ "$round" -ge "$max_rounds" ]; then
        stalled="not drained after $max_rounds pgbench rounds"
        break
    fi
    round=$(( round + 1 ))
    per_client=$(( (left + clients - 1) / clients ))
    echo "stress: round $round: $left ready, $per_client transactions per client"
    rc=0
    timeout "$budget" pgbench -n -M prepared -c "$clients" -j "$threads" -t "$per_client" \
        -D rollback_pct="$rollback_pct" -P 10 -f "$script" "$db" || rc=$?
    if [ "$rc" -eq 124 ]; then
        stalled="not drained within ${timeout_s}s (pgbench stopped)"
        break
    elif [ "$rc" -ne 0 ]; then
        pgbench_failed=1
        echo "stress: pgbench exited with status $rc" >&2
        break
    fi
    before=$left
    left=$(ready)
    # A round can make no progress by bad luck when transactions roll back on
    # purpose; three in a row means the queue is stuck.
    if [ "$left" -ge "$before" ]; then
        idle=$(( idle + 1 ))
        if [ "$idle" -ge 3 ]; then
            stalled="no progress in $idle rounds in a row"
            break
        fi
    else
        idle=0
    fi
done
t_end=$(now)
elapsed=$(secs "$t_start" "$t_end")

# --- reconcile ---------------------------------------------------------------
# One row per check: name, expected, actual. Statistics and an index first, so
# the planner hashes or indexes instead of nested-looping over 2 x N rows.
sql -c "CREATE INDEX effects_job_id_idx ON effects (job_id)" -c "ANALYZE effects, claimqueue.jobs"
checks=$(psql -X -q -v ON_ERROR_STOP=1 -At -F '|' -d "$db" -v n="$jobs" <<'SQL'
SELECT queue_id AS qid FROM claimqueue.queues WHERE name = 'stress' \gset
SELECT 'jobs in queue',                        :n, (SELECT count(*) FROM claimqueue.jobs WHERE queue_id = :qid)
UNION ALL
SELECT 'jobs done',                            :n,
       (SELECT count(*) FROM claimqueue.jobs WHERE queue_id = :qid AND state = 'done')
UNION ALL
SELECT 'jobs in any other state',              0,
       (SELECT count(*) FROM claimqueue.jobs WHERE queue_id = :qid AND state <> 'done')
UNION ALL
SELECT 'effect rows',                          :n, (SELECT count(*) FROM effects)
UNION ALL
SELECT 'jobs with more than one effect',       0,
       (SELECT count(*) FROM (SELECT job_id FROM effects GROUP BY job_id HAVING count(*) > 1) d)
UNION ALL
SELECT 'done jobs without an effect',          0,
       (SELECT count(*) FROM claimqueue.jobs j WHERE j.queue_id = :qid AND j.state = 'done'
          AND NOT EXISTS (SELECT 1 FROM effects e WHERE e.job_id = j.id))
UNION ALL
SELECT 'effects of no job in the queue',       0,
       (SELECT count(*) FROM effects e WHERE NOT EXISTS
          (SELECT 1 FROM claimqueue.jobs j WHERE j.id = e.job_id AND j.queue_id = :qid))
UNION ALL
SELECT 'effects whose attempt <> job attempt', 0,
       (SELECT count(*) FROM effects e JOIN claimqueue.jobs j ON j.id = e.job_id
         WHERE e.attempt <> j.attempt)
UNION ALL
SELECT 'effects whose worker <> job worker',   0,
       (SELECT count(*) FROM effects e JOIN claimqueue.jobs j ON j.id = e.job_id
         WHERE e.worker IS DISTINCT FROM j.worker)
UNION ALL
SELECT 'queue_stats done',                     :n,
       (SELECT done FROM queue_stats WHERE queue = 'stress');
SQL
)

echo
echo "stress: reconciliation ($jobs jobs, $clients clients, rollback ${rollback_pct}%)"
failed=0
while IFS='|' read -r name expected actual; do
    if [ "$expected" = "$actual" ]; then mark=ok; else mark=FAIL; failed=1; fi
    printf '  %-38s expected %8s  got %8s  %s\n' "$name" "$expected" "$actual" "$mark"
done <<<"$checks"

# Information only: how often jobs were claimed more than once, the spread
# over workers, and throughput.
echo
echo "stress: information"
val "SELECT '  max attempt: ' || coalesce(max(attempt), 0)
            || ', jobs claimed more than once: ' || count(*) FILTER (WHERE attempt > 1)
     FROM claimqueue.jobs"
val "SELECT '  workers: ' || count(*) || ', effects per worker min/max: '
            || coalesce(min(n), 0) || '/' || coalesce(max(n), 0)
     FROM (SELECT worker, count(*) AS n FROM effects GROUP BY worker) w"
done_jobs=$(val "SELECT count(*) FROM claimqueue.jobs WHERE state = 'done'")
awk -v n="$done_jobs" -v s="$elapsed" -v r="$round" 'BEGIN {
    printf "  drained %d jobs in %.1f s over %d pgbench round(s): %.0f jobs/s\n", n, s, r, (s > 0 ? n / s : 0)
}'

echo
status=0
if [ "$pgbench_failed" = 1 ]; then
    echo "stress: FAIL: pgbench reported errors (a worker transaction failed)"
    status=1
fi
if [ -n "$stalled" ]; then
    echo "stress: FAIL: $stalled ($(ready) jobs still ready)"
    status=1
fi
if [ "$failed" = 1 ]; then
    echo "stress: FAIL: reconciliation does not balance"
    status=1
fi
[ "$status" = 0 ] && echo "stress: PASS"
exit "$status"

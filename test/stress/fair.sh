#!/usr/bin/env bash
# Stress test of fair claiming (issue 17.2): in a fair queue, tenant a's jobs
# are enqueued before tenant b's 100 and before 500 jobs without a key, then
# concurrent workers drain it through pgbench. Every job must be done exactly
# once with one recorded effect, and all of b's jobs must be among the first
# 1,000 claims: one job of each tenant in turn (a, b, and the jobs without a
# key) puts b's last claim near claim 300, where a queue that is not fair
# would claim b's jobs after all of a's. A second run does it again (with
# fewer jobs of a) once the queue is also at max_running_per_key 4, while a
# sampler reads the committed running count per key: no sample may show a
# key above 4. See README.md in this directory.
#
#   pg_virtualenv -t -o shared_preload_libraries=claimqueue bash test/stress/fair.sh
#
# Environment:
#   FAIR_JOBS      jobs of tenant a in the first run (default 20000)
#   FAIR_CAPPED_JOBS  jobs of tenant a in the second, capped run (default 4000)
#   FAIR_CLIENTS   pgbench clients, i.e. concurrent workers (default 16)
#   FAIR_TIMEOUT   give up draining after this many seconds (default 300)
#   FAIR_DB        database to create (default claimqueue_fair)
#   CLAIMQUEUE_ADMIN_DB  database for CREATE/DROP DATABASE (default postgres)
# Exits non-zero when a check fails.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo_root"

jobs=${FAIR_JOBS:-20000}
capped_jobs=${FAIR_CAPPED_JOBS:-4000}
clients=${FAIR_CLIENTS:-16}
timeout_s=${FAIR_TIMEOUT:-300}
db=${FAIR_DB:-claimqueue_fair}
admin_db=${CLAIMQUEUE_ADMIN_DB:-postgres}
name=fair
. "$repo_root/test/stress/lib.sh"
positive_integers jobs capped_jobs clients timeout_s
b_jobs=100         # tenant b's jobs, enqueued after all of a's
keyless_jobs=500   # jobs without a key, enqueued last
first_claims=1000  # all of b's jobs must be among this many first claims of a run
per_key=4          # the second run's max_running_per_key

t_start=$(date +%s.%N)
fresh_db

sql <<'SQL'
CREATE EXTENSION claimqueue;
SELECT create_queue('fair', lease => '10 minutes', fair => true) \g /dev/null
-- The order of claims: each worker draws the next number in the statement
-- that claims the job, once dequeue() has returned, before that statement
-- commits (fair_worker.sql). A sequence gives no ties and is not rolled back,
-- and its numbers follow the order in which claims return; two claims that
-- return at the same moment may take each other's number, which is the
-- noise of concurrency the bound on b's last claim leaves room for. A
-- timestamp would order less well: recorded_at is taken after the claim has
-- committed and can tie, and a job's started_at is the claim's transaction
-- start, which a worker waiting for the CPU may have taken well before its
-- claim was made.
CREATE SEQUENCE claim_order;
-- No unique key: a doubled effect must show in the counts, not be refused.
CREATE TABLE effects (
    claim       bigint NOT NULL,
    run         integer NOT NULL,
    job_id      bigint NOT NULL,
    attempt     integer NOT NULL,
    worker      text NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
SQL
sql -f test/stress/sampler.sql

left_in_queue() {
    val "SELECT count(*) FROM claimqueue.jobs j JOIN claimqueue.queues q USING (queue_id)
          WHERE q.name = 'fair' AND j.state IN ('ready', 'running')"
}

status=0
log=$(mktemp)
for run in 1 2; do
    a_jobs=$jobs
    if [ "$run" = 2 ]; then
        a_jobs=$capped_jobs
        sql -c "SELECT alter_queue('fair', max_running_per_key => $per_key)" >/dev/null
    fi
    total=$(( a_jobs + b_jobs + keyless_jobs ))
    # a's jobs first (in batches of 5,000), then b's, then those without a key;
    # each payload names its run.
    for ((from = 1; from <= a_jobs; from += 5000)); do
        to=$(( from + 4999 < a_jobs ? from + 4999 : a_jobs ))
        sql -c "SELECT count(*) FROM (SELECT enqueue_batch('fair',
                    array_agg(jsonb_build_object('run', $run, 'n', g) ORDER BY g), concurrency_key => 'a')
                  FROM generate_series($from, $to) g) e" >/dev/null
    done
    sql -c "SELECT count(*) FROM (SELECT enqueue_batch('fair',
                array_agg(jsonb_build_object('run', $run, 'n', g) ORDER BY g), concurrency_key => 'b')
              FROM generate_series(1, $b_jobs) g) e" >/dev/null
    sql -c "SELECT count(*) FROM (SELECT enqueue_batch('fair',
                array_agg(jsonb_build_object('run', $run, 'n', g) ORDER BY g))
              FROM generate_series(1, $keyless_jobs) g) e" >/dev/null
    sql -c "VACUUM ANALYZE claimqueue.jobs"
    if [ "$run" = 2 ]; then
        psql -X -q -d "$db" -c "CALL sample_running('fair', now() + interval '$timeout_s seconds')" &
        sampler_pid=$!
        echo "fair: run 2: draining $total jobs with $clients workers, max_running_per_key $per_key"
    else
        echo "fair: run 1: draining $total jobs with $clients workers"
    fi
    # Rounds of pgbench, each with enough iterations for every job left; a
    # round leaves jobs when claims found nothing (rows skipped as locked, a
    # key at its limit). A claim takes milliseconds: one still running after
    # 60 s is cut off by statement_timeout (pgbench then reports an error), so
    # a claim that never returns fails the test instead of holding it forever.
    t0=$(date +%s.%N)
    deadline=$(( $(date +%s) + timeout_s ))
    left=$total
    rounds=0
    stalled=0
    while [ "$left" -gt 0 ]; do
        if [ "$(date +%s)" -ge "$deadline" ]; then
            echo "fair: FAIL: run $run not drained within ${timeout_s}s ($left jobs left)" >&2
            status=1
            break
        fi
        rounds=$((rounds + 1))
        per_client=$(( (left + clients - 1) / clients + 5 ))
        PGOPTIONS="-c statement_timeout=60s" \
            pgbench -n -M prepared -c "$clients" -j 2 -t "$per_client" -D queue=fair -D run="$run" \
                -f test/stress/fair_worker.sql "$db" >"$log" 2>&1 ||
            { cat "$log" >&2; echo "fair: FAIL: pgbench reported errors" >&2; status=1; break; }
        now_left=$(left_in_queue)
        if [ "$now_left" -ge "$left" ]; then
            stalled=$((stalled + 1))
            if [ "$stalled" -ge 3 ]; then
                echo "fair: FAIL: run $run made no progress in 3 rounds ($now_left jobs left)" >&2
                status=1
                break
            fi
        else
            stalled=0
        fi
        left=$now_left
    done
    [ "$status" = 0 ] || break
    if [ -n "$sampler_pid" ]; then
        wait "$sampler_pid"
        sampler_pid=""
    fi
    awk -v a="$t0" -v b="$(date +%s.%N)" -v n="$total" -v r="$rounds" \
        'BEGIN { printf "fair: drained in %.1f s (%.0f jobs/s, %d pgbench rounds)\n", b - a, n / (b - a), r }'
done

# Per run: name|expected|actual|verdict. verdict t or f for a bound, empty
# when expected and actual must be equal; expected 'info' is printed only.
checks=$(psql -X -q -v ON_ERROR_STOP=1 -At -F '|' -d "$db" \
              -v total1="$(( jobs + b_jobs + keyless_jobs ))" \
              -v total2="$(( capped_jobs + b_jobs + keyless_jobs ))" \
              -v nb="$b_jobs" -v first="$first_claims" -v per_key="$per_key" <<'SQL'
CREATE TEMP TABLE run_jobs AS
SELECT (j.payload->>'run')::int AS run, j.id, j.state, j.attempt,
       coalesce(j.concurrency_key, '(none)') AS tenant
  FROM claimqueue.jobs j JOIN claimqueue.queues q USING (queue_id) WHERE q.name = 'fair';
-- Each effect with its rank in its run's claim order (1: the run's first claim).
CREATE TEMP TABLE ranked AS
SELECT e.run, e.job_id, j.tenant, row_number() OVER (PARTITION BY e.run ORDER BY e.claim) AS rank
  FROM effects e LEFT JOIN run_jobs j ON j.id = e.job_id AND j.run = e.run;
-- Temporary tables are not analyzed automatically: without statistics the
-- planner takes them for small and joins them with nested loops.
ANALYZE run_jobs;
ANALYZE ranked;
ANALYZE effects;
SELECT 'run ' || x.rn || ': ' || c.name, c.expected, c.actual, c.verdict
FROM (VALUES (1, :total1), (2, :total2)) AS x(rn, total),
LATERAL (VALUES
  (1, 'jobs done', x.total::text,
   (SELECT count(*) FROM run_jobs j WHERE j.run = x.rn AND j.state = 'done')::text, NULL::bool),
  (2, 'jobs in any other state', '0',
   (SELECT count(*) FROM run_jobs j WHERE j.run = x.rn AND j.state <> 'done')::text, NULL),
  (3, 'effect rows', x.total::text,
   (SELECT count(*) FROM effects e WHERE e.run = x.rn)::text, NULL),
  (4, 'jobs with more than one effect', '0',
   (SELECT count(*) FROM (SELECT e.job_id FROM effects e WHERE e.run = x.rn
                           GROUP BY e.job_id HAVING count(*) > 1) d)::text, NULL),
  (5, 'done jobs without an effect', '0',
   (SELECT count(*) FROM run_jobs j WHERE j.run = x.rn AND j.state = 'done'
       AND NOT EXISTS (SELECT 1 FROM effects e WHERE e.job_id = j.id AND e.run = x.rn))::text, NULL),
  (6, 'effects without a job of the run', '0',
   (SELECT count(*) FROM ranked k WHERE k.run = x.rn AND k.tenant IS NULL)::text, NULL),
  (7, 'effects whose attempt <> job attempt', '0',
   (SELECT count(*) FROM effects e JOIN run_jobs j ON j.id = e.job_id
     WHERE e.run = x.rn AND e.attempt <> j.attempt)::text, NULL),
  (8, 'b''s jobs among the first ' || :first || ' claims', :nb::text,
   (SELECT count(*) FROM ranked k WHERE k.run = x.rn AND k.tenant = 'b' AND k.rank <= :first)::text, NULL),
  (9, 'rank of b''s last claim', '<= ' || :first,
   (SELECT max(k.rank) FROM ranked k WHERE k.run = x.rn AND k.tenant = 'b')::text,
   coalesce((SELECT max(k.rank) <= :first FROM ranked k WHERE k.run = x.rn AND k.tenant = 'b'), false)),
  (10, 'rank of the last claim without a key', 'info',
   (SELECT max(k.rank) FROM ranked k WHERE k.run = x.rn AND k.tenant = '(none)')::text, NULL),
  (11, 'tenants of the first 12 claims (-: no key)', 'info',
   (SELECT string_agg(CASE k.tenant WHEN '(none)' THEN '-' ELSE k.tenant END, ' ' ORDER BY k.rank)
      FROM ranked k WHERE k.run = x.rn AND k.rank <= 12), NULL),
  (12, 'samples of the running jobs', 'info',
   (SELECT max(s.sample) FROM samples s)::text, NULL),
  (13, 'most running of a key in a sample (limit ' || :per_key || ')', 'info',
   (SELECT max(s.running) FROM samples s WHERE s.key <> '(queue)')::text, NULL),
  (14, 'samples with a key above ' || :per_key || ' running', '0',
   (SELECT count(*) FROM samples s WHERE s.key <> '(queue)' AND s.running > :per_key)::text, NULL)
) AS c(ord, name, expected, actual, verdict)
WHERE x.rn = 2 OR c.ord < 12
ORDER BY x.rn, c.ord;
SQL
)
echo
echo "fair: reconciliation (run 1: $jobs jobs of a, run 2: $capped_jobs of a and max_running_per_key $per_key;"
echo "      then $b_jobs of b and $keyless_jobs without a key in each; $clients workers)"
while IFS='|' read -r name expected actual verdict; do
    if [ "$expected" = info ]; then
        mark=""
    elif [ -n "$verdict" ]; then
        if [ "$verdict" = t ]; then mark=ok; else mark=FAIL; status=1; fi
    elif [ "$expected" = "$actual" ]; then
        mark=ok
    else
        mark=FAIL; status=1
    fi
    printf '  %-56s expected %8s  got %8s  %s\n' "$name" "$expected" "$actual" "$mark"
done <<<"$checks"
echo
awk -v a="$t_start" -v b="$(date +%s.%N)" 'BEGIN { printf "fair: %.1f s in all\n", b - a }'
if [ "$status" = 0 ]; then echo "fair: PASS"; else echo "fair: FAIL"; fi
exit "$status"

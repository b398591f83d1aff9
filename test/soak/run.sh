#!/usr/bin/env bash
# Fault-injection soak: SOAK_WORKERS node-postgres connections drain SOAK_JOBS
# jobs while faults are injected at random (soak.mjs): workers die right after
# a claim, an admin connection kills worker backends (pg_terminate_backend),
# workers stall past their lease and complete late, fail jobs, heartbeat. The
# reaper returns what the dead left behind. With SOAK_RESTART=1 the server is
# also stopped with `pg_ctl stop -m immediate` a third of the way through and
# started again. Then every job is reconciled (see the checks below).
#
#   pg_virtualenv -t -o shared_preload_libraries=claimqueue bash test/soak/run.sh
#
#   SOAK_JOBS=100000  SOAK_WORKERS=16  SOAK_LEASE_MS=1000  SOAK_RESTART=0|1
set -euo pipefail
cd "$(dirname "$0")"
jobs=${SOAK_JOBS:-100000}
workers=${SOAK_WORKERS:-16}
lease_ms=${SOAK_LEASE_MS:-1000}
restart=${SOAK_RESTART:-0}
db=claimqueue_soak

command -v node >/dev/null && command -v npm >/dev/null || { echo "soak: node/npm not installed"; exit 1; }
[ -d node_modules/pg ] || npm install --no-audit --no-fund --silent >/dev/null

q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
q -d postgres -c "ALTER SYSTEM SET claimqueue.reaper_interval = '200ms'" -c "SELECT pg_reload_conf()" >/dev/null
q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
q -d $db <<SQL
SET client_min_messages = error;
CREATE EXTENSION claimqueue;
SELECT create_queue('soak', lease => make_interval(secs => $lease_ms / 1000.0), max_attempts => 2,
                    backoff_base => '0', backoff_cap => '0') IS NOT NULL;
-- No unique constraint: a duplicate effect must be counted, not prevented.
CREATE TABLE soak_effects (job_id bigint, attempt int, worker text);
SQL
for ((from = 1; from <= jobs; from += 5000)); do
    to=$((from + 4999 < jobs ? from + 4999 : jobs))
    q -d $db -c "SELECT count(*) FROM enqueue_batch('soak',
                   (SELECT array_agg(jsonb_build_object('n', g)) FROM generate_series($from, $to) g))" >/dev/null
done
echo "soak: $jobs jobs enqueued, $workers workers, lease ${lease_ms} ms, immediate restart: $restart"

# A hung driver must not hang the suite: 15 minutes at most.
PGDATABASE=$db timeout 900 node soak.mjs "$workers" "$lease_ms" >soak.out 2>&1 &
node_pid=$!
if [ "$restart" = 1 ]; then
    until [ "$(q -d $db -c "SELECT count(*) FROM claimqueue.jobs WHERE state = 'done'" 2>/dev/null || echo 0)" -ge $((jobs / 3)) ]; do
        kill -0 $node_pid 2>/dev/null || break
        sleep 0.2
    done
    pg_ctlcluster "$PGVERSION" regress stop -m immediate
    echo "soak: server stopped (-m immediate) at $(date +%T)"
    pg_ctlcluster "$PGVERSION" regress start
    echo "soak: server started again"
fi
status=0
wait $node_pid || status=$?
cat soak.out
rm -f soak.out
[ "$status" -eq 0 ] || { echo "soak: the node driver failed ($status)"; exit 1; }

read -r total done failed unfinished failed_early effects duplicated missing stray < <(q -d $db -F ' ' -c "
  SELECT (SELECT count(*) FROM claimqueue.jobs),
         count(*) FILTER (WHERE state = 'done'),
         count(*) FILTER (WHERE state = 'failed'),
         count(*) FILTER (WHERE state NOT IN ('done', 'failed')),
         count(*) FILTER (WHERE state = 'failed' AND attempt < max_attempts),
         (SELECT count(*) FROM soak_effects),
         (SELECT count(*) FROM (SELECT job_id FROM soak_effects GROUP BY job_id HAVING count(*) > 1) d),
         count(*) FILTER (WHERE state = 'done' AND NOT EXISTS
             (SELECT 1 FROM soak_effects e WHERE e.job_id = j.id AND e.attempt = j.attempt)),
         (SELECT count(*) FROM soak_effects e JOIN claimqueue.jobs f ON f.id = e.job_id WHERE f.state <> 'done')
  FROM claimqueue.jobs j")
q -d $db -c "SELECT 'attempts used: ' || string_agg(attempt || ':' || n, ' ' ORDER BY attempt)
             FROM (SELECT attempt, count(*) n FROM claimqueue.jobs GROUP BY attempt) a"
echo "soak: jobs=$total (enqueued $jobs) done=$done failed=$failed unfinished=$unfinished"
echo "soak: effects=$effects jobs_with_two_effects=$duplicated done_without_its_effect=$missing effects_of_jobs_not_done=$stray failed_before_max_attempts=$failed_early"
q -d postgres -c "DROP DATABASE $db WITH (FORCE)"
q -d postgres -c "ALTER SYSTEM RESET claimqueue.reaper_interval" -c "SELECT pg_reload_conf()" >/dev/null

ok=1
[ "$total" -eq "$jobs" ] || { echo "FAIL: $total jobs, $jobs enqueued (a job was lost)"; ok=0; }
[ "$unfinished" -eq 0 ] || { echo "FAIL: $unfinished jobs neither done nor failed"; ok=0; }
[ "$failed_early" -eq 0 ] || { echo "FAIL: $failed_early jobs failed before their last attempt"; ok=0; }
[ "$((done + failed))" -eq "$jobs" ] || { echo "FAIL: done + failed != jobs"; ok=0; }
[ "$effects" -eq "$done" ] || { echo "FAIL: $effects effect rows for $done done jobs"; ok=0; }
[ "$duplicated" -eq 0 ] || { echo "FAIL: $duplicated jobs have their effects twice"; ok=0; }
[ "$missing" -eq 0 ] || { echo "FAIL: $missing done jobs lack the effect of their completing attempt"; ok=0; }
[ "$stray" -eq 0 ] || { echo "FAIL: $stray effect rows of jobs that are not done"; ok=0; }
if [ "$ok" = 1 ]; then echo "soak: ok (every job done exactly once or failed after its last attempt)"; else exit 1; fi

#!/usr/bin/env bash
# Stress test of the concurrency limits (issue 17): concurrent workers drain
# limited queues through pgbench while a sampler reads the committed running
# counts per concurrency key, over and over; no sample may show a key (or the
# queue) above its limit, and every job must be done exactly once with one
# recorded effect. See README.md in this directory.
#
#   pg_virtualenv -t -o shared_preload_libraries=claimqueue bash test/stress/limits.sh
#
# Environment:
#   LIMITS_JOBS      jobs per queue (default 10000)
#   LIMITS_CLIENTS   pgbench clients, i.e. concurrent workers (default 16)
#   LIMITS_KEYS      concurrency keys (tenants); one job in ten has none (default 8)
#   LIMITS_TIMEOUT   give up draining a queue after this many seconds (default 300)
#   LIMITS_DB        database to create (default claimqueue_limits)
#   CLAIMQUEUE_ADMIN_DB  database for CREATE/DROP DATABASE (default postgres)
# Three queues, drained one after the other: per_key (max_running_per_key 2:
# the per-key locks), both (max_running 6 and max_running_per_key 2: the
# queue's lock) and toggled (max_running_per_key 2, while another session
# sets max_running to 100000 and removes it again every 5 ms, so claims read
# settings from either side of a change: the per-key limit, unchanged, must
# hold throughout). Exits non-zero when a check fails.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo_root"

jobs=${LIMITS_JOBS:-10000}
clients=${LIMITS_CLIENTS:-16}
keys=${LIMITS_KEYS:-8}
timeout_s=${LIMITS_TIMEOUT:-300}
db=${LIMITS_DB:-claimqueue_limits}
admin_db=${CLAIMQUEUE_ADMIN_DB:-postgres}
name=limits
. "$repo_root/test/stress/lib.sh"
positive_integers jobs clients keys timeout_s

fresh_db

sql <<'SQL'
CREATE EXTENSION claimqueue;
SELECT create_queue('per_key', lease => '10 minutes', max_running_per_key => 2) \g /dev/null
SELECT create_queue('both', lease => '10 minutes', max_running => 6, max_running_per_key => 2) \g /dev/null
SELECT create_queue('toggled', lease => '10 minutes', max_running_per_key => 2) \g /dev/null
-- Sets and removes the queue's max_running every 5 ms, each change committed,
-- until the queue has no ready or running job left (or the deadline).
CREATE TABLE toggles (max_running int NOT NULL);
CREATE PROCEDURE toggle_max_running(q text, deadline timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    limited boolean := false;
    qid int := (SELECT queue_id FROM claimqueue.queues WHERE name = q);
BEGIN
    LOOP
        limited := NOT limited;
        PERFORM alter_queue(q, max_running => CASE WHEN limited THEN 100000 ELSE 0 END);
        INSERT INTO toggles VALUES (CASE WHEN limited THEN 100000 ELSE 0 END);
        COMMIT;
        EXIT WHEN clock_timestamp() > deadline OR NOT EXISTS
            (SELECT 1 FROM claimqueue.jobs WHERE queue_id = qid AND state IN ('ready', 'running'));
        PERFORM pg_sleep(0.005);
    END LOOP;
END $$;
CREATE TABLE effects (
    job_id      bigint NOT NULL,
    attempt     integer NOT NULL,
    worker      text NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
SQL
sql -f test/stress/sampler.sql

status=0
log=$(mktemp)
toggler_pid=""
for queue in per_key both toggled; do
    # Jobs of key k(g % keys), every tenth without a key, interleaved in batches.
    for ((from = 1; from <= jobs; from += 1000)); do
        to=$(( from + 999 < jobs ? from + 999 : jobs ))
        sql -c "SELECT count(*) FROM (SELECT enqueue('$queue', jsonb_build_object('n', g),
                    concurrency_key => CASE WHEN g % 10 = 0 THEN NULL ELSE 'k' || (g % $keys) END)
                  FROM generate_series($from, $to) g) e" >/dev/null
    done
    sql -c "VACUUM ANALYZE claimqueue.jobs"
    deadline=$(( $(date +%s) + timeout_s ))
    psql -X -q -d "$db" -c "CALL sample_running('$queue', now() + interval '$timeout_s seconds')" &
    sampler_pid=$!
    if [ "$queue" = toggled ]; then
        psql -X -q -d "$db" -c "CALL toggle_max_running('$queue', now() + interval '$timeout_s seconds')" &
        toggler_pid=$!
    fi
    echo "limits: draining $jobs jobs of queue $queue with $clients workers"
    t0=$(date +%s.%N)
    while [ "$(val "SELECT count(*) FROM claimqueue.jobs j JOIN claimqueue.queues q USING (queue_id)
                    WHERE q.name = '$queue' AND j.state IN ('ready', 'running')")" -gt 0 ]; do
        if [ "$(date +%s)" -ge "$deadline" ]; then
            echo "limits: FAIL: queue $queue not drained within ${timeout_s}s" >&2
            status=1
            break
        fi
        pgbench -n -M extended -c "$clients" -j 2 -T 5 -D queue="$queue" \
            -f test/stress/limits_worker.sql "$db" >"$log" 2>&1 ||
            { cat "$log" >&2; echo "limits: FAIL: pgbench reported errors" >&2; status=1; break; }
    done
    [ "$status" = 0 ] || break
    wait "$sampler_pid"
    sampler_pid=""
    if [ -n "$toggler_pid" ]; then
        wait "$toggler_pid"
        toggler_pid=""
        echo "limits: max_running set or removed $(val "SELECT count(*) FROM toggles") times meanwhile"
    fi
    awk -v a="$t0" -v b="$(date +%s.%N)" -v n="$jobs" \
        'BEGIN { printf "limits: drained in %.1f s (%.0f jobs/s)\n", b - a, n / (b - a) }'
done

checks=$(psql -X -q -v ON_ERROR_STOP=1 -At -F '|' -d "$db" -v n="$jobs" <<'SQL'
SELECT q.name || ': samples', 'info', (SELECT count(DISTINCT sample) FROM samples s WHERE s.queue = q.name)
  FROM claimqueue.queues q WHERE q.name IN ('per_key', 'both', 'toggled')
UNION ALL
SELECT q.name || ': max running per key (limit ' || q.max_running_per_key || ')', 'info',
       (SELECT max(running) FROM samples s WHERE s.queue = q.name AND s.key LIKE 'k%')
  FROM claimqueue.queues q WHERE q.name IN ('per_key', 'both', 'toggled')
UNION ALL
SELECT q.name || ': max running in the queue (limit ' || coalesce(q.max_running::text, 'none') || ')', 'info',
       (SELECT max(running) FROM samples s WHERE s.queue = q.name AND s.key = '(queue)')
  FROM claimqueue.queues q WHERE q.name IN ('per_key', 'both', 'toggled')
UNION ALL
SELECT q.name || ': samples with a key above its limit', '0',
       (SELECT count(*) FROM samples s WHERE s.queue = q.name AND s.key LIKE 'k%'
           AND s.running > q.max_running_per_key)
  FROM claimqueue.queues q WHERE q.name IN ('per_key', 'both', 'toggled')
UNION ALL
SELECT q.name || ': samples with the queue above its limit', '0',
       (SELECT count(*) FROM samples s WHERE s.queue = q.name AND s.key = '(queue)'
           AND s.running > q.max_running)
  FROM claimqueue.queues q WHERE q.name = 'both'
UNION ALL
SELECT q.name || ': jobs done', :'n',
       (SELECT count(*) FROM claimqueue.jobs j WHERE j.queue_id = q.queue_id AND j.state = 'done')
  FROM claimqueue.queues q WHERE q.name IN ('per_key', 'both', 'toggled')
UNION ALL
SELECT q.name || ': jobs in any other state', '0',
       (SELECT count(*) FROM claimqueue.jobs j WHERE j.queue_id = q.queue_id AND j.state <> 'done')
  FROM claimqueue.queues q WHERE q.name IN ('per_key', 'both', 'toggled')
UNION ALL
SELECT 'effect rows', (3 * :n)::text, (SELECT count(*) FROM effects)
UNION ALL
SELECT 'jobs with more than one effect', '0',
       (SELECT count(*) FROM (SELECT job_id FROM effects GROUP BY job_id HAVING count(*) > 1) d)
UNION ALL
SELECT 'done jobs without an effect', '0',
       (SELECT count(*) FROM claimqueue.jobs j WHERE j.state = 'done'
          AND NOT EXISTS (SELECT 1 FROM effects e WHERE e.job_id = j.id))
UNION ALL
SELECT 'effects whose attempt <> job attempt', '0',
       (SELECT count(*) FROM effects e JOIN claimqueue.jobs j ON j.id = e.job_id WHERE e.attempt <> j.attempt);
SQL
)
echo
echo "limits: reconciliation ($jobs jobs per queue, $clients workers, $keys keys)"
while IFS='|' read -r name expected actual; do
    if [ "$expected" = info ]; then mark=""; elif [ "$expected" = "$actual" ]; then mark=ok; else mark=FAIL; status=1; fi
    printf '  %-62s expected %6s  got %8s  %s\n' "$name" "$expected" "$actual" "$mark"
done <<<"$checks"
echo
if [ "$status" = 0 ]; then echo "limits: PASS"; else echo "limits: FAIL"; fi
exit "$status"

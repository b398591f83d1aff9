#!/usr/bin/env bash
# The client fault test, the same for both libraries: 3 worker processes of
# LANGUAGE (node, python: the blocking Worker, python-async: the AsyncWorker)
# drain FAULT_JOBS jobs, each writing its effect row in
# the transaction that completes its job (completeInTransaction /
# complete_in_transaction). Meanwhile one worker is killed with SIGKILL, one is
# frozen with SIGSTOP until the reaper has taken its jobs and then thawed (its
# late completions get QC003), and one gets SIGTERM and must drain. Every wait
# polls with a deadline; nothing depends on how fast the machine is.
#
#   pg_virtualenv -t -o shared_preload_libraries=claimqueue bash test/clients/run.sh node|python|python-async
#
#   FAULT_JOBS=5000  FAULT_CONCURRENCY=4  FAULT_LEASE_MS=2000  FAULT_DEADLINE=600 (seconds per wait)
#
# Prints "ok N - ..." / "not ok N - ..." and a line "fault LANGUAGE: ..." with the
# counts; exits non-zero when a check failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
language=${1:?usage: run.sh node|python|python-async}
jobs=${FAULT_JOBS:-5000}
concurrency=${FAULT_CONCURRENCY:-4}
lease_ms=${FAULT_LEASE_MS:-2000}
deadline=${FAULT_DEADLINE:-600}
db=claimqueue_fault_${language//-/_}
queue=faults
tmp=$(mktemp -d)
source "$root/test/lib/tap.sh"
declare -A pids names

q() { psql -X -q -At -v ON_ERROR_STOP=1 -d $db "$@"; }
value() { q -c "$1" 2>/dev/null; }
done_jobs() { value "SELECT count(*) FROM queue_jobs WHERE queue = '$queue' AND state = 'done'"; }
running_of() { value "SELECT count(*) FROM queue_jobs WHERE queue = '$queue' AND state = 'running' AND worker = '${names[$1]}'"; }
alive() { kill -0 "${pids[$1]}" 2>/dev/null; }
exited() { ! alive "$1"; }
# at_least N W: N jobs done and worker W holds a running job (so a fault hits work in flight).
at_least() { [ "$(done_jobs)" -ge "$1" ] && [ "$(running_of "$2")" -gt 0 ]; }
# A job whose row the frozen worker has already updated in its open transaction
# (completeInTransaction stopped before COMMIT) stays locked, and no reaper can
# take it: its completion commits after SIGCONT. SKIP LOCKED leaves such rows out.
jobs_back() { [ "$(value "SELECT count(*) FROM (SELECT 1 FROM claimqueue.jobs WHERE worker = '${names[w3]}'
                              AND state = 'running' AND (id, attempt) IN (SELECT * FROM fault_frozen)
                              FOR SHARE SKIP LOCKED) held")" -eq 0 ]; }
all_finished() { [ "$(value "SELECT count(*) FROM queue_jobs WHERE queue = '$queue' AND state IN ('ready', 'running')")" -eq 0 ]; }

cleanup() {
    for w in "${!pids[@]}"; do kill -CONT "${pids[$w]}" 2>/dev/null; kill -KILL "${pids[$w]}" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT

case $language in
    node)
        command -v node >/dev/null || { echo "fault test: node not installed"; exit 1; }
        [ -f "$root/clients/node/dist/index.js" ] || (cd "$root/clients/node" && npm ci --no-audit --no-fund --silent) || exit 1
        [ -d "$here/node_modules/claimqueue" ] || (cd "$here" && npm ci --no-audit --no-fund --silent >/dev/null) || exit 1
        worker_command=(node "$here/fault_worker.mjs") flavour="" ;;
    python | python-async)
        worker_command=(env "PYTHONPATH=$root/clients/python" /usr/bin/python3 "$here/fault_worker.py")
        flavour=$([ "$language" = python ] && echo blocking || echo asyncio) ;;
    *) echo "usage: run.sh node|python|python-async"; exit 2 ;;
esac

psql -X -q -d postgres -c "ALTER SYSTEM SET claimqueue.reaper_interval = '200ms'" -c "SELECT pg_reload_conf()" >/dev/null
psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" \
    -c "CREATE DATABASE $db"
q >/dev/null <<SQL
SET client_min_messages = error;
CREATE EXTENSION claimqueue;
-- Attempts to spare: an injected failure, a SIGKILL, a freeze and a hand-back
-- may each spend one of a job's attempts.
SELECT create_queue('$queue', lease => make_interval(secs => $lease_ms / 1000.0), max_attempts => 10,
                    backoff_base => '0', backoff_cap => '0') IS NOT NULL;
-- No unique constraint: a duplicate effect must be counted, not prevented.
CREATE TABLE fault_effects (job_id bigint, attempt int, worker text);
CREATE TABLE fault_frozen (id bigint, attempt int);
-- The Python workers snooze a job once: its first run records it here.
CREATE TABLE fault_snoozed (job_id bigint PRIMARY KEY);
-- snooze: every worker's first run snoozes the job. slowpoke (runs into its timeout, gives up
-- when told) and stubborn (ignores its timeout, then tries to complete): the Python workers'
-- timeout paths; stuck (ignores its abort signal past the timeout): the node worker's. Each
-- language ignores the other's flags.
SELECT count(*) FROM enqueue_batch('$queue', (SELECT array_agg(jsonb_build_object(
    'n', g, 'slow', g % 100 = 0, 'fail', g % 50 = 7, 'snooze', g % 40 = 9,
    'slowpoke', g % 500 = 11, 'stubborn', g % 500 = 13, 'stuck', g % 500 = 17))
    FROM generate_series(1, $jobs) g));
SQL
echo "fault $language: $jobs jobs, 3 workers x $concurrency, lease ${lease_ms} ms"
started=$SECONDS

for w in w1 w2 w3; do
    names[$w]="fault-$language-$w"
    PGDATABASE=$db "${worker_command[@]}" "${names[$w]}" $queue "$concurrency" "$lease_ms" "$flavour" \
        >"$tmp/$w.log" 2>"$tmp/$w.err" &
    pids[$w]=$!
done

# 1. SIGKILL w1 while it holds a job: its claims come back when their leases run out.
check "w1 holds a job with $((jobs / 5)) jobs done" until_true at_least $((jobs / 5)) w1
disown "${pids[w1]}"        # no "Killed" notice from bash; its status is not needed
kill -KILL "${pids[w1]}"
held_by_killed=$(running_of w1)
check "w1 is gone after SIGKILL" until_true exited w1

# 2. SIGSTOP w3 while it holds jobs, until the reaper has taken them back; after
#    SIGCONT its handlers finish attempts that are no longer theirs: QC003.
check "w3 holds a job with $((2 * jobs / 5)) jobs done" until_true at_least $((2 * jobs / 5)) w3
kill -STOP "${pids[w3]}"
q -c "INSERT INTO fault_frozen SELECT id, attempt FROM queue_jobs WHERE worker = '${names[w3]}' AND state = 'running'"
frozen=$(value "SELECT count(*) FROM fault_frozen")
check "the reaper took back the $frozen jobs frozen w3 held" until_true jobs_back
kill -CONT "${pids[w3]}"

# 3. SIGTERM w2 while it holds a job: it stops claiming, drains, hands back what
#    outlives the grace period, and exits 0 with no job left running under its name.
check "w2 holds a job with $((3 * jobs / 5)) jobs done" until_true at_least $((3 * jobs / 5)) w2
kill -TERM "${pids[w2]}"
check "w2 exits after SIGTERM" until_true exited w2
wait "${pids[w2]}"; w2_status=$?
w2_running_left=$(running_of w2)
check "w2 exited with status 0 (drained)" [ "$w2_status" -eq 0 ]
check "w2 left no job running under its name" [ "$w2_running_left" -eq 0 ]
check "w2 logged its stop" grep -qx stopped "$tmp/w2.log"

# 4. w3 drains the rest alone, then stops by SIGTERM too.
check "every job finished" until_true all_finished
kill -TERM "${pids[w3]}"
check "w3 exits after SIGTERM" until_true exited w3
wait "${pids[w3]}"; w3_status=$?
check "w3 exited with status 0" [ "$w3_status" -eq 0 ]
seconds=$((SECONDS - started))

read -r total done_count not_done effects duplicates done_without_effect stray_effects running_left < <(q -F ' ' -c "
  SELECT count(*),
         count(*) FILTER (WHERE state = 'done'),
         count(*) FILTER (WHERE state <> 'done'),
         (SELECT count(*) FROM fault_effects),
         (SELECT count(*) FROM (SELECT job_id FROM fault_effects GROUP BY job_id HAVING count(*) > 1) d),
         count(*) FILTER (WHERE state = 'done' AND NOT EXISTS
             (SELECT 1 FROM fault_effects e WHERE e.job_id = j.id AND e.attempt = j.attempt)),
         (SELECT count(*) FROM fault_effects e JOIN queue_jobs f ON f.id = e.job_id WHERE f.state <> 'done'),
         count(*) FILTER (WHERE state = 'running')
  FROM queue_jobs j WHERE queue = '$queue'")
reaped_from_killed=$(value "SELECT count(*) FROM queue_jobs WHERE last_error LIKE 'lease expired (worker ${names[w1]},%'")
count_events() { cat "$tmp"/w?.log | grep -c "$1"; }
lost=$(count_events '^lost [0-9]* [0-9]* QC003$')
handed_back_w2=$(grep -c '^handed_back ' "$tmp/w2.log")
failed_events=$(count_events '^failed ')
snoozed_events=$(count_events '^snoozed ')
timed_out_events=$(count_events '^timed_out ')
qc003_errors=$(count_events '^error QC003')
all_errors=$(count_events '^error ')
# Attempts of the frozen worker that the reaper took (the job ended under a later attempt).
q -c "SELECT f.id || ' ' || f.attempt FROM fault_frozen f JOIN queue_jobs j USING (id)
      WHERE j.attempt > f.attempt ORDER BY 1" >"$tmp/taken"
grep '^lost ' "$tmp/w3.log" | awk '{print $2, $3}' | sort >"$tmp/w3.lost"
taken=$(wc -l <"$tmp/taken")
# done_matches W: the done events W printed are the jobs the database has done by W.
done_matches() {
    [ "$(grep -c '^done ' "$tmp/$1.log")" -eq \
      "$(value "SELECT count(*) FROM queue_jobs WHERE state = 'done' AND worker = '${names[$1]}'")" ]
}

check "$jobs jobs, all done" test "$total" -eq "$jobs" -a "$done_count" -eq "$jobs" -a "$not_done" -eq 0
check "one effect row per job" [ "$effects" -eq "$jobs" ]
check "no job has its effects twice" [ "$duplicates" -eq 0 ]
check "each done job has the effect of the attempt that completed it" [ "$done_without_effect" -eq 0 ]
check "no effect row of a job that is not done" [ "$stray_effects" -eq 0 ]
check "no job left running" [ "$running_left" -eq 0 ]
if [ "$language" = node ]; then
    # The node worker's snooze and timeout paths (payload flags snooze, stuck).
    snoozed=$(count_events '^snoozed ')
    timed_out=$(count_events '^failed [0-9]* 1 ready timeout$')
    stuck_completed=$(count_events '^stuck_completed ')
    check "snoozed jobs came back and were done ($snoozed snoozes)" [ "$snoozed" -gt 0 ]
    check "stuck handlers were failed by their timeout ($timed_out)" [ "$timed_out" -gt 0 ]
    check "no stuck handler completed its job after the timeout" [ "$stuck_completed" -eq 0 ]
fi
check "w2 reported as done exactly the jobs it completed" done_matches w2
check "w3 reported as done exactly the jobs it completed" done_matches w3
check "no QC003 reported as an error" [ "$qc003_errors" -eq 0 ]
check "no error reported at all" [ "$all_errors" -eq 0 ]
check "each of the $taken frozen attempts the reaper took was reported lost (QC003) by w3" \
    [ -z "$(comm -23 <(sort "$tmp/taken") "$tmp/w3.lost")" ]
if [ "$language" != node ]; then
    # At most once per job (a killed or frozen worker may record a snooze it never made).
    check "snoozed jobs were reported ($snoozed_events), none twice" \
        [ "$snoozed_events" -gt 0 -a "$snoozed_events" -le "$(value "SELECT count(*) FROM fault_snoozed")" ]
    check "attempts past their timeout were given up ($timed_out_events)" [ "$timed_out_events" -gt 0 ]
fi
[ "$all_errors" -eq 0 ] || grep -h '^error ' "$tmp"/w?.log | head -20
for w in w1 w2 w3; do [ -s "$tmp/$w.err" ] && { echo "# $w stderr:"; head -20 "$tmp/$w.err"; }; done

echo "fault $language: jobs=$jobs done=$done_count duplicates=$duplicates effects=$effects" \
     "running_left_by_sigterm=$w2_running_left qc003_seen=$lost qc003_as_error=$qc003_errors" \
     "errors=$all_errors killed_held=$held_by_killed reaped_from_killed=$reaped_from_killed" \
     "frozen=$frozen frozen_taken=$taken" \
     "handed_back_by_sigterm=$handed_back_w2 failed_attempts=$failed_events" \
     "snoozed=${snoozed:-$snoozed_events} timed_out=${timed_out:-$timed_out_events} seconds=$seconds"

psql -X -q -d postgres -c "DROP DATABASE $db WITH (FORCE)"
psql -X -q -d postgres -c "ALTER SYSTEM RESET claimqueue.reaper_interval" -c "SELECT pg_reload_conf()" >/dev/null
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

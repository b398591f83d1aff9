#!/usr/bin/env bash
# Waiting dequeue, end to end, in a cluster of its own with the library
# preloaded and room for four waiters:
#
#   pg_virtualenv -t -o shared_preload_libraries=claimqueue -o claimqueue.max_waiters=4 \
#       bash test/wait/run.sh
#
# Waiters are background psql sessions (CALL dequeue_wait) named by
# application_name; the checks read pg_stat_activity and claimqueue.waiters()
# (wakeups counts the times something woke a waiter). Every wait polls with a
# deadline (WAIT_DEADLINE seconds, default 30): no check depends on how fast
# the machine is. Prints "ok N - ..." / "not ok N - ..."; exits non-zero when
# anything failed.
set -uo pipefail
cd "$(dirname "$0")/../.."

deadline=${WAIT_DEADLINE:-30}
tmp=$(mktemp -d)
source test/lib/tap.sh
declare -A pids

sql() { psql -X -q -At -v ON_ERROR_STOP=1 -d app "$@"; }

# is SQL EXPECTED: the query's output equals EXPECTED.
is() { [ "$(sql -c "$1" 2>/dev/null)" = "$2" ]; }

# start_waiter NAME QUEUE WAIT [BATCH]: CALL dequeue_wait in the background.
start_waiter() {
    PGAPPNAME=$1 psql -X -q -At -d app \
        -c "CALL dequeue_wait('$2', '$1', batch => ${4:-1}, wait => '$3')" >"$tmp/$1.out" 2>&1 &
    pids[$1]=$!
}
# waiting NAME: its backend sleeps in dequeue_wait (latch wait, registered).
waiting() {
    is "SELECT count(*) FROM pg_stat_activity a JOIN claimqueue.waiters() w USING (pid)
        WHERE a.application_name = '$1' AND a.wait_event_type = 'Extension'" 1
}
finished() { ! kill -0 "${pids[$1]}" 2>/dev/null; }
# returned NAME TEXT: the waiter ended and printed TEXT (a jsonb fragment).
returned() { finished "$1" && grep -qF -- "$2" "$tmp/$1.out"; }
wakeups() { sql -c "SELECT coalesce(sum(w.wakeups), 0) FROM claimqueue.waiters() w
                    JOIN pg_stat_activity a USING (pid) WHERE a.application_name = '$1'"; }
still_waiting() { ! finished "$1" && waiting "$1"; }

cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
    [ -n "${WAIT_KEEP_TMP:-}" ] && echo "# kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT

psql -X -q -d postgres -c "ALTER SYSTEM SET claimqueue.reaper_interval = '200ms'" \
    -c "SELECT pg_reload_conf()" -c "CREATE DATABASE app" >/dev/null
sql -c "SET client_min_messages = error" -c "CREATE EXTENSION claimqueue"
sql -c "SELECT create_queue('q')" >/dev/null

# --- a wait with nothing to do
check "a wait with nothing to do returns [] once its wait is over" \
    is "CALL dequeue_wait('q', 'w', wait => '200ms')" "[]"
check "and leaves no waiter behind" is "SELECT count(*) FROM claimqueue.waiters()" 0

# --- enqueue commit wakes; rollback and an open transaction do not
start_waiter w1 q 60s
check "a waiter sleeps on its latch (wait_event Extension)" until_true waiting w1
check "holding no snapshot: backend_xmin and backend_xid are NULL while it waits" \
    is "SELECT backend_xmin IS NULL AND backend_xid IS NULL FROM pg_stat_activity
        WHERE application_name = 'w1'" t
# The control: a statement that sleeps inside a SELECT (what a waiting
# function would do) does show a backend_xmin, so the check above can fail.
PGAPPNAME=sleeper psql -X -q -At -d app -c "SELECT pg_sleep(60)" >/dev/null 2>&1 &
pids[sleeper]=$!
until_true is "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'sleeper' AND wait_event = 'PgSleep'" 1
check "control: a SELECT sleeping in pg_sleep() holds a backend_xmin meanwhile" \
    is "SELECT backend_xmin IS NOT NULL FROM pg_stat_activity WHERE application_name = 'sleeper'" t
sql -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'sleeper'" >/dev/null
until_true finished sleeper
check "and its query is the CALL, state active" \
    is "SELECT state || ' ' || left(query, 17) FROM pg_stat_activity WHERE application_name = 'w1'" \
       "active CALL dequeue_wait"
coproc TX { psql -X -q -At -d app -v ON_ERROR_STOP=1 2>&1; }
echo "BEGIN; SELECT enqueue('q', '{\"n\": 1}'); SELECT 'enqueued';" >&"${TX[1]}"
read -r -t "$deadline" line <&"${TX[0]}"; read -r -t "$deadline" line2 <&"${TX[0]}"
check "an enqueue in an open transaction does not wake it" \
    bash -c "[ '$line2' = enqueued ] && [ \"\$(psql -X -At -d app -c \"SELECT sum(wakeups) FROM claimqueue.waiters()\")\" = 0 ]"
echo "ROLLBACK; SELECT 'rolled back';" >&"${TX[1]}"
read -r -t "$deadline" line <&"${TX[0]}"
check "a rollback does not wake it (wakeups 0, still waiting)" \
    bash -c "[ '$line' = 'rolled back' ] && [ \"\$(psql -X -At -d app -c \"SELECT sum(wakeups) FROM claimqueue.waiters()\")\" = 0 ]"
check "  ... still waiting" still_waiting w1
echo "BEGIN; SELECT enqueue('q', '{\"n\": 2}'); COMMIT;" >&"${TX[1]}"
read -r -t "$deadline" committed_id <&"${TX[0]}"
check "a commit wakes it and it returns the committed job" \
    until_true returned w1 "\"id\": $committed_id,"
check "  ... which is running under attempt 1 for worker w1" \
    is "SELECT state || ' ' || attempt || ' ' || worker FROM claimqueue.jobs WHERE id = $committed_id" "running 1 w1"
echo "\\q" >&"${TX[1]}"; wait "$TX_PID" 2>/dev/null

# --- one job wakes one waiter, two jobs two
for w in h1 h2 h3; do start_waiter "$w" q 60s; done
check "three waiters on one queue" until_true is "SELECT count(*) FROM claimqueue.waiters() WHERE queue = 'q'" 3
sql -c "SELECT enqueue('q', '{\"herd\": 1}')" >/dev/null
check "one enqueued job: exactly one waiter returns" \
    until_true is "SELECT count(*) FROM claimqueue.waiters() WHERE queue = 'q'" 2
check "  ... and the two others were never woken (no thundering herd)" \
    is "SELECT sum(wakeups) FROM claimqueue.waiters() WHERE queue = 'q'" 0
sql -c "SELECT count(*) FROM enqueue_batch('q', ARRAY['{\"herd\": 2}', '{\"herd\": 3}']::jsonb[])" >/dev/null
check "two jobs in one commit: both remaining waiters return with one each" \
    until_true bash -c "! kill -0 ${pids[h1]} ${pids[h2]} ${pids[h3]} 2>/dev/null"
check "  ... each job claimed once" \
    is "SELECT count(*) || ' ' || count(DISTINCT worker) FROM claimqueue.jobs WHERE payload ? 'herd' AND state = 'running'" "3 3"

# --- a delayed job wakes its waiter when run_at arrives
start_waiter d1 q 60s
until_true waiting d1
delayed=$(sql -c "SELECT enqueue('q', '{\"delayed\": 1}', run_at => now() + interval '1.5 seconds')")
check "a delayed job is not claimable when enqueued" \
    is "SELECT run_at > now() FROM claimqueue.jobs WHERE id = $delayed" t
check "its commit gives the waiter the queue's timer at the job's run_at" \
    until_true is "SELECT w.timer_at = j.run_at FROM claimqueue.waiters() w, claimqueue.jobs j WHERE j.id = $delayed" t
check "the waiter returns the delayed job once run_at has come" \
    until_true returned d1 "\"id\": $delayed,"
check "  ... claimed at or after its run_at" \
    is "SELECT started_at >= run_at FROM claimqueue.jobs WHERE id = $delayed" t

# a waiter that starts after the job was enqueued finds its run_at itself
later=$(sql -c "SELECT enqueue('q', '{\"delayed\": 2}', run_at => now() + interval '1 second')")
start_waiter d2 q 60s
check "a waiter started after a delayed enqueue takes the timer from next_due()" \
    until_true is "SELECT w.timer_at = j.run_at FROM claimqueue.waiters() w, claimqueue.jobs j WHERE j.id = $later" t
check "  ... and returns that job when it is due" until_true returned d2 "\"id\": $later,"

# --- the reaper returning an expired lease wakes a waiter
sql -c "SELECT create_queue('r', backoff_base => '0', backoff_cap => '0')" >/dev/null
abandoned=$(sql -c "SELECT enqueue('r', '{\"abandoned\": 1}')")
sql -c "SELECT id FROM dequeue('r', 'doomed', lease => '1 second')" >/dev/null
start_waiter r1 r 60s
until_true waiting r1
check "the reaper returns the expired job and wakes the waiter, which claims attempt 2" \
    until_true returned r1 "\"attempt\": 2"
check "  ... of that job" returned r1 "\"id\": $abandoned,"
check "  ... after the reaper's pass (reaper_stats counts it)" \
    is "SELECT jobs_reaped >= 1 FROM reaper_stats" t

# --- fail() with a retry and retry() announce the job as enqueue does
sql -c "SELECT create_queue('f', backoff_base => '0', backoff_cap => '0')" >/dev/null
failing=$(sql -c "SELECT enqueue('f', '{\"failing\": 1}', max_attempts => 2)")
sql -c "SELECT id FROM dequeue('f', 'f0')" >/dev/null
start_waiter f1 f 60s
until_true waiting f1
sql -c "SELECT fail($failing, 1, 'boom', retry_in => '0')" >/dev/null
check "fail() with a retry wakes a waiter, which claims attempt 2 of that job" \
    until_true returned f1 "\"id\": $failing,"
sql -c "SELECT fail($failing, 2, 'boom again')" >/dev/null
start_waiter f2 f 60s
until_true waiting f2
check "a job failed for good wakes nobody" \
    is "SELECT state || ' ' || (SELECT sum(wakeups) FROM claimqueue.waiters()) FROM claimqueue.jobs WHERE id = $failing" "failed 0"
sql -c "SELECT retry($failing)" >/dev/null
check "retry() wakes a waiter, which claims attempt 3" until_true returned f2 "\"attempt\": 3"

# --- cancel, statement_timeout, terminate end a wait at once and free the slot
start_waiter c1 q 60s
until_true waiting c1
sql -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'c1'" >/dev/null
check "pg_cancel_backend ends the wait" \
    until_true returned c1 "canceling statement due to user request"
check "  ... and frees its slot" is "SELECT count(*) FROM claimqueue.waiters()" 0
check "statement_timeout ends the wait" \
    bash -c "psql -X -q -At -d app -c \"SET statement_timeout = '300ms'\" \
             -c \"CALL dequeue_wait('q', 'st', wait => '60s')\" 2>&1 | grep -q 'canceling statement due to statement timeout'"
check "  ... and frees its slot" is "SELECT count(*) FROM claimqueue.waiters()" 0
start_waiter t1 q 60s
until_true waiting t1
sql -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 't1'" >/dev/null
check "pg_terminate_backend ends the wait" until_true finished t1
check "  ... and frees its slot" until_true is "SELECT count(*) FROM claimqueue.waiters()" 0

# --- a waiter cancelled after a commit woke it hands the wake-up on
# (two waiters; the job's commit wakes one, which is cancelled before it can
# look: the job must still reach the other.) Driven by SIGSTOP, so the woken
# backend cannot look before the cancel arrives.
start_waiter s1 q 60s; until_true waiting s1
start_waiter s2 q 60s; until_true waiting s2
s1_pid=$(sql -c "SELECT pid FROM pg_stat_activity WHERE application_name = 's1'")
s2_pid=$(sql -c "SELECT pid FROM pg_stat_activity WHERE application_name = 's2'")
kill -STOP "$s1_pid" "$s2_pid"
handed=$(sql -c "SELECT enqueue('q', '{\"handed\": 1}')")
woken=$(sql -c "SELECT a.application_name FROM claimqueue.waiters() w JOIN pg_stat_activity a USING (pid) WHERE w.wakeups = 1")
other=$([ "$woken" = s1 ] && echo s2 || echo s1)
woken_pid=$([ "$woken" = s1 ] && echo "$s1_pid" || echo "$s2_pid")
check "one job, two stopped waiters: exactly one was woken" \
    is "SELECT count(*) FILTER (WHERE wakeups = 1) || ' ' || count(*) FROM claimqueue.waiters()" "1 2"
sql -c "SELECT pg_terminate_backend($woken_pid)" >/dev/null
kill -CONT "$s1_pid" "$s2_pid"
check "the woken waiter terminated before looking: the other one gets the job" \
    until_true returned "$other" "\"id\": $handed,"

# --- claimqueue.max_waiters (4 in this cluster)
for w in m1 m2 m3 m4; do start_waiter "$w" q 60s; done
check "four waiters fill claimqueue.max_waiters = 4" \
    until_true is "SELECT count(*) FROM claimqueue.waiters()" 4
check "a fifth gets 53400, naming the setting" \
    bash -c "psql -X -q -At -d app -v VERBOSITY=verbose -c \"CALL dequeue_wait('q', 'm5', wait => '1s')\" 2>&1 \
             | grep -q '53400: cannot wait on queue \"q\": all 4 waiter slots are taken'"
check "  ... while wait => '0' still works (claims or returns [])" \
    is "CALL dequeue_wait('q', 'm5', wait => '0')" "[]"
sql -c "SELECT count(*) FROM enqueue_batch('q', ARRAY['{}', '{}', '{}', '{}']::jsonb[])" >/dev/null
check "four jobs release the four waiters" \
    until_true bash -c "! kill -0 ${pids[m1]} ${pids[m2]} ${pids[m3]} ${pids[m4]} 2>/dev/null"
check "and every slot is free again" is "SELECT count(*) FROM claimqueue.waiters()" 0

# --- grants are checked again after every sleep: a revoke that commits while a
# worker waits reaches it before its next claim (not at its next transaction)
sql -c "SET client_min_messages = error" \
    -c "CREATE ROLE waiting_worker LOGIN IN ROLE claimqueue_consumer" \
    -c "SELECT create_queue('qa')" -c "SELECT grant_queue('qa', 'consume', 'waiting_worker')" >/dev/null
# One claim first, so the session remembers the grant it used.
sql -c "SELECT enqueue('qa', '{\"warm\": 1}')" >/dev/null
PGAPPNAME=r1 psql -X -q -At -d app -c "SET ROLE waiting_worker" \
    -c "CALL dequeue_wait('qa', 'r1', wait => '0')" \
    -c "CALL dequeue_wait('qa', 'r1', wait => '60s')" >"$tmp/r1.out" 2>&1 &
pids[r1]=$!
until_true waiting r1
sql -c "SELECT revoke_queue('qa', 'consume', 'waiting_worker')" >/dev/null
secret=$(sql -c "SELECT enqueue('qa', '{\"secret\": 1}')")
check "a waiter whose consume grant was revoked while it slept gets 42501 when woken" \
    until_true returned r1 "permission denied for queue \"qa\""
check "  ... and claimed nothing: the job is still ready" \
    is "SELECT state FROM queue_jobs WHERE id = $secret" ready
check "  ... its payload unseen" bash -c "! grep -q secret '$tmp/r1.out'"

# DROP EXTENSION while a worker waits: it ends with claimqueue's own error (no
# internal query text, no 'relation does not exist').
sql -c "SELECT create_queue('qd')" >/dev/null
start_waiter d1 qd 3s; until_true waiting d1
sql -c "SET client_min_messages = error" -c "DROP EXTENSION claimqueue CASCADE"
check "DROP EXTENSION while a worker waits: the wait ends with 'extension was dropped'" \
    until_true returned d1 'extension "claimqueue" was dropped while dequeue_wait() waited on queue "qd"'
check "  ... and nothing about relations or internal statements" \
    bash -c "! grep -Eq 'does not exist|SQL statement|PL/pgSQL' '$tmp/d1.out'"
sql -c "SET client_min_messages = error" -c "CREATE EXTENSION claimqueue" -c "SELECT create_queue('q')" >/dev/null

# --- claimqueue.max_waiters = 0 turns waiting off (a restart: shared memory)
psql -X -q -d postgres -c "ALTER SYSTEM SET claimqueue.max_waiters = 0" >/dev/null
pg_ctlcluster "$PGVERSION" regress restart
check "with claimqueue.max_waiters = 0 a wait is refused with 53400, naming the setting" \
    bash -c "psql -X -q -At -d app -v VERBOSITY=verbose -c \"CALL dequeue_wait('q', 'z', wait => '1s')\" 2>&1 \
             | grep -q '53400: cannot wait on queue \"q\": claimqueue.max_waiters is 0'"
check "  ... while wait => '0' still works" is "CALL dequeue_wait('q', 'z', wait => '0')" "[]"

echo "wait: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

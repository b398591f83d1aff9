#!/usr/bin/env bash
# The reaper's lifecycle, end to end, in a cluster of its own (it restarts,
# crashes and promotes servers, so it never shares one with other suites):
#
#   pg_virtualenv -t -o shared_preload_libraries=claimqueue bash test/reaper/run.sh
#
# Every wait polls with a deadline (REAPER_DEADLINE seconds, default 30); no
# check depends on how fast the machine is. Prints "ok N - ..." / "not ok N - ..."
# and "reaper: P passed, F failed"; exits non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/../.."

deadline=${REAPER_DEADLINE:-30}
log="$PG_CLUSTER_CONF_ROOT/../log/postgresql-$PGVERSION-regress.log"
source test/lib/tap.sh

sql() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

# is DB SQL EXPECTED: the query's output equals EXPECTED.
is() { [ "$(sql -d "$1" -c "$2" 2>/dev/null)" = "$3" ]; }

reaper_pid() { sql -d "$1" -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'claimqueue reaper' AND datname = '$1'" 2>/dev/null; }
has_reaper() { [ -n "$(reaper_pid "$1")" ]; }
no_reaper()  { [ -z "$(sql -d postgres -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'claimqueue reaper' AND datname = '$1'" 2>/dev/null)" ]; }
server_up()  { sql -d postgres -c "SELECT 1" >/dev/null 2>&1; }

# A claimed job with a lease of one second, never completed: prints its id.
# Each in a queue of its own, so the claim takes this job and no other.
abandoned_job() {
    local db=$1 max=${2:-5}
    local queue="abandoned_$(date +%s%N)"
    sql -d "$db" -c "SELECT create_queue('$queue')" >/dev/null
    sql -d "$db" -c "SELECT enqueue('$queue', '{}', max_attempts => $max)" >/dev/null
    sql -d "$db" -c "SELECT id FROM dequeue('$queue', 'doomed-worker', lease => '1 second')"
}

echo "# log: $log"
# The SQLSTATE of every line in the log (%e), for the failed-pass check.
sql -d postgres -c "ALTER SYSTEM SET log_line_prefix = '%m [%p] %e '" >/dev/null
sql -d postgres -c "ALTER SYSTEM SET claimqueue.reaper_interval = '200ms'" -c "SELECT pg_reload_conf()" >/dev/null
sql -d postgres -c "CREATE DATABASE app" -c "SET client_min_messages = error" >/dev/null
sql -d app -c "SET client_min_messages = error" -c "CREATE EXTENSION claimqueue"

# --- discovery and reaping
check "the launcher runs, connected to no database" \
    until_true is postgres "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'claimqueue launcher' AND datname IS NULL" 1
check "a reaper runs in the database with the extension" until_true has_reaper app
check "no reaper in a database without it" no_reaper postgres
check "reaper_stats says running" until_true is app "SELECT state FROM reaper_stats" running

job=$(abandoned_job app)
check "an abandoned lease comes back to ready" \
    until_true is app "SELECT state FROM claimqueue.jobs WHERE id = $job" ready
check "with 'lease expired' as that attempt's error" \
    is app "SELECT last_error FROM claimqueue.jobs WHERE id = $job" "lease expired (worker doomed-worker, attempt 1)"
check "and a backoff (run_at moved forward)" \
    is app "SELECT run_at > started_at FROM claimqueue.jobs WHERE id = $job" t
job=$(abandoned_job app 1)
check "with its attempts used up it becomes failed" \
    until_true is app "SELECT state FROM claimqueue.jobs WHERE id = $job" failed
check "reaper_stats counts the reaped jobs" is app "SELECT jobs_reaped >= 2 AND last_pass_at IS NOT NULL FROM reaper_stats" t

# --- retention: finished jobs older than the queue's retention are purged
sql -d app -c "SELECT create_queue('short', retention => '1 hour')" >/dev/null
sql -d app -c "SELECT enqueue('short', jsonb_build_object('n', g)) FROM generate_series(1, 6) g" >/dev/null
sql -d app -c "SELECT complete(id, attempt) FROM dequeue('short', 'w', 6)" >/dev/null
sql -d app -c "UPDATE claimqueue.jobs SET finished_at = now() - interval '2 hours'
               WHERE queue_id = (SELECT queue_id FROM claimqueue.queues WHERE name = 'short')
                 AND (payload->>'n')::int <= 4"
check "old finished jobs are purged" \
    until_true is app "SELECT count(*) FROM queue_jobs WHERE queue = 'short'" 2
check "recent ones are kept" \
    is app "SELECT string_agg(payload->>'n', ',' ORDER BY id) FROM queue_jobs WHERE queue = 'short'" "5,6"
check "reaper_stats counts the purged jobs" is app "SELECT jobs_purged >= 4 FROM reaper_stats" t

# --- a database created while the server runs
sql -d postgres -c "CREATE DATABASE late" >/dev/null
sql -d late -c "SET client_min_messages = error" -c "CREATE EXTENSION claimqueue"
check "a database created later gets its reaper" until_true has_reaper late
job=$(abandoned_job late)
check "which reaps there" until_true is late "SELECT state FROM claimqueue.jobs WHERE id = $job" ready
sql -d late -c "DROP EXTENSION claimqueue"
check "DROP EXTENSION ends that reaper" until_true no_reaper late
sql -d late -c "SET client_min_messages = error" -c "CREATE EXTENSION claimqueue"
check "CREATE EXTENSION again brings it back" until_true has_reaper late
check "DROP DATABASE succeeds while its reaper runs" sql -d postgres -c "DROP DATABASE late"
check "and leaves no reaper behind" until_true no_reaper late
sql -d postgres -c "CREATE DATABASE copied TEMPLATE app" >/dev/null 2>&1
check "CREATE DATABASE ... TEMPLATE of a database with a reaper succeeds" \
    is postgres "SELECT count(*) FROM pg_database WHERE datname = 'copied'" 1
check "and the copy gets a reaper of its own" until_true has_reaper copied
check "ALTER DATABASE ... RENAME succeeds while its reaper runs" \
    sql -d postgres -c "ALTER DATABASE copied RENAME TO renamed"
check "the renamed database gets its reaper back" until_true has_reaper renamed
sql -d postgres -c "DROP DATABASE renamed"

# --- upgrade: a database on an older version (0.1.0 promised no background
# worker; 0.3.0 is the version just before this one) gets no reaper and no
# queue API from this library; ALTER EXTENSION UPDATE starts both. The library
# works on its own version's schema only, whatever the older version is.
# This library's statements need the current schema: until the update, the
# queue API says so (kept out of the server log, which is checked below).
api_asks_for_update() {
    local out
    out=$(sql -d "$1" -c "SET log_min_messages = fatal" -c "SELECT enqueue('default', '{}')" 2>&1)
    grep -q "HINT:  Run ALTER EXTENSION claimqueue UPDATE in this database." <<<"$out"
}
# The released versions' full scripts are not installed: they come from an
# extension directory of their own (test/lib/released.sh).
source test/lib/released.sh
released=$(released_extension_dir) || echo "# no extension directory with the released versions"
released_opts=$(released_options "$released")
released_sql() { PGOPTIONS=$released_opts sql "$@"; }
for version in 0.1.0 0.3.0; do
    sql -d postgres -c "CREATE DATABASE old" >/dev/null
    released_sql -d old -c "SET client_min_messages = error" -c "CREATE EXTENSION claimqueue VERSION '$version'"
    check "on $version the queue API refuses with a hint to run ALTER EXTENSION UPDATE" \
        api_asks_for_update old
    # So the abandoned claim is written as that version's dequeue() left it.
    job=$(sql -d old -c "INSERT INTO claimqueue.jobs (queue_id, state, attempt, max_attempts, run_at,
                             created_at, started_at, lease_expires_at, worker, payload)
                         VALUES (1, 'running', 1, 5, now(), now(), now(), now() + interval '1 second',
                                 'doomed-worker', '{}') RETURNING id")
    until_true is old "SELECT lease_expires_at < now() - interval '1 second' FROM claimqueue.jobs WHERE id = $job" t
    sleep 1  # several reaper intervals: a reaper, if one ran, would have returned it
    check "a database on $version gets no reaper: its expired lease stays running" \
        is old "SELECT state FROM claimqueue.jobs WHERE id = $job" running
    check "and no reaper process" no_reaper old
    released_sql -d old -c "ALTER EXTENSION claimqueue UPDATE"
    check "ALTER EXTENSION claimqueue UPDATE ($version) gives it one" until_true has_reaper old
    check "which returns the lease" until_true is old "SELECT state FROM claimqueue.jobs WHERE id = $job" ready
    sql -d postgres -c "DROP DATABASE old"
done
rm -rf "$released"

# --- the scan of expired leases starts at a mark (so it does not walk the
# entries of jobs finished under an old snapshot); the mark never passes the
# leases of a claim still in flight: this claim commits after its lease ended,
# while the reaper runs passes, and is still returned.
queue="inflight_$(date +%s%N)"
sql -d app -c "SELECT create_queue('$queue')" -c "SELECT enqueue('$queue', '{}')" >/dev/null
sql -d app -c "BEGIN" -c "SELECT id FROM dequeue('$queue', 'slow-committer', lease => '1 second')" \
    -c "SELECT pg_sleep(3)" -c "COMMIT" >/dev/null
check "a claim committed after its lease ended is reaped (the lease scan's mark waited for it)" \
    until_true is app "SELECT state || ' ' || attempt FROM queue_jobs WHERE queue = '$queue'" "ready 1"

# A claim made in a prepared transaction commits later, from another session:
# its lease ends while it is prepared, the reaper runs passes meanwhile (and
# sees nothing of it), then COMMIT PREPARED. The reaper returns it within two
# intervals of the commit (here 200 ms; the poll allows up to 10 s, where the
# once-a-minute reset of the mark would take up to 60).
queue="prepared_$(date +%s%N)"
sql -d app -c "SELECT create_queue('$queue')" -c "SELECT enqueue('$queue', '{}')" >/dev/null
sql -d app -c "BEGIN" -c "SELECT id FROM dequeue('$queue', 'prepared-worker', lease => '1 second')" \
    -c "PREPARE TRANSACTION 'cq_prepared_claim'" >/dev/null
sleep 3  # the lease ends; about fifteen reaper passes run meanwhile
sql -d app -c "COMMIT PREPARED 'cq_prepared_claim'"
deadline_saved=$deadline; deadline=10
check "a claim committed by COMMIT PREPARED after its lease ended is reaped promptly" \
    until_true is app "SELECT state || ' ' || attempt FROM queue_jobs WHERE queue = '$queue'" "ready 1"
deadline=$deadline_saved

# --- settings
sql -d postgres -c "ALTER SYSTEM SET claimqueue.reaper_enabled = off" -c "SELECT pg_reload_conf()" >/dev/null
check "reaper_enabled = off stops the reaper (SIGHUP)" until_true no_reaper app
check "reaper_stats says disabled" until_true is app "SELECT state FROM reaper_stats" disabled
sql -d postgres -c "ALTER SYSTEM RESET claimqueue.reaper_enabled" -c "SELECT pg_reload_conf()" >/dev/null
check "reaper_enabled = on starts it again" until_true has_reaper app

# --- lifecycle
pid=$(reaper_pid app)
sql -d postgres -c "SELECT pg_terminate_backend($pid)" >/dev/null
check "SIGTERM (pg_terminate_backend) ends the reaper" until_true is postgres "SELECT count(*) FROM pg_stat_activity WHERE pid = $pid" 0
check "and the launcher starts a new one" until_true has_reaper app

# SIGTERM also ends a reaper that waits for a lock (here: a session holds the
# jobs table exclusively), while the lock is still held.
sql -d app -c "BEGIN" -c "LOCK TABLE claimqueue.jobs IN ACCESS EXCLUSIVE MODE" -c "SELECT pg_sleep(60)" \
    >/dev/null 2>&1 &
locker=$!
until_true is app "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'claimqueue reaper' AND datname = 'app' AND wait_event_type = 'Lock'" 1
pid=$(reaper_pid app)
sql -d postgres -c "SELECT pg_terminate_backend($pid)" >/dev/null
check "SIGTERM ends a reaper waiting for a lock, while the lock is held" \
    until_true is postgres "SELECT count(*) FROM pg_stat_activity WHERE pid = $pid" 0
check "(the lock was still held)" \
    is app "SELECT count(*) FROM pg_locks WHERE mode = 'AccessExclusiveLock' AND relation = 'claimqueue.jobs'::regclass AND granted" 1
kill "$locker" 2>/dev/null
sql -d postgres -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(60)%' AND pid <> pg_backend_pid()" >/dev/null
wait "$locker" 2>/dev/null
check "and the launcher starts a new one" until_true has_reaper app

# The launcher ends on SIGTERM as well, and the postmaster starts it again.
launcher_pid() { sql -d postgres -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'claimqueue launcher'" 2>/dev/null; }
pid=$(launcher_pid)
sql -d postgres -c "SELECT pg_terminate_backend($pid)" >/dev/null
new_launcher() { local p; p=$(launcher_pid); [ -n "$p" ] && [ "$p" != "$pid" ]; }
check "SIGTERM ends the launcher, and the postmaster starts a new one" until_true new_launcher

# A failed pass is logged with the failure's own SQLSTATE, detail and context
# (here a trigger on the jobs table refuses the reaper's update of one job).
sql -d app -c "CREATE FUNCTION refuse_trap() RETURNS trigger LANGUAGE plpgsql AS \$\$
               BEGIN
                 IF NEW.worker = 'trap-worker' AND NEW.state <> 'running' THEN
                   RAISE EXCEPTION 'trap refuses job %', NEW.id
                     USING ERRCODE = 'QX123', DETAIL = 'the trap detail';
                 END IF;
                 RETURN NEW;
               END \$\$" \
    -c "CREATE TRIGGER refuse_trap BEFORE UPDATE ON claimqueue.jobs FOR EACH ROW EXECUTE FUNCTION refuse_trap()" >/dev/null
queue="trap_$(date +%s%N)"
sql -d app -c "SELECT create_queue('$queue')" -c "SELECT enqueue('$queue', '{}')" \
    -c "SELECT id FROM dequeue('$queue', 'trap-worker', lease => '1 second')" >/dev/null
failed_pass_logged() {
    grep -A4 "claimqueue reaper: pass failed: trap refuses job" "$log" > "$log.trap" || return 1
    grep -q "QX123" "$log.trap" && grep -q "DETAIL:  the trap detail" "$log.trap" &&
        grep -q "CONTEXT:  PL/pgSQL function refuse_trap()" "$log.trap"
}
check "a failed pass is logged with its SQLSTATE, detail and context" until_true failed_pass_logged
check "reaper_stats.last_error has the failure" \
    until_true is app "SELECT last_error LIKE 'trap refuses job%' FROM reaper_stats" t
sql -d app -c "DROP TRIGGER refuse_trap ON claimqueue.jobs" -c "DROP FUNCTION refuse_trap()" >/dev/null
check "once the trigger is gone, the job is reaped" \
    until_true is app "SELECT state FROM queue_jobs WHERE queue = '$queue'" ready
rm -f "$log.trap"

pid=$(reaper_pid app)
kill -9 "$pid"
check "a killed reaper (SIGKILL: the postmaster restarts every process) is back" \
    until_true has_reaper app
job=$(abandoned_job app)
check "and reaps" until_true is app "SELECT state FROM claimqueue.jobs WHERE id = $job" ready

pg_ctlcluster "$PGVERSION" regress restart
check "after a restart the reaper is back" until_true has_reaper app

job=$(abandoned_job app)
pg_ctlcluster "$PGVERSION" regress stop -m immediate
pg_ctlcluster "$PGVERSION" regress start
until_true server_up
check "after an immediate shutdown, the lease that expired while the server was down comes back" \
    until_true is app "SELECT state FROM claimqueue.jobs WHERE id = $job" ready

# --- a hot standby is idle; after promotion it reaps
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
standby=$(mktemp -d)
chmod 755 "$standby"
[ "$(id -u)" -eq 0 ] && chown postgres "$standby"
# A port nothing listens on (other clusters may run on this machine).
sport=$((PGPORT + 1))
while (echo >"/dev/tcp/127.0.0.1/$sport") 2>/dev/null; do sport=$((sport + 1)); done
as_pg pg_basebackup -D "$standby/data" -R -X stream -c fast -h "$PGHOST" -p "$PGPORT" -U "$PGUSER"
# Debian keeps the configuration outside the data directory: give the copy its own.
printf 'local all all trust\nhost all all 127.0.0.1/32 trust\n' | as_pg tee "$standby/data/pg_hba.conf" >/dev/null
as_pg touch "$standby/data/postgresql.conf"
as_pg /usr/lib/postgresql/$PGVERSION/bin/pg_ctl -D "$standby/data" -l "$standby/log" -w start \
    -o "-c port=$sport -c unix_socket_directories=$standby -c listen_addresses=127.0.0.1 -c shared_preload_libraries=claimqueue -c hot_standby=on -c max_prepared_transactions=$(sql -d postgres -c 'SHOW max_prepared_transactions')" >/dev/null
ssql() { psql -X -q -At -h 127.0.0.1 -p "$sport" "$@"; }
sis() { [ "$(ssql -d "$1" -c "$2" 2>/dev/null)" = "$3" ]; }
# The primary stops reaping (the standby keeps the setting it was copied with).
sql -d postgres -c "ALTER SYSTEM SET claimqueue.reaper_enabled = off" -c "SELECT pg_reload_conf()" >/dev/null
until_true no_reaper app
job=$(abandoned_job app)
check "the standby replays the abandoned job" \
    until_true sis app "SELECT lease_expires_at < now() FROM claimqueue.jobs WHERE id = $job" t
check "a hot standby runs no claimqueue worker" \
    sis postgres "SELECT count(*) FROM pg_stat_activity WHERE backend_type LIKE 'claimqueue%'" 0
check "reaper_stats on the standby says standby" sis app "SELECT state FROM reaper_stats" standby
as_pg /usr/lib/postgresql/$PGVERSION/bin/pg_ctl -D "$standby/data" -w promote >/dev/null
check "after promotion its reaper returns the expired lease" \
    until_true sis app "SELECT state FROM claimqueue.jobs WHERE id = $job" ready
as_pg /usr/lib/postgresql/$PGVERSION/bin/pg_ctl -D "$standby/data" -m fast -w stop >/dev/null
check "nothing at ERROR in the standby's log" bash -c "! grep -E ' (ERROR|PANIC):' '$standby/log'"
rm -rf "$standby"
sql -d postgres -c "ALTER SYSTEM RESET claimqueue.reaper_enabled" -c "SELECT pg_reload_conf()" >/dev/null

# --- the log: nothing at ERROR, one LOG line per pass that did something
check "nothing at ERROR in the server log" bash -c "! grep -E ' (ERROR|PANIC):' '$log'"
check "the reaper logs what it did" grep -q "claimqueue reaper: returned [0-9]* expired leases" "$log"

echo "reaper: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

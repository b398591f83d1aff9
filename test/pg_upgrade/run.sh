#!/usr/bin/env bash
# pg_upgrade across majors with claimqueue installed: a cluster of the old
# major, preloaded, with jobs in every state (ready, scheduled, running, running
# with an expired lease, done, failed, cancelled), is upgraded to the new major
# with Debian's pg_upgradecluster -m upgrade (pg_upgrade underneath). The new
# cluster must come up with every job as it was, its reaper running (it returns
# the expired lease) and claims working. Prints TAP-style "ok"/"not ok" lines.
#
#   bash test/pg_upgrade/run.sh 15 17
#
# Needs root, both majors' servers and server headers (scripts/test.sh
# --pg-upgrade runs it in a Debian root that has both); it builds and installs
# claimqueue for both majors, and drops the clusters OLD/main and NEW/main.
set -uo pipefail
cd "$(dirname "$0")/../.."
old=${1:?usage: $0 OLD NEW}
new=${2:?usage: $0 OLD NEW}
deadline=60
. test/lib/tap.sh

[ "$(id -u)" -eq 0 ] || { echo "pg_upgrade test: needs root"; exit 1; }
export PGUSER=postgres

work=$(mktemp -d)
chmod 755 "$work"
drop_clusters() {
    pg_dropcluster --stop "$old" main >/dev/null 2>&1
    pg_dropcluster --stop "$new" main >/dev/null 2>&1
}
trap 'drop_clusters; rm -rf "$work"' EXIT
drop_clusters

# --- claimqueue for both majors, each built in a clean copy of the tree
for v in "$old" "$new"; do
    mkdir -p "$work/build-$v"
    tar --exclude=./build --exclude='*.o' --exclude='*.so' --exclude=.deps --exclude=node_modules \
        -cf - . | tar -xf - -C "$work/build-$v"
    if make -s -C "$work/build-$v" -j2 PG_CONFIG="/usr/lib/postgresql/$v/bin/pg_config" >"$work/build-$v.log" 2>&1 &&
       make -s -C "$work/build-$v" install PG_CONFIG="/usr/lib/postgresql/$v/bin/pg_config" >>"$work/build-$v.log" 2>&1; then
        ok "claimqueue builds and installs for PostgreSQL $v"
    else
        tail -20 "$work/build-$v.log"
        fail "claimqueue builds and installs for PostgreSQL $v"
        exit 1
    fi
done

# sql PORT SQL...: one psql call as postgres (peer authentication) on that port.
sql() { local port=$1; shift; runuser -u postgres -- psql -X -q -At -v ON_ERROR_STOP=1 -p "$port" -d app "$@"; }
# is PORT SQL EXPECTED: whether SQL prints EXPECTED; says what it printed
# instead, except while polled (until_true).
is() {
    local got
    got=$(sql "$1" -c "$2" 2>&1)
    [ "$got" = "$3" ] && return 0
    [ -n "${polling:-}" ] || echo "$got" | head -3 | sed 's/^/# got: /'
    return 1
}
poll() { polling=1 until_true "$@"; }

# --- the old cluster, preloaded, its reaper off for now so that the expired
# lease survives until the upgrade
pg_createcluster "$old" main -- --auth-local=peer >/dev/null
cat >>"/etc/postgresql/$old/main/postgresql.conf" <<'EOF'
shared_preload_libraries = 'claimqueue'
claimqueue.reaper_enabled = off
EOF
pg_ctlcluster "$old" main start
old_port=$(pg_conftool -s "$old" main show port)
runuser -u postgres -- createdb -p "$old_port" app
sql "$old_port" <<'SQL' >/dev/null
SET client_min_messages = error;
CREATE EXTENSION claimqueue;
SELECT create_queue('up', lease => '1 hour', max_attempts => 3);
-- done
SELECT enqueue('up', '{"state": "done"}');
SELECT complete(id, attempt) FROM dequeue('up', 'w-done');
-- failed: its last attempt failed
SELECT enqueue('up', '{"state": "failed"}', max_attempts => 1);
SELECT fail(id, attempt, 'boom') FROM dequeue('up', 'w-failed');
-- cancelled
SELECT cancel(enqueue('up', '{"state": "cancelled"}'));
-- running under a one-hour lease
SELECT enqueue('up', '{"state": "running"}');
SELECT id FROM dequeue('up', 'w-running');
-- running, its lease expired an hour ago (claimed with the clock two hours back)
SELECT enqueue('up', '{"state": "expired"}');
SET claimqueue.debug_clock_offset = '-2h';
SELECT id FROM dequeue('up', 'w-expired');
RESET claimqueue.debug_clock_offset;
-- ready, and scheduled (ready, due tomorrow)
SELECT enqueue('up', '{"state": "ready"}');
SELECT enqueue('up', '{"state": "scheduled"}', run_at => now() + interval '1 day');
SQL
snapshot="SELECT string_agg(concat_ws(' ', id, payload->>'state', state, attempt, max_attempts, worker,
                   run_at, lease_expires_at, started_at, finished_at, last_error), E'\n' ORDER BY id)
            FROM claimqueue.jobs"
sql "$old_port" -c "$snapshot" >"$work/before.txt"
check "jobs in every state before the upgrade" is "$old_port" \
    "SELECT string_agg(state, ',' ORDER BY id) FROM claimqueue.jobs" "done,failed,cancelled,running,running,ready,ready"
echo "# PostgreSQL $(runuser -u postgres -- psql -X -At -p "$old_port" -c 'SHOW server_version'), claimqueue $(sql "$old_port" -c "SELECT extversion FROM pg_extension WHERE extname = 'claimqueue'")"

# --- the upgrade
if pg_upgradecluster -v "$new" -m upgrade "$old" main >"$work/upgrade.log" 2>&1; then
    ok "pg_upgradecluster -m upgrade $old main (to $new) succeeds"
else
    tail -40 "$work/upgrade.log"
    find /var/log/postgresql /var/lib/postgresql -name 'pg_upgrade_*.log' -newer "$work/before.txt" 2>/dev/null |
        while read -r f; do echo "## $f"; tail -20 "$f"; done
    fail "pg_upgradecluster -m upgrade $old main (to $new) succeeds"
    exit 1
fi
grep -q "pg_upgrade" "$work/upgrade.log" && echo "# pg_upgradecluster ran $(grep -o '/usr/lib/postgresql/[0-9]*/bin/pg_upgrade' "$work/upgrade.log" | head -1)"
pg_ctlcluster "$new" main start 2>/dev/null
new_port=$(pg_conftool -s "$new" main show port)
check "the new cluster runs PostgreSQL $new" \
    bash -c "runuser -u postgres -- psql -X -At -p $new_port -c 'SHOW server_version_num' | grep -q '^$new'"
check "with claimqueue preloaded" is "$new_port" "SHOW shared_preload_libraries" claimqueue
check "the extension is at the same version" is "$new_port" \
    "SELECT extversion FROM pg_extension WHERE extname = 'claimqueue'" \
    "$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" claimqueue.control)"
sql "$new_port" -c "$snapshot" >"$work/after.txt"
check "every job came through as it was (state, attempt, worker, times, errors)" diff "$work/before.txt" "$work/after.txt"

# --- its reaper
sql "$new_port" -c "ALTER SYSTEM SET claimqueue.reaper_enabled = on" -c "SELECT pg_reload_conf()" >/dev/null
check "the new cluster's reaper runs" poll is "$new_port" "SELECT pid IS NOT NULL FROM reaper_stats" t
check "it returns the expired lease" poll is "$new_port" \
    "SELECT state || ' ' || attempt FROM claimqueue.jobs WHERE payload->>'state' = 'expired'" "ready 1"
check "and leaves the running job under its lease alone" is "$new_port" \
    "SELECT state FROM claimqueue.jobs WHERE payload->>'state' = 'running'" running

# --- claims
check "dequeue claims the ready job" is "$new_port" \
    "SELECT payload->>'state' FROM dequeue('up', 'w-new')" ready
check "and complete finishes it" is "$new_port" \
    "SELECT count(*) FROM (SELECT complete(id, attempt) FROM claimqueue.jobs WHERE worker = 'w-new') c" 1
check "the running job's worker completes it with its token from before the upgrade" is "$new_port" \
    "SELECT count(*) FROM (SELECT complete(id, 1) FROM claimqueue.jobs WHERE worker = 'w-running') c" 1
refused=$(runuser -u postgres -- psql -X -q -At -v VERBOSITY=verbose -p "$new_port" -d app \
    -c "SELECT complete(id, 1) FROM claimqueue.jobs WHERE payload->>'state' = 'expired'" 2>&1)
check "the expired claim's token is refused (QC003)" grep -q "QC003" <<<"$refused"
id=$(sql "$new_port" -c "SELECT enqueue('up', '{\"state\": \"new\"}')")
check "a new job gets an id past the old ones" is "$new_port" "SELECT $id > max(id) FROM claimqueue.jobs WHERE id <> $id" t
check "a day later the scheduled, the returned and the new job are claimed" is "$new_port" \
    "SET claimqueue.debug_clock_offset = '2d';
     SELECT string_agg(payload->>'state', ',' ORDER BY payload->>'state') FROM dequeue('up', 'w-later', batch => 10)" \
    "expired,new,scheduled"
check "and completed" is "$new_port" \
    "SELECT count(*) FROM (SELECT complete(id, attempt) FROM claimqueue.jobs WHERE worker = 'w-later') c" 3
check "nothing is left ready or running" is "$new_port" \
    "SELECT count(*) FROM claimqueue.jobs WHERE state IN ('ready', 'running')" 0
check "no PANIC in the new cluster's log" bash -c "! grep -q ' PANIC:' /var/log/postgresql/postgresql-$new-main.log"

echo "pg_upgrade: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

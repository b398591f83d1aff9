#!/usr/bin/env bash
# pg_dump test: queues (the default queue's changed settings included), jobs
# in every state, per-queue grants (to a role and to PUBLIC), lock namespaces
# of every key mode and registered keys (with a gap left by a rolled-back
# registration); dumps the database, restores it into a fresh one, and checks
# that everything matches and that new ids continue after the old ones (no id
# handed out twice). Needs a running cluster (PG* variables) and a superuser;
# creates and drops databases claimqueue_dump_*.
set -euo pipefail
cd "$(dirname "$0")/../.."

work=$(mktemp -d)
trap 'rm -rf "$work"; for d in claimqueue_dump_src claimqueue_dump_dst; do psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $d WITH (FORCE)" >/dev/null 2>&1; done' EXIT

q() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }

for d in claimqueue_dump_src claimqueue_dump_dst; do
    q -d postgres -c "DROP DATABASE IF EXISTS $d" -c "CREATE DATABASE $d"
done
q -d claimqueue_dump_src -c "SET client_min_messages = error" -c "CREATE EXTENSION claimqueue"
q -d claimqueue_dump_src <<'SQL'
SELECT lock_namespace('reports'), lock_namespace('singletons', 'registered'),
       lock_namespace('shards', 'integer');
SELECT register_lock_key('singletons', 'refresh'), register_lock_key('singletons', 'rebuild');
BEGIN;
SELECT lock_namespace('rolled-back'), register_lock_key('singletons', 'rolled-back');
ROLLBACK;
SELECT lock_namespace('after-gap');
SELECT alter_queue('default', lease => '2 minutes', retention => '3 days');
SELECT create_queue('mail', max_attempts => 3, backoff_base => '5 seconds');
SELECT enqueue('mail', jsonb_build_object('n', g), priority => g % 3) FROM generate_series(1, 5) g;
SELECT enqueue('mail', '{"later": true}', run_at => now() + interval '1 day', dedup_key => 'once');
SELECT count(*) FROM dequeue('mail', 'w', 3);
SELECT complete(id, attempt) FROM claimqueue.jobs WHERE state = 'running' ORDER BY id LIMIT 1;
SELECT fail(id, attempt, 'boom') FROM claimqueue.jobs WHERE state = 'running' ORDER BY id LIMIT 1;
SELECT cancel(5);
SELECT grant_queue('mail', 'consume', 'claimqueue_consumer'), grant_queue('mail', 'produce', 'public');
SQL

pg_dump -d claimqueue_dump_src -f "$work/dump.sql"
q -d claimqueue_dump_dst -f "$work/dump.sql" >"$work/restore.log" 2>&1 || {
    echo "FAIL: restore failed:"; cat "$work/restore.log"; exit 1; }

describe() {
    psql -X -At -v ON_ERROR_STOP=1 -d "$1" <<'SQL'
SELECT 'namespace ' || row(namespace_id, name, key_mode)::text FROM claimqueue.lock_namespaces ORDER BY namespace_id;
SELECT 'key ' || row(key_id, namespace_id, key)::text FROM claimqueue.lock_keys ORDER BY key_id;
SELECT 'queue ' || row(queue_id, name, lease, max_attempts, backoff_base, backoff_cap, retention)::text
FROM claimqueue.queues ORDER BY queue_id;
SELECT 'job ' || row(id, queue_id, state, priority, attempt, max_attempts, run_at, created_at,
                     started_at, finished_at, lease_expires_at, worker, dedup_key, last_error,
                     payload)::text
FROM claimqueue.jobs ORDER BY id;
SELECT 'grant ' || row(queue, privilege, grantee)::text FROM queue_privileges ORDER BY 1;
SELECT 'next job id ' || enqueue('mail');
SELECT 'created queue ' || create_queue('new-after-restore');
SELECT 'next queue id ' || queue_id FROM claimqueue.queues WHERE name = 'new-after-restore';
SELECT 'next namespace id ' || lock_namespace('new-after-restore');
SELECT 'next key id ' || register_lock_key('singletons', 'new-after-restore');
SQL
}
describe claimqueue_dump_src >"$work/src.txt"
describe claimqueue_dump_dst >"$work/dst.txt"
cat "$work/src.txt"
if diff -u "$work/src.txt" "$work/dst.txt"; then
    echo "dump: ok (queues, jobs, grants, namespaces, keys and id sequences survive pg_dump and restore)"
else
    echo "FAIL: the restored database differs (- source, + restored)"
    exit 1
fi

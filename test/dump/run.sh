#!/usr/bin/env bash
# pg_dump test for the lock namespaces: registers namespaces of every key mode
# and registered keys (with a gap left by a rolled-back registration), dumps
# the database, restores it into a fresh one, and checks that namespaces, keys
# and ids match and that new registrations continue after the old ids (no id
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
SQL

pg_dump -d claimqueue_dump_src -f "$work/dump.sql"
q -d claimqueue_dump_dst -f "$work/dump.sql" >"$work/restore.log" 2>&1 || {
    echo "FAIL: restore failed:"; cat "$work/restore.log"; exit 1; }

describe() {
    psql -X -At -v ON_ERROR_STOP=1 -d "$1" <<'SQL'
SELECT 'namespace ' || row(namespace_id, name, key_mode)::text FROM claimqueue.lock_namespaces ORDER BY namespace_id;
SELECT 'key ' || row(key_id, namespace_id, key)::text FROM claimqueue.lock_keys ORDER BY key_id;
SELECT 'next namespace id ' || lock_namespace('new-after-restore');
SELECT 'next key id ' || register_lock_key('singletons', 'new-after-restore');
SQL
}
describe claimqueue_dump_src >"$work/src.txt"
describe claimqueue_dump_dst >"$work/dst.txt"
cat "$work/src.txt"
if diff -u "$work/src.txt" "$work/dst.txt"; then
    echo "dump: ok (namespaces, keys and id sequences survive pg_dump and restore)"
else
    echo "FAIL: the restored lock namespaces differ (- source, + restored)"
    exit 1
fi

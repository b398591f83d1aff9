#!/usr/bin/env bash
# The table of claim cursors, in a cluster of its own with room for four
# queues (claimqueue.claim_cursor_queues is fixed at server start):
#
#   pg_virtualenv -t -o shared_preload_libraries=claimqueue \
#       -o claimqueue.claim_cursor_queues=4 bash test/cursors/run.sh
#
# An entry is freed when its queue is dropped, or its extension or database
# goes, so create/drop cycles never use the table up; a queue created after a
# DROP and CREATE EXTENSION (ids start at 1 again) never inherits an old
# cursor; a full table is said once in the log and shown in claim_cursor_usage.
# Prints "ok N - ..." / "not ok N - ..." and "cursors: P passed, F failed".
set -uo pipefail
cd "$(dirname "$0")/../.."

deadline=${CURSORS_DEADLINE:-30}
log="$PG_CLUSTER_CONF_ROOT/../log/postgresql-$PGVERSION-regress.log"
source test/lib/tap.sh

sql() { local db=$1; shift; psql -X -q -At -v ON_ERROR_STOP=1 -d "$db" "$@"; }
is() { [ "$(sql "$1" -c "$2" 2>/dev/null)" = "$3" ]; }

psql -X -q -d postgres -c "CREATE DATABASE app" -c "CREATE DATABASE other" >/dev/null
for d in app other; do sql "$d" -c "SET client_min_messages = error" -c "CREATE EXTENSION claimqueue"; done

# cycle DB QUEUE: a queue that gets a cursor (enqueue and claim), then goes.
cycle() {
    sql "$1" -c "SELECT create_queue('$2')" -c "SELECT enqueue('$2', '{}')" \
        -c "SELECT count(*) FROM dequeue('$2', 'w')" -c "SELECT drop_queue('$2', force => true)" >/dev/null
}
check "the table has room for 4 queues" is app "SELECT capacity FROM claim_cursor_usage" 4
for i in $(seq 1 40); do cycle app "cycle_$i"; done
check "40 create/claim/drop cycles leave no entry in use" \
    is app "SELECT in_use || ' ' || refusals FROM claim_cursor_usage" "0 0"
sql app -c "SELECT create_queue('after_cycles')" -c "SELECT enqueue('after_cycles', '{}')" \
    -c "SELECT count(*) FROM dequeue('after_cycles', 'w')" >/dev/null
check "a queue created after them still gets a cursor" \
    is app "SELECT count(*) > 0 FROM claimqueue.claim_cursors() c JOIN claimqueue.queues q USING (queue_id)
            WHERE q.name = 'after_cycles'" t

# A full table: four queues hold the entries, a fifth claims without a cursor,
# correctly, and the log says so once.
for q in f1 f2 f3; do
    sql app -c "SELECT create_queue('$q')" -c "SELECT enqueue('$q', '{}')" -c "SELECT count(*) FROM dequeue('$q', 'w')" >/dev/null
done
check "four queues fill the table" is app "SELECT in_use FROM claim_cursor_usage" 4
sql app -c "SELECT create_queue('f5')" -c "SELECT count(*) FROM enqueue_batch('f5', array_fill('{}'::jsonb, ARRAY[5]))" >/dev/null
check "a fifth queue claims without a cursor, correctly" \
    is app "SELECT count(*) FROM dequeue('f5', 'w', 3)" 3
sql app -c "SELECT count(*) FROM dequeue('f5', 'w')" -c "SELECT count(*) FROM dequeue('f5', 'w')" >/dev/null
check "claim_cursor_usage counts the refusals" is app "SELECT refusals > 0 FROM claim_cursor_usage" t
full_lines=$(grep -c "the table of claim cursors is full (4 queues)" "$log")
check "  ... exactly once ($full_lines)" [ "$full_lines" = 1 ]
check "  ... with the hint to raise claimqueue.claim_cursor_queues" \
    grep -q "HINT:  Raise claimqueue.claim_cursor_queues" "$log"
sql app -c "SELECT drop_queue('f1', force => true)" >/dev/null
sql app -c "SELECT enqueue('f5', '{}')" -c "SELECT count(*) FROM dequeue('f5', 'w')" >/dev/null
check "once a queue is dropped, the fifth gets the freed entry" \
    is app "SELECT count(*) > 0 FROM claimqueue.claim_cursors() c JOIN claimqueue.queues q USING (queue_id)
            WHERE q.name = 'f5'" t
check "and its lanes are sound" is app "SELECT count(*) FROM claimqueue.check_claim_cursors()" 0

# DROP EXTENSION frees the database's entries; the re-created extension's
# queues (ids from 1 again) start with fresh cursors, loaded from the table.
sql app -c "SELECT drop_queue(name, force => true) FROM claimqueue.queues WHERE name <> 'default'" >/dev/null
sql app -c "SELECT count(*) FROM enqueue_batch('default', array_fill('{}'::jsonb, ARRAY[50]))" \
    -c "SELECT count(*) FROM dequeue('default', 'w', 40)" >/dev/null
old_cursor=$(sql app -c "SELECT cursor FROM claimqueue.claim_cursors() WHERE queue_id = 1 AND priority = 0")
check "the default queue (id 1) has a cursor" [ -n "$old_cursor" ]
sql app -c "SET client_min_messages = error" -c "DROP EXTENSION claimqueue CASCADE"
check "DROP EXTENSION frees its entries" is other "SELECT in_use FROM claim_cursor_usage" 0
sql app -c "SET client_min_messages = error" -c "CREATE EXTENSION claimqueue"
check "the re-created extension's queue 1 has no lanes before its first claim" \
    is app "SELECT count(*) FROM claimqueue.claim_cursors() WHERE queue_id = 1" 0
sql app -c "SELECT enqueue('default', '{}')" >/dev/null
check "its first job is claimed" is app "SELECT count(*) FROM dequeue('default', 'w')" 1
check "and its cursor is its own (invariants hold)" \
    is app "SELECT count(*) FROM claimqueue.check_claim_cursors()" 0

# DROP DATABASE frees the entries of its queues.
sql other -c "SELECT enqueue('default', '{}')" -c "SELECT count(*) FROM dequeue('default', 'w')" >/dev/null
check "the other database has an entry" is app "SELECT in_use FROM claim_cursor_usage" 2
psql -X -q -d postgres -c "DROP DATABASE other" >/dev/null
check "DROP DATABASE frees it" is app "SELECT in_use FROM claim_cursor_usage" 1

check "nothing at ERROR in the server log" bash -c "! grep -E ' (ERROR|PANIC):' '$log'"
echo "cursors: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# Liveness soak: claims never stop while jobs are ready. The workload that
# stopped claimqueue 0.3.0 for good in 4 of 5 runs (a claim-cursor bound read
# a shared slot twice, so a slot released between the two reads moved a cursor
# to "no position", past every job): a prefilled backlog, 2 producers
# enqueuing in autocommit, 8 consumers claiming and completing, and a session
# holding a REPEATABLE READ snapshot for the whole run. Every 10-s window must
# complete at least one job while jobs are ready; at the end the claim cursors'
# invariants must hold (claimqueue.check_claim_cursors() returns nothing).
#
#   pg_virtualenv -t -o shared_preload_libraries=claimqueue -o max_connections=50 \
#       bash test/liveness/run.sh
#
#   LIVENESS_SECONDS   how long the producers and consumers run (default 150)
#   LIVENESS_BACKLOG   jobs prefilled, in statements of 50,000 (default 200000)
#   LIVENESS_WINDOW    seconds per window (default 10)
# Prints one line per window and "liveness: P passed, F failed"; exits
# non-zero when a window claimed nothing while jobs were ready, or an
# invariant is broken. (Not a speed test: a window fails only at zero.)
set -uo pipefail
cd "$(dirname "$0")/../.."

seconds=${LIVENESS_SECONDS:-150}
backlog=${LIVENESS_BACKLOG:-200000}
window=${LIVENESS_WINDOW:-10}
db=claimqueue_liveness
tmp=$(mktemp -d)
deadline=30
source test/lib/tap.sh

sql() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$db" "$@"; }
holder_pid=""
cleanup() {
    [ -n "$holder_pid" ] && kill "$holder_pid" 2>/dev/null
    jobs -p | xargs -r kill 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
sql -c "SET client_min_messages = warning" -c "CREATE EXTENSION claimqueue"
for ((first = 1; first <= backlog; first += 50000)); do
    last=$((first + 49999 < backlog ? first + 49999 : backlog))
    sql -c "SELECT count(enqueue('default', jsonb_build_object('kind', 'noop', 'seq', g,
                                  'pad', repeat('x', 64))))
            FROM generate_series($first, $last) AS g" >/dev/null
done
echo "# prefilled $(sql -c "SELECT count(*) FROM claimqueue.jobs WHERE state = 'ready'") jobs"

cat >"$tmp/produce.sql" <<'EOF'
SELECT enqueue('default', '{"kind": "noop", "pad": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}');
EOF
cat >"$tmp/consume.sql" <<'EOF'
SELECT coalesce(max(id), 0) AS id, coalesce(max(attempt), 0) AS attempt
FROM dequeue('default', 'w' || :client_id) \gset
\if :id
SELECT complete(:id, :attempt);
\else
\sleep 10 ms
\endif
EOF

# The snapshot holder: an xid and a REPEATABLE READ snapshot for the whole run.
psql -X -q -d "$db" -c "BEGIN ISOLATION LEVEL REPEATABLE READ" -c "SELECT txid_current()" \
    -c "SELECT count(*) FROM claimqueue.jobs" -c "SELECT pg_sleep($seconds + 60)" \
    >/dev/null 2>&1 &
holder_pid=$!
pgbench -n -c 2 -j 1 -T "$seconds" -f "$tmp/produce.sql" "$db" >"$tmp/producers.log" 2>&1 &
producers=$!
pgbench -n -c 8 -j 2 -T "$seconds" -f "$tmp/consume.sql" "$db" >"$tmp/consumers.log" 2>&1 &
consumers=$!

# done and ready counts, read without SKIP LOCKED.
counts() { sql -c "SELECT count(*) FILTER (WHERE state = 'done'), count(*) FILTER (WHERE state = 'ready')
                   FROM claimqueue.jobs"; }
read -r done_before ready_before < <(counts | tr '|' ' ')
stalled=0
windows=0
end=$((SECONDS + seconds - window))
while [ "$SECONDS" -lt "$end" ]; do
    sleep "$window"
    read -r done_now ready_now < <(counts | tr '|' ' ')
    claimed=$((done_now - done_before))
    windows=$((windows + 1))
    echo "# window $windows: $claimed jobs done, $ready_now ready"
    if [ "$claimed" -eq 0 ] && [ "$ready_before" -gt 0 ]; then
        stalled=$((stalled + 1))
        echo "# window $windows claimed nothing with $ready_before jobs ready; lanes:"
        sql -c "SELECT queue_id, priority, cursor, max_position FROM claimqueue.claim_cursors()" | sed 's/^/#   /'
    fi
    done_before=$done_now
    ready_before=$ready_now
done
wait "$producers" "$consumers"
kill "$holder_pid" 2>/dev/null
holder_pid=""

check "every one of $windows windows of ${window}s completed jobs while jobs were ready" \
    [ "$stalled" -eq 0 ]
check "the consumers ran without errors" grep -q "number of failed transactions: 0" "$tmp/consumers.log"
check "the claim cursors' invariants hold" \
    [ -z "$(sql -c "SELECT format('%s/%s cursor %s: %s', queue_id, priority, cursor, problem)
                    FROM claimqueue.check_claim_cursors()")" ]
check "no cursor reads as -1 (no position)" \
    [ "$(sql -c "SELECT count(*) FROM claimqueue.claim_cursors() WHERE cursor < 0")" = 0 ]
# Nothing is held back once the run is over: a claim takes as many jobs as
# are ready, up to its batch.
ready=$(sql -c "SELECT least(count(*), 1000) FROM claimqueue.jobs WHERE state = 'ready'")
check "after the run a claim of 1000 takes min(1000, ready) = $ready jobs" \
    [ "$(sql -c "SELECT count(*) FROM dequeue('default', 'after', 1000)")" = "$ready" ]

psql -X -q -d postgres -c "DROP DATABASE $db WITH (FORCE)" >/dev/null
echo "liveness: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# The node worker of examples/node-worker (on the node library), for
# real: 4 handlers drain 2,000 jobs, each writing an effect row in the
# transaction that completes the job; then SIGTERM stops it and every job must
# be done exactly once. PG* variables from pg_virtualenv. Waits poll with a
# deadline (NODE_DEADLINE seconds, default 300).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../examples/node-worker"
JOBS=${NODE_JOBS:-2000}
deadline=${NODE_DEADLINE:-300}
db=claimqueue_node

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "node test: node/npm not installed"; exit 1
fi
[ -f ../../clients/node/dist/index.js ] || (cd ../../clients/node && npm ci --no-audit --no-fund --silent >/dev/null)
[ -d node_modules/claimqueue ] || npm ci --no-audit --no-fund --silent >/dev/null

psql -X -q -d "${PGDATABASE:-postgres}" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
psql -X -q -v ON_ERROR_STOP=1 -d $db >/dev/null <<SQL
SET client_min_messages = error;
CREATE EXTENSION claimqueue;
SELECT create_queue('node');
CREATE TABLE node_effects (job_id bigint, attempt int, worker text);
SELECT count(*) FROM enqueue_batch('node', (SELECT array_agg(jsonb_build_object('n', g)) FROM generate_series(1, $JOBS) g));
SQL
out=$(mktemp)
PGDATABASE=$db node worker.mjs node 4 >"$out" 2>&1 &
worker=$!
end=$((SECONDS + deadline))
until [ "$(psql -X -At -d $db -c "SELECT count(*) FROM queue_jobs WHERE queue = 'node' AND state IN ('ready', 'running')")" -eq 0 ]; do
    if [ "$SECONDS" -ge "$end" ] || ! kill -0 $worker 2>/dev/null; then break; fi
    sleep 0.2
done
kill -TERM $worker 2>/dev/null || true
status=0
wait $worker || status=$?
cat "$out"; rm -f "$out"

result=$(psql -X -At -d $db -c "
  SELECT (SELECT count(*) FROM queue_jobs WHERE queue = 'node' AND state = 'done') || ' ' ||
         (SELECT count(*) FROM queue_jobs WHERE queue = 'node' AND state <> 'done') || ' ' ||
         (SELECT count(*) FROM node_effects) || ' ' ||
         (SELECT count(DISTINCT job_id) FROM node_effects)")
psql -X -q -d "${PGDATABASE:-postgres}" -c "DROP DATABASE $db"
read -r done_jobs other effects distinct <<<"$result"
echo "node test: jobs=$JOBS done=$done_jobs not_done=$other effects=$effects distinct_jobs=$distinct exit_after_sigterm=$status"
[ "$status" -eq 0 ] && [ "$done_jobs" -eq "$JOBS" ] && [ "$other" -eq 0 ] && [ "$effects" -eq "$JOBS" ] && [ "$distinct" -eq "$JOBS" ]

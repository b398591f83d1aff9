#!/usr/bin/env bash
# The README's node-postgres worker, for real: 4 workers drain 2,000 jobs,
# each writing an effect row in the transaction that completes the job; then
# every job must be done exactly once. PG* variables from pg_virtualenv.
set -euo pipefail
cd "$(dirname "$0")/../../examples/node-worker"
JOBS=${NODE_JOBS:-2000}
db=claimqueue_node

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "node test: node/npm not installed"; exit 1
fi
[ -d node_modules/pg ] || npm install --no-audit --no-fund --silent >/dev/null

psql -X -q -d "${PGDATABASE:-postgres}" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
psql -X -q -v ON_ERROR_STOP=1 -d $db <<SQL
CREATE EXTENSION claimqueue;
SELECT create_queue('node');
CREATE TABLE node_effects (job_id bigint, attempt int, worker text);
SELECT count(*) FROM enqueue_batch('node', (SELECT array_agg(jsonb_build_object('n', g)) FROM generate_series(1, $JOBS) g));
SQL
PGDATABASE=$db node worker.mjs node 4 --exit-when-idle

result=$(psql -X -At -d $db -c "
  SELECT (SELECT count(*) FROM queue_jobs WHERE queue = 'node' AND state = 'done') || ' ' ||
         (SELECT count(*) FROM queue_jobs WHERE queue = 'node' AND state <> 'done') || ' ' ||
         (SELECT count(*) FROM node_effects) || ' ' ||
         (SELECT count(DISTINCT job_id) FROM node_effects)")
psql -X -q -d "${PGDATABASE:-postgres}" -c "DROP DATABASE $db"
read -r done_jobs other effects distinct <<<"$result"
echo "node test: jobs=$JOBS done=$done_jobs not_done=$other effects=$effects distinct_jobs=$distinct"
[ "$done_jobs" -eq "$JOBS" ] && [ "$other" -eq 0 ] && [ "$effects" -eq "$JOBS" ] && [ "$distinct" -eq "$JOBS" ]

\i test/regress/setup.sql
-- The claim's access path (src/engine/job_rows.hpp): an index scan of the
-- partial ready index, from the lane's cursor, in claim order. Finished jobs
-- are never visited, so the claim's cost does not grow with the history kept:
-- with 19,990 done jobs and 10 ready, a claim of 10 reads the 10 ready index
-- entries (and 3 more to load the lane, the first time this server claims
-- from the queue: its priority, lowest and highest position) and no other
-- index of the table. The counts come from the transaction's own statistics
-- (flushed before each transaction, so they are that transaction's alone).
-- The history is written as done rows, as VACUUM leaves history: no version
-- of it in the ready index. Finishing ready rows and vacuuming them would
-- depend on no other snapshot being open, and the reaper's pass may hold one.
SELECT create_queue('plan');
INSERT INTO claimqueue.jobs (queue_id, state, attempt, max_attempts, run_at,
                             created_at, started_at, finished_at, payload)
SELECT q.queue_id, 'done', 1, q.max_attempts, now(), now(), now(), now(), '{}'
FROM claimqueue.queues q, generate_series(1, 19990) WHERE q.name = 'plan';
SELECT count(*) FROM enqueue_batch('plan',
    (SELECT array_agg('{}'::jsonb) FROM generate_series(1, 10)));
SELECT pg_stat_force_next_flush();
BEGIN;
SELECT array_agg(id ORDER BY id) FROM dequeue('plan', 'w1', batch => 10);
SELECT c.relname, pg_stat_get_xact_tuples_returned(c.oid) AS entries_read
FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid
WHERE i.indrelid = 'claimqueue.jobs'::regclass ORDER BY c.relname;
COMMIT;
-- The next claim finds nothing: it reads only the ten entries of the jobs just
-- claimed (dead to it now, kept until VACUUM), from the lane's cursor.
SELECT pg_stat_force_next_flush();
BEGIN;
SELECT count(*) FROM dequeue('plan', 'w1', batch => 10);
SELECT pg_stat_get_xact_tuples_returned('claimqueue.jobs_ready_idx'::regclass) AS entries_read;
COMMIT;

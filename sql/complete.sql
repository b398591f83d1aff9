\i test/regress/setup.sql
SELECT create_queue('work');
SELECT enqueue('work', '{"n": 1}');
SELECT id, attempt FROM dequeue('work', 'w1');
SELECT complete(1, 1);
SELECT id, state, attempt, worker, leased, finished FROM pg_temp.jobs;
-- A second complete, or a wrong token, is a stale claim (QC003); nothing changes.
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT complete(1, 1)$$);
SELECT pg_temp.err($$SELECT complete(1, 2)$$);
SELECT pg_temp.err($$SELECT complete(99, 1)$$);
SELECT pg_temp.err($$SELECT complete(NULL, 1)$$);
SELECT pg_temp.err($$SELECT complete(1, NULL)$$);
SELECT pg_temp.err($$SELECT complete(1, 0)$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
-- A ready job (never claimed) cannot be completed.
SELECT enqueue('work', '{"n": 2}');
SELECT complete(2, 1);
-- The worker pattern: effects and complete in one transaction. When the claim
-- went stale, complete raises and the whole transaction, effects included, is
-- rolled back.
CREATE TEMP TABLE effects (job_id bigint, note text);
SELECT id, attempt FROM dequeue('work', 'w1');
SELECT cancel(2);  -- the claim goes stale (an operator cancelled the job)
BEGIN;
INSERT INTO effects VALUES (2, 'sent the email');
SELECT complete(2, 1);
COMMIT;
SELECT count(*) AS effects_kept FROM effects;
-- complete_batch(ids[], attempts[]): a batch in one statement, all or nothing.
SELECT count(*) FROM enqueue_batch('work', (SELECT array_agg('{}'::jsonb) FROM generate_series(1, 5)));
SELECT array_agg(id ORDER BY id) AS ids, array_agg(attempt ORDER BY id) AS attempts
FROM dequeue('work', 'w1', batch => 5) \gset
SELECT :'ids' AS ids, :'attempts' AS attempts;
-- One stale token (job 4 under attempt 2) fails the whole batch, naming it.
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT complete_batch('{3,4,5}'::bigint[], '{1,2,1}'::integer[])$$);
SELECT pg_temp.err($$SELECT complete_batch('{3,99}'::bigint[], '{1,1}'::integer[])$$);
SELECT pg_temp.err($$SELECT complete_batch('{3,4}'::bigint[], '{1}'::integer[])$$);
SELECT pg_temp.err($$SELECT complete_batch('{3,3}'::bigint[], '{1,1}'::integer[])$$);
SELECT pg_temp.err($$SELECT complete_batch('{3,NULL}'::bigint[], '{1,1}'::integer[])$$);
SELECT pg_temp.err($$SELECT complete_batch(NULL::bigint[], '{1}'::integer[])$$);
SELECT pg_temp.err($$SELECT complete_batch('{3}'::bigint[], '{0}'::integer[])$$);
SELECT pg_temp.err($$SELECT complete_batch(array_agg(g::bigint), array_agg(1)) FROM generate_series(1, 1001) g$$);
-- An empty batch completes nothing.
SELECT complete_batch('{}'::bigint[], '{}'::integer[]);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
SELECT complete_batch(:'ids'::bigint[], :'attempts'::integer[]);
SELECT state, count(*) FROM claimqueue.jobs GROUP BY state ORDER BY state;
-- Untyped parameters (node-postgres, pgbench -M prepared) resolve to complete().
PREPARE untyped AS SELECT complete($1, $2);
DEALLOCATE untyped;

\i test/regress/setup.sql
SELECT create_queue('work', lease => '1 minute');
SELECT create_queue('other');
SELECT count(*) FROM enqueue_batch('work', (SELECT array_agg(jsonb_build_object('n', g)) FROM generate_series(1, 4) g));
SELECT enqueue('work', '{"n": 5}', priority => 10);
SELECT enqueue('other', '{"n": 6}');
-- The first call has nothing to complete: id and attempt NULL only claim
-- (priority first, then FIFO, as dequeue).
SELECT id, payload, attempt, max_attempts, priority FROM complete_and_dequeue(NULL, NULL, 'work', 'w1');
-- Each later call completes the previous job and claims the next.
SELECT id, payload, attempt FROM complete_and_dequeue(5, 1, 'work', 'w1');
SELECT id, state, attempt, worker, leased, started, finished FROM pg_temp.jobs;
-- batch and lease as in dequeue(); the completed job may be of another queue.
SELECT id, attempt, lease_expires_at > now() + interval '50 minutes' AS long_lease
FROM complete_and_dequeue(1, 1, 'other', 'w2', batch => 5, lease => '1 hour');
SELECT id, attempt FROM complete_and_dequeue(6, 1, 'work', 'w1', batch => 2);
-- An empty queue: the job is completed and nothing is claimed (no rows, no error).
SELECT count(*) FROM complete_and_dequeue(2, 1, 'other', 'w2');
SELECT id, state, attempt, worker FROM pg_temp.jobs;
-- Fencing as complete(): a stale or unknown attempt raises QC003 (or QC002 for
-- an unknown job) and claims nothing; so does every bad argument.
SELECT enqueue('work', '{"n": 7}');
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT * FROM complete_and_dequeue(1, 1, 'work', 'w3')$$);
SELECT pg_temp.err($$SELECT * FROM complete_and_dequeue(3, 2, 'work', 'w3')$$);
SELECT pg_temp.err($$SELECT * FROM complete_and_dequeue(7, 1, 'work', 'w3')$$);
SELECT pg_temp.err($$SELECT * FROM complete_and_dequeue(99, 1, 'work', 'w3')$$);
SELECT pg_temp.err($$SELECT * FROM complete_and_dequeue(3, NULL, 'work', 'w3')$$);
SELECT pg_temp.err($$SELECT * FROM complete_and_dequeue(NULL, 1, 'work', 'w3')$$);
SELECT pg_temp.err($$SELECT * FROM complete_and_dequeue(3, 0, 'work', 'w3')$$);
SELECT pg_temp.err($$SELECT * FROM complete_and_dequeue(3, 1, 'nope', 'w3')$$);
SELECT pg_temp.err($$SELECT * FROM complete_and_dequeue(3, 1, NULL, 'w3')$$);
SELECT pg_temp.err($$SELECT * FROM complete_and_dequeue(3, 1, 'work', NULL)$$);
SELECT pg_temp.err($$SELECT * FROM complete_and_dequeue(3, 1, 'work', '')$$);
SELECT pg_temp.err($$SELECT * FROM complete_and_dequeue(3, 1, 'work', 'w3', 0)$$);
SELECT pg_temp.err($$SELECT * FROM complete_and_dequeue(3, 1, 'work', 'w3', NULL)$$);
SELECT pg_temp.err($$SELECT * FROM complete_and_dequeue(3, 1, 'work', 'w3', 1, '0')$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
-- Only READ COMMITTED can claim; the error comes before the completion.
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT pg_temp.err($$SELECT * FROM complete_and_dequeue(3, 1, 'work', 'w3')$$);
ROLLBACK;
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
-- The worker pattern: effects, then complete_and_dequeue, in one transaction.
-- A stale claim rolls the effects back with it.
CREATE TEMP TABLE effects (job_id bigint, note text);
SELECT cancel(3);
BEGIN;
INSERT INTO effects VALUES (3, 'sent the email');
SELECT * FROM complete_and_dequeue(3, 1, 'work', 'w3');
COMMIT;
SELECT count(*) AS effects_kept FROM effects;
SELECT id, state FROM pg_temp.jobs WHERE id IN (3, 4, 7);
-- Untyped parameters (node-postgres, pgbench -M prepared) resolve to one function.
PREPARE untyped AS SELECT id FROM complete_and_dequeue($1, $2, $3, $4);
EXECUTE untyped(NULL, NULL, 'work', 'w1');
EXECUTE untyped(4, 1, 'work', 'w1');
DEALLOCATE untyped;
SELECT id, state, attempt, worker FROM pg_temp.jobs WHERE id IN (4, 7);
-- Payloads stored out of line (TOAST) come back whole, also from the
-- functions called in the select list.
CREATE TEMP TABLE big AS SELECT (SELECT string_agg(md5(g::text), '') FROM generate_series(1, 3000) g) AS text;
SELECT enqueue('other', jsonb_build_object('big', (SELECT text FROM big))) AS big1 \gset
SELECT enqueue('other', jsonb_build_object('big', (SELECT text FROM big))) AS big2 \gset
SELECT enqueue('other', jsonb_build_object('big', (SELECT text FROM big))) AS big3 \gset
SELECT id = :big1 AS first_big, attempt, payload->>'big' = (SELECT text FROM big) AS intact
FROM complete_and_dequeue(7, 1, 'other', 'w1');
SELECT (r).id = :big2 AS second_big, (r).attempt, (r).payload->>'big' = (SELECT text FROM big) AS intact
FROM (SELECT complete_and_dequeue(:big1, 1, 'other', 'w1') AS r) s;
SELECT (r).id = :big3 AS third_big, (r).payload->>'big' = (SELECT text FROM big) AS intact
FROM (SELECT dequeue('other', 'w1') AS r) s;
SELECT id, state FROM pg_temp.jobs WHERE id IN (7, :big1, :big2, :big3);

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

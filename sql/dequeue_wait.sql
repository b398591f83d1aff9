\i test/regress/setup.sql
-- dequeue_wait() and next_due(). The waits themselves (wake-ups, cancel,
-- statement_timeout, backend_xmin) are in test/perl/wait.pl; here: the result,
-- the arguments and when it refuses to wait.
SELECT create_queue('work', lease => '1 minute');
-- next_due(): NULL without ready jobs; the earliest run_at over every priority.
SELECT next_due('work');
SELECT enqueue('work', '{"n": 1}', run_at => '2031-01-01 00:00+00', priority => 5);
SELECT enqueue('work', '{"n": 2}', run_at => '2030-01-01 00:00+00', priority => -5);
SELECT enqueue('work', '{"n": 3}', run_at => '2032-01-01 00:00+00');
SELECT next_due('work') = '2030-01-01 00:00+00' AS earliest_of_all_priorities;
SELECT enqueue('work', '{"n": 4}', priority => 100);
SELECT next_due('work') <= now() AS due_now;
-- Running and finished jobs do not count.
SELECT id FROM dequeue('work', 'w0');
SELECT next_due('work') = '2030-01-01 00:00+00' AS running_job_ignored;
-- wait => '0' is dequeue() with the jobs as a jsonb array; nothing due: [].
CALL dequeue_wait('work', 'w1', wait => '0');
-- Move claimqueue's clock past every run_at (2081).
SET claimqueue.debug_clock_offset = '20000d';
-- A batch, in claim order (priority, then run_at), with dequeue()'s columns.
CALL dequeue_wait('work', 'w1', batch => 2, lease => '1 hour', wait => '0') \gset
SELECT e->'id' AS id, e->'payload' AS payload, e->'attempt' AS attempt, e->'priority' AS priority,
       e->'max_attempts' AS max_attempts, e ? 'lease_expires_at' AND e ? 'enqueued_at' AS times
FROM pg_catalog.jsonb_array_elements(:'jobs') e;
SELECT id, lease_expires_at - started_at AS lease FROM claimqueue.jobs WHERE worker = 'w1';
SELECT id, state, worker FROM pg_temp.jobs WHERE state = 'running';
-- When something is claimable it never waits, also with a long wait.
CALL dequeue_wait('work', 'w2', wait => '1 hour') \gset
SELECT e->'id' AS id, e->'attempt' AS attempt FROM pg_catalog.jsonb_array_elements(:'jobs') e;
RESET claimqueue.debug_clock_offset;
-- A short wait with nothing to do returns [] once it is over.
CALL dequeue_wait('work', 'w3', wait => '10ms');
SELECT count(*) AS waiters_left FROM claimqueue.waiters();
-- Inside a transaction block it can only claim: it must commit to wait.
BEGIN;
CALL dequeue_wait('work', 'w4', wait => '0');
CALL dequeue_wait('work', 'w4', wait => '1s');
ROLLBACK;
-- From a function too (no CALL on its own).
SELECT pg_temp.err($$CALL dequeue_wait('work', 'w4', wait => '1s')$$);
-- Bad input: errors name the value, nothing changes.
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$CALL dequeue_wait(NULL, 'w')$$);
SELECT pg_temp.err($$CALL dequeue_wait('Bad Name', 'w')$$);
SELECT pg_temp.err($$CALL dequeue_wait('nope', 'w', wait => '0')$$);
CALL dequeue_wait('nope', 'w', wait => '1s');
SELECT pg_temp.err($$CALL dequeue_wait('work', NULL)$$);
SELECT pg_temp.err($$CALL dequeue_wait('work', '')$$);
SELECT pg_temp.err($$CALL dequeue_wait('work', 'w', batch => 0)$$);
SELECT pg_temp.err($$CALL dequeue_wait('work', 'w', batch => NULL)$$);
SELECT pg_temp.err($$CALL dequeue_wait('work', 'w', lease => '0')$$);
SELECT pg_temp.err($$CALL dequeue_wait('work', 'w', wait => NULL)$$);
SELECT pg_temp.err($$CALL dequeue_wait('work', 'w', wait => '-1s')$$);
SELECT pg_temp.err($$SELECT next_due(NULL)$$);
SELECT pg_temp.err($$SELECT next_due('nope')$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
-- REPEATABLE READ: the claim refuses, as dequeue() does.
BEGIN ISOLATION LEVEL REPEATABLE READ;
CALL dequeue_wait('work', 'w5', wait => '0');
ROLLBACK;

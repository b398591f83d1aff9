\i test/regress/setup.sql
SELECT create_queue('work', lease => '1 minute', max_attempts => 3);
-- An empty queue gives no rows (not an error).
SELECT * FROM dequeue('work', 'w1');
SELECT enqueue('work', '{"n": 1}');
SELECT enqueue('work', '{"n": 2}');
SELECT enqueue('work', '{"n": 3}', priority => 10);
SELECT enqueue('work', '{"n": 4}', priority => -10);
SELECT enqueue('work', '{"n": 5}', run_at => now() + interval '1 hour');
-- Priority first (higher runs first), then FIFO.
SELECT id, payload, attempt, max_attempts, priority FROM dequeue('work', 'w1');
SELECT id, payload, attempt, max_attempts, priority FROM dequeue('work', 'w2', batch => 2);
-- The claim records the worker, the attempt and a lease from the queue or the call.
SELECT id, state, attempt, worker, leased, started FROM pg_temp.jobs WHERE state = 'running';
SELECT lease_expires_at - started_at AS lease FROM claimqueue.jobs WHERE id = 3;
SELECT id, lease_expires_at > now() + interval '50 minutes' AS long_lease
FROM dequeue('work', 'w3', lease => '1 hour');
-- Only the delayed job is left, and it is not due.
SELECT * FROM dequeue('work', 'w4');
-- It becomes due when its run_at passes (claimqueue's clock moved for the test).
SET claimqueue.debug_clock_offset = '2h';
SELECT id, payload FROM dequeue('work', 'w4');
RESET claimqueue.debug_clock_offset;
-- Claimed jobs are not claimed again.
SELECT count(*) FROM dequeue('work', 'w5', batch => 1000);
-- Bad input: errors name the value, nothing changes.
SELECT enqueue('work', '{"n": 6}');
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT * FROM dequeue(NULL, 'w')$$);
SELECT pg_temp.err($$SELECT * FROM dequeue('nope', 'w')$$);
SELECT pg_temp.err($$SELECT * FROM dequeue('Work', 'w')$$);
SELECT pg_temp.err($$SELECT * FROM dequeue('work', NULL)$$);
SELECT pg_temp.err($$SELECT * FROM dequeue('work', '')$$);
SELECT pg_temp.err($$SELECT * FROM dequeue('work', repeat('w', 201))$$);
SELECT pg_temp.err($$SELECT * FROM dequeue('work', 'w', 0)$$);
SELECT pg_temp.err($$SELECT * FROM dequeue('work', 'w', -5)$$);
SELECT pg_temp.err($$SELECT * FROM dequeue('work', 'w', 1001)$$);
SELECT pg_temp.err($$SELECT * FROM dequeue('work', 'w', NULL)$$);
SELECT pg_temp.err($$SELECT * FROM dequeue('work', 'w', 1, '0')$$);
SELECT pg_temp.err($$SELECT * FROM dequeue('work', 'w', 1, '-1 minute')$$);
SELECT pg_temp.err($$SELECT * FROM dequeue('work', 'w', 1, '366 days')$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
-- Claims need READ COMMITTED; other levels get a clear error naming the level.
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT * FROM dequeue('work', 'w1');
ROLLBACK;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT pg_temp.err($$SELECT * FROM dequeue('work', 'w1')$$);
ROLLBACK;
SELECT id, payload FROM dequeue('work', 'w1');
-- The full error for an unknown queue.
SELECT * FROM dequeue('nope', 'w1');

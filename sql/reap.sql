\i test/regress/setup.sql
SELECT create_queue('work', lease => '1 minute', max_attempts => 2, backoff_base => '0');
SELECT enqueue('work', '{"n": 1}');
SELECT enqueue('work', '{"n": 2}');
SELECT id, attempt FROM dequeue('work', 'w1', batch => 2);
-- Nothing has expired yet.
SELECT reap();
-- Two minutes later both leases have expired: back to ready, with the reason.
SET claimqueue.debug_clock_offset = '2min';
SELECT reap();
SELECT id, state, attempt, worker, last_error, leased FROM pg_temp.jobs;
-- Claimed again: the second attempt. Its lease expires too: attempts are used
-- up, so the job is failed.
SELECT id, attempt FROM dequeue('work', 'w2', batch => 2);
SELECT complete(2, 2);
SET claimqueue.debug_clock_offset = '5min';
SELECT reap('work');
SELECT id, state, attempt, last_error, finished FROM pg_temp.jobs;
-- reap() only touches the queue it is given.
SELECT create_queue('other', lease => '1 minute');
SELECT enqueue('other');
SELECT count(*) FROM dequeue('other', 'w1');
SET claimqueue.debug_clock_offset = '10min';
SELECT reap('work');
SELECT reap('other');
RESET claimqueue.debug_clock_offset;
-- Bad input.
SELECT pg_temp.err($$SELECT reap('nope!')$$);
SELECT reap('nope');
-- reap() of every queue returns expired leases in batches of 1,000, oldest
-- first across the queues, until a batch comes back short: 1,200 in one
-- queue and 300 in another are all returned by one call, none left running.
SELECT create_queue('many_a', lease => '1 minute');
SELECT create_queue('many_b', lease => '1 minute');
SELECT count(*) FROM enqueue_batch('many_a', array_fill('{}'::jsonb, ARRAY[1200]));
SELECT count(*) FROM enqueue_batch('many_b', array_fill('{}'::jsonb, ARRAY[300]));
SELECT count(*) FROM dequeue('many_a', 'w1', batch => 600);
SELECT count(*) FROM dequeue('many_a', 'w1', batch => 600);
SELECT count(*) FROM dequeue('many_b', 'w1', batch => 300);
SET claimqueue.debug_clock_offset = '10min';
SELECT reap();
RESET claimqueue.debug_clock_offset;
SELECT q.name, j.state, count(*) FROM claimqueue.jobs j JOIN claimqueue.queues q USING (queue_id)
WHERE q.name LIKE 'many_%' GROUP BY 1, 2 ORDER BY 1, 2;

\i test/regress/setup.sql
-- retry_jobs(): a queue's failed (or cancelled) jobs back to ready in bulk,
-- each with a fresh budget of attempts. The races (a claim, a reap, another
-- retry_jobs) are in the isolation spec retry_jobs.
SELECT create_queue('work', max_attempts => 2);
SELECT enqueue('work', jsonb_build_object('n', g)) FROM generate_series(1, 4) g;
SELECT cancel(4);
-- Jobs 1-3 fail both their attempts.
SELECT count(*) FROM dequeue('work', 'w1', batch => 3);
SELECT fail(id, 1, 'boom', retry_in => '0') FROM generate_series(1, 3) id;
SELECT count(*) FROM dequeue('work', 'w1', batch => 3);
SELECT fail(id, 2, 'boom again') FROM generate_series(1, 3) id;
SELECT id, state, attempt, max_attempts FROM pg_temp.jobs;
-- max_jobs: at most that many (which ones is not specified).
SELECT retry_jobs('work', max_jobs => 1);
SELECT state, count(*) FROM queue_jobs GROUP BY state ORDER BY state;
-- The rest, failed only by default. Each gets the queue's max_attempts anew:
-- attempt stays 2 (the fencing token never goes down) and max_attempts
-- becomes 2 + 2, two more attempts, as a new job of the queue gets.
SELECT retry_jobs('work');
SELECT id, state, attempt, max_attempts, last_error, finished FROM pg_temp.jobs;
SELECT pg_temp.err($$SELECT complete(1, 2)$$);
-- Cancelled jobs when asked.
SELECT retry_jobs('work', '{cancelled}');
SELECT id, state, attempt, max_attempts FROM pg_temp.jobs WHERE id = 4;
-- The retried jobs are claimed again; attempt goes on from where it was.
SELECT id, attempt FROM dequeue('work', 'w2', batch => 10) ORDER BY id;
-- finished_before: only jobs that finished before it.
SELECT cancel(1);
SET claimqueue.debug_clock_offset = '1h';
SELECT cancel(2);
RESET claimqueue.debug_clock_offset;
SELECT pg_temp.err($$SELECT complete(1, 3)$$);
SELECT retry_jobs('work', '{cancelled}', finished_before => now() + interval '30 minutes');
SELECT id, state FROM pg_temp.jobs WHERE id IN (1, 2);
-- A job whose dedup_key a live job holds stays as it is (a NOTICE counts
-- them); of two with one key, only the first comes back.
SELECT create_queue('dedup');
SELECT enqueue('dedup', '{"n": 5}', dedup_key => 'k');
SELECT cancel(5);
SELECT enqueue('dedup', '{"n": 6}', dedup_key => 'k');
SELECT cancel(6);
SELECT retry_jobs('dedup', '{cancelled}');
SELECT retry_jobs('dedup', '{cancelled}');
SELECT id, state, dedup_key FROM pg_temp.jobs WHERE queue = 'dedup';
-- Bad input, unknown queues and REPEATABLE READ change nothing.
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT retry_jobs('work', '{done}')$$);
SELECT pg_temp.err($$SELECT retry_jobs('work', '{failed,running}')$$);
SELECT pg_temp.err($$SELECT retry_jobs('work', '{failed,NULL}')$$);
SELECT pg_temp.err($$SELECT retry_jobs('work', NULL)$$);
SELECT pg_temp.err($$SELECT retry_jobs('work', '{{failed}}')$$);
SELECT pg_temp.err($$SELECT retry_jobs('work', max_jobs => 0)$$);
SELECT pg_temp.err($$SELECT retry_jobs('nope')$$);
SELECT pg_temp.err($$SELECT retry_jobs(NULL)$$);
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT pg_temp.err($$SELECT retry_jobs('work')$$);
COMMIT;
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
-- An empty states array matches nothing.
SELECT retry_jobs('work', '{}');

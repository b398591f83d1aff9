\i test/regress/setup.sql
SELECT create_queue('work', max_attempts => 3, backoff_base => '1 minute', backoff_cap => '3 minutes');
SELECT enqueue('work', '{"n": 1}');
SELECT id, attempt FROM dequeue('work', 'w1');
-- A failed attempt goes back to ready after a backoff, keeping the error.
SELECT fail(1, 1, 'smtp timeout');
SELECT id, state, attempt, last_error, delayed, leased, finished FROM pg_temp.jobs;
-- Backoff with equal jitter: between d/2 and d, d = base * 2^(attempt-1) capped.
SELECT run_at - now() BETWEEN interval '29 seconds' AND interval '61 seconds' AS backoff_in_range
FROM claimqueue.jobs WHERE id = 1;
-- Not due yet; move the clock forward to claim it again.
SELECT count(*) FROM dequeue('work', 'w1');
SET claimqueue.debug_clock_offset = '10min';
SELECT id, attempt FROM dequeue('work', 'w2');
-- retry_in overrides the backoff.
SELECT fail(1, 2, 'still down', retry_in => '0');
SELECT id, attempt FROM dequeue('work', 'w3');
-- The last attempt's failure makes the job failed (dead), keeping the error.
SELECT fail(1, 3, 'gave up');
SELECT id, state, attempt, last_error, leased, finished FROM pg_temp.jobs;
RESET claimqueue.debug_clock_offset;
-- A NULL error is allowed.
SELECT enqueue('work', '{"n": 2}');
SELECT id, attempt FROM dequeue('work', 'w1');
SELECT fail(2, 1);
SELECT id, state, last_error FROM pg_temp.jobs WHERE id = 2;
-- Stale tokens and bad input change nothing.
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT fail(1, 3, 'late')$$);
SELECT pg_temp.err($$SELECT fail(2, 1, 'twice')$$);
SELECT pg_temp.err($$SELECT fail(99, 1)$$);
SELECT pg_temp.err($$SELECT fail(NULL, 1)$$);
SELECT pg_temp.err($$SELECT fail(2, NULL)$$);
SELECT pg_temp.err($$SELECT fail(2, -1)$$);
SELECT pg_temp.err($$SELECT fail(2, 1, 'x', '-1 second')$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
SELECT fail(1, 3, 'late');
-- retryable and error_detail (0.5.0): sql/job_errors.sql.

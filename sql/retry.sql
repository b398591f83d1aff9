\i test/regress/setup.sql
SELECT create_queue('work', max_attempts => 1);
SELECT enqueue('work', '{"n": 1}');
SELECT id, attempt FROM dequeue('work', 'w1');
SELECT fail(1, 1, 'bad data');
-- retry() gives a failed job one more attempt; the fencing token keeps counting up.
SELECT retry(1);
SELECT id, state, attempt, max_attempts, last_error, finished FROM pg_temp.jobs;
SELECT id, attempt FROM dequeue('work', 'w1');
SELECT complete(1, 2);
-- A cancelled job can be retried too, and retry can schedule it.
SELECT enqueue('work', '{"n": 2}');
SELECT cancel(2);
SELECT retry(2, run_at => now() + interval '1 day');
SELECT id, state, delayed FROM pg_temp.jobs WHERE id = 2;
-- Wrong states and bad input change nothing.
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT retry(1)$$);
SELECT pg_temp.err($$SELECT retry(2)$$);
SELECT pg_temp.err($$SELECT retry(99)$$);
SELECT pg_temp.err($$SELECT retry(NULL)$$);
SELECT pg_temp.err($$SELECT retry(2, 'infinity')$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
SELECT retry(1);
-- A job cannot be revived while a live job holds its dedup_key (QC004, not a
-- unique violation); once that job has finished, it can.
SELECT enqueue('work', '{"n": 3}', dedup_key => 'report:7');
SELECT cancel(3);
SELECT enqueue('work', '{"n": 4}', dedup_key => 'report:7');
SELECT pg_temp.err($$SELECT retry(3)$$);
SELECT retry(3);
SELECT cancel(4);
SELECT retry(3);
SELECT id, state, dedup_key FROM pg_temp.jobs WHERE dedup_key IS NOT NULL;

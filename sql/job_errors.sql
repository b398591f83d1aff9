\i test/regress/setup.sql
SELECT create_queue('work', max_attempts => 25);
SELECT enqueue('work', '{"n": 1}');
-- No failure yet: no history.
SELECT count(*) FROM job_errors(1);
SELECT id, attempt FROM dequeue('work', 'w1');
SELECT fail(1, 1, 'smtp timeout', retry_in => '0',
            error_detail => '{"class": "TimeoutError", "stack": "at send (mail.js:10)"}');
SELECT id, attempt FROM dequeue('work', 'w1');
-- The old call, without detail, and a NULL error.
SELECT fail(1, 2, NULL, '0');
SELECT attempt, failed_at <= clock_timestamp() AS past, error, detail FROM job_errors(1);
-- last_error keeps the latest error alone.
SELECT last_error FROM claimqueue.jobs WHERE id = 1;
-- The latest 20 attempts are kept, oldest first.
DO $$
BEGIN
    FOR a IN 3..23 LOOP
        PERFORM d.id FROM dequeue('work', 'w1') d;
        PERFORM fail(1, a, 'failure ' || a, '0', error_detail => jsonb_build_object('n', a));
    END LOOP;
END $$;
SELECT count(*), min(attempt), max(attempt) FROM job_errors(1);
SELECT jsonb_array_length(errors) FROM claimqueue.jobs WHERE id = 1;
SELECT attempt, error, detail FROM job_errors(1) ORDER BY attempt DESC LIMIT 2;
-- retryable => false fails the job at once, attempts left or not.
SELECT id, attempt FROM dequeue('work', 'w1');
SELECT fail(1, 24, 'bad address', retryable => false,
            error_detail => '{"class": "PermanentError"}');
SELECT id, state, attempt, last_error, finished FROM pg_temp.jobs;
SELECT attempt, error, detail FROM job_errors(1) ORDER BY attempt DESC LIMIT 1;
-- Bad input changes nothing.
SELECT enqueue('work', '{"n": 2}');
SELECT id, attempt FROM dequeue('work', 'w1');
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT fail(2, 1, 'x', retryable => NULL)$$);
SELECT pg_temp.err($$SELECT fail(2, 1, 'x', error_detail => '[1, 2]')$$);
SELECT pg_temp.err($$SELECT fail(2, 1, 'x', error_detail => '"text"')$$);
SELECT pg_temp.err($$SELECT fail(2, 1, 'x', '1 minute', retryable => false)$$);
SELECT pg_temp.err($$SELECT fail(2, 1, repeat('x', 60000),
                                 error_detail => jsonb_build_object('stack', repeat('y', 6000)))$$);
SELECT pg_temp.err($$SELECT * FROM job_errors(NULL)$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
-- Up to the limit is kept.
SELECT fail(2, 1, repeat('x', 60000), error_detail => jsonb_build_object('stack', repeat('y', 5000)));
SELECT attempt, length(error), length(detail->>'stack') FROM job_errors(2);
-- A job that does not exist, or in a queue the caller holds no privilege on:
-- no rows, as job_status shows NULLs.
SELECT count(*) FROM job_errors(99);
SELECT create_queue('other');
CREATE ROLE regress_cq_errors IN ROLE claimqueue_producer;
SELECT grant_queue('other', 'produce', 'regress_cq_errors');
SET ROLE regress_cq_errors;
SELECT count(*) FROM job_errors(1);
SELECT state FROM job_status('{1}');
RESET ROLE;
SELECT grant_queue('work', 'produce', 'regress_cq_errors');
SET ROLE regress_cq_errors;
SELECT count(*) FROM job_errors(1);
RESET ROLE;
DROP EXTENSION claimqueue CASCADE;
DROP ROLE regress_cq_errors;

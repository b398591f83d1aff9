\i test/regress/setup.sql
-- await_jobs(ids, timeout, jobs): returns job_status(ids) as a jsonb array once
-- every job is done, failed or cancelled, or when timeout runs out. The waking
-- itself (a finishing commit, rollback, revoke, DROP EXTENSION, backend_xmin)
-- is in test/isolation/specs/await_jobs.spec and test/perl/wait.pl; here: the
-- answer, the arguments and when it refuses to wait.
SELECT create_queue('work', max_attempts => 1);
SELECT count(*) FROM enqueue_batch('work', (SELECT array_agg(jsonb_build_object('n', g)) FROM generate_series(1, 4) g));
SELECT count(*) FROM dequeue('work', 'w1', batch => 3);
SELECT complete(1, 1, '{"answer": 1}');
SELECT fail(2, 1, 'boom');
SELECT cancel(3);
-- Every job finished: it returns at once, whatever the timeout, in the order
-- of ids, with job_status()'s columns.
CALL await_jobs('{3,1,2}', '1 hour');
-- Unknown ids are not waited for (state NULL), as jobs of queues the caller
-- may not see are not (sql/results.sql has the visibility).
CALL await_jobs('{1,99}', '1 hour');
CALL await_jobs('{}', '1 hour');
-- A job still ready: at the timeout it returns what it has, never an error.
CALL await_jobs('{1,4}', '10ms');
CALL await_jobs('{4}', '0');
SELECT count(*) AS waiters_left FROM claimqueue.waiters();
-- The answer as a value.
CALL await_jobs('{1}', '1s', NULL) \gset
SELECT :'jobs'::jsonb #> '{0,result,answer}' AS answer;
-- Inside a transaction block it cannot wait: it must commit to sleep;
-- timeout => '0' still looks.
BEGIN;
CALL await_jobs('{4}', '0');
CALL await_jobs('{4}', '1s');
ROLLBACK;
-- From a function too (no CALL on its own).
SELECT pg_temp.err($$CALL await_jobs('{4}', '1s')$$);
-- Bad input: errors name the value, nothing changes.
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$CALL await_jobs(NULL, '1s')$$);
SELECT pg_temp.err($$CALL await_jobs('{1,NULL}', '1s')$$);
SELECT pg_temp.err($$CALL await_jobs('{{1},{2}}', '1s')$$);
SELECT pg_temp.err($$CALL await_jobs('{1}', NULL)$$);
SELECT pg_temp.err($$CALL await_jobs('{1}', '-1s')$$);
-- The longest timeout: 100 years of 365.25 days.
CALL await_jobs('{}', '100 years');
SELECT pg_temp.err($$CALL await_jobs('{}', '100 years 1 second')$$);
-- At most 1000 ids per call (54000, naming the limit).
SELECT pg_temp.err(format('CALL await_jobs(%L, ''1s'')', (SELECT array_agg(g::bigint) FROM generate_series(1, 1001) g)));
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
DO $$
DECLARE
    ids bigint[] := ARRAY(SELECT g FROM generate_series(1, 1000) g);
    answer jsonb;
BEGIN
    CALL await_jobs(ids, '0', answer);
    RAISE NOTICE '% statuses, % finished', jsonb_array_length(answer),
        (SELECT count(*) FROM jsonb_array_elements(answer) e WHERE e->>'state' IN ('done', 'failed', 'cancelled'));
END
$$;

-- claimqueue demo: what a producer and two workers see.
\pset footer off
\echo '== CREATE EXTENSION claimqueue (library preloaded: no warning)'
CREATE EXTENSION claimqueue;
SELECT claimqueue.check_preload() AS preloaded;

\echo '== A producer enqueues five jobs, one of them urgent and one for later'
SELECT create_queue('emails', lease => '30 seconds', max_attempts => 3);
SELECT enqueue('emails', jsonb_build_object('to', 'user' || g || '@example.com')) AS id
FROM generate_series(1, 3) AS g;
SELECT enqueue('emails', '{"to": "ceo@example.com"}', priority => 10) AS urgent_id;
SELECT enqueue('emails', '{"to": "later@example.com"}', run_at => now() + interval '1 hour') AS later_id;
SELECT queue, ready, scheduled, running, done, failed FROM queue_stats WHERE queue = 'emails';

\echo '== Worker w1 claims (priority first); worker w2 claims a batch of two'
SELECT id, payload, attempt FROM dequeue('emails', 'w1');
SELECT id, payload, attempt FROM dequeue('emails', 'w2', batch => 2);

\echo '== w1 completes job 4; w2 completes job 1 and fails job 2 (retried after a backoff)'
SELECT complete(4, 1);
SELECT complete(1, 1);
SELECT fail(2, 1, 'smtp timeout') AS job_2_is_now;

\echo '== The attempt is a fencing token: a second complete of job 4 is refused'
\set ON_ERROR_STOP 0
SELECT complete(4, 1);
\set ON_ERROR_STOP 1

\echo '== Jobs and stats'
SELECT id, state, attempt, worker, last_error, payload->>'to' AS "to" FROM queue_jobs ORDER BY id;
SELECT queue, ready, scheduled, running, done, failed FROM queue_stats WHERE queue = 'emails';

\echo '== Worker w3 claims job 3 with a 1-second lease and dies without a word.'
\echo '   The reaper (a background worker; no client, no pg_cron) returns the job:'
SELECT id, attempt FROM dequeue('emails', 'w3', lease => '1 second');
DO $$
BEGIN
    FOR i IN 1..100 LOOP   -- wait at most 10 s for the reaper
        EXIT WHEN (SELECT state FROM claimqueue.jobs WHERE id = 3) = 'ready';
        PERFORM pg_sleep(0.1);
    END LOOP;
END $$;
SELECT id, state, attempt, last_error FROM queue_jobs WHERE id = 3;
SELECT state, jobs_reaped, last_pass_at IS NOT NULL AS has_run FROM reaper_stats;
SELECT backend_type, datname FROM pg_stat_activity WHERE backend_type LIKE 'claimqueue%' ORDER BY 1;

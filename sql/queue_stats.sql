\i test/regress/setup.sql
SELECT create_queue('work');
SELECT enqueue('work') FROM generate_series(1, 5);
SELECT enqueue('work', '{}', run_at => now() + interval '1 day');
SELECT count(*) FROM dequeue('work', 'w1', batch => 3);
SELECT complete(1, 1);
SELECT fail(2, 1, 'x', retry_in => '1 hour');
SELECT cancel(4);
SELECT queue, ready, scheduled, running, done, failed, cancelled,
       oldest_ready_age >= '0' AS has_oldest, expired_leases
FROM queue_stats ORDER BY queue;
-- Each job's timestamps, worker and last error.
SELECT id, queue, state, attempt, worker, last_error,
       created_at IS NOT NULL AS created, started_at IS NOT NULL AS started,
       finished_at IS NOT NULL AS finished
FROM queue_jobs ORDER BY id;

\i test/regress/setup.sql
-- purge() deletes done, failed and cancelled jobs that finished longer ago than
-- their queue's retention: the retention pass of the background reaper, by
-- hand. Time moves with claimqueue.debug_clock_offset (the background reaper
-- runs on the real clock, so it leaves these jobs alone).
SELECT create_queue('logs', retention => '1 day', max_attempts => 1);
SELECT create_queue('keep', retention => '30 days');
SELECT enqueue('logs', jsonb_build_object('n', g)) FROM generate_series(1, 5) g;
SELECT enqueue('keep', '{"n": 6}');
SELECT count(*) FROM dequeue('logs', 'w1', batch => 3);
SELECT complete(1, 1);
SELECT fail(2, 1, 'boom');
SELECT cancel(3);
SELECT cancel(4);
SELECT id, attempt FROM dequeue('keep', 'w1');
SELECT complete(6, 1);
SELECT id, queue, state FROM pg_temp.jobs;
-- Nothing is older than a day yet.
SELECT purge();
-- Two days later: the finished jobs of 'logs' go (job 5 is still ready); the
-- job of 'keep' stays (30 days).
SET claimqueue.debug_clock_offset = '2d';
SELECT purge('logs');
SELECT id, queue, state FROM pg_temp.jobs;
-- Retention is a fixed duration (24 hours a day, whatever the time zone) and
-- 0 purges a job as soon as it has finished. (One transaction: the
-- background reaper must not see retention 0 before purge() runs.)
BEGIN;
SELECT alter_queue('keep', retention => '0');
SELECT purge();
COMMIT;
SELECT id, queue, state FROM pg_temp.jobs;
RESET claimqueue.debug_clock_offset;
-- Bad input changes nothing.
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT purge('nope!')$$);
SELECT pg_temp.err($$SELECT purge('nope')$$);
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT pg_temp.err($$SELECT purge()$$);
COMMIT;
SELECT pg_temp.fingerprint() = :'before' AS unchanged;

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
-- Done jobs have no index: retention reads the table for them, a range of
-- 1,024 blocks at a time (the reaper one range a pass). purge() reads every
-- range once. 6,000 done jobs of 1.5 kB rows take more than one range; the
-- finished_at of every 500th is recent, so those stay, in every range. (One
-- transaction: the background reaper, on the real clock, must not purge them
-- first.)
BEGIN;
SELECT create_queue('history', retention => '1 day');
INSERT INTO claimqueue.jobs (queue_id, state, attempt, max_attempts, run_at, created_at,
                             started_at, finished_at, payload)
SELECT q.queue_id, 'done', 1, 1, now() - interval '3 days', now() - interval '3 days',
       now() - interval '3 days',
       CASE WHEN g % 500 = 0 THEN now() ELSE now() - interval '2 days' END,
       jsonb_build_object('n', g, 'pad', repeat('x', 1500))
FROM claimqueue.queues q, generate_series(1, 6000) g WHERE q.name = 'history';
SELECT pg_relation_size('claimqueue.jobs') / current_setting('block_size')::int > 1024
    AS more_than_one_range;
SELECT count(*) AS kept_before FROM claimqueue.jobs j JOIN claimqueue.queues q USING (queue_id)
WHERE q.name = 'history';
SELECT purge('history');
SELECT count(*) AS kept, min((payload->>'n')::int) AS first, max((payload->>'n')::int) AS last
FROM claimqueue.jobs j JOIN claimqueue.queues q USING (queue_id) WHERE q.name = 'history';
ROLLBACK;
-- Bad input changes nothing.
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT purge('nope!')$$);
SELECT pg_temp.err($$SELECT purge('nope')$$);
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT pg_temp.err($$SELECT purge()$$);
COMMIT;
SELECT pg_temp.fingerprint() = :'before' AS unchanged;

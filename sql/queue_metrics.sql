\i test/regress/setup.sql
-- queue_metrics: totals and gauges from shared memory (the suite runs with the
-- library preloaded), counted at commit; a rollback leaves no trace; the
-- gauges agree with queue_stats, which counts the table.
SELECT create_queue('m', lease => '1 minute', max_attempts => 2);
-- Gauges are known once counted (the reaper counts a new queue at its next
-- pass; recount_queue_metrics() counts now). Waits out a recount the reaper
-- may be running at the same moment.
CREATE FUNCTION pg_temp.counted(q text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1 .. 1000 LOOP
        IF (SELECT gauges_since IS NOT NULL FROM queue_metrics WHERE queue = q) THEN
            RETURN true;
        END IF;
        PERFORM claimqueue.recount_queue_metrics();
        PERFORM pg_sleep(0.01);
    END LOOP;
    RETURN false;
END $$;
SELECT pg_temp.counted('m');
-- The columns a monitoring query reads; times as booleans.
CREATE VIEW pg_temp.metrics AS
SELECT queue, enqueued, claimed, completed, failed, reaped, retried, cancelled,
       ready_or_scheduled, running, oldest_ready_age IS NOT NULL AS has_oldest,
       counters_since IS NOT NULL AS counting, gauges_since IS NOT NULL AS counted
FROM queue_metrics WHERE queue = 'm';
-- The gauges against the table: ready (scheduled included) and running.
CREATE VIEW pg_temp.agree AS
SELECT m.queue, m.ready_or_scheduled = s.ready + s.scheduled AS ready_agrees,
       m.running = s.running AS running_agrees
FROM queue_metrics m JOIN queue_stats s USING (queue) WHERE m.queue = 'm';
SELECT * FROM pg_temp.metrics;

-- Enqueued: one by one, a batch, a delayed job (ready, scheduled), a dedup hit (not counted).
SELECT enqueue('m', '{"n": 1}');
SELECT enqueue('m', '{"n": 2}', dedup_key => 'k');
SELECT enqueue('m', '{"n": 2}', dedup_key => 'k');
SELECT * FROM enqueue_batch('m', ARRAY['{"n": 3}', '{"n": 4}']::jsonb[]);
SELECT enqueue('m', '{"n": 5}', run_at => now() + interval '1 day');
SELECT * FROM pg_temp.metrics;

-- A rollback, and a rolled-back savepoint, leave no trace; a released one counts.
BEGIN;
SELECT enqueue('m');
SELECT count(*) FROM dequeue('m', 'w0');
ROLLBACK;
BEGIN;
SAVEPOINT a;
SELECT enqueue('m');
ROLLBACK TO SAVEPOINT a;
SAVEPOINT b;
SELECT enqueue('m', '{"n": 6}');
RELEASE SAVEPOINT b;
COMMIT;
SELECT * FROM pg_temp.metrics;

-- Claimed, completed, failed with a retry, cancelled while running and while
-- ready (the dedup hit took id 3 from the sequence, the rollbacks 7 and 8).
SELECT id, attempt FROM dequeue('m', 'w1', batch => 3) ORDER BY id;
SELECT complete(1, 1);
SELECT fail(2, 1, 'again', retry_in => '1 hour');
SELECT cancel(4);
SELECT cancel(5);
SELECT * FROM pg_temp.metrics;
SELECT * FROM pg_temp.agree;
SELECT count(*) FROM dequeue('m', 'w1', batch => 10);
SELECT claimqueue.recount_queue_metrics() >= 1 AS recounted;
SELECT * FROM pg_temp.agree;

-- Reaped: leases that expired (moved past with claimqueue's clock), one back
-- to ready with a retry, one failed for good (its attempts used up).
SET claimqueue.debug_clock_offset = '2h';
SELECT id, attempt FROM dequeue('m', 'w2');
SET claimqueue.debug_clock_offset = '3h';
SELECT reap('m');
RESET claimqueue.debug_clock_offset;
SELECT * FROM pg_temp.metrics;
SELECT * FROM pg_temp.agree;
-- retry() counts as a retry.
SELECT id FROM claimqueue.jobs WHERE state = 'failed' ORDER BY id LIMIT 1 \gset
SELECT retry(:id);
SELECT * FROM pg_temp.metrics;
SELECT * FROM pg_temp.agree;

-- cancel_jobs() and retry_jobs() count job by job, as cancellations of
-- ready and of running jobs and as retries.
SELECT count(*) FROM dequeue('m', 'w3');
SELECT cancel_jobs('m', '{ready,running}');
SELECT * FROM pg_temp.metrics;
SELECT * FROM pg_temp.agree;
SELECT retry_jobs('m', '{cancelled}');
SELECT * FROM pg_temp.metrics;
SELECT * FROM pg_temp.agree;
-- A schedule's jobs count as enqueued (how many a pass makes depends on the
-- second it runs in: compared with the jobs it made).
SELECT enqueued AS enqueued_before FROM queue_metrics WHERE queue = 'm' \gset
SELECT schedule('m-every-minute', '* * * * *', 'm') IS NOT NULL AS scheduled;
SET claimqueue.debug_clock_offset = '5min';
SELECT run_schedules('m') >= 1 AS ran;
RESET claimqueue.debug_clock_offset;
SELECT enqueued - :enqueued_before = (SELECT count(*) FROM claimqueue.jobs
                                      WHERE payload ? 'claimqueue') AS scheduled_counted
FROM queue_metrics WHERE queue = 'm';
SELECT * FROM pg_temp.agree;
SELECT unschedule('m-every-minute');

-- Only the queues a role holds a privilege on.
SELECT create_queue('other');
CREATE ROLE regress_cq_metrics_reader IN ROLE claimqueue_consumer;
SELECT grant_queue('m', 'consume', 'regress_cq_metrics_reader');
SET ROLE regress_cq_metrics_reader;
SELECT queue FROM queue_metrics ORDER BY queue;
-- It can read the reaper's view too (what contrib/prometheus exports).
SELECT count(*) FROM reaper_stats;
RESET ROLE;
SELECT queue FROM queue_metrics ORDER BY queue;
SELECT revoke_queue('m', 'consume', 'regress_cq_metrics_reader');
DROP ROLE regress_cq_metrics_reader;

-- A dropped queue's slot is freed at commit; a queue of the same name starts anew.
SELECT drop_queue('m', force => true) > 0 AS dropped;
SELECT create_queue('m');
SELECT pg_temp.counted('m');
SELECT * FROM pg_temp.metrics;

-- Recounting needs a transaction that changed no job.
BEGIN;
SELECT enqueue('m');
SELECT pg_temp.err('SELECT claimqueue.recount_queue_metrics()');
ROLLBACK;

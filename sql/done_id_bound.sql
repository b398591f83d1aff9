\i test/regress/setup.sql
-- queue_metrics.done_id_bound: no done job of the queue has a greater id. A
-- count (the reaper's first after a start, recount_queue_metrics()) raises it
-- to the newest job's id; each completion (complete, complete_batch,
-- complete_and_dequeue) raises it to the job's id when it commits; nothing
-- lowers it. The dashboard's page of done jobs starts its walk there.
SELECT create_queue('b1', max_attempts => 1);
SELECT create_queue('b2', max_attempts => 1);
-- Counted before any job is enqueued: the reaper counts a new queue once, so
-- no later count moves the bounds below. Waits out a recount the reaper may
-- be running at the same moment.
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
SELECT pg_temp.counted('b1'), pg_temp.counted('b2');
CREATE VIEW pg_temp.bounds AS
SELECT queue, done_id_bound FROM queue_metrics WHERE queue IN ('b1', 'b2') ORDER BY queue;
-- No job yet: the bound is the newest id at the count (none: 0).
SELECT * FROM pg_temp.bounds;

SELECT * FROM enqueue_batch('b1', array_fill('{}'::jsonb, ARRAY[6]));
SELECT enqueue('b2');
SELECT id, attempt FROM dequeue('b1', 'w', batch => 5) ORDER BY id;
-- complete(3): the bound is 3; a completion of a lower id (1) leaves it.
SELECT complete(3, 1);
SELECT * FROM pg_temp.bounds;
SELECT complete(1, 1);
SELECT * FROM pg_temp.bounds;
-- A rolled-back completion leaves no trace.
BEGIN;
SELECT complete(5, 1);
ROLLBACK;
SELECT * FROM pg_temp.bounds;
-- complete_batch: its greatest id.
SELECT complete_batch(ARRAY[2, 4], ARRAY[1, 1]);
SELECT * FROM pg_temp.bounds;
-- complete_and_dequeue: the completed job's id (6 is claimed, not done).
SELECT id FROM complete_and_dequeue(5, 1, 'b1', 'w');
SELECT * FROM pg_temp.bounds;
-- Per queue: b2's completion moves b2's bound only.
SELECT id, attempt FROM dequeue('b2', 'w');
SELECT complete(7, 1);
SELECT * FROM pg_temp.bounds;
SELECT complete(6, 1);
SELECT * FROM pg_temp.bounds;
-- The bound is above every done job's id, and the done page reads the same
-- rows with it as without it.
SELECT q.name, (SELECT max(id) FROM claimqueue.jobs j
                WHERE j.queue_id = q.queue_id AND j.state = 'done') AS newest_done
FROM claimqueue.queues q WHERE q.name IN ('b1', 'b2') ORDER BY q.name;
SELECT (SELECT array_agg(id ORDER BY id DESC) FROM queue_jobs
        WHERE queue = 'b1' AND state = 'done'
          AND id <= (SELECT done_id_bound FROM queue_metrics WHERE queue = 'b1'))
     = (SELECT array_agg(id ORDER BY id DESC) FROM queue_jobs
        WHERE queue = 'b1' AND state = 'done') AS same_rows;

-- A row written by hand (outside claimqueue's functions) is not counted; a
-- recount raises the bound to the newest job's id, and over it.
INSERT INTO claimqueue.jobs (queue_id, state, attempt, max_attempts, run_at, created_at,
                             finished_at, payload)
SELECT queue_id, 'done', 1, 1, now(), now(), now(), '{}' FROM claimqueue.queues WHERE name = 'b2'
RETURNING id;
SELECT claimqueue.recount_queue_metrics() >= 2 AS recounted;
SELECT * FROM pg_temp.bounds;
-- A failure or a cancellation moves no bound.
SELECT enqueue('b1');
SELECT id, attempt FROM dequeue('b1', 'w');
SELECT fail(9, 1, 'boom');
SELECT cancel(enqueue('b2'));
SELECT * FROM pg_temp.bounds;

-- A dropped queue's slot is freed; the queue made again is counted anew
-- (NULL until then, or the newest id once the reaper counted it).
SELECT drop_queue('b2', force => true);
SELECT create_queue('b2');
SELECT pg_temp.counted('b2');
SELECT done_id_bound = (SELECT max(id) FROM claimqueue.jobs) AS newest_id
FROM queue_metrics WHERE queue = 'b2';

SELECT drop_queue('b1', force => true);
SELECT drop_queue('b2', force => true);

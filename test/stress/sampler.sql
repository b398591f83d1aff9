-- The running-count sampler of the stress scripts with limits (limits.sh,
-- fair.sh): run it in the test database, then CALL sample_running(queue,
-- deadline) in a session of its own while the workers drain the queue.
--
-- One row per key per sample: the running jobs a fresh snapshot shows (key
-- NULL: the jobs without one), and one row '(queue)' with the queue's total.
CREATE TABLE samples (sample bigint NOT NULL, queue text NOT NULL, key text, running bigint NOT NULL);
-- Samples until the queue has no ready or running job left (or the deadline).
CREATE PROCEDURE sample_running(q text, deadline timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    n bigint := 0;
    qid int := (SELECT queue_id FROM claimqueue.queues WHERE name = q);
BEGIN
    LOOP
        n := n + 1;
        INSERT INTO samples
        SELECT n, q, concurrency_key, count(*) FROM claimqueue.jobs
         WHERE queue_id = qid AND state = 'running' GROUP BY concurrency_key;
        INSERT INTO samples VALUES (n, q, '(queue)', (SELECT count(*) FROM claimqueue.jobs
                                                      WHERE queue_id = qid AND state = 'running'));
        COMMIT;
        EXIT WHEN clock_timestamp() > deadline OR NOT EXISTS
            (SELECT 1 FROM claimqueue.jobs WHERE queue_id = qid AND state IN ('ready', 'running'));
        PERFORM pg_sleep(0.001);
    END LOOP;
END $$;

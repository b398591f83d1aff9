\i test/regress/setup.sql
-- Claim cursors (src/cursors/README.md): their invariants hold
-- after ordinary work (check_claim_cursors() returns one row per broken one),
-- and the sweep repairs a cursor that a row written outside the API left past
-- a claimable job. The regression cluster preloads claimqueue.
SELECT create_queue('cur');
SELECT count(*) FROM enqueue_batch('cur', array_fill('{}'::jsonb, ARRAY[20]));
SELECT enqueue('cur', '{"high": 1}', priority => 5) > 0 AS high;
SELECT count(*) FROM dequeue('cur', 'w', 8);
SELECT count(*) AS completed FROM (SELECT complete(id, attempt) FROM claimqueue.jobs
    WHERE state = 'running' ORDER BY id LIMIT 3) c;
SELECT fail(id, attempt, 'again', retry_in => '0') FROM claimqueue.jobs WHERE state = 'running' ORDER BY id LIMIT 2;
SELECT count(*) FROM dequeue('cur', 'w', 5);
SELECT queue_id, priority, cursor > 0 AS moved
FROM claimqueue.claim_cursors() ORDER BY priority DESC;
SELECT * FROM claimqueue.check_claim_cursors();
-- A ready row written by hand below the cursor (as a restore into a queue in
-- use could): the check reports it, the sweep lowers the cursor (and says so
-- in the log), and the job is claimed. In one transaction, so that the
-- reaper's own sweep (at its first pass in this database, then about once a
-- minute) cannot see the row and lower the cursor before this one does.
BEGIN;
UPDATE claimqueue.jobs SET state = 'ready', pos = 1, lease_expires_at = NULL
WHERE id = (SELECT min(id) FROM claimqueue.jobs WHERE state = 'done');
SELECT queue_id, priority, lowest_ready, problem FROM claimqueue.check_claim_cursors();
SELECT claimqueue.sweep_claim_cursors() AS lowered;
COMMIT;
SELECT * FROM claimqueue.check_claim_cursors();
SELECT id = (SELECT min(id) FROM claimqueue.jobs WHERE pos = 1) AS the_stray_job_is_claimed
FROM dequeue('cur', 'w');
SELECT claimqueue.sweep_claim_cursors() AS nothing_to_lower;
SELECT * FROM claimqueue.check_claim_cursors();
-- The table of cursors: this database's queues that claimed have an entry.
SELECT capacity, in_use >= 1 AS some_in_use, this_database >= 1 AS ours, refusals
FROM claim_cursor_usage;
-- drop_queue frees its entry when it commits (not before, not on rollback).
SELECT this_database AS entries FROM claim_cursor_usage \gset
SELECT queue_id AS cur_id FROM claimqueue.queues WHERE name = 'cur' \gset
BEGIN;
SELECT drop_queue('cur', force => true) > 0 AS dropped;
SELECT this_database = :entries AS kept_until_commit FROM claim_cursor_usage;
ROLLBACK;
SELECT this_database = :entries AS kept_after_rollback FROM claim_cursor_usage;
SELECT drop_queue('cur', force => true) > 0 AS dropped;
SELECT this_database = :entries - 1 AS freed_at_commit FROM claim_cursor_usage;
SELECT count(*) AS lanes_of_dropped_queue FROM claimqueue.claim_cursors() WHERE queue_id = :cur_id;

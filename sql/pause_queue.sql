\i test/regress/setup.sql
-- pause_queue() and resume_queue(). A paused queue takes enqueues and claims
-- nothing; its running jobs finish normally and its expired leases are
-- returned. The races with a claim are in the isolation spec pause_claim,
-- a sleeping dequeue_wait in test/perl/wait.pl.
SELECT create_queue('work');
SELECT enqueue('work', jsonb_build_object('n', g)) FROM generate_series(1, 3) g;
SELECT id, attempt FROM dequeue('work', 'w1', batch => 2);
-- true: it was running; false the second time: paused already, nothing changes.
SELECT pause_queue('work');
SELECT pause_queue('work');
SELECT queue, paused FROM queue_settings ORDER BY queue;
SELECT queue, ready, running, paused FROM queue_stats ORDER BY queue;
-- Enqueues go on; no claim takes anything: dequeue, a batch, dequeue_wait
-- (which sleeps until its wait is over), complete_and_dequeue.
SELECT enqueue('work', '{"n": 4}');
SELECT count(*) FROM dequeue('work', 'w2');
SELECT count(*) FROM dequeue('work', 'w2', batch => 10);
CALL dequeue_wait('work', 'w2', wait => '0');
CALL dequeue_wait('work', 'w2', wait => '10ms');
-- Nothing is due while the queue is paused.
SELECT next_due('work') IS NULL AS nothing_due;
-- The running jobs finish as usual: complete_and_dequeue() completes job 1
-- and claims nothing.
SELECT count(*) FROM complete_and_dequeue(1, 1, 'work', 'w1');
-- Job 2's lease expires (claimqueue's clock moves) and reap() returns it.
SET claimqueue.debug_clock_offset = '1h';
SELECT reap('work');
SELECT count(*) FROM dequeue('work', 'w2');
RESET claimqueue.debug_clock_offset;
SELECT id, state, attempt, worker FROM pg_temp.jobs;
-- Other queues are not paused.
SELECT enqueue('default', '{"n": 5}');
SELECT id FROM dequeue('default', 'w3');
SELECT complete(5, 1);
-- A resume (or a pause) counts at once in its own transaction; a rollback
-- undoes it.
SELECT pause_queue('default');
BEGIN;
SELECT resume_queue('default');
SELECT enqueue('default', '{"n": 6}');
SELECT id FROM dequeue('default', 'w3');
ROLLBACK;
SELECT queue, paused FROM queue_settings ORDER BY queue;
-- resume_queue(): true once, then false; the jobs are claimed in their
-- order (job 2, returned by reap() with a backoff, comes last).
SELECT resume_queue('work');
SELECT resume_queue('work');
SET claimqueue.debug_clock_offset = '2h';
SELECT id, attempt FROM dequeue('work', 'w4', batch => 10);
RESET claimqueue.debug_clock_offset;
SELECT next_due('work') IS NULL AS nothing_left;
SELECT resume_queue('default');
-- Bad input and unknown queues change nothing.
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT pause_queue('nope')$$);
SELECT pg_temp.err($$SELECT resume_queue('nope')$$);
SELECT pg_temp.err($$SELECT pause_queue(NULL)$$);
SELECT pg_temp.err($$SELECT resume_queue('Bad Name')$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;

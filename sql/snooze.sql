\i test/regress/setup.sql
SELECT create_queue('work', max_attempts => 2);
SELECT enqueue('work', '{"n": 1}');
SELECT id, attempt, max_attempts FROM dequeue('work', 'w1');
-- Back to ready without spending an attempt: max_attempts grows by one, so
-- the next claim's attempt (the fencing token) still goes up.
SELECT snooze(1, 1, '1 minute') AS run_at \gset
SELECT :'run_at'::timestamptz - now() BETWEEN interval '59 seconds' AND interval '61 seconds'
    AS run_at_in_a_minute,
    :'run_at'::timestamptz = (SELECT run_at FROM claimqueue.jobs WHERE id = 1) AS returned_run_at;
SELECT id, state, attempt, max_attempts, last_error, delayed, leased, finished FROM pg_temp.jobs;
SELECT errors IS NULL AS no_error_recorded FROM claimqueue.jobs WHERE id = 1;
-- Not due yet; move the clock forward to claim it again.
SELECT count(*) FROM dequeue('work', 'w1');
SET claimqueue.debug_clock_offset = '2min';
SELECT id, attempt, max_attempts FROM dequeue('work', 'w2');
-- The first attempt's token is stale now.
SELECT pg_temp.err($$SELECT snooze(1, 1)$$);
-- A graceful shutdown's hand-back: snooze(id, attempt), due at once.
SELECT snooze(1, 2) <= clock_timestamp() + interval '2 minutes' AS due_now;
SELECT id, attempt, max_attempts FROM dequeue('work', 'w3');
-- Two snoozes and two failures later the budget of 2 real attempts is spent.
SELECT fail(1, 3, 'first failure', retry_in => '0');
SELECT id, attempt, max_attempts FROM dequeue('work', 'w4');
SELECT fail(1, 4, 'second failure');
SELECT id, state, attempt, max_attempts, last_error FROM pg_temp.jobs;
RESET claimqueue.debug_clock_offset;
SELECT enqueue('work', '{"n": 2}');
SELECT id, attempt FROM dequeue('work', 'w1');
SELECT snooze(2, 1) IS NOT NULL AS snoozed;
SELECT id, state, attempt, max_attempts FROM pg_temp.jobs WHERE id = 2;
-- Stale tokens, unknown jobs and bad input change nothing.
SELECT id, attempt FROM dequeue('work', 'w1');
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT snooze(1, 4)$$);
SELECT pg_temp.err($$SELECT snooze(2, 1)$$);
SELECT pg_temp.err($$SELECT snooze(2, 3)$$);
SELECT pg_temp.err($$SELECT snooze(99, 1)$$);
SELECT pg_temp.err($$SELECT snooze(NULL, 1)$$);
SELECT pg_temp.err($$SELECT snooze(2, NULL)$$);
SELECT pg_temp.err($$SELECT snooze(2, 0)$$);
SELECT pg_temp.err($$SELECT snooze(2, 2, NULL)$$);
SELECT pg_temp.err($$SELECT snooze(2, 2, '-1 second')$$);
SELECT pg_temp.err($$SELECT snooze(2, 2, '200 years')$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
-- Another queue's job reads as one that does not exist to a consumer of this one.
SELECT create_queue('other');
SELECT enqueue('other', '{}');
SELECT id, attempt FROM dequeue('other', 'w1');
CREATE ROLE regress_cq_snooze;
GRANT claimqueue_consumer TO regress_cq_snooze;
SELECT grant_queue('work', 'consume', 'regress_cq_snooze');
SET ROLE regress_cq_snooze;
SELECT pg_temp.err($$SELECT snooze(3, 1)$$);
SELECT snooze(2, 2) IS NOT NULL AS own_queue_snoozed;
RESET ROLE;
DROP EXTENSION claimqueue CASCADE;
DROP ROLE regress_cq_snooze;

\i test/regress/setup.sql
-- complete_in, complete_batch_in, fail_in, heartbeat_in and snooze_in: the
-- calls that finish a job, with its queue in front (for Citus's routing).
-- On one server they are the calls without the queue, for jobs of that queue.
SELECT create_queue('work'), create_queue('other');
SELECT enqueue('work', '{"n": 1}'), enqueue('work', '{"n": 2}'), enqueue('other', '{"n": 3}');
SELECT id, attempt FROM dequeue('work', 'w1', batch => 2);
SELECT heartbeat_in('work', 1, 1, '10 minutes') - now() BETWEEN interval '599 seconds' AND interval '601 seconds'
    AS lease_extended;
SELECT fail_in('work', 2, 1, 'boom', retry_in => '0');
SELECT complete_in('work', 1, 1, '{"ok": true}');
SELECT id, attempt FROM dequeue('work', 'w1');
SELECT snooze_in('work', 2, 2) <= clock_timestamp() AS due_now;
SELECT id, attempt FROM dequeue('work', 'w1');
SELECT complete_batch_in('work', ARRAY[2::bigint], ARRAY[3], ARRAY['{"b": 2}'::jsonb]);
SELECT id, state, attempt, max_attempts, last_error FROM pg_temp.jobs ORDER BY id;
SELECT id, result FROM claimqueue.jobs WHERE result IS NOT NULL ORDER BY id;
-- A stale attempt, an unknown queue, a job of another queue, an unknown job
-- and a NULL get their SQLSTATEs and change nothing.
SELECT id, attempt FROM dequeue('other', 'w1');
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT complete_in('work', 1, 1)$$);
SELECT pg_temp.err($$SELECT complete_in('no_such_queue', 3, 1)$$);
SELECT pg_temp.err($$SELECT complete_in('work', 3, 1)$$);
SELECT pg_temp.err($$SELECT heartbeat_in('work', 3, 1)$$);
SELECT pg_temp.err($$SELECT fail_in('work', 3, 1)$$);
SELECT pg_temp.err($$SELECT snooze_in('work', 3, 1)$$);
SELECT pg_temp.err($$SELECT complete_batch_in('work', ARRAY[3::bigint], ARRAY[1])$$);
SELECT pg_temp.err($$SELECT complete_in('work', 99, 1)$$);
SELECT pg_temp.err($$SELECT complete_in(NULL, 3, 1)$$);
SELECT pg_temp.err($$SELECT complete_in('other', 3, NULL)$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
-- Its own queue finishes it.
SELECT complete_in('other', 3, 1);
SELECT id, state FROM pg_temp.jobs WHERE id = 3;
DROP EXTENSION claimqueue CASCADE;

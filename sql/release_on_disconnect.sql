\i test/regress/setup.sql
-- Claims that die with their session: dequeue(), complete_and_dequeue() and
-- dequeue_wait() with release_on_disconnect write this session's owner token
-- into the claimed row, in the claim's own row update; a claim without it
-- writes none. (test/perl/disconnect.pl ends sessions for real.)
SELECT create_queue('work', lease => '5 minutes', max_attempts => 2, backoff_base => '0');
SELECT count(*) FROM enqueue_batch('work', (SELECT array_agg(jsonb_build_object('n', g)) FROM generate_series(1, 6) g));
CREATE VIEW pg_temp.owners AS
SELECT id, state, attempt, owner_session IS NOT NULL AS owned, last_error
FROM claimqueue.jobs ORDER BY id;
SELECT id, attempt FROM dequeue('work', 'w1', release_on_disconnect => true);
SELECT id, attempt FROM dequeue('work', 'w1');
SELECT id, attempt FROM complete_and_dequeue(NULL, NULL, 'work', 'w1', release_on_disconnect => true);
CALL dequeue_wait('work', 'w1', wait => '0', jobs => NULL, release_on_disconnect => true) \gset
SELECT jsonb_path_query_array(:'jobs', '$[*].id') AS claimed;
SELECT * FROM pg_temp.owners;
-- One token per session, the same for every claim it makes.
SELECT count(DISTINCT owner_session) FROM claimqueue.jobs;
-- A heartbeat keeps the owner; complete, fail and complete_and_dequeue clear it.
SELECT heartbeat(1, 1) > now() AS extended;
SELECT complete(3, 1);
SELECT fail(4, 1, 'boom');
SELECT id, attempt FROM complete_and_dequeue(1, 1, 'work', 'w1', release_on_disconnect => false);
SELECT * FROM pg_temp.owners;
SELECT cancel(4);
-- The session is alive: reap() leaves its claims alone.
SELECT reap();
-- A token that no live session lists (as after the session exited or the
-- server restarted) is an ended session: reap() returns its job at once, long
-- before the lease ends, with the reason, and clears the owner. In one
-- transaction, so the background reaper does not see the token first.
SELECT id, attempt FROM dequeue('work', 'w2', release_on_disconnect => true);
BEGIN;
UPDATE claimqueue.jobs SET owner_session = 1 WHERE id = 6;
SELECT reap();
SELECT * FROM pg_temp.owners;
COMMIT;
-- A late complete by the ended session's attempt is refused (QC003), as for
-- an expired lease.
SELECT pg_temp.err($$SELECT complete(6, 1)$$);
-- Its last attempt: failed, not ready.
SELECT id, attempt FROM dequeue('work', 'w2', release_on_disconnect => true);
BEGIN;
UPDATE claimqueue.jobs SET owner_session = 1 WHERE id = 6;
SELECT reap('work');
COMMIT;
SELECT * FROM pg_temp.owners WHERE id = 6;
-- Bad input: NULL is refused and changes nothing.
SELECT enqueue('work', '{"n": 7}');
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT * FROM dequeue('work', 'w1', release_on_disconnect => NULL)$$);
SELECT pg_temp.err($$SELECT * FROM complete_and_dequeue(NULL, NULL, 'work', 'w1', release_on_disconnect => NULL)$$);
SELECT pg_temp.err($$CALL dequeue_wait('work', 'w1', wait => '0', jobs => NULL, release_on_disconnect => NULL)$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
-- Positional calls of 0.4.0 keep their meaning: dequeue_wait's sixth argument
-- is still jobs.
CALL dequeue_wait('work', 'w1', 1, NULL, '0', NULL) \gset
SELECT jsonb_path_query_array(:'jobs', '$[*].id') AS claimed;
SELECT id, owned FROM pg_temp.owners WHERE id = 7;
-- A cancelled claim loses its owner, as a finished one does: cancel() of one
-- running job, cancel_jobs() of the others.
SELECT create_queue('owned_cancel');
SELECT count(*) FROM enqueue_batch('owned_cancel', (SELECT array_agg(jsonb_build_object('n', g)) FROM generate_series(8, 10) g));
SELECT id FROM dequeue('owned_cancel', 'w1', batch => 3, release_on_disconnect => true);
SELECT id, state, owned FROM pg_temp.owners WHERE id > 7;
SELECT cancel(8);
SELECT cancel_jobs('owned_cancel', '{running}');
SELECT id, state, owned FROM pg_temp.owners WHERE id > 7;

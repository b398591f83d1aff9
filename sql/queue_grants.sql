\i test/regress/setup.sql
-- Roles and per-queue privileges. The three roles come with the extension:
-- claimqueue_producer (EXECUTE on enqueue*), claimqueue_consumer (dequeue,
-- complete*, fail, heartbeat) and claimqueue_admin (everything, every queue).
-- On top, grant_queue() says which queues a role may produce into, consume
-- from or manage; without a grant a role gets 42501 and nothing changes.
SELECT rolname, rolcanlogin FROM pg_roles WHERE rolname LIKE 'claimqueue\_%' ORDER BY rolname;
SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_cq_worker_a, regress_cq_producer_a, regress_cq_outsider,
                    regress_cq_admin, regress_cq_gone;
RESET client_min_messages;
CREATE ROLE regress_cq_worker_a IN ROLE claimqueue_consumer;
CREATE ROLE regress_cq_producer_a IN ROLE claimqueue_producer;
CREATE ROLE regress_cq_outsider IN ROLE claimqueue_consumer, claimqueue_producer;
CREATE ROLE regress_cq_admin IN ROLE claimqueue_admin;
CREATE ROLE regress_cq_gone;
SELECT create_queue('a'), create_queue('b');
SELECT grant_queue('a', 'consume', 'regress_cq_worker_a'),
       grant_queue('a', 'produce', 'regress_cq_producer_a'),
       grant_queue('a', 'consume', 'regress_cq_gone');
-- A grantee that is dropped later leaves a row that grants nothing.
DROP ROLE regress_cq_gone;
SELECT enqueue('a', '{"q": "a"}'), enqueue('b', '{"q": "b"}');
SELECT id, attempt FROM dequeue('b', 'admin-worker');
SELECT queue, privilege, grantee ~ '^[0-9]+$' AS dropped_role,
       CASE WHEN grantee ~ '^[0-9]+$' THEN '(dropped)' ELSE grantee END AS grantee
FROM queue_privileges ORDER BY 1, 2, 4;
SELECT pg_temp.fingerprint() AS before \gset

-- A consumer of queue a: claims and completes there, nowhere else.
SET ROLE regress_cq_worker_a;
SELECT id, attempt FROM dequeue('a', 'wa');
SELECT pg_temp.err($$SELECT * FROM dequeue('b', 'wa')$$);
SELECT pg_temp.err($$SELECT complete(2, 1)$$);
SELECT pg_temp.err($$SELECT fail(2, 1, 'not mine')$$);
SELECT pg_temp.err($$SELECT heartbeat(2, 1)$$);
SELECT pg_temp.err($$SELECT complete_batch(ARRAY[1, 2]::bigint[], ARRAY[1, 1])$$);
SELECT pg_temp.err($$SELECT * FROM complete_and_dequeue(2, 1, 'a', 'wa')$$);
SELECT pg_temp.err($$SELECT * FROM complete_and_dequeue(NULL, NULL, 'b', 'wa')$$);
SELECT pg_temp.err($$SELECT next_due('b')$$);
SELECT pg_temp.err($$CALL dequeue_wait('b', 'wa', wait => '0')$$);
SELECT pg_temp.err($$SELECT enqueue('a')$$);
-- It sees queue a only.
SELECT queue, ready, running FROM queue_stats ORDER BY queue;
SELECT id, queue, state FROM queue_jobs ORDER BY id;
SELECT queue FROM queue_settings ORDER BY queue;
SELECT complete(1, 1);
RESET ROLE;
SELECT id, state, attempt FROM pg_temp.jobs;

-- A producer of queue a.
SET ROLE regress_cq_producer_a;
SELECT enqueue('a', '{"by": "producer"}');
SELECT pg_temp.err($$SELECT enqueue('b')$$);
SELECT pg_temp.err($$SELECT * FROM enqueue_batch('b', ARRAY['{}'::jsonb])$$);
SELECT pg_temp.err($$SELECT * FROM dequeue('a', 'p')$$);
RESET ROLE;

-- A role with the function roles but no queue grant gets nothing, sees
-- nothing, changes nothing.
SELECT pg_temp.fingerprint() AS before \gset
SET ROLE regress_cq_outsider;
SELECT pg_temp.err($$SELECT * FROM dequeue('a', 'o')$$);
SELECT pg_temp.err($$SELECT enqueue('a')$$);
SELECT pg_temp.err($$SELECT cancel(3)$$);
SELECT pg_temp.err($$SELECT complete(3, 1)$$);
SELECT count(*) AS queues_seen FROM queue_stats;
RESET ROLE;
SELECT pg_temp.fingerprint() = :'before' AS unchanged;

-- PUBLIC: a grant to everyone, and its revocation.
SELECT grant_queue('b', 'produce', 'PUBLIC');
SET ROLE regress_cq_outsider;
SELECT enqueue('b', '{"by": "outsider"}');
RESET ROLE;
SELECT revoke_queue('b', 'produce', 'public'), revoke_queue('b', 'produce', 'public');
SET ROLE regress_cq_outsider;
SELECT pg_temp.err($$SELECT enqueue('b')$$);
RESET ROLE;

-- An administrator needs no grant: every queue, every function.
SET ROLE regress_cq_admin;
SELECT create_queue('c');
SELECT queue FROM queue_settings ORDER BY queue;
SELECT cancel(2);
SELECT retry(2);
SELECT reap(), purge();
SELECT grant_queue('c', 'manage', 'regress_cq_worker_a');
RESET ROLE;

-- A manager of queue c who is not an administrator: given EXECUTE on cancel(),
-- it cancels in c, not in b.
GRANT EXECUTE ON FUNCTION cancel(bigint) TO regress_cq_worker_a;
SELECT enqueue('c') AS c_job \gset
SET ROLE regress_cq_worker_a;
SELECT cancel(:c_job);
SELECT pg_temp.err($$SELECT cancel(2)$$);
RESET ROLE;
REVOKE EXECUTE ON FUNCTION cancel(bigint) FROM regress_cq_worker_a;

-- Bad input to grant_queue and revoke_queue changes nothing.
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT grant_queue('a', 'fly', 'regress_cq_worker_a')$$);
SELECT pg_temp.err($$SELECT grant_queue('a', 'consume', 'regress_cq_nobody')$$);
SELECT pg_temp.err($$SELECT grant_queue('nope', 'consume', 'public')$$);
SELECT pg_temp.err($$SELECT grant_queue('a', NULL, 'public')$$);
SELECT pg_temp.err($$SELECT revoke_queue('a', 'consume', NULL)$$);
SET ROLE regress_cq_worker_a;
SELECT pg_temp.err($$SELECT grant_queue('a', 'manage', 'regress_cq_worker_a')$$);
RESET ROLE;
SELECT pg_temp.fingerprint() = :'before' AS unchanged;

-- What a role learns of other queues' jobs: nothing. To a role that holds no
-- privilege on a job's queue, every call that names the job answers as for
-- an id no job has (QC002; a schedule: QC006), so probing ids tells it
-- neither which exist nor in which queue; a role that holds another
-- privilege on the queue (it may see the queue) gets the detailed 42501.
-- probe(stmt, id): the call's error with the id written as ID.
CREATE FUNCTION pg_temp.probe(stmt text, id bigint) RETURNS text LANGUAGE sql AS $$
    SELECT replace(pg_temp.err(format(stmt, id)), id::text, 'ID') $$;
SELECT create_queue('hid');
SELECT enqueue('hid') AS hidden \gset
SELECT id = :hidden AS claimed FROM dequeue('hid', 'admin-worker');
SELECT schedule('hid-daily', '@daily', 'hid') IS NOT NULL AS scheduled;
SELECT enqueue('a') AS mine \gset
GRANT EXECUTE ON FUNCTION cancel(bigint), retry(bigint, timestamptz), unschedule(text)
    TO regress_cq_worker_a;
SET ROLE regress_cq_worker_a;
SELECT count(*) AS claimed FROM dequeue('a', 'wa', 10);
RESET ROLE;
SELECT pg_temp.fingerprint() AS before \gset
SET ROLE regress_cq_worker_a;
SELECT call, pg_temp.probe(call, :hidden) = pg_temp.probe(call, 987654321) AS alike,
       pg_temp.probe(call, :hidden) AS error
FROM unnest(ARRAY[
    'SELECT complete(%s, 1)',
    'SELECT fail(%s, 1, ''x'')',
    'SELECT heartbeat(%s, 1)',
    'SELECT * FROM complete_and_dequeue(%s, 1, ''a'', ''wa'')',
    'SELECT complete_batch(ARRAY[%s]::bigint[], ARRAY[1])',
    'SELECT complete_batch(ARRAY[%s, 987654322]::bigint[], ARRAY[1, 1])',
    'SELECT complete_batch(ARRAY[' || :mine || ', %s]::bigint[], ARRAY[2, 1])',
    'SELECT cancel(%s)',
    'SELECT retry(%s)',
    'SELECT row(s.*)::text FROM job_status(ARRAY[%s]::bigint[]) s']) AS call;
SELECT pg_temp.err($$SELECT unschedule('hid-daily')$$);
SELECT pg_temp.err($$SELECT unschedule('no-such-schedule')$$);
RESET ROLE;
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
-- A role that may see the queue (here: produce into it) gets the detail.
SELECT grant_queue('hid', 'produce', 'regress_cq_worker_a');
SET ROLE regress_cq_worker_a;
SELECT pg_temp.err(format('SELECT complete(%s, 1)', :hidden));
SELECT pg_temp.err(format('SELECT complete_batch(ARRAY[%s]::bigint[], ARRAY[1])', :hidden));
SELECT pg_temp.err(format('SELECT cancel(%s)', :hidden));
SELECT pg_temp.err($$SELECT unschedule('hid-daily')$$);
RESET ROLE;
REVOKE EXECUTE ON FUNCTION cancel(bigint), retry(bigint, timestamptz), unschedule(text)
    FROM regress_cq_worker_a;
SELECT drop_queue('hid', force => true);

-- On one server a grant follows a rename of its role, as PostgreSQL's own
-- grants do (under Citus they are checked by the name: docs/citus.md).
CREATE ROLE regress_cq_renamed IN ROLE claimqueue_producer;
SELECT grant_queue('a', 'produce', 'regress_cq_renamed');
ALTER ROLE regress_cq_renamed RENAME TO regress_cq_renamed_2;
SELECT queue, privilege, grantee FROM queue_privileges WHERE grantee LIKE 'regress_cq_renamed%';
SET ROLE regress_cq_renamed_2;
SELECT enqueue('a', '{}') > 0 AS enqueued;
RESET ROLE;
SELECT revoke_queue('a', 'produce', 'regress_cq_renamed_2');
SET ROLE regress_cq_renamed_2;
SELECT pg_temp.err($$SELECT enqueue('a', '{}')$$);
RESET ROLE;
DROP ROLE regress_cq_renamed_2;

-- Dropping a queue drops its grants.
SELECT drop_queue('a', force => true);
SELECT queue, privilege FROM queue_privileges ORDER BY 1, 2;

DROP ROLE regress_cq_worker_a, regress_cq_producer_a, regress_cq_outsider, regress_cq_admin;

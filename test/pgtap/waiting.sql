-- The waiting dequeue's contract, checked with pgTAP.
--
-- dequeue_wait() is a procedure, and unlike the API functions it is neither
-- SECURITY DEFINER nor pins search_path: PostgreSQL lets a procedure COMMIT
-- only without both, and it commits before it sleeps. It reads no table
-- itself but calls dequeue() and next_due(), so EXECUTE on it alone is not
-- enough. Its settings. (The waits themselves: test/perl/wait.pl.)
--
-- Needs: CREATE EXTENSION pgtap; CREATE EXTENSION claimqueue; a superuser,
-- and the library preloaded. Everything is rolled back, roles included.
-- Run: pg_prove -d DB test/pgtap/waiting.sql   (see run.sh)

\ir setup.psql

SELECT plan(31);

SELECT format('%I.dequeue_wait(text,text,integer,interval,interval,jsonb,boolean)', :'cq') AS proc \gset

-- ---------------------------------------------------------------------------
-- The procedure
-- ---------------------------------------------------------------------------
SELECT is((SELECT prokind FROM pg_catalog.pg_proc WHERE oid = :'proc'::regprocedure), 'p',
          'dequeue_wait() is a procedure (CALL)');
SELECT is(pg_catalog.pg_get_function_arguments(:'proc'::regprocedure),
          'IN queue text, IN worker text, IN batch integer DEFAULT 1, IN lease interval DEFAULT NULL::interval, '
          'IN wait interval DEFAULT ''00:00:30''::interval, INOUT jobs jsonb DEFAULT NULL::jsonb, '
          'IN release_on_disconnect boolean DEFAULT false',
          'dequeue_wait() has the documented arguments and defaults (jobs is INOUT, release_on_disconnect after it)');
SELECT is((SELECT prosecdef FROM pg_catalog.pg_proc WHERE oid = :'proc'::regprocedure), false,
          'dequeue_wait() is not SECURITY DEFINER (it could not COMMIT)');
SELECT is((SELECT proconfig FROM pg_catalog.pg_proc WHERE oid = :'proc'::regprocedure), NULL,
          'dequeue_wait() has no SET clause (it could not COMMIT)');
SELECT is((SELECT l.lanname FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_language l ON l.oid = p.prolang
           WHERE p.oid = :'proc'::regprocedure)::text, 'c', 'dequeue_wait() is written in C');
SELECT is(pg_catalog.has_function_privilege('public', :'proc'::regprocedure, 'EXECUTE'), false,
          'EXECUTE on dequeue_wait() is not granted to PUBLIC');
SELECT is(pg_catalog.obj_description(:'proc'::regprocedure, 'pg_proc') IS NOT NULL, true,
          'dequeue_wait() has a comment');

-- ---------------------------------------------------------------------------
-- Privileges in action: EXECUTE on dequeue_wait() alone cannot claim.
-- ---------------------------------------------------------------------------
CREATE ROLE claimqueue_tap_waiter NOLOGIN;
CREATE SCHEMA claimqueue_tap_wait;
CREATE FUNCTION claimqueue_tap_wait.as_waiter(sql text) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT
    AS $$DECLARE r text; BEGIN EXECUTE sql INTO r; RETURN r; END$$;
ALTER FUNCTION claimqueue_tap_wait.as_waiter(text) OWNER TO claimqueue_tap_waiter;
GRANT USAGE ON SCHEMA :"cq" TO claimqueue_tap_waiter;
GRANT EXECUTE ON PROCEDURE :"cq".dequeue_wait(text, text, integer, interval, interval, jsonb, boolean)
    TO claimqueue_tap_waiter;
SELECT create_queue('tap_wait');
SELECT enqueue('tap_wait', '{"k": 1}');

SELECT throws_ok($$SELECT claimqueue_tap_wait.as_waiter('CALL dequeue_wait(''tap_wait'', ''w'', wait => ''0'')')$$,
                 '42501', 'permission denied for function dequeue',
                 'EXECUTE on dequeue_wait() alone: 42501 from the dequeue() it calls');
SELECT throws_ok($$SELECT claimqueue_tap_wait.as_waiter('SELECT next_due(''tap_wait'')')$$,
                 '42501', NULL, 'next_due() needs its own grant');
GRANT EXECUTE ON FUNCTION dequeue(text, text, integer, interval, boolean), next_due(text)
    TO claimqueue_tap_waiter;
SELECT throws_ok($$SELECT claimqueue_tap_wait.as_waiter('CALL dequeue_wait(''tap_wait'', ''w'', wait => ''0'')')$$,
                 '42501', 'permission denied for queue "tap_wait"',
                 'EXECUTE everywhere but no consume grant on the queue: 42501');
SELECT is(grant_queue('tap_wait', 'consume', 'claimqueue_tap_waiter'), true,
          'the waiter role is granted consume on tap_wait');
SELECT is(claimqueue_tap_wait.as_waiter(
              $$CALL dequeue_wait('tap_wait', 'w', wait => '0')$$)::jsonb #>> '{0,payload,k}',
          '1', 'with EXECUTE on dequeue_wait() and dequeue() and the queue''s consume grant it claims, without table privileges');
SELECT is(claimqueue_tap_wait.as_waiter($$SELECT next_due('tap_wait')$$), NULL,
          'with EXECUTE on next_due(): NULL, the queue has no ready job left');
SELECT throws_ok($$SELECT claimqueue_tap_wait.as_waiter('SELECT count(*) FROM claimqueue.jobs')$$,
                 '42501', NULL, 'the waiter role still cannot read claimqueue.jobs');

-- ---------------------------------------------------------------------------
-- await_jobs(): a procedure for the same reasons; it calls job_status().
-- ---------------------------------------------------------------------------
SELECT format('%I.await_jobs(bigint[],interval,jsonb)', :'cq') AS await \gset
SELECT is((SELECT prokind FROM pg_catalog.pg_proc WHERE oid = :'await'::regprocedure), 'p',
          'await_jobs() is a procedure (CALL)');
SELECT is(pg_catalog.pg_get_function_arguments(:'await'::regprocedure),
          'IN ids bigint[], IN timeout interval DEFAULT ''00:00:30''::interval, INOUT jobs jsonb DEFAULT NULL::jsonb',
          'await_jobs() has the documented arguments and defaults (jobs is INOUT)');
SELECT is((SELECT prosecdef OR proconfig IS NOT NULL FROM pg_catalog.pg_proc WHERE oid = :'await'::regprocedure),
          false, 'await_jobs() is neither SECURITY DEFINER nor has a SET clause (it could not COMMIT)');
SELECT is((SELECT l.lanname FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_language l ON l.oid = p.prolang
           WHERE p.oid = :'await'::regprocedure)::text, 'c', 'await_jobs() is written in C');
SELECT is(pg_catalog.has_function_privilege('public', :'await'::regprocedure, 'EXECUTE'), false,
          'EXECUTE on await_jobs() is not granted to PUBLIC');
SELECT is(pg_catalog.obj_description(:'await'::regprocedure, 'pg_proc') IS NOT NULL, true,
          'await_jobs() has a comment');
SELECT is(ARRAY(SELECT r FROM unnest(ARRAY['claimqueue_producer', 'claimqueue_consumer', 'claimqueue_admin']) r
                WHERE pg_catalog.has_function_privilege(r, :'await'::regprocedure, 'EXECUTE')
                  AND pg_catalog.has_function_privilege(r, format('%I.job_status(bigint[])', :'cq')::regprocedure, 'EXECUTE')),
          ARRAY['claimqueue_producer', 'claimqueue_consumer', 'claimqueue_admin'],
          'producers, consumers and admins may call await_jobs() and job_status()');
GRANT EXECUTE ON PROCEDURE :"cq".await_jobs(bigint[], interval, jsonb) TO claimqueue_tap_waiter;
SELECT throws_ok($$SELECT claimqueue_tap_wait.as_waiter('CALL await_jobs(''{1}'', ''0'')')$$,
                 '42501', 'permission denied for function job_status',
                 'EXECUTE on await_jobs() alone: 42501 from the job_status() it calls');
GRANT EXECUTE ON FUNCTION job_status(bigint[]) TO claimqueue_tap_waiter;
SELECT enqueue('tap_wait', '{"k": 2}') AS tap_job \gset
SELECT is(claimqueue_tap_wait.as_waiter(format($$CALL await_jobs('{%s}', '0')$$, :tap_job))::jsonb #>> '{0,state}',
          'ready', 'with EXECUTE on both and a grant on the queue it sees the job');
SELECT is(revoke_queue('tap_wait', 'consume', 'claimqueue_tap_waiter'), true,
          'the waiter role loses its grant on tap_wait');
SELECT is(claimqueue_tap_wait.as_waiter(format($$CALL await_jobs('{%s}', '0')$$, :tap_job)),
          format('[{"id": %s, "state": null, "result": null, "attempt": null, "last_error": null}]', :tap_job),
          'without a grant on the queue the job reads as a missing one: state NULL');

-- ---------------------------------------------------------------------------
-- Where it can wait
-- ---------------------------------------------------------------------------
SELECT throws_ok($$CALL dequeue_wait('tap_wait', 'w', wait => '1s')$$, '25001',
                 'dequeue_wait() cannot wait inside a transaction block',
                 'inside a transaction block it refuses to wait (25001): it must commit to sleep');
SELECT throws_ok($$CALL dequeue_wait('no_such_queue', 'w', wait => '0')$$, 'QC001', NULL,
                 'dequeue_wait() on an unknown queue raises QC001');

-- ---------------------------------------------------------------------------
-- Settings
-- ---------------------------------------------------------------------------
SELECT is((SELECT context FROM pg_catalog.pg_settings WHERE name = 'claimqueue.max_waiters'),
          'postmaster', 'claimqueue.max_waiters is set at server start (shared memory)');
SELECT is((SELECT boot_val FROM pg_catalog.pg_settings WHERE name = 'claimqueue.max_waiters'),
          '128', 'claimqueue.max_waiters defaults to 128');
SELECT is((SELECT context || ' ' || boot_val FROM pg_catalog.pg_settings WHERE name = 'claimqueue.notify'),
          'user off', 'claimqueue.notify is a user setting, off by default');
SELECT is((SELECT count(*) FROM claimqueue.waiters())::int, 0,
          'claimqueue.waiters() lists nobody while nobody waits');

SELECT * FROM finish();
ROLLBACK;

-- claimqueue API contract, checked with pgTAP.
--
-- What a client may rely on: the functions' exact signatures, result types
-- and defaults; that every API function is a non-strict, VOLATILE, SECURITY
-- INVOKER C function with search_path pinned to pg_catalog, pg_temp (the hot
-- path's in C, not by a SET clause); that
-- nobody may execute them (or read the views and tables) until granted; the
-- views, tables and partial indexes; the 'default' queue; and the SQLSTATEs of
-- the documented error paths.
--
-- Needs: CREATE EXTENSION pgtap; CREATE EXTENSION claimqueue; in the database,
-- and a superuser (it creates two roles). Everything happens inside one
-- transaction that is rolled back, roles included.
-- Run: pg_prove -d DB test/pgtap/api_contract.sql   (see run.sh)

\ir setup.psql

SELECT plan(513);

-- ---------------------------------------------------------------------------
-- The API: one row per SQL function, with the contract it must keep.
-- ---------------------------------------------------------------------------
CREATE TEMP TABLE api (
    ord     int PRIMARY KEY,
    fn      name NOT NULL,
    args    name[] NOT NULL,      -- argument types, as pgTAP names them
    returns text NOT NULL,        -- as function_returns() spells it
    arglist text NOT NULL         -- pg_get_function_arguments(): names and defaults
);
INSERT INTO api VALUES
 (1, 'create_queue',
     '{text,interval,integer,interval,interval,interval,boolean,interval,integer,integer,boolean}', 'boolean',
     'name text, lease interval DEFAULT ''00:00:30''::interval, max_attempts integer DEFAULT 5, '
     'backoff_base interval DEFAULT ''00:00:01''::interval, backoff_cap interval DEFAULT ''01:00:00''::interval, '
     'retention interval DEFAULT ''7 days''::interval, if_not_exists boolean DEFAULT false, '
     'failed_retention interval DEFAULT NULL::interval, max_running integer DEFAULT NULL::integer, '
     'max_running_per_key integer DEFAULT NULL::integer, fair boolean DEFAULT false'),
 (2, 'alter_queue',
     '{text,interval,integer,interval,interval,interval,interval,integer,integer,boolean}', 'void',
     'name text, lease interval DEFAULT NULL::interval, max_attempts integer DEFAULT NULL::integer, '
     'backoff_base interval DEFAULT NULL::interval, backoff_cap interval DEFAULT NULL::interval, '
     'retention interval DEFAULT NULL::interval, failed_retention interval DEFAULT NULL::interval, '
     'max_running integer DEFAULT NULL::integer, max_running_per_key integer DEFAULT NULL::integer, '
     'fair boolean DEFAULT NULL::boolean'),
 (3, 'drop_queue', '{text,boolean}', 'bigint',
     'name text, force boolean DEFAULT false'),
 (4, 'enqueue',
     '{text,jsonb,"timestamp with time zone",integer,integer,text,text}', 'bigint',
     'queue text, payload jsonb DEFAULT ''{}''::jsonb, run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, '
     'priority integer DEFAULT 0, max_attempts integer DEFAULT NULL::integer, dedup_key text DEFAULT NULL::text, '
     'concurrency_key text DEFAULT NULL::text'),
 (5, 'enqueue_batch',
     '{text,jsonb[],"timestamp with time zone",integer,integer,text}', 'setof bigint',
     'queue text, payloads jsonb[], run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, '
     'priority integer DEFAULT 0, max_attempts integer DEFAULT NULL::integer, concurrency_key text DEFAULT NULL::text'),
 (6, 'dequeue', '{text,text,integer,interval,boolean}', 'setof claimqueue.claimed_job',
     'queue text, worker text, batch integer DEFAULT 1, lease interval DEFAULT NULL::interval, '
     'release_on_disconnect boolean DEFAULT false'),
 (7, 'complete', '{bigint,integer,jsonb}', 'void',
     'id bigint, attempt integer, result jsonb DEFAULT NULL::jsonb'),
 (8, 'fail', '{bigint,integer,text,interval,boolean,jsonb}', 'text',
     'id bigint, attempt integer, error text DEFAULT NULL::text, retry_in interval DEFAULT NULL::interval, '
     'retryable boolean DEFAULT true, error_detail jsonb DEFAULT NULL::jsonb'),
 (9, 'heartbeat', '{bigint,integer,interval}', 'timestamp with time zone',
     'id bigint, attempt integer, extend interval DEFAULT NULL::interval'),
 (10, 'retry', '{bigint,"timestamp with time zone"}', 'void',
     'id bigint, run_at timestamp with time zone DEFAULT NULL::timestamp with time zone'),
 (11, 'cancel', '{bigint}', 'void',
     'id bigint'),
 (12, 'reap', '{text}', 'bigint',
     'queue text DEFAULT NULL::text'),
 (13, 'complete_batch', '{bigint[],integer[],jsonb[]}', 'void',
     'ids bigint[], attempts integer[], results jsonb[] DEFAULT NULL::jsonb[]'),
 (14, 'purge', '{text}', 'bigint',
     'queue text DEFAULT NULL::text'),
 (15, 'grant_queue', '{text,text,text}', 'boolean',
     'queue text, privilege text, role text'),
 (16, 'revoke_queue', '{text,text,text}', 'boolean',
     'queue text, privilege text, role text'),
 (17, 'next_due', '{text}', 'timestamp with time zone',
     'queue text'),
 (18, 'complete_and_dequeue', '{bigint,integer,text,text,integer,interval,jsonb,boolean}', 'setof claimqueue.claimed_job',
     'id bigint, attempt integer, queue text, worker text, batch integer DEFAULT 1, lease interval DEFAULT NULL::interval, '
     'result jsonb DEFAULT NULL::jsonb, release_on_disconnect boolean DEFAULT false'),
 (19, 'pause_queue', '{text}', 'boolean',
     'name text'),
 (20, 'resume_queue', '{text}', 'boolean',
     'name text'),
 (21, 'retry_jobs', '{text,text[],"timestamp with time zone",integer}', 'bigint',
     'queue text, states text[] DEFAULT ''{failed}''::text[], '
     'finished_before timestamp with time zone DEFAULT NULL::timestamp with time zone, '
     'max_jobs integer DEFAULT NULL::integer'),
 (22, 'cancel_jobs', '{text,text[],"timestamp with time zone",integer}', 'bigint',
     'queue text, states text[] DEFAULT ''{ready}''::text[], '
     'created_before timestamp with time zone DEFAULT NULL::timestamp with time zone, '
     'max_jobs integer DEFAULT NULL::integer'),
 (23, 'job_status', '{bigint[]}', 'setof record',
     'ids bigint[]'),
 (24, 'snooze', '{bigint,integer,interval}', 'timestamp with time zone',
     'id bigint, attempt integer, delay interval DEFAULT ''00:00:00''::interval'),
 (25, 'job_errors', '{bigint}', 'setof record',
     'id bigint'),
 (26, 'complete_in', '{text,bigint,integer,jsonb}', 'void',
     'queue text, id bigint, attempt integer, result jsonb DEFAULT NULL::jsonb'),
 (27, 'complete_batch_in', '{text,bigint[],integer[],jsonb[]}', 'void',
     'queue text, ids bigint[], attempts integer[], results jsonb[] DEFAULT NULL::jsonb[]'),
 (28, 'fail_in', '{text,bigint,integer,text,interval,boolean,jsonb}', 'text',
     'queue text, id bigint, attempt integer, error text DEFAULT NULL::text, retry_in interval DEFAULT NULL::interval, '
     'retryable boolean DEFAULT true, error_detail jsonb DEFAULT NULL::jsonb'),
 (29, 'heartbeat_in', '{text,bigint,integer,interval}', 'timestamp with time zone',
     'queue text, id bigint, attempt integer, extend interval DEFAULT NULL::interval'),
 (30, 'snooze_in', '{text,bigint,integer,interval}', 'timestamp with time zone',
     'queue text, id bigint, attempt integer, delay interval DEFAULT ''00:00:00''::interval');

-- Helpers that are not part of the client API (schema claimqueue).
CREATE TEMP TABLE helpers (ord int PRIMARY KEY, fn name NOT NULL, args name[] NOT NULL);
INSERT INTO helpers VALUES (1, 'check_preload', '{}'), (2, 'queues_changed', '{}'),
                           (3, 'merge_default_queue', '{}'), (4, 'reaper_status', '{}'),
                           (5, 'start_reaper', '{}'), (6, 'visible_queues', '{}'),
                           (7, 'queue_grants_changed', '{}'), (8, 'waiters', '{}'),
                           (9, 'claim_cursors', '{}'), (10, 'check_claim_cursors', '{}'),
                           (11, 'sweep_claim_cursors', '{}'), (12, 'claim_cursor_table', '{}'),
                           (13, 'api_caller', '{}'), (14, 'queue_metrics_rows', '{}'),
                           (15, 'recount_queue_metrics', '{}'), (16, 'sample_queue_history', '{}'),
                           (17, 'distribute', '{boolean}'), (18, 'reaper_status_all', '{}');

-- The advisory-lock namespace functions; their contract is test/pgtap/lock_namespaces.sql.
SELECT '{"lock_namespace(text,text)","register_lock_key(text,text)","lock_key_id(text,text)",'
       '"lock_key_hash(text)","advisory_unlock_all(text)",'
       '"advisory_lock(text,text)","advisory_lock_shared(text,text)","try_advisory_lock(text,text)",'
       '"try_advisory_lock_shared(text,text)","advisory_xact_lock(text,text)",'
       '"advisory_xact_lock_shared(text,text)","try_advisory_xact_lock(text,text)",'
       '"try_advisory_xact_lock_shared(text,text)","advisory_unlock(text,text)",'
       '"advisory_unlock_shared(text,text)",'
       '"advisory_lock_int(text,integer)","advisory_lock_shared_int(text,integer)",'
       '"try_advisory_lock_int(text,integer)","try_advisory_lock_shared_int(text,integer)",'
       '"advisory_xact_lock_int(text,integer)","advisory_xact_lock_shared_int(text,integer)",'
       '"try_advisory_xact_lock_int(text,integer)","try_advisory_xact_lock_shared_int(text,integer)",'
       '"advisory_unlock_int(text,integer)","advisory_unlock_shared_int(text,integer)"}' AS lock_api \gset

-- The roles used below: one with no grants at all, one granted what a worker needs.
CREATE ROLE claimqueue_tap_nobody NOLOGIN;
CREATE ROLE claimqueue_tap_worker NOLOGIN;

-- 30 x 10 per-function assertions -------------------------------------------
SELECT has_function(:'cq', fn, args) FROM api ORDER BY ord;
SELECT function_returns(:'cq', fn, args, returns) FROM api ORDER BY ord;
SELECT is(pg_catalog.pg_get_function_arguments(
              pg_catalog.to_regprocedure(format('%I.%I(%s)', :'cq', fn, array_to_string(args, ',')))),
          arglist,
          format('%s() has the documented argument names and defaults', fn))
FROM api ORDER BY ord;
-- SECURITY INVOKER: each function checks the caller's queue privileges, then
-- runs as the extension's owner (src/api/access.hpp).
SELECT isnt_definer(:'cq', fn, args) FROM api ORDER BY ord;
SELECT volatility_is(:'cq', fn, args, 'volatile') FROM api ORDER BY ord;
SELECT function_lang_is(:'cq', fn, args, 'c') FROM api ORDER BY ord;
-- Not STRICT: a NULL argument must raise 22004, not silently return NULL.
SELECT isnt_strict(:'cq', fn, args) FROM api ORDER BY ord;
-- The hot path's functions have no SET clause: they pin search_path in C
-- where a name can be resolved (src/sql/api/jobs.sql, sql/search_path.sql).
SELECT is((SELECT p.proconfig FROM pg_catalog.pg_proc p
           WHERE p.oid = pg_catalog.to_regprocedure(
                     format('%I.%I(%s)', :'cq', fn, array_to_string(args, ',')))),
          CASE WHEN fn IN ('dequeue', 'complete', 'complete_batch', 'complete_and_dequeue',
                           'fail', 'snooze', 'heartbeat', 'complete_in', 'complete_batch_in',
                           'fail_in', 'snooze_in', 'heartbeat_in')
               THEN NULL ELSE ARRAY['search_path=pg_catalog, pg_temp'] END,
          CASE WHEN fn IN ('dequeue', 'complete', 'complete_batch', 'complete_and_dequeue',
                           'fail', 'snooze', 'heartbeat', 'complete_in', 'complete_batch_in',
                           'fail_in', 'snooze_in', 'heartbeat_in')
               THEN format('%s() has no SET clause (the hot path pins search_path in C)', fn)
               ELSE format('%s() pins search_path = pg_catalog, pg_temp', fn) END)
FROM api ORDER BY ord;
SELECT function_privs_are(:'cq', fn, args, 'public', '{}'::name[],
                          format('EXECUTE on %s() is not granted to PUBLIC', fn))
FROM api ORDER BY ord;
SELECT function_privs_are(:'cq', fn, args, 'claimqueue_tap_nobody', '{}'::name[],
                          format('a role without grants cannot execute %s()', fn))
FROM api ORDER BY ord;

-- dequeue's result columns are part of the contract too: since 0.5.0 a named
-- row type (its columns those of 0.4.0's RETURNS TABLE), for both functions.
SELECT is(pg_catalog.pg_get_function_result(
              pg_catalog.to_regprocedure(format('%I.dequeue(text,text,integer,interval,boolean)', :'cq'))),
          'SETOF claimqueue.claimed_job',
          'dequeue() returns SETOF claimqueue.claimed_job');
SELECT is(pg_catalog.pg_get_function_result(
              pg_catalog.to_regprocedure(format('%I.complete_and_dequeue(bigint,integer,text,text,integer,interval,jsonb,boolean)', :'cq'))),
          'SETOF claimqueue.claimed_job',
          'complete_and_dequeue() returns the same rows as dequeue()');
SELECT is((SELECT pg_catalog.string_agg(a.attname || ' ' || pg_catalog.format_type(a.atttypid, a.atttypmod),
                                        ', ' ORDER BY a.attnum)
           FROM pg_catalog.pg_attribute a
           WHERE a.attrelid = 'claimqueue.claimed_job'::regclass AND a.attnum > 0 AND NOT a.attisdropped),
          'id bigint, payload jsonb, attempt integer, max_attempts integer, priority integer, '
          'lease_expires_at timestamp with time zone, enqueued_at timestamp with time zone',
          'claimqueue.claimed_job has the columns id, payload, attempt, max_attempts, priority, lease_expires_at, enqueued_at');
SELECT is(pg_catalog.pg_get_function_result(
              pg_catalog.to_regprocedure(format('%I.job_status(bigint[])', :'cq'))),
          'TABLE(id bigint, state text, attempt integer, result jsonb, last_error text)',
          'job_status() returns TABLE(id, state, attempt, result, last_error)');
SELECT is(pg_catalog.pg_get_function_result(
              pg_catalog.to_regprocedure(format('%I.job_errors(bigint)', :'cq'))),
          'TABLE(attempt integer, failed_at timestamp with time zone, error text, detail jsonb)',
          'job_errors() returns TABLE(attempt, failed_at, error, detail)');
-- 0.5.0 added retryable and error_detail to fail(): the 0.4.0 signature is
-- gone, and a call with four arguments resolves to the new one.
SELECT hasnt_function(:'cq', 'fail', ARRAY['bigint', 'integer', 'text', 'interval'],
                      'fail() of 0.4.0 (four arguments) is gone');
-- The 0.3.0 signatures are gone (an overload would make complete($1, $2)
-- ambiguous); calls without a result still resolve to the new ones.
SELECT hasnt_function(:'cq', 'complete', ARRAY['bigint', 'integer'],
                      'complete(bigint, integer) of 0.3.0 is gone');
SELECT hasnt_function(:'cq', 'complete_batch', ARRAY['bigint[]', 'integer[]'],
                      'complete_batch(bigint[], integer[]) of 0.3.0 is gone');
SELECT hasnt_function(:'cq', 'complete_and_dequeue', ARRAY['bigint', 'integer', 'text', 'text', 'integer', 'interval'],
                      'complete_and_dequeue() of 0.3.0 (six arguments) is gone');
-- 0.5.0 added release_on_disconnect as the last argument: the 0.4.0
-- signatures are gone (an overload would make the short calls ambiguous).
SELECT hasnt_function(:'cq', 'dequeue', ARRAY['text', 'text', 'integer', 'interval'],
                      'dequeue() of 0.4.0 (four arguments) is gone');
SELECT hasnt_function(:'cq', 'complete_and_dequeue', ARRAY['bigint', 'integer', 'text', 'text', 'integer', 'interval', 'jsonb'],
                      'complete_and_dequeue() of 0.4.0 (seven arguments) is gone');
SELECT is(pg_catalog.to_regprocedure(format('%I.complete(bigint,integer,jsonb)', :'cq'))::oid,
          (SELECT p.oid FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
           WHERE n.nspname = :'cq' AND p.proname = 'complete'),
          'complete is one function, not an overload');

-- Helpers: 18 x 4 ------------------------------------------------------------
SELECT has_function('claimqueue', fn, args) FROM helpers ORDER BY ord;
SELECT isnt_definer('claimqueue', fn, args) FROM helpers ORDER BY ord;
SELECT is((SELECT p.proconfig[1] FROM pg_catalog.pg_proc p
           WHERE p.oid = pg_catalog.to_regprocedure(
                     format('claimqueue.%I(%s)', fn, array_to_string(args, ',')))),
          'search_path=pg_catalog, pg_temp',
          format('claimqueue.%s() pins search_path = pg_catalog, pg_temp', fn))
FROM helpers ORDER BY ord;
SELECT function_privs_are('claimqueue', fn, args, 'public', '{}'::name[],
                          format('EXECUTE on claimqueue.%s() is not granted to PUBLIC', fn))
FROM helpers WHERE fn <> 'visible_queues' ORDER BY ord;
-- The views call it for whoever reads them; it tells a role only about itself.
SELECT function_privs_are('claimqueue', 'visible_queues', '{}'::name[], 'public', ARRAY['EXECUTE'],
                          'EXECUTE on claimqueue.visible_queues() is granted to PUBLIC');

-- The extension owns exactly these functions, no more: the API functions, the
-- helpers and the procedure dequeue_wait() (its contract, which differs, is
-- in waiting.sql).
SELECT set_eq(
    $$SELECT d.objid::regprocedure::text FROM pg_catalog.pg_depend d
      JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid
      WHERE e.extname = 'claimqueue' AND d.deptype = 'e' AND d.classid = 'pg_catalog.pg_proc'::regclass$$,
    format($$SELECT format('%%I.%%I(%%s)', %L, fn, array_to_string(args, ','))::regprocedure::text FROM api
             UNION ALL
             SELECT format('claimqueue.%%I(%%s)', fn, array_to_string(args, ','))::regprocedure::text FROM helpers
             UNION ALL
             SELECT format('%%I.%%s', %L, f)::regprocedure::text FROM unnest(%L::text[]) AS f
             UNION ALL
             SELECT format('%%I.dequeue_wait(text,text,integer,interval,interval,jsonb,boolean)', %L)::regprocedure::text
             UNION ALL
             SELECT format('%%I.await_jobs(bigint[],interval,jsonb)', %L)::regprocedure::text
             UNION ALL
             SELECT 'claimqueue.ready_position(integer,integer,timestamp with time zone,timestamp with time zone)'::regprocedure::text
             UNION ALL
             SELECT format('%%I.%%s', %L, f)::regprocedure::text
             FROM unnest(ARRAY['schedule(text,text,text,jsonb,text,integer,integer,text,boolean)',
                               'unschedule(text)', 'run_schedules(text)',
                               'pause_schedule(text)', 'resume_schedule(text)']) AS f$$,
           :'cq', :'cq', :'lock_api', :'cq', :'cq', :'cq'),
    'the extension''s functions are exactly the 30 API functions, 18 helpers, ready_position, the lock-namespace functions, dequeue_wait, await_jobs and the schedule functions (their contract: schedules.sql)');

-- ready_position(): called for every job entering the ready state, from the
-- claim engine's statements, which run as the extension's owner.
SELECT has_function('claimqueue', 'ready_position', ARRAY['integer', 'integer', 'timestamp with time zone', 'timestamp with time zone']);
SELECT isnt_definer('claimqueue', 'ready_position', ARRAY['integer', 'integer', 'timestamp with time zone', 'timestamp with time zone']);
SELECT volatility_is('claimqueue', 'ready_position', ARRAY['integer', 'integer', 'timestamp with time zone', 'timestamp with time zone'], 'volatile');
SELECT is_strict('claimqueue', 'ready_position', ARRAY['integer', 'integer', 'timestamp with time zone', 'timestamp with time zone']);
-- It runs no SQL, so it has no search_path to pin; a SET clause would make
-- every call (one per row) save and restore settings.
SELECT is((SELECT p.proconfig FROM pg_catalog.pg_proc p
           WHERE p.oid = 'claimqueue.ready_position(integer,integer,timestamptz,timestamptz)'::regprocedure),
          NULL, 'claimqueue.ready_position() has no SET clause');
SELECT function_privs_are('claimqueue', 'ready_position', ARRAY['integer', 'integer', 'timestamp with time zone', 'timestamp with time zone'],
                          'public', '{}'::name[], 'EXECUTE on claimqueue.ready_position() is not granted to PUBLIC');

-- ---------------------------------------------------------------------------
-- Schema, tables and indexes
-- ---------------------------------------------------------------------------
SELECT has_schema('claimqueue');
SELECT schema_privs_are('claimqueue', 'public', '{}'::name[],
                        'PUBLIC has no privileges on schema claimqueue');

SELECT has_table('claimqueue', 'queues', 'table claimqueue.queues exists');
SELECT has_table('claimqueue', 'jobs', 'table claimqueue.jobs exists');
SELECT results_eq(
    $$SELECT attname::text COLLATE "default", format_type(atttypid, atttypmod) FROM pg_catalog.pg_attribute
      WHERE attrelid = 'claimqueue.queues'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum$$,
    $$VALUES ('queue_id', 'integer'), ('name', 'text'), ('lease', 'interval'),
             ('max_attempts', 'integer'), ('backoff_base', 'interval'), ('backoff_cap', 'interval'),
             ('retention', 'interval'), ('created_at', 'timestamp with time zone'),
             ('paused', 'boolean'), ('failed_retention', 'interval'), ('max_running', 'integer'),
             ('max_running_per_key', 'integer'), ('fair', 'boolean')$$,
    'claimqueue.queues has the documented columns, types and order');
SELECT results_eq(
    $$SELECT attname::text COLLATE "default", format_type(atttypid, atttypmod) FROM pg_catalog.pg_attribute
      WHERE attrelid = 'claimqueue.jobs'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum$$,
    $$VALUES ('id', 'bigint'), ('queue_id', 'integer'), ('state', 'text'), ('priority', 'smallint'),
             ('attempt', 'integer'), ('max_attempts', 'integer'),
             ('run_at', 'timestamp with time zone'), ('created_at', 'timestamp with time zone'),
             ('started_at', 'timestamp with time zone'), ('finished_at', 'timestamp with time zone'),
             ('lease_expires_at', 'timestamp with time zone'), ('worker', 'text'),
             ('dedup_key', 'text'), ('last_error', 'text'), ('payload', 'jsonb'), ('pos', 'bigint'),
             ('result', 'jsonb'), ('owner_session', 'bigint'), ('concurrency_key', 'text'),
             ('errors', 'jsonb')$$,
    'claimqueue.jobs has the documented columns, types and order');
SELECT table_privs_are('claimqueue', 'queues', 'public', '{}'::name[],
                       'PUBLIC has no privileges on claimqueue.queues');
SELECT table_privs_are('claimqueue', 'jobs', 'public', '{}'::name[],
                       'PUBLIC has no privileges on claimqueue.jobs');

SELECT has_index('claimqueue', 'jobs', 'jobs_ready_idx', ARRAY['queue_id', 'priority', 'pos']);
SELECT has_index('claimqueue', 'jobs', 'jobs_scheduled_idx', ARRAY['queue_id', 'run_at']);
SELECT has_index('claimqueue', 'jobs', 'jobs_running_idx', ARRAY['queue_id', 'lease_expires_at']);
SELECT has_index('claimqueue', 'jobs', 'jobs_dedup_idx', ARRAY['queue_id', 'dedup_key']);
SELECT has_index('claimqueue', 'jobs', 'jobs_dead_letters_idx', ARRAY['queue_id', 'state', 'finished_at']);
SELECT hasnt_index('claimqueue', 'jobs', 'jobs_finished_idx', 'done jobs have no index (a completion writes the primary key''s entry alone)');
SELECT has_index('claimqueue', 'jobs', 'jobs_owned_idx', ARRAY['owner_session']);
SELECT has_index('claimqueue', 'jobs', 'jobs_running_key_idx', ARRAY['queue_id', 'concurrency_key']);
SELECT is(pg_catalog.pg_get_indexdef('claimqueue.jobs_running_key_idx'::regclass),
          'CREATE INDEX jobs_running_key_idx ON claimqueue.jobs USING btree (queue_id, concurrency_key) '
          'WHERE ((state = ''running''::text) AND (concurrency_key IS NOT NULL))',
          'jobs_running_key_idx: running jobs with a concurrency key, by queue and key, what max_running_per_key counts');
SELECT is(pg_catalog.pg_get_indexdef('claimqueue.jobs_ready_idx'::regclass),
          'CREATE INDEX jobs_ready_idx ON claimqueue.jobs USING btree (queue_id, priority DESC, pos) '
          'WHERE ((state = ''ready''::text) AND (pos IS NOT NULL))',
          'jobs_ready_idx: claim order (lanes by priority, then position), partial on ready jobs with a position');
SELECT is(pg_catalog.pg_get_indexdef('claimqueue.jobs_scheduled_idx'::regclass),
          'CREATE INDEX jobs_scheduled_idx ON claimqueue.jobs USING btree (queue_id, run_at) '
          'WHERE ((state = ''ready''::text) AND (pos IS NULL))',
          'jobs_scheduled_idx: ready jobs waiting for their run_at');
SELECT is(pg_catalog.pg_get_indexdef('claimqueue.jobs_running_idx'::regclass),
          'CREATE INDEX jobs_running_idx ON claimqueue.jobs USING btree (queue_id, lease_expires_at) '
          'WHERE ((state = ''running''::text) AND (lease_expires_at IS NOT NULL))',
          'jobs_running_idx: running jobs by queue and lease expiry, what the reaper reads and max_running counts');
SELECT is(pg_catalog.pg_get_indexdef('claimqueue.jobs_dedup_idx'::regclass),
          'CREATE UNIQUE INDEX jobs_dedup_idx ON claimqueue.jobs USING btree (queue_id, dedup_key) '
          'WHERE ((dedup_key IS NOT NULL) AND (state = ANY (ARRAY[''ready''::text, ''running''::text])))',
          'jobs_dedup_idx: unique, partial on live jobs with a dedup_key');
SELECT is(pg_catalog.pg_get_indexdef('claimqueue.jobs_dead_letters_idx'::regclass),
          'CREATE INDEX jobs_dead_letters_idx ON claimqueue.jobs USING btree (queue_id, state, finished_at) '
          'WHERE (state = ANY (ARRAY[''failed''::text, ''cancelled''::text]))',
          'jobs_dead_letters_idx: retention and retry_jobs order per state, partial on failed and cancelled jobs');
SELECT is(pg_catalog.pg_get_indexdef('claimqueue.jobs_owned_idx'::regclass),
          'CREATE INDEX jobs_owned_idx ON claimqueue.jobs USING btree (owner_session) '
          'WHERE ((state = ''running''::text) AND (owner_session IS NOT NULL))',
          'jobs_owned_idx: running claims that die with their session, by owner');

-- ---------------------------------------------------------------------------
-- Views
-- ---------------------------------------------------------------------------
SELECT has_view(:'cq', 'queue_stats', 'view queue_stats exists');
SELECT has_view(:'cq', 'queue_jobs', 'view queue_jobs exists');
SELECT has_view(:'cq', 'queue_settings', 'view queue_settings exists');
SELECT has_view(:'cq', 'reaper_stats', 'view reaper_stats exists');
SELECT results_eq(
    format($$SELECT attname::text COLLATE "default", format_type(atttypid, atttypmod) FROM pg_catalog.pg_attribute
             WHERE attrelid = '%I.reaper_stats'::regclass AND attnum > 0 ORDER BY attnum$$, :'cq'),
    $$VALUES ('preloaded', 'boolean'), ('enabled', 'boolean'), ('state', 'text'), ('pid', 'integer'),
             ('started_at', 'timestamp with time zone'), ('last_pass_at', 'timestamp with time zone'),
             ('passes', 'bigint'), ('jobs_reaped', 'bigint'), ('jobs_purged', 'bigint'),
             ('last_error', 'text')$$,
    'reaper_stats has the documented columns');
SELECT table_privs_are(:'cq', 'reaper_stats', 'public', '{}'::name[],
                       'PUBLIC has no privileges on reaper_stats');
SELECT has_view(:'cq', 'all_reaper_stats', 'view all_reaper_stats exists');
SELECT results_eq(
    format($$SELECT attname::text COLLATE "default", format_type(atttypid, atttypmod) FROM pg_catalog.pg_attribute
             WHERE attrelid = '%I.all_reaper_stats'::regclass AND attnum > 0 ORDER BY attnum$$, :'cq'),
    $$VALUES ('database', 'text'), ('state', 'text'), ('pid', 'integer'),
             ('started_at', 'timestamp with time zone'), ('last_pass_at', 'timestamp with time zone'),
             ('passes', 'bigint'), ('jobs_reaped', 'bigint'), ('jobs_purged', 'bigint'),
             ('last_error', 'text')$$,
    'all_reaper_stats has the documented columns');
SELECT table_privs_are(:'cq', 'all_reaper_stats', 'public', '{}'::name[],
                       'PUBLIC has no privileges on all_reaper_stats');
SELECT results_eq(
    format($$SELECT attname::text COLLATE "default", format_type(atttypid, atttypmod) FROM pg_catalog.pg_attribute
             WHERE attrelid = '%I.queue_stats'::regclass AND attnum > 0 ORDER BY attnum$$, :'cq'),
    $$VALUES ('queue', 'text'), ('ready', 'bigint'), ('scheduled', 'bigint'), ('running', 'bigint'),
             ('done', 'bigint'), ('failed', 'bigint'), ('cancelled', 'bigint'),
             ('oldest_ready_age', 'interval'), ('expired_leases', 'bigint'), ('paused', 'boolean')$$,
    'queue_stats has the documented columns');
SELECT results_eq(
    format($$SELECT attname::text COLLATE "default", format_type(atttypid, atttypmod) FROM pg_catalog.pg_attribute
             WHERE attrelid = '%I.queue_jobs'::regclass AND attnum > 0 ORDER BY attnum$$, :'cq'),
    $$VALUES ('id', 'bigint'), ('queue', 'text'), ('state', 'text'), ('priority', 'smallint'),
             ('attempt', 'integer'), ('max_attempts', 'integer'),
             ('run_at', 'timestamp with time zone'), ('created_at', 'timestamp with time zone'),
             ('started_at', 'timestamp with time zone'), ('finished_at', 'timestamp with time zone'),
             ('lease_expires_at', 'timestamp with time zone'), ('worker', 'text'),
             ('dedup_key', 'text'), ('last_error', 'text'), ('payload', 'jsonb'), ('result', 'jsonb'),
             ('concurrency_key', 'text'), ('queue_id', 'integer'), ('claim_position', 'bigint'),
             ('session_bound', 'boolean')$$,
    'queue_jobs has the documented columns');
SELECT results_eq(
    format($$SELECT attname::text COLLATE "default", format_type(atttypid, atttypmod) FROM pg_catalog.pg_attribute
             WHERE attrelid = '%I.queue_settings'::regclass AND attnum > 0 ORDER BY attnum$$, :'cq'),
    $$VALUES ('queue', 'text'), ('lease', 'interval'), ('max_attempts', 'integer'),
             ('backoff_base', 'interval'), ('backoff_cap', 'interval'), ('retention', 'interval'),
             ('created_at', 'timestamp with time zone'), ('paused', 'boolean'),
             ('failed_retention', 'interval'), ('max_running', 'integer'),
             ('max_running_per_key', 'integer'), ('fair', 'boolean'), ('queue_id', 'integer')$$,
    'queue_settings has the documented columns');
SELECT table_privs_are(:'cq', 'queue_stats', 'public', '{}'::name[],
                       'PUBLIC has no privileges on queue_stats');
SELECT table_privs_are(:'cq', 'queue_jobs', 'public', '{}'::name[],
                       'PUBLIC has no privileges on queue_jobs');
SELECT table_privs_are(:'cq', 'queue_settings', 'public', '{}'::name[],
                       'PUBLIC has no privileges on queue_settings');
SELECT has_view(:'cq', 'claim_cursor_usage', 'view claim_cursor_usage exists');
SELECT results_eq(
    format($$SELECT attname::text COLLATE "default", format_type(atttypid, atttypmod) FROM pg_catalog.pg_attribute
             WHERE attrelid = '%I.claim_cursor_usage'::regclass AND attnum > 0 ORDER BY attnum$$, :'cq'),
    $$VALUES ('capacity', 'integer'), ('in_use', 'integer'), ('this_database', 'integer'),
             ('refusals', 'bigint')$$,
    'claim_cursor_usage has the documented columns');
SELECT table_privs_are(:'cq', 'claim_cursor_usage', 'public', '{}'::name[],
                       'PUBLIC has no privileges on claim_cursor_usage');
SELECT has_view(:'cq', 'queue_metrics', 'view queue_metrics exists');
SELECT results_eq(
    format($$SELECT attname::text COLLATE "default", format_type(atttypid, atttypmod) FROM pg_catalog.pg_attribute
             WHERE attrelid = '%I.queue_metrics'::regclass AND attnum > 0 ORDER BY attnum$$, :'cq'),
    $$VALUES ('queue', 'text'), ('enqueued', 'bigint'), ('claimed', 'bigint'), ('completed', 'bigint'),
             ('failed', 'bigint'), ('reaped', 'bigint'), ('retried', 'bigint'), ('cancelled', 'bigint'),
             ('ready_or_scheduled', 'bigint'), ('running', 'bigint'), ('oldest_ready_age', 'interval'),
             ('counters_since', 'timestamp with time zone'), ('gauges_since', 'timestamp with time zone'),
             ('done_id_bound', 'bigint')$$,
    'queue_metrics has the documented columns');
SELECT table_privs_are(:'cq', 'queue_metrics', 'public', '{}'::name[],
                       'PUBLIC has no privileges on queue_metrics');

-- ---------------------------------------------------------------------------
-- The default queue
-- ---------------------------------------------------------------------------
SELECT results_eq(
    $$SELECT queue, lease, max_attempts, backoff_base, backoff_cap, retention
      FROM queue_settings WHERE queue = 'default'$$,
    $$VALUES ('default'::text, '30 seconds'::interval, 5, '1 second'::interval, '1 hour'::interval,
              '7 days'::interval)$$,
    'the default queue exists after install, with the documented defaults');
SELECT results_eq(
    $$SELECT queue, ready, running, done FROM queue_stats WHERE queue = 'default'$$,
    $$VALUES ('default'::text, 0::bigint, 0::bigint, 0::bigint)$$,
    'queue_stats lists the default queue, empty');

-- ---------------------------------------------------------------------------
-- Privileges in action. SECURITY DEFINER wrappers owned by the test roles run
-- a statement as that role and return its first column as text.
-- ---------------------------------------------------------------------------
CREATE SCHEMA claimqueue_tap;
CREATE FUNCTION claimqueue_tap.as_nobody(sql text) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT
    AS $$DECLARE r text; BEGIN EXECUTE sql INTO r; RETURN r; END$$;
CREATE FUNCTION claimqueue_tap.as_worker(sql text) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT
    AS $$DECLARE r text; BEGIN EXECUTE sql INTO r; RETURN r; END$$;
ALTER FUNCTION claimqueue_tap.as_nobody(text) OWNER TO claimqueue_tap_nobody;
ALTER FUNCTION claimqueue_tap.as_worker(text) OWNER TO claimqueue_tap_worker;
-- The worker gets EXECUTE on the three functions it needs, and nothing on the tables.
GRANT USAGE ON SCHEMA :"cq" TO claimqueue_tap_worker;
GRANT EXECUTE ON FUNCTION
    enqueue(text, jsonb, timestamptz, integer, integer, text, text),
    dequeue(text, text, integer, interval, boolean),
    complete(bigint, integer, jsonb)
TO claimqueue_tap_worker;
SELECT is(create_queue('tap_grants'), true, 'create_queue() of a new queue returns true');
-- ... and may produce into and consume from queue tap_grants, no other.
SELECT is(grant_queue('tap_grants', 'produce', 'claimqueue_tap_worker'), true,
          'grant_queue() of a new grant returns true');
SELECT is(grant_queue('tap_grants', 'consume', 'claimqueue_tap_worker'), true,
          'grant_queue() of another privilege returns true');
SELECT is(grant_queue('tap_grants', 'consume', 'claimqueue_tap_worker'), false,
          'grant_queue() of an existing grant returns false');

SELECT throws_ok($$SELECT claimqueue_tap.as_nobody('SELECT id FROM dequeue(''default'', ''w'')')$$,
                 '42501', NULL, 'a role without grants gets 42501 from dequeue()');
SELECT throws_ok($$SELECT claimqueue_tap.as_nobody('SELECT enqueue(''default'')')$$,
                 '42501', NULL, 'a role without grants gets 42501 from enqueue()');
SELECT throws_ok($$SELECT claimqueue_tap.as_nobody('SELECT complete(1, 1)')$$,
                 '42501', NULL, 'a role without grants gets 42501 from complete()');
SELECT throws_ok($$SELECT claimqueue_tap.as_nobody('SELECT count(*) FROM claimqueue.jobs')$$,
                 '42501', NULL, 'a role without grants cannot read claimqueue.jobs');
SELECT throws_ok($$SELECT claimqueue_tap.as_nobody('SELECT count(*) FROM queue_stats')$$,
                 '42501', NULL, 'a role without grants cannot read queue_stats');
-- EXECUTE and the queue's grants are enough, no table privileges needed.
SELECT lives_ok($$SELECT claimqueue_tap.as_worker('SELECT enqueue(''tap_grants'', ''{"k": 1}'')')$$,
                'a role granted EXECUTE can enqueue() without table privileges');
SELECT is(claimqueue_tap.as_worker($$SELECT payload::text FROM dequeue('tap_grants', 'granted')$$),
          '{"k": 1}',
          'a role granted EXECUTE can dequeue() without table privileges');
SELECT throws_ok($$SELECT claimqueue_tap.as_worker('SELECT count(*) FROM claimqueue.jobs')$$,
                 '42501', NULL, 'the granted role still cannot read claimqueue.jobs directly');
SELECT throws_ok($$SELECT claimqueue_tap.as_worker('SELECT cancel(1)')$$,
                 '42501', NULL, 'the granted role gets 42501 from a function it was not granted');
SELECT throws_ok($$SELECT claimqueue_tap.as_worker('SELECT enqueue(''default'')')$$,
                 '42501', NULL, 'the granted role gets 42501 from enqueue() into a queue it was not granted');
SELECT throws_ok($$SELECT claimqueue_tap.as_worker('SELECT id FROM dequeue(''default'', ''w'')')$$,
                 '42501', NULL, 'the granted role gets 42501 from dequeue() of a queue it was not granted');
-- Pausing, resuming and the bulk functions need the queue's manage grant, as
-- the other administration functions do: EXECUTE alone is not enough.
GRANT EXECUTE ON FUNCTION pause_queue(text), resume_queue(text),
    retry_jobs(text, text[], timestamptz, integer), cancel_jobs(text, text[], timestamptz, integer)
TO claimqueue_tap_worker;
SELECT throws_ok($$SELECT claimqueue_tap.as_worker('SELECT pause_queue(''tap_grants'')')$$,
                 '42501', NULL, 'pause_queue() without the manage grant raises 42501');
SELECT throws_ok($$SELECT claimqueue_tap.as_worker('SELECT resume_queue(''tap_grants'')')$$,
                 '42501', NULL, 'resume_queue() without the manage grant raises 42501');
SELECT throws_ok($$SELECT claimqueue_tap.as_worker('SELECT retry_jobs(''tap_grants'')')$$,
                 '42501', NULL, 'retry_jobs() without the manage grant raises 42501');
SELECT throws_ok($$SELECT claimqueue_tap.as_worker('SELECT cancel_jobs(''tap_grants'')')$$,
                 '42501', NULL, 'cancel_jobs() without the manage grant raises 42501');
SELECT is(grant_queue('tap_grants', 'manage', 'claimqueue_tap_worker'), true,
          'grant_queue() of manage returns true');
SELECT is(claimqueue_tap.as_worker($$SELECT pause_queue('tap_grants')$$), 'true',
          'with the manage grant, pause_queue() pauses the queue');
SELECT is(claimqueue_tap.as_worker($$SELECT resume_queue('tap_grants')$$), 'true',
          'with the manage grant, resume_queue() resumes it');
SELECT is(claimqueue_tap.as_worker($$SELECT retry_jobs('tap_grants')$$), '0',
          'with the manage grant, retry_jobs() runs');
SELECT is(claimqueue_tap.as_worker($$SELECT cancel_jobs('tap_grants')$$), '0',
          'with the manage grant, cancel_jobs() runs');
SELECT throws_ok($$SELECT claimqueue_tap.as_worker('SELECT pause_queue(''default'')')$$,
                 '42501', NULL, 'the manage grant on one queue does not reach another');

-- ---------------------------------------------------------------------------
-- Error paths and their SQLSTATEs
-- ---------------------------------------------------------------------------
-- QC001 queue_not_found
SELECT throws_ok($$SELECT * FROM dequeue('no_such_queue', 'w')$$, 'QC001', NULL,
                 'dequeue() on an unknown queue raises QC001');
SELECT throws_ok($$SELECT enqueue('no_such_queue')$$, 'QC001', NULL,
                 'enqueue() on an unknown queue raises QC001');
SELECT throws_ok($$SELECT purge('no_such_queue')$$, 'QC001', NULL,
                 'purge() on an unknown queue raises QC001');
SELECT throws_ok($$SELECT * FROM enqueue_batch('no_such_queue', ARRAY['{}'::jsonb])$$, 'QC001', NULL,
                 'enqueue_batch() on an unknown queue raises QC001');
SELECT throws_ok($$SELECT * FROM enqueue_batch('no_such_queue', '{}'::jsonb[])$$, 'QC001', NULL,
                 'enqueue_batch() of no payloads on an unknown queue raises QC001');
SELECT throws_ok($$SELECT alter_queue('no_such_queue', lease => '1 minute')$$, 'QC001', NULL,
                 'alter_queue() on an unknown queue raises QC001');
SELECT throws_ok($$SELECT drop_queue('no_such_queue')$$, 'QC001', NULL,
                 'drop_queue() on an unknown queue raises QC001');
SELECT throws_ok($$SELECT pause_queue('no_such_queue')$$, 'QC001', NULL,
                 'pause_queue() on an unknown queue raises QC001');
SELECT throws_ok($$SELECT resume_queue('no_such_queue')$$, 'QC001', NULL,
                 'resume_queue() on an unknown queue raises QC001');
SELECT throws_ok($$SELECT retry_jobs('no_such_queue')$$, 'QC001', NULL,
                 'retry_jobs() on an unknown queue raises QC001');
SELECT throws_ok($$SELECT cancel_jobs('no_such_queue')$$, 'QC001', NULL,
                 'cancel_jobs() on an unknown queue raises QC001');

-- 22023 invalid_parameter_value
SELECT throws_ok($$SELECT enqueue('Bad Name')$$, '22023', NULL,
                 'enqueue() with an invalid queue name raises 22023');
SELECT throws_ok($$SELECT * FROM dequeue('', 'w')$$, '22023', NULL,
                 'dequeue() with an empty queue name raises 22023');
SELECT throws_ok($$SELECT create_queue('-starts-with-dash')$$, '22023', NULL,
                 'create_queue() with a name starting with ''-'' raises 22023');
SELECT throws_ok($$SELECT * FROM dequeue('default', '')$$, '22023', NULL,
                 'dequeue() with an empty worker name raises 22023');
SELECT throws_ok($$SELECT create_queue('tap_zero_lease', lease => '0 seconds')$$, '22023', NULL,
                 'create_queue() with a zero lease raises 22023');
SELECT throws_ok($$SELECT complete(1, 0)$$, '22023', NULL,
                 'complete() with attempt 0 raises 22023');

-- 42622 name_too_long
SELECT throws_ok(format('SELECT enqueue(%L)', repeat('a', 64)), '42622', NULL,
                 'enqueue() with a 64-byte queue name raises 42622');

-- 22004 null_value_not_allowed
SELECT throws_ok($$SELECT enqueue(NULL)$$, '22004', NULL,
                 'enqueue(NULL) raises 22004');
SELECT throws_ok($$SELECT enqueue('default', NULL)$$, '22004', NULL,
                 'enqueue() with a NULL payload raises 22004');
SELECT throws_ok($$SELECT * FROM dequeue('default', NULL)$$, '22004', NULL,
                 'dequeue() with a NULL worker raises 22004');
SELECT throws_ok($$SELECT complete(NULL, 1)$$, '22004', NULL,
                 'complete() with a NULL id raises 22004');
SELECT throws_ok($$SELECT * FROM complete_and_dequeue(1, NULL, 'default', 'w')$$, '22004', NULL,
                 'complete_and_dequeue() with an id and a NULL attempt raises 22004');
SELECT throws_ok($$SELECT complete(1, NULL)$$, '22004', NULL,
                 'complete() with a NULL attempt raises 22004');
SELECT throws_ok($$SELECT create_queue('tap_null_lease', lease => NULL)$$, '22004', NULL,
                 'create_queue() with a NULL lease raises 22004');

-- 22003 numeric_value_out_of_range
SELECT throws_ok($$SELECT enqueue('default', priority => 101)$$, '22003', NULL,
                 'enqueue() with priority 101 raises 22003');
SELECT throws_ok($$SELECT * FROM dequeue('default', 'w', batch => 0)$$, '22003', NULL,
                 'dequeue() with batch 0 raises 22003');

-- 42710 duplicate_object
SELECT throws_ok($$SELECT create_queue('default')$$, '42710', NULL,
                 'create_queue() of an existing queue raises 42710');
SELECT is(create_queue('default', if_not_exists => true), false,
          'create_queue(if_not_exists => true) of an existing queue returns false');

-- QC002 job_not_found
SELECT throws_ok($$SELECT complete(-1, 1)$$, 'QC002', NULL,
                 'complete() of a job that does not exist raises QC002');
SELECT throws_ok($$SELECT snooze(-1, 1)$$, 'QC002', NULL,
                 'snooze() of a job that does not exist raises QC002');
SELECT is((SELECT count(*) FROM job_errors(-1)), 0::bigint,
          'job_errors() of a job that does not exist returns no rows');

-- QC003 stale_claim: the fencing token. A claim whose lease expired and was
-- reaped can no longer complete or fail; neither can a wrong attempt.
SELECT create_queue('tap_stale') AS created \gset
SELECT enqueue('tap_stale', '{"n": 1}') AS stale_job \gset
SELECT id AS claim_id, attempt AS claim_attempt
FROM dequeue('tap_stale', 'w1', lease => '1 second') \gset
SELECT is(:claim_id::bigint, :stale_job::bigint, 'dequeue() claims the job enqueue() returned');
SELECT is(:claim_attempt, 1, 'the first claim has attempt 1');
SELECT throws_ok(format('SELECT complete(%s, %s)', :claim_id, :claim_attempt + 1), 'QC003', NULL,
                 'complete() with an attempt that does not hold the job raises QC003');
SELECT throws_ok(format('SELECT heartbeat(%s, %s)', :claim_id, :claim_attempt + 1), 'QC003', NULL,
                 'heartbeat() with an attempt that does not hold the job raises QC003');
-- Move claimqueue's clock past the lease (and the retry backoff) instead of sleeping.
SET LOCAL claimqueue.debug_clock_offset = 3600;
SELECT is(reap('tap_stale'), 1::bigint, 'reap() returns the expired claim to the queue');
SELECT throws_ok(format('SELECT complete(%s, %s)', :claim_id, :claim_attempt), 'QC003', NULL,
                 'complete() by a claim whose lease expired and was reaped raises QC003');
SELECT throws_ok(format($$SELECT * FROM complete_and_dequeue(%s, %s, 'tap_stale', 'w1')$$,
                        :claim_id, :claim_attempt), 'QC003', NULL,
                 'complete_and_dequeue() by a claim whose lease expired and was reaped raises QC003');
SELECT is((SELECT state FROM claimqueue.jobs WHERE id = :claim_id), 'ready',
          'the stale complete_and_dequeue() claimed nothing: the reaped job is still ready');
SELECT throws_ok(format('SELECT fail(%s, %s)', :claim_id, :claim_attempt), 'QC003', NULL,
                 'fail() by a claim whose lease expired and was reaped raises QC003');
SELECT throws_ok(format('SELECT snooze(%s, %s)', :claim_id, :claim_attempt), 'QC003', NULL,
                 'snooze() by a claim whose lease expired and was reaped raises QC003');
SET LOCAL claimqueue.debug_clock_offset = 7200;
SELECT id AS claim2_id, attempt AS claim2_attempt FROM dequeue('tap_stale', 'w2') \gset
SELECT is(:claim2_attempt, 2, 'the job is claimed again with attempt 2');
SELECT throws_ok(format('SELECT complete(%s, %s)', :claim_id, :claim_attempt), 'QC003', NULL,
                 'the old attempt still cannot complete after the job was reclaimed');
SELECT lives_ok(format('SELECT complete(%s, %s)', :claim2_id, :claim2_attempt),
                'the current attempt completes the job');
SELECT throws_ok(format('SELECT complete(%s, %s)', :claim2_id, :claim2_attempt), 'QC003', NULL,
                 'completing a done job again raises QC003');
SELECT is((SELECT state FROM queue_jobs WHERE id = :claim2_id), 'done', 'the job is done');
RESET claimqueue.debug_clock_offset;

-- QC004 job_state_conflict
SELECT throws_ok(format('SELECT cancel(%s)', :claim2_id), 'QC004', NULL,
                 'cancel() of a done job raises QC004');
SELECT throws_ok(format('SELECT retry(%s)', :claim2_id), 'QC004', NULL,
                 'retry() of a done job raises QC004');

-- 55006 object_in_use
SELECT create_queue('tap_busy') AS created \gset
SELECT enqueue('tap_busy') AS busy_job \gset
SELECT throws_ok($$SELECT drop_queue('tap_busy')$$, '55006', NULL,
                 'drop_queue() of a queue with ready jobs raises 55006');
SELECT is(drop_queue('tap_busy', force => true), 1::bigint,
          'drop_queue(force => true) deletes the queue and returns the jobs deleted');

SELECT * FROM finish();
ROLLBACK;

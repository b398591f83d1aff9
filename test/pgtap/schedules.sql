-- The contract of recurring jobs, checked with pgTAP: schedule(),
-- unschedule(), pause_schedule(), resume_schedule(), run_schedules() and the
-- view schedules (signatures, defaults,
-- privileges), the per-queue manage grant they need, the view's filter, and
-- the SQLSTATEs of bad input. (Their behaviour: sql/schedules.sql; races:
-- test/isolation/specs/schedule_replace.spec; the reaper: test/perl/reaper.pl.)
--
-- Needs: CREATE EXTENSION pgtap; CREATE EXTENSION claimqueue; a superuser.
-- Everything is rolled back, roles included.
-- Run: pg_prove -d DB test/pgtap/schedules.sql   (see run.sh)

\ir setup.psql

SELECT plan(87);

CREATE TEMP TABLE api (
    ord     int PRIMARY KEY,
    fn      name NOT NULL,
    args    name[] NOT NULL,
    returns text NOT NULL,
    arglist text NOT NULL
);
INSERT INTO api VALUES
 (1, 'schedule', '{text,text,text,jsonb,text,integer,integer,text,boolean}',
     'timestamp with time zone',
     'name text, cron text, queue text, payload jsonb DEFAULT ''{}''::jsonb, '
     'timezone text DEFAULT ''UTC''::text, priority integer DEFAULT 0, '
     'max_attempts integer DEFAULT NULL::integer, catch_up text DEFAULT ''one''::text, '
     'enabled boolean DEFAULT true'),
 (2, 'unschedule', '{text}', 'void', 'name text'),
 (3, 'run_schedules', '{text}', 'bigint', 'queue text DEFAULT NULL::text'),
 (4, 'pause_schedule', '{text}', 'boolean', 'name text'),
 (5, 'resume_schedule', '{text}', 'boolean', 'name text');

-- 5 x 11 per-function assertions ---------------------------------------------
SELECT has_function(:'cq', fn, args) FROM api ORDER BY ord;
SELECT function_returns(:'cq', fn, args, returns) FROM api ORDER BY ord;
SELECT is(pg_catalog.pg_get_function_arguments(
              pg_catalog.to_regprocedure(format('%I.%I(%s)', :'cq', fn, array_to_string(args, ',')))),
          arglist, format('%s() has the documented argument names and defaults', fn))
FROM api ORDER BY ord;
SELECT isnt_definer(:'cq', fn, args) FROM api ORDER BY ord;
SELECT volatility_is(:'cq', fn, args, 'volatile') FROM api ORDER BY ord;
SELECT function_lang_is(:'cq', fn, args, 'c') FROM api ORDER BY ord;
SELECT isnt_strict(:'cq', fn, args) FROM api ORDER BY ord;
SELECT is((SELECT p.proconfig FROM pg_catalog.pg_proc p
           WHERE p.oid = pg_catalog.to_regprocedure(
                     format('%I.%I(%s)', :'cq', fn, array_to_string(args, ',')))),
          ARRAY['search_path=pg_catalog, pg_temp'],
          format('%s() pins search_path = pg_catalog, pg_temp', fn))
FROM api ORDER BY ord;
SELECT function_privs_are(:'cq', fn, args, 'public', '{}'::name[],
                          format('EXECUTE on %s() is not granted to PUBLIC', fn))
FROM api ORDER BY ord;
SELECT function_privs_are(:'cq', fn, args, 'claimqueue_admin', ARRAY['EXECUTE'],
                          format('claimqueue_admin may execute %s()', fn))
FROM api ORDER BY ord;
SELECT function_privs_are(:'cq', fn, args, 'claimqueue_consumer', '{}'::name[],
                          format('claimqueue_consumer may not execute %s()', fn))
FROM api ORDER BY ord;

-- The table and the view ------------------------------------------------------
SELECT has_table('claimqueue', 'schedules', 'table claimqueue.schedules exists');
SELECT table_privs_are('claimqueue', 'schedules', 'public', '{}'::name[],
                       'PUBLIC has no privileges on claimqueue.schedules');
SELECT has_index('claimqueue', 'schedules', 'schedules_due_idx', ARRAY['next_run_at']);
SELECT has_view(:'cq', 'schedules', 'view schedules exists');
SELECT results_eq(
    format($$SELECT attname::text COLLATE "default", format_type(atttypid, atttypmod) FROM pg_catalog.pg_attribute
             WHERE attrelid = '%I.schedules'::regclass AND attnum > 0 ORDER BY attnum$$, :'cq'),
    $$VALUES ('name', 'text'), ('cron', 'text'), ('timezone', 'text'), ('queue', 'text'),
             ('next_run_at', 'timestamp with time zone'), ('last_run_at', 'timestamp with time zone'),
             ('last_job_id', 'bigint'), ('enabled', 'boolean'), ('catch_up', 'text'),
             ('priority', 'smallint'), ('max_attempts', 'integer'), ('payload', 'jsonb'),
             ('paused', 'boolean')$$,
    'schedules has the documented columns');
SELECT table_privs_are(:'cq', 'schedules', 'public', '{}'::name[],
                       'PUBLIC has no privileges on the view schedules');
SELECT table_privs_are(:'cq', 'schedules', 'claimqueue_consumer', ARRAY['SELECT'],
                       'claimqueue_consumer may read the view schedules');
SELECT ok((SELECT 'claimqueue.schedules'::regclass = ANY (e.extconfig) FROM pg_catalog.pg_extension e
           WHERE e.extname = 'claimqueue'),
          'pg_dump keeps claimqueue.schedules (a configuration table of the extension)');

-- Grants in action -------------------------------------------------------------
CREATE ROLE claimqueue_tap_sched NOLOGIN;
CREATE SCHEMA claimqueue_tap_sched;
CREATE FUNCTION claimqueue_tap_sched.as_role(sql text) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT
    AS $$DECLARE r text; BEGIN EXECUTE sql INTO r; RETURN r; END$$;
ALTER FUNCTION claimqueue_tap_sched.as_role(text) OWNER TO claimqueue_tap_sched;
GRANT USAGE ON SCHEMA :"cq" TO claimqueue_tap_sched;
SELECT create_queue('tap_sched_mine'), create_queue('tap_sched_theirs');
SELECT schedule('tap-theirs', '@daily', 'tap_sched_theirs');

SELECT throws_ok($$SELECT claimqueue_tap_sched.as_role('SELECT schedule(''tap-x'', ''@daily'', ''tap_sched_mine'')')$$,
                 '42501', NULL, 'without EXECUTE, schedule() is refused');
GRANT EXECUTE ON FUNCTION
    schedule(text, text, text, jsonb, text, integer, integer, text, boolean), unschedule(text),
    pause_schedule(text), resume_schedule(text)
TO claimqueue_tap_sched;
GRANT SELECT ON schedules TO claimqueue_tap_sched;
SELECT throws_ok($$SELECT claimqueue_tap_sched.as_role('SELECT schedule(''tap-x'', ''@daily'', ''tap_sched_mine'')')$$,
                 '42501', 'permission denied for queue "tap_sched_mine"',
                 'with EXECUTE but no manage grant, schedule() is refused');
SELECT is(claimqueue_tap_sched.as_role('SELECT count(*) FROM schedules'), '0',
          'without a grant on a queue, the view shows none of its schedules');
SELECT grant_queue('tap_sched_mine', 'manage', 'claimqueue_tap_sched');
SELECT lives_ok($$SELECT claimqueue_tap_sched.as_role('SELECT schedule(''tap-x'', ''@daily'', ''tap_sched_mine'')')$$,
                'with the manage grant, schedule() creates a schedule of that queue');
SELECT is(claimqueue_tap_sched.as_role('SELECT string_agg(name, '','') FROM schedules'), 'tap-x',
          'the view shows the schedules of the caller''s queues only');
SELECT throws_ok($$SELECT claimqueue_tap_sched.as_role('SELECT unschedule(''tap-theirs'')')$$,
                 'QC006', 'schedule "tap-theirs" does not exist',
                 'unschedule() of a schedule of a queue the role holds no privilege on reads as a missing one');
SELECT throws_ok($$SELECT claimqueue_tap_sched.as_role('SELECT unschedule(''tap-none'')')$$,
                 'QC006', 'schedule "tap-none" does not exist',
                 'unschedule() of a schedule that does not exist');
SELECT throws_ok($$SELECT claimqueue_tap_sched.as_role('SELECT schedule(''tap-theirs'', ''@daily'', ''tap_sched_mine'')')$$,
                 '42501', NULL, 'replacing another queue''s schedule is refused');
SELECT throws_ok($$SELECT claimqueue_tap_sched.as_role('SELECT pause_schedule(''tap-theirs'')')$$,
                 'QC006', 'schedule "tap-theirs" does not exist',
                 'pause_schedule() of a schedule of a queue the role holds no privilege on reads as a missing one');
SELECT throws_ok($$SELECT claimqueue_tap_sched.as_role('SELECT resume_schedule(''tap-theirs'')')$$,
                 'QC006', 'schedule "tap-theirs" does not exist',
                 'resume_schedule() of a schedule of a queue the role holds no privilege on reads as a missing one');
SELECT is(claimqueue_tap_sched.as_role('SELECT pause_schedule(''tap-x'')'), 'true',
          'pause_schedule() of a schedule of a queue it manages');
SELECT is(claimqueue_tap_sched.as_role('SELECT resume_schedule(''tap-x'')'), 'true',
          'resume_schedule() of a schedule of a queue it manages');
SELECT lives_ok($$SELECT claimqueue_tap_sched.as_role('SELECT unschedule(''tap-x'')')$$,
                'unschedule() of a schedule of a queue it manages');

-- Bad input --------------------------------------------------------------------
SELECT throws_ok($$SELECT schedule('tap-bad', '60 * * * *', 'tap_sched_mine')$$, '22023',
                 'cron field "minute" value "60" is out of range 0-59',
                 'a bad cron expression raises 22023 naming the field');
SELECT throws_ok($$SELECT schedule('tap-bad', '0 0 * * 8', 'tap_sched_mine')$$, '22023',
                 'cron field "day-of-week" value "8" is out of range 0-7',
                 'a bad day of the week raises 22023 naming the field');
SELECT throws_ok($$SELECT schedule('tap-bad', '@daily', 'tap_sched_mine', timezone => 'Nowhere/City')$$,
                 '22023', 'unknown time zone "Nowhere/City"', 'an unknown time zone raises 22023 naming it');
SELECT throws_ok($$SELECT schedule('tap-bad', '@daily', 'tap_sched_mine', catch_up => 'twice')$$,
                 '22023', 'unknown catch_up "twice"', 'an unknown catch_up raises 22023');
SELECT throws_ok($$SELECT schedule('tap-bad', '@daily', 'no_such_queue')$$, 'QC001', NULL,
                 'schedule() into an unknown queue raises QC001');
SELECT throws_ok($$SELECT unschedule('no-such-schedule')$$, 'QC006',
                 'schedule "no-such-schedule" does not exist',
                 'unschedule() of an unknown schedule raises QC006');
SELECT throws_ok($$SELECT pause_schedule('no-such-schedule')$$, 'QC006',
                 'schedule "no-such-schedule" does not exist',
                 'pause_schedule() of an unknown schedule raises QC006');
SELECT throws_ok($$SELECT resume_schedule('no-such-schedule')$$, 'QC006',
                 'schedule "no-such-schedule" does not exist',
                 'resume_schedule() of an unknown schedule raises QC006');
SELECT throws_ok($$SELECT schedule(NULL, '@daily', 'tap_sched_mine')$$, '22004', NULL,
                 'schedule() with a NULL name raises 22004');
SELECT throws_ok($$SELECT schedule('tap-bad', '@daily', 'tap_sched_mine', priority => -101)$$, '22003', NULL,
                 'schedule() with priority -101 raises 22003');
SELECT is((SELECT count(*)::int FROM claimqueue.schedules WHERE name = 'tap-bad'), 0,
          'bad input stored nothing');

SELECT * FROM finish();
ROLLBACK;

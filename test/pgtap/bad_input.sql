-- claimqueue's bad-input matrix and hostile-object check, with pgTAP.
--
-- Every SQL function of the queue API (schedules, pause and bulk retry and
-- cancel included) against NULLs, empty strings, oversized
-- names, keys and payloads, zero, negative and huge numbers, unknown ids,
-- wrong tokens, malformed and out-of-range intervals: each call raises its
-- documented SQLSTATE, and a digest of the extension's tables is the same
-- before and after. (The lock-namespace functions have their own matrix in
-- lock_namespaces.sql.) Then objects planted in schema public that shadow
-- what claimqueue's statements use (functions, an operator, tables) are shown
-- to bite a caller's own query and to have no effect on the API.
--
-- Needs: CREATE EXTENSION pgtap; CREATE EXTENSION claimqueue; a superuser.
-- Everything happens inside one transaction that is rolled back.

\ir setup.psql

SELECT plan(205);

-- The state the matrix runs against: queue has_jobs with job 1 running
-- (attempt 1) and jobs 2 and 3 done; the job sequence restarts so ids are known.
DELETE FROM claimqueue.jobs;
SELECT setval('claimqueue.jobs_id_seq', 1, false);
SELECT create_queue('has_jobs');
SELECT enqueue('has_jobs') FROM generate_series(1, 3);
SELECT count(*) FROM dequeue('has_jobs', 'w', 3);
SELECT complete(2, 1), complete(3, 1);

CREATE TEMP TABLE digest AS
SELECT md5(coalesce((SELECT string_agg(q::text, ',' ORDER BY q.queue_id) FROM claimqueue.queues q), '')
        || '|' || coalesce((SELECT string_agg(j::text, ',' ORDER BY j.id) FROM claimqueue.jobs j), '')
        || '|' || coalesce((SELECT string_agg(n::text, ',' ORDER BY n.namespace_id) FROM claimqueue.lock_namespaces n), '')
        || '|' || coalesce((SELECT string_agg(s::text, ',' ORDER BY s.name) FROM claimqueue.schedules s), '')
        || '|' || pg_catalog.pg_sequence_last_value('claimqueue.queues_queue_id_seq')::text) AS before;

CREATE TEMP TABLE matrix (ord int PRIMARY KEY, call text NOT NULL, sqlstate text NOT NULL);
INSERT INTO matrix VALUES
 (1, 'SELECT create_queue(NULL)', '22004'),
 (2, 'SELECT create_queue('''')', '22023'),
 (3, 'SELECT create_queue(repeat(''a'', 64))', '42622'),
 (4, 'SELECT create_queue(''Bad!'')', '22023'),
 (5, 'SELECT create_queue(''bad name'')', '22023'),
 (6, 'SELECT create_queue(''q1'', lease => ''0'')', '22023'),
 (7, 'SELECT create_queue(''q1'', lease => ''-1 second'')', '22023'),
 (8, 'SELECT create_queue(''q1'', lease => ''366 days'')', '22023'),
 (9, 'SELECT create_queue(''q1'', lease => NULL)', '22004'),
 (10, 'SELECT create_queue(''q1'', max_attempts => 0)', '22003'),
 (11, 'SELECT create_queue(''q1'', max_attempts => -1)', '22003'),
 (12, 'SELECT create_queue(''q1'', max_attempts => 10001)', '22003'),
 (13, 'SELECT create_queue(''q1'', max_attempts => NULL)', '22004'),
 (14, 'SELECT create_queue(''q1'', backoff_base => ''-1 second'')', '22023'),
 (15, 'SELECT create_queue(''q1'', backoff_base => ''2 hours'', backoff_cap => ''1 hour'')', '22023'),
 (16, 'SELECT create_queue(''q1'', retention => ''-1 day'')', '22023'),
 (17, 'SELECT create_queue(''q1'', retention => ''101 years'')', '22023'),
 -- 'infinity' is an interval from PostgreSQL 17 on (then longer than 365 days);
 -- 15 and 16 reject the literal itself.
 (18, 'SELECT create_queue(''q1'', lease => ''infinity'')',
  CASE WHEN current_setting('server_version_num')::int >= 170000 THEN '22023' ELSE '22007' END),
 (19, 'SELECT create_queue(''default'')', '42710'),
 (20, 'SELECT create_queue(''default'', if_not_exists => NULL)', '22004'),
 (21, 'SELECT alter_queue(NULL)', '22004'),
 (22, 'SELECT alter_queue(''nope'', lease => ''1 minute'')', 'QC001'),
 (23, 'SELECT alter_queue(''default'', lease => ''0'')', '22023'),
 (24, 'SELECT alter_queue(''default'', max_attempts => 0)', '22003'),
 (25, 'SELECT alter_queue(''default'', backoff_base => ''2 hours'')', '22023'),
 (26, 'SELECT drop_queue(NULL)', '22004'),
 (27, 'SELECT drop_queue(''nope'')', 'QC001'),
 (28, 'SELECT drop_queue(''default'', force => NULL)', '22004'),
 (29, 'SELECT drop_queue(''has_jobs'')', '55006'),
 (30, 'SELECT enqueue(NULL)', '22004'),
 (31, 'SELECT enqueue('''')', '22023'),
 (32, 'SELECT enqueue(''nope'')', 'QC001'),
 (33, 'SELECT enqueue(''default'', NULL)', '22004'),
 (34, 'SELECT enqueue(''default'', priority => 101)', '22003'),
 (35, 'SELECT enqueue(''default'', priority => -101)', '22003'),
 (36, 'SELECT enqueue(''default'', priority => NULL)', '22004'),
 (37, 'SELECT enqueue(''default'', max_attempts => 0)', '22003'),
 (38, 'SELECT enqueue(''default'', max_attempts => 10001)', '22003'),
 (39, 'SELECT enqueue(''default'', run_at => ''infinity'')', '22023'),
 (40, 'SELECT enqueue(''default'', run_at => ''-infinity'')', '22023'),
 (41, 'SELECT enqueue(''default'', dedup_key => '''')', '22023'),
 (42, 'SELECT enqueue(''default'', dedup_key => repeat(''k'', 513))', '42622'),
 (43, 'SELECT enqueue(''default'', payload => (SELECT jsonb_build_object(''big'', repeat(''x'', 2000000))))', '54000'),
 (44, 'SELECT * FROM enqueue_batch(NULL, ARRAY[''{}''::jsonb])', '22004'),
 (45, 'SELECT * FROM enqueue_batch(''default'', NULL)', '22004'),
 (46, 'SELECT * FROM enqueue_batch(''default'', ARRAY[''{}''::jsonb, NULL])', '22004'),
 (47, 'SELECT * FROM enqueue_batch(''default'', ARRAY[[''{}''::jsonb]])', '22023'),
 (48, 'SELECT * FROM enqueue_batch(''nope'', ARRAY[''{}''::jsonb])', 'QC001'),
 (49, 'SELECT * FROM enqueue_batch(''default'', ARRAY[''{}''::jsonb], priority => 1000)', '22003'),
 (50, 'SELECT * FROM dequeue(NULL, ''w'')', '22004'),
 (51, 'SELECT * FROM dequeue(''default'', NULL)', '22004'),
 (52, 'SELECT * FROM dequeue(''default'', '''')', '22023'),
 (53, 'SELECT * FROM dequeue(''default'', repeat(''w'', 201))', '42622'),
 (54, 'SELECT * FROM dequeue(''default'', ''w'', 0)', '22003'),
 (55, 'SELECT * FROM dequeue(''default'', ''w'', -1)', '22003'),
 (56, 'SELECT * FROM dequeue(''default'', ''w'', 1001)', '22003'),
 (57, 'SELECT * FROM dequeue(''default'', ''w'', NULL)', '22004'),
 (58, 'SELECT * FROM dequeue(''default'', ''w'', 1, ''0'')', '22023'),
 (59, 'SELECT * FROM dequeue(''default'', ''w'', 1, ''-1 minute'')', '22023'),
 (60, 'SELECT * FROM dequeue(''default'', ''w'', 1, ''400 days'')', '22023'),
 (61, 'SELECT * FROM dequeue(''nope'', ''w'')', 'QC001'),
 (62, 'SELECT complete(NULL, 1)', '22004'),
 (63, 'SELECT complete(1, NULL)', '22004'),
 (64, 'SELECT complete(999999, 1)', 'QC002'),
 (65, 'SELECT complete(1, 99)', 'QC003'),
 (66, 'SELECT complete(1, 0)', '22023'),
 (67, 'SELECT complete(1, -1)', '22023'),
 (68, 'SELECT complete(-1, 1)', 'QC002'),
 (69, 'SELECT complete_batch(NULL, ARRAY[1])', '22004'),
 (70, 'SELECT complete_batch(ARRAY[1::bigint], ARRAY[1, 2])', '22023'),
 (71, 'SELECT complete_batch(ARRAY[1::bigint, 1], ARRAY[1, 1])', '22023'),
 (72, 'SELECT complete_batch(ARRAY[1::bigint, NULL], ARRAY[1, 1])', '22004'),
 (73, 'SELECT complete_batch(ARRAY[999999::bigint], ARRAY[1])', 'QC002'),
 (74, 'SELECT complete_batch((SELECT array_agg(g::bigint) FROM generate_series(1, 1001) g), (SELECT array_agg(1) FROM generate_series(1, 1001) g))', '54000'),
 (75, 'SELECT fail(NULL, 1)', '22004'),
 (76, 'SELECT fail(1, NULL)', '22004'),
 (77, 'SELECT fail(999999, 1)', 'QC002'),
 (78, 'SELECT fail(1, 99)', 'QC003'),
 (79, 'SELECT fail(1, 1, ''x'', ''-1 second'')', '22023'),
 (80, 'SELECT fail(1, 1, ''x'', ''101 years'')', '22023'),
 (81, 'SELECT heartbeat(NULL, 1)', '22004'),
 (82, 'SELECT heartbeat(999999, 1)', 'QC002'),
 (83, 'SELECT heartbeat(1, 99)', 'QC003'),
 (84, 'SELECT heartbeat(1, 1, ''0'')', '22023'),
 (85, 'SELECT heartbeat(1, 1, ''-1 hour'')', '22023'),
 (86, 'SELECT heartbeat(1, 1, ''400 days'')', '22023'),
 (87, 'SELECT retry(NULL)', '22004'),
 (88, 'SELECT retry(999999)', 'QC002'),
 (89, 'SELECT retry(1)', 'QC004'),
 (90, 'SELECT retry(2, ''infinity'')', '22023'),
 (91, 'SELECT cancel(NULL)', '22004'),
 (92, 'SELECT cancel(999999)', 'QC002'),
 (93, 'SELECT cancel(3)', 'QC004'),
 (94, 'SELECT reap('''')', '22023'),
 (95, 'SELECT reap(''nope'')', 'QC001'),
 (96, 'SELECT reap(repeat(''a'', 64))', '42622'),
 (97, 'SELECT purge('''')', '22023'),
 (98, 'SELECT purge(''nope'')', 'QC001'),
 (99, 'SELECT purge(repeat(''a'', 64))', '42622'),
 (100, 'SELECT * FROM enqueue_batch(''default'', ARRAY[''{}''::jsonb, jsonb_build_object(''big'', repeat(''x'', 2000000))])', '54000'),
 (101, 'SELECT complete(1, 1, jsonb_build_object(''big'', repeat(''x'', 2000000)))', '54000'),
 (102, 'SELECT complete_batch(ARRAY[1::bigint], ARRAY[1], ARRAY[''{}''::jsonb, ''{}''])', '22023'),
 (103, 'SELECT complete_batch(ARRAY[1::bigint], ARRAY[1], ARRAY[jsonb_build_object(''big'', repeat(''x'', 2000000))])', '54000'),
 (104, 'SELECT complete_batch(ARRAY[1::bigint], ARRAY[1], ''{{1},{2}}''::jsonb[])', '22023'),
 (105, 'SELECT * FROM complete_and_dequeue(1, 1, ''has_jobs'', ''w'', result => jsonb_build_object(''big'', repeat(''x'', 2000000)))', '54000'),
 (106, 'SELECT * FROM complete_and_dequeue(NULL, NULL, ''has_jobs'', ''w'', result => ''{}'')', '22023'),
 (107, 'SELECT * FROM job_status(NULL)', '22004'),
 (108, 'SELECT * FROM job_status(ARRAY[1, NULL]::bigint[])', '22004'),
 (109, 'SELECT * FROM job_status(''{{1},{2}}''::bigint[])', '22023'),
 (110, 'CALL await_jobs(NULL, ''0'')', '22004'),
 (111, 'CALL await_jobs(''{1}'', NULL)', '22004'),
 (112, 'CALL await_jobs(''{1}'', ''-1 second'')', '22023'),
 (113, 'CALL await_jobs(''{' || (SELECT string_agg(g::text, ',') FROM generate_series(1, 1001) g) || '}'', ''0'')', '54000'),
 (114, 'CALL await_jobs(''{1}'', ''1 second'')', '25001'),
 (115, 'SELECT pause_queue(NULL)', '22004'),
 (116, 'SELECT pause_queue(''nope'')', 'QC001'),
 (117, 'SELECT resume_queue(NULL)', '22004'),
 (118, 'SELECT resume_queue(''nope'')', 'QC001'),
 (119, 'SELECT retry_jobs(NULL)', '22004'),
 (120, 'SELECT retry_jobs(''nope'')', 'QC001'),
 (121, 'SELECT retry_jobs(''has_jobs'', ''{done}'')', '22023'),
 (122, 'SELECT retry_jobs(''has_jobs'', ''{failed,bogus}'')', '22023'),
 (123, 'SELECT retry_jobs(''has_jobs'', NULL)', '22004'),
 (124, 'SELECT retry_jobs(''has_jobs'', max_jobs => 0)', '22003'),
 (125, 'SELECT retry_jobs(''has_jobs'', max_jobs => -1)', '22003'),
 (126, 'SELECT cancel_jobs(NULL)', '22004'),
 (127, 'SELECT cancel_jobs(''nope'')', 'QC001'),
 (128, 'SELECT cancel_jobs(''has_jobs'', ''{done}'')', '22023'),
 (129, 'SELECT cancel_jobs(''has_jobs'', max_jobs => -1)', '22003'),
 (130, 'SELECT schedule(NULL, ''* * * * *'', ''has_jobs'')', '22004'),
 (131, 'SELECT schedule(''s'', NULL, ''has_jobs'')', '22004'),
 (132, 'SELECT schedule(''s'', ''not cron'', ''has_jobs'')', '22023'),
 (133, 'SELECT schedule(''s'', ''61 * * * *'', ''has_jobs'')', '22023'),
 (134, 'SELECT schedule(''s'', ''every 0 seconds'', ''has_jobs'')', '22023'),
 (135, 'SELECT schedule(''s'', ''* * * * *'', ''nope'')', 'QC001'),
 (136, 'SELECT schedule(''s'', ''* * * * *'', ''has_jobs'', timezone => ''Mars/Olympus'')', '22023'),
 (137, 'SELECT schedule(''s'', ''* * * * *'', ''has_jobs'', catch_up => ''some'')', '22023'),
 (138, 'SELECT schedule(''s'', ''* * * * *'', ''has_jobs'', payload => ''[1]'')', '22023'),
 (139, 'SELECT schedule(''Bad Name!'', ''* * * * *'', ''has_jobs'')', '22023'),
 (140, 'SELECT unschedule(NULL)', '22004'),
 (141, 'SELECT unschedule(''nope'')', 'QC006'),
 (142, 'SELECT run_schedules(''nope'')', 'QC001'),
 (143, 'SELECT * FROM dequeue(''has_jobs'', ''w'', release_on_disconnect => NULL)', '22004'),
 (144, 'SELECT * FROM complete_and_dequeue(NULL, NULL, ''has_jobs'', ''w'', release_on_disconnect => NULL)', '22004'),
 (145, 'CALL dequeue_wait(''has_jobs'', ''w'', wait => ''0'', jobs => NULL, release_on_disconnect => NULL)', '22004'),
 -- Concurrency limits (0.5.0).
 (146, 'SELECT create_queue(''q1'', max_running => 0)', '22023'),
 (147, 'SELECT create_queue(''q1'', max_running => -1)', '22023'),
 (148, 'SELECT create_queue(''q1'', max_running_per_key => 0)', '22023'),
 (149, 'SELECT create_queue(''q1'', max_running_per_key => -2147483648)', '22023'),
 (150, 'SELECT alter_queue(''default'', max_running => -1)', '22023'),
 (151, 'SELECT alter_queue(''default'', max_running_per_key => -1)', '22023'),
 (152, 'SELECT alter_queue(''nope'', max_running => 1)', 'QC001'),
 (153, 'SELECT enqueue(''default'', concurrency_key => '''')', '22023'),
 (154, 'SELECT enqueue(''default'', concurrency_key => repeat(''k'', 513))', '42622'),
 (155, 'SELECT * FROM enqueue_batch(''default'', ARRAY[''{}''::jsonb], concurrency_key => '''')', '22023'),
 (156, 'SELECT * FROM enqueue_batch(''default'', ARRAY[''{}''::jsonb], concurrency_key => repeat(''k'', 513))', '42622'),
 (157, 'SELECT * FROM enqueue_batch(''nope'', ARRAY[''{}''::jsonb], concurrency_key => ''k'')', 'QC001'),
 -- snooze, fail's retryable and error_detail, job_errors (0.5.0).
 (158, 'SELECT snooze(NULL, 1)', '22004'),
 (159, 'SELECT snooze(1, NULL)', '22004'),
 (160, 'SELECT snooze(1, 1, NULL)', '22004'),
 (161, 'SELECT snooze(1, 0)', '22023'),
 (162, 'SELECT snooze(999999, 1)', 'QC002'),
 (163, 'SELECT snooze(1, 99)', 'QC003'),
 (164, 'SELECT snooze(1, 1, ''-1 second'')', '22023'),
 (165, 'SELECT snooze(1, 1, ''101 years'')', '22023'),
 (166, 'SELECT fail(1, 1, ''x'', retryable => NULL)', '22004'),
 (167, 'SELECT fail(1, 1, ''x'', error_detail => ''[]'')', '22023'),
 (168, 'SELECT fail(1, 1, ''x'', error_detail => ''1'')', '22023'),
 (169, 'SELECT fail(1, 1, ''x'', ''1 second'', retryable => false)', '22023'),
 (170, 'SELECT fail(1, 1, repeat(''x'', 65537))', '54000'),
 (171, 'SELECT fail(999999, 1, ''x'', retryable => false)', 'QC002'),
 (172, 'SELECT * FROM job_errors(NULL)', '22004'),
 -- pause_schedule, resume_schedule (0.5.0).
 (173, 'SELECT pause_schedule(NULL)', '22004'),
 (174, 'SELECT pause_schedule(''nope'')', 'QC006'),
 (175, 'SELECT pause_schedule(''Bad Name!'')', '22023'),
 (176, 'SELECT resume_schedule(NULL)', '22004'),
 (177, 'SELECT resume_schedule(''nope'')', 'QC006')
;

SELECT throws_ok(call, sqlstate, NULL, format('%s raises %s', call, sqlstate))
FROM matrix ORDER BY ord;

SELECT is(md5(coalesce((SELECT string_agg(q::text, ',' ORDER BY q.queue_id) FROM claimqueue.queues q), '')
           || '|' || coalesce((SELECT string_agg(j::text, ',' ORDER BY j.id) FROM claimqueue.jobs j), '')
           || '|' || coalesce((SELECT string_agg(n::text, ',' ORDER BY n.namespace_id) FROM claimqueue.lock_namespaces n), '')
           || '|' || coalesce((SELECT string_agg(s::text, ',' ORDER BY s.name) FROM claimqueue.schedules s), '')
           || '|' || pg_catalog.pg_sequence_last_value('claimqueue.queues_queue_id_seq')::text),
          (SELECT before FROM digest),
          'after every bad call, the extension''s tables are unchanged');

-- ---------------------------------------------------------------------------
-- Hostile objects in public. A caller whose search_path puts public before
-- pg_catalog gets them in its own queries; claimqueue's functions pin
-- search_path = pg_catalog, pg_temp and qualify every name, so they never do.
-- ---------------------------------------------------------------------------
CREATE FUNCTION public.hostile() RETURNS boolean LANGUAGE plpgsql
    AS $$BEGIN RAISE EXCEPTION 'hostile object used'; END$$;
CREATE FUNCTION public.hostile_eq(bigint, bigint) RETURNS boolean LANGUAGE plpgsql
    AS $$BEGIN RAISE EXCEPTION 'hostile operator used'; END$$;
CREATE OPERATOR public.= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = public.hostile_eq);
CREATE FUNCTION public.hostile_text_eq(text, text) RETURNS boolean LANGUAGE plpgsql
    AS $$BEGIN RAISE EXCEPTION 'hostile operator used'; END$$;
CREATE OPERATOR public.= (LEFTARG = text, RIGHTARG = text, FUNCTION = public.hostile_text_eq);
CREATE FUNCTION public.unnest(bigint[]) RETURNS SETOF bigint LANGUAGE plpgsql
    AS $$BEGIN RAISE EXCEPTION 'hostile unnest used'; END$$;
CREATE FUNCTION public.make_interval(secs double precision) RETURNS interval LANGUAGE plpgsql
    AS $$BEGIN RAISE EXCEPTION 'hostile make_interval used'; END$$;
CREATE FUNCTION public.date_part(text, interval) RETURNS double precision LANGUAGE plpgsql
    AS $$BEGIN RAISE EXCEPTION 'hostile date_part used'; END$$;
CREATE FUNCTION public.now() RETURNS timestamptz LANGUAGE plpgsql
    AS $$BEGIN RAISE EXCEPTION 'hostile now used'; END$$;
CREATE TABLE public.jobs (id bigint, state text);
CREATE TABLE public.queues (queue_id int, name text);

-- Runs sql with public searched before pg_catalog; 'ok' or the error.
CREATE FUNCTION pg_temp.as_hostile(sql text) RETURNS text LANGUAGE plpgsql
    SET search_path = public, pg_catalog
    AS $$BEGIN EXECUTE sql; RETURN 'ok'; EXCEPTION WHEN OTHERS THEN RETURN SQLERRM; END$$;

SELECT is(pg_temp.as_hostile('SELECT 1::bigint = 1::bigint'), 'hostile operator used',
          'the planted operator does bite a caller''s own query');

-- Ids are looked up outside the hostile search_path (the lookups are this
-- test's own queries, which the planted operators would catch).
SELECT is(pg_temp.as_hostile($$SELECT create_queue('hostile', lease => '1 minute')$$), 'ok',
          'hostile objects: create_queue');
SELECT is(pg_temp.as_hostile($$SELECT alter_queue('hostile', retention => '1 day')$$), 'ok',
          'hostile objects: alter_queue');
SELECT is(pg_temp.as_hostile($$SELECT enqueue('hostile', '{"a": 1}', dedup_key => 'k')$$), 'ok',
          'hostile objects: enqueue with dedup_key');
SELECT is(pg_temp.as_hostile($$SELECT enqueue('hostile', '{"a": 1}', dedup_key => 'k')$$), 'ok',
          'hostile objects: enqueue of a live dedup_key');
SELECT is(pg_temp.as_hostile($$SELECT * FROM enqueue_batch('hostile', ARRAY['{}'::jsonb, '{}'::jsonb])$$),
          'ok', 'hostile objects: enqueue_batch');
SELECT is(pg_temp.as_hostile($$SELECT * FROM dequeue('hostile', 'hw', 3)$$), 'ok',
          'hostile objects: dequeue');
SELECT (array_agg(id ORDER BY id))[1] AS h1, (array_agg(id ORDER BY id))[2] AS h2,
       (array_agg(id ORDER BY id))[3] AS h3
FROM claimqueue.jobs WHERE worker = 'hw' AND state = 'running' \gset
SELECT is((SELECT count(*) FROM claimqueue.jobs WHERE worker = 'hw' AND state = 'running'), 3::bigint,
          'hostile objects: the three jobs were claimed');
SELECT is(pg_temp.as_hostile(format('SELECT heartbeat(%s, 1)', :h1)), 'ok', 'hostile objects: heartbeat');
SELECT is(pg_temp.as_hostile(format('SELECT complete(%s, 1)', :h1)), 'ok', 'hostile objects: complete');
SELECT is(pg_temp.as_hostile(format('SELECT snooze(%s, 1)', :h2)), 'ok', 'hostile objects: snooze');
SELECT count(*) FROM dequeue('hostile', 'hw') \gset
SELECT is(pg_temp.as_hostile(format($$SELECT fail(%s, 2, 'x', error_detail => '{"k": 1}')$$, :h2)), 'ok',
          'hostile objects: fail');
SELECT is(pg_temp.as_hostile(format('SELECT * FROM job_errors(%s)', :h2)), 'ok',
          'hostile objects: job_errors');
SELECT is(pg_temp.as_hostile(format('SELECT complete_batch(ARRAY[%s::bigint], ARRAY[1])', :h3)), 'ok',
          'hostile objects: complete_batch');
SELECT is(pg_temp.as_hostile(format('SELECT * FROM job_status(ARRAY[%s, %s]::bigint[])', :h1, :h2)), 'ok',
          'hostile objects: job_status');
SELECT is(pg_temp.as_hostile(format($$CALL await_jobs(ARRAY[%s, %s]::bigint[], '0')$$, :h1, :h2)), 'ok',
          'hostile objects: await_jobs');
SELECT is(pg_temp.as_hostile(format('SELECT cancel(%s)', :h2)), 'ok', 'hostile objects: cancel');
SELECT is(pg_temp.as_hostile(format('SELECT retry(%s)', :h2)), 'ok', 'hostile objects: retry');
SELECT is((SELECT string_agg(state, ',' ORDER BY id) FROM claimqueue.jobs
           WHERE queue_id = (SELECT queue_id FROM claimqueue.queues WHERE name = 'hostile')),
          'done,ready,done', 'hostile objects: every call did exactly its job');
SELECT is(pg_temp.as_hostile($$SELECT reap('hostile')$$), 'ok', 'hostile objects: reap');
SELECT is(pg_temp.as_hostile($$SELECT purge('hostile')$$), 'ok', 'hostile objects: purge');
SELECT is(pg_temp.as_hostile($$SELECT count(*) FROM queue_stats$$), 'ok', 'hostile objects: queue_stats');
SELECT is(pg_temp.as_hostile($$SELECT count(*) FROM queue_jobs$$), 'ok', 'hostile objects: queue_jobs');
SELECT is(pg_temp.as_hostile($$SELECT lock_namespace('hostile_ns')$$), 'ok',
          'hostile objects: lock_namespace');
SELECT is(pg_temp.as_hostile($$SELECT try_advisory_xact_lock('hostile_ns', 'k')$$), 'ok',
          'hostile objects: try_advisory_xact_lock');
SELECT is(pg_temp.as_hostile($$SELECT count(*) FROM advisory_locks$$), 'ok',
          'hostile objects: advisory_locks');
SELECT is(pg_temp.as_hostile($$SELECT drop_queue('hostile', force => true)$$), 'ok',
          'hostile objects: drop_queue');

SELECT * FROM finish();
ROLLBACK;

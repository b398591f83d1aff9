\i test/regress/setup.sql
-- pause_schedule() and resume_schedule(): a paused schedule fires no job and
-- has no next run; resumed, it runs from its first slot after now, without
-- the slots it was paused for. The pause is the operator's: declaring the
-- schedule again keeps it. claimqueue's clock is moved instead of sleeping;
-- run_schedules() is the reaper's pass (test/perl/reaper.pl: the reaper
-- itself, across a restart). Times are shown in UTC.
SET timezone = 'UTC';
CREATE FUNCTION pg_temp.at(ts timestamptz) RETURNS void LANGUAGE sql AS $$
    SELECT set_config('claimqueue.debug_clock_offset',
                      ceil(extract(epoch FROM ts - clock_timestamp()))::bigint::text, false);
$$;
CREATE VIEW pg_temp.scheduled AS
SELECT j.id, j.run_at, j.payload -> 'claimqueue' ->> 'schedule' AS schedule
FROM claimqueue.jobs j WHERE j.payload ? 'claimqueue' ORDER BY j.id;
CREATE FUNCTION pg_temp.schedules_digest() RETURNS text LANGUAGE sql AS $$
    SELECT md5(coalesce(string_agg(s::text, ',' ORDER BY s.name), '')) FROM claimqueue.schedules s
$$;
SELECT create_queue('work');

SELECT pg_temp.at('2030-01-07 10:02:30+00');
SELECT schedule('tick', '*/5 * * * *', 'work');
SELECT schedule('other', '*/5 * * * *', 'work') IS NOT NULL AS scheduled;
SELECT name, paused, next_run_at FROM schedules ORDER BY name;

-- Paused: true the first time, false when already paused; no next run.
SELECT pause_schedule('tick');
SELECT pause_schedule('tick');
SELECT name, paused, enabled, next_run_at FROM schedules ORDER BY name;
-- An hour of slots passes: the paused schedule fires nothing, the other runs.
SELECT pg_temp.at('2030-01-07 10:05:10+00');
SELECT run_schedules();
SELECT pg_temp.at('2030-01-07 11:07:00+00');
SELECT run_schedules();
SELECT schedule, count(*) FROM pg_temp.scheduled GROUP BY schedule ORDER BY schedule;
-- Declaring it again (as a deployment does) changes its definition and keeps
-- the pause: no next run, so schedule() returns NULL.
SELECT schedule('tick', '*/5 * * * *', 'work', '{"v": 2}');
SELECT name, paused, next_run_at, payload FROM schedules WHERE name = 'tick';

-- Resumed: true the first time, false when running already. The next run is
-- the first slot after now (11:10), none of the missed ones (10:05 to 11:05).
SELECT resume_schedule('tick');
SELECT resume_schedule('tick');
SELECT name, paused, next_run_at FROM schedules WHERE name = 'tick';
SELECT run_schedules();
SELECT count(*) AS tick_jobs FROM pg_temp.scheduled WHERE schedule = 'tick';
SELECT pg_temp.at('2030-01-07 11:10:05+00');
SELECT run_schedules();
SELECT run_at FROM pg_temp.scheduled WHERE schedule = 'tick';

-- A disabled schedule paused and resumed stays without a next run.
SELECT schedule('off', '@hourly', 'work', enabled => false);
SELECT pause_schedule('off'), resume_schedule('off');
SELECT name, enabled, paused, next_run_at FROM schedules WHERE name = 'off';

-- Bad input: QC006 naming an unknown schedule, 22004 for NULL, 22023 for a
-- bad name; nothing changes.
SELECT pause_schedule('tick');
SELECT pg_temp.schedules_digest() AS before \gset
SELECT pg_temp.err($$SELECT pause_schedule('no_such_schedule')$$);
SELECT pg_temp.err($$SELECT resume_schedule('no_such_schedule')$$);
SELECT pg_temp.err($$SELECT pause_schedule(NULL)$$);
SELECT pg_temp.err($$SELECT resume_schedule(NULL)$$);
SELECT pg_temp.err($$SELECT pause_schedule('Bad Name')$$);
SELECT pg_temp.schedules_digest() = :'before' AS unchanged;

-- Grants: like unschedule(), the manage privilege on the schedule's queue;
-- a schedule of a queue the caller holds no privilege on reads as missing.
SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_cq_pause_manager, regress_cq_pause_worker;
RESET client_min_messages;
CREATE ROLE regress_cq_pause_manager;
CREATE ROLE regress_cq_pause_worker IN ROLE claimqueue_consumer;
GRANT EXECUTE ON FUNCTION pause_schedule(text), resume_schedule(text) TO regress_cq_pause_manager;
SELECT create_queue('theirs');
SELECT schedule('their-tick', '@hourly', 'theirs') IS NOT NULL AS scheduled;
SELECT grant_queue('work', 'manage', 'regress_cq_pause_manager'),
       grant_queue('theirs', 'consume', 'regress_cq_pause_manager'),
       grant_queue('work', 'consume', 'regress_cq_pause_worker');
SELECT pg_temp.schedules_digest() AS before \gset
SET ROLE regress_cq_pause_worker;
SELECT pg_temp.err($$SELECT pause_schedule('other')$$);
RESET ROLE;
SET ROLE regress_cq_pause_manager;
SELECT pg_temp.err($$SELECT pause_schedule('their-tick')$$);
SELECT pg_temp.err($$SELECT resume_schedule('their-tick')$$);
RESET ROLE;
SELECT pg_temp.schedules_digest() = :'before' AS unchanged;
SET ROLE regress_cq_pause_manager;
SELECT resume_schedule('tick'), pause_schedule('other');
RESET ROLE;
SELECT name, paused FROM schedules ORDER BY name;
DROP OWNED BY regress_cq_pause_manager;
DROP OWNED BY regress_cq_pause_worker;
DROP ROLE regress_cq_pause_manager, regress_cq_pause_worker;
RESET claimqueue.debug_clock_offset;

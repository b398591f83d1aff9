\i test/regress/setup.sql
-- Recurring jobs: schedule(), unschedule(), run_schedules() and the view
-- schedules. run_schedules() is the reaper's pass by hand, so nothing here
-- waits for the background worker; claimqueue's clock is moved to fixed
-- instants (pg_temp.at) instead of sleeping. Times are shown in UTC.
SET timezone = 'UTC';
-- Moves claimqueue's clock to `ts` (within a second after it).
CREATE FUNCTION pg_temp.at(ts timestamptz) RETURNS void LANGUAGE sql AS $$
    SELECT set_config('claimqueue.debug_clock_offset',
                      ceil(extract(epoch FROM ts - clock_timestamp()))::bigint::text, false);
$$;
-- The jobs schedules made: the schedule and slot their payload carries.
CREATE VIEW pg_temp.scheduled AS
SELECT j.id, q.name AS queue, j.state, j.run_at, j.priority, j.max_attempts,
       j.payload - 'claimqueue' AS payload,
       j.payload -> 'claimqueue' ->> 'schedule' AS schedule,
       j.payload -> 'claimqueue' ->> 'slot' AS slot
FROM claimqueue.jobs j JOIN claimqueue.queues q USING (queue_id)
WHERE j.payload ? 'claimqueue'
ORDER BY j.id;
-- A digest of the schedules: equal before and after = nothing changed.
CREATE FUNCTION pg_temp.schedules_digest() RETURNS text LANGUAGE sql AS $$
    SELECT md5(coalesce(string_agg(s::text, ',' ORDER BY s.name), '')) FROM claimqueue.schedules s
$$;
SELECT create_queue('work', max_attempts => 3);

-- A schedule: its next run is returned and shown by the view.
SELECT pg_temp.at('2030-01-07 10:02:30+00');
SELECT schedule('tick', '*/5 * * * *', 'work', '{"task": "tick"}');
SELECT name, cron, timezone, queue, next_run_at, last_run_at, last_job_id, enabled,
       catch_up, priority, max_attempts, payload
FROM schedules;
-- Nothing is due yet.
SELECT run_schedules();
-- At 10:05:10 the 10:05 slot is due: one job, due at its slot, carrying the
-- schedule's name and the slot; the schedule moves on to 10:10.
SELECT pg_temp.at('2030-01-07 10:05:10+00');
SELECT run_schedules();
SELECT * FROM pg_temp.scheduled;
SELECT name, next_run_at, last_run_at, last_job_id FROM schedules;
-- Run again at the same time: the slot has its job, none is added.
SELECT run_schedules();
-- The job is an ordinary job: claimed and completed as any other.
SELECT id, payload FROM dequeue('work', 'w1');
SELECT complete(1, 1);

-- Priority and max_attempts go to the jobs; NULL max_attempts is the queue's.
SELECT schedule('tick', '*/5 * * * *', 'work', '{"task": "tick"}', priority => 7,
                max_attempts => 9);
SELECT pg_temp.at('2030-01-07 10:10:05+00');
SELECT run_schedules('work');
SELECT id, priority, max_attempts, slot FROM pg_temp.scheduled;

-- Replacing a schedule with the same cron and time zone keeps its next run
-- (declaring it again never drops or moves a slot); a new cron starts from now.
SELECT schedule('tick', '*/5 * * * *', 'work', '{"task": "tock"}');
SELECT schedule('tick', '*/7 * * * *', 'work', '{"task": "tock"}');
SELECT name, cron, next_run_at, payload FROM schedules;
-- Disabled: no next run, never fired; enabled again, it runs from now.
SELECT schedule('tick', '*/7 * * * *', 'work', enabled => false);
SELECT name, enabled, next_run_at FROM schedules;
SELECT pg_temp.at('2030-01-07 11:00:00+00');
SELECT run_schedules();
SELECT schedule('tick', '*/7 * * * *', 'work');
SELECT unschedule('tick');
SELECT count(*) AS schedules_left FROM schedules;

-- Intervals: "every 30 seconds" runs on the multiples of 30 s since the Unix
-- epoch, whatever the time zone; a reaper a few seconds late still gives
-- every slot its job.
SELECT pg_temp.at('2030-01-07 12:00:10+00');
SELECT schedule('half-minute', 'every 30 seconds', 'work', timezone => 'Asia/Kolkata');
SELECT pg_temp.at('2030-01-07 12:01:05+00');
SELECT run_schedules();
SELECT slot, run_at FROM pg_temp.scheduled WHERE schedule = 'half-minute';
SELECT unschedule('half-minute');

-- catch_up: slots missed while the server was down (reached more than a
-- minute late). Three hourly schedules; the "server" is down from 13:00 to
-- 16:40, so the 14:00, 15:00 and 16:00 slots were missed.
SELECT pg_temp.at('2030-01-07 13:00:05+00');
SELECT schedule('h-one', '@hourly', 'work', catch_up => 'one'),
       schedule('h-all', '@hourly', 'work', catch_up => 'all'),
       schedule('h-none', '0 * * * *', 'work', catch_up => 'none');
SELECT pg_temp.at('2030-01-07 16:40:00+00');
-- one: one job (for the first missed slot); all: one per missed slot; none: none.
SELECT run_schedules();
SELECT schedule, slot, run_at FROM pg_temp.scheduled WHERE schedule LIKE 'h-%' ORDER BY schedule, slot;
SELECT name, next_run_at, last_run_at FROM schedules ORDER BY name;
-- A slot reached on time runs under every catch_up, none included.
SELECT pg_temp.at('2030-01-07 17:00:20+00');
SELECT run_schedules();
SELECT schedule, slot FROM pg_temp.scheduled WHERE slot = '2030-01-07T17:00:00Z' ORDER BY schedule;
SELECT unschedule('h-one'), unschedule('h-all'), unschedule('h-none');
-- all is capped: a day down with "every 1 minute" gives the first 100 missed
-- slots a job, skips the rest, and runs the slot that is on time.
SELECT pg_temp.at('2030-01-08 00:00:10+00');
SELECT schedule('minutely', 'every 1 minute', 'work', catch_up => 'all');
SELECT pg_temp.at('2030-01-09 00:00:30+00');
SELECT run_schedules();
SELECT count(*), min(slot), max(slot) FILTER (WHERE slot < '2030-01-09'), max(slot)
FROM pg_temp.scheduled WHERE schedule = 'minutely';
SELECT next_run_at FROM schedules WHERE name = 'minutely';
SELECT unschedule('minutely');

-- Time zones and DST (Europe/Berlin). Slots are wall-clock times in the
-- schedule's zone. 2030-03-31: the clocks go from 02:00 CET to 03:00 CEST
-- (01:00 UTC), so 02:00 and 02:30 do not exist that day: both slots of
-- "*/30 2 * * *" run once, together, when the gap ends (03:00 CEST). Nothing
-- is lost, nothing runs twice.
SELECT pg_temp.at('2030-03-30 12:00:00+00');
SELECT schedule('berlin-gap', '*/30 2 * * *', 'work', timezone => 'europe/berlin');
SELECT name, timezone, next_run_at FROM schedules;
SELECT pg_temp.at('2030-03-31 01:00:05+00');
SELECT run_schedules();
SELECT slot, run_at FROM pg_temp.scheduled WHERE schedule = 'berlin-gap';
SELECT next_run_at, next_run_at AT TIME ZONE 'Europe/Berlin' AS berlin FROM schedules;
SELECT unschedule('berlin-gap');
-- 2030-10-27: the clocks go back from 03:00 CEST to 02:00 CET (01:00 UTC),
-- so 02:00-02:59 happen twice. "30 2 * * *" runs once, at the first 02:30
-- (00:30 UTC); @hourly runs at the first 02:00 and next at 03:00 CET, two
-- hours later: the repeated hour is not run again.
SELECT pg_temp.at('2030-10-26 23:30:00+00');
SELECT schedule('berlin-overlap', '30 2 * * *', 'work', timezone => 'Europe/Berlin'),
       schedule('berlin-hourly', '@hourly', 'work', timezone => 'Europe/Berlin');
SELECT pg_temp.at('2030-10-27 00:00:05+00');
SELECT run_schedules();
SELECT pg_temp.at('2030-10-27 00:30:05+00');
SELECT run_schedules();
SELECT name, next_run_at, next_run_at AT TIME ZONE 'Europe/Berlin' AS berlin
FROM schedules ORDER BY name;
-- The clock shows 02:00 and 02:30 again: nothing runs.
SELECT pg_temp.at('2030-10-27 01:00:05+00');
SELECT run_schedules();
SELECT pg_temp.at('2030-10-27 01:30:05+00');
SELECT run_schedules();
SELECT pg_temp.at('2030-10-27 02:00:05+00');
SELECT run_schedules();
SELECT schedule, slot, run_at AT TIME ZONE 'Europe/Berlin' AS berlin
FROM pg_temp.scheduled WHERE schedule LIKE 'berlin-%' ORDER BY id;
SELECT unschedule('berlin-overlap'), unschedule('berlin-hourly');

-- drop_queue() drops the queue's schedules with it.
SELECT create_queue('doomed');
SELECT schedule('doomed-tick', '@daily', 'doomed') IS NOT NULL AS scheduled;
SELECT drop_queue('doomed');
SELECT count(*) FROM claimqueue.schedules WHERE name = 'doomed-tick';

-- Bad input: 22023 naming what is wrong, and nothing is stored.
SELECT schedule('kept', '@daily', 'work') IS NOT NULL AS scheduled;
SELECT pg_temp.schedules_digest() AS before \gset
SELECT pg_temp.err($$SELECT schedule('bad', '61 * * * *', 'work')$$);
SELECT pg_temp.err($$SELECT schedule('bad', '0 25 * * *', 'work')$$);
SELECT pg_temp.err($$SELECT schedule('bad', '* * 0 * *', 'work')$$);
SELECT pg_temp.err($$SELECT schedule('bad', '* * * 13 *', 'work')$$);
SELECT pg_temp.err($$SELECT schedule('bad', '* * * * funday', 'work')$$);
SELECT pg_temp.err($$SELECT schedule('bad', '0 0 30 feb *', 'work')$$);
SELECT pg_temp.err($$SELECT schedule('bad', '* * * *', 'work')$$);
SELECT pg_temp.err($$SELECT schedule('bad', '', 'work')$$);
SELECT pg_temp.err($$SELECT schedule('bad', '@reboot', 'work')$$);
SELECT pg_temp.err($$SELECT schedule('bad', 'every 0 seconds', 'work')$$);
SELECT pg_temp.err($$SELECT schedule('bad', 'every 2 days', 'work')$$);
SELECT pg_temp.err($$SELECT schedule('kept', '61 * * * *', 'work')$$);
SELECT pg_temp.err($$SELECT schedule('bad', '@daily', 'work', timezone => 'Mars/Olympus_Mons')$$);
SELECT pg_temp.err($$SELECT schedule('kept', '@daily', 'work', timezone => '')$$);
SELECT pg_temp.err($$SELECT schedule('bad', '@daily', 'work', catch_up => 'some')$$);
SELECT pg_temp.err($$SELECT schedule('bad', '@daily', 'work', '[1, 2]')$$);
SELECT pg_temp.err($$SELECT schedule('bad', '@daily', 'work', '{"claimqueue": 1}')$$);
SELECT pg_temp.err($$SELECT schedule('Bad Name', '@daily', 'work')$$);
SELECT pg_temp.err($$SELECT schedule(repeat('a', 64), '@daily', 'work')$$);
SELECT pg_temp.err($$SELECT schedule('bad', NULL, 'work')$$);
SELECT pg_temp.err($$SELECT schedule('bad', '@daily', NULL)$$);
SELECT pg_temp.err($$SELECT schedule('bad', '@daily', 'work', timezone => NULL)$$);
SELECT pg_temp.err($$SELECT schedule('bad', '@daily', 'work', priority => 101)$$);
SELECT pg_temp.err($$SELECT schedule('bad', '@daily', 'work', max_attempts => 0)$$);
SELECT pg_temp.err($$SELECT schedule('bad', '@daily', 'work', catch_up => NULL)$$);
SELECT pg_temp.err($$SELECT schedule('bad', '@daily', 'no_such_queue')$$);
SELECT pg_temp.err($$SELECT unschedule('no_such_schedule')$$);
SELECT pg_temp.err($$SELECT unschedule(NULL)$$);
SELECT pg_temp.err($$SELECT run_schedules('no_such_queue')$$);
SELECT pg_temp.schedules_digest() = :'before' AS unchanged;
SELECT name, cron, timezone FROM schedules;

-- Grants: a schedule belongs to its queue. Creating, replacing or removing
-- one needs the manage privilege on that queue (and EXECUTE, which
-- claimqueue_admin has); the view shows only the caller's queues.
SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_cq_sched_manager, regress_cq_sched_worker;
RESET client_min_messages;
CREATE ROLE regress_cq_sched_manager;
CREATE ROLE regress_cq_sched_worker IN ROLE claimqueue_consumer;
GRANT EXECUTE ON FUNCTION schedule(text, text, text, jsonb, text, integer, integer, text, boolean),
    unschedule(text), run_schedules(text)
TO regress_cq_sched_manager;
GRANT SELECT ON schedules TO regress_cq_sched_manager;
SELECT create_queue('theirs');
SELECT schedule('their-tick', '@hourly', 'theirs') IS NOT NULL AS scheduled;
SELECT grant_queue('work', 'manage', 'regress_cq_sched_manager'),
       grant_queue('theirs', 'consume', 'regress_cq_sched_worker');
SELECT pg_temp.schedules_digest() AS before \gset
SET ROLE regress_cq_sched_manager;
SELECT schedule('managed', '@hourly', 'work') IS NOT NULL AS scheduled;
SELECT pg_temp.err($$SELECT schedule('managed', '@hourly', 'theirs')$$);
SELECT pg_temp.err($$SELECT schedule('their-tick', '@hourly', 'work')$$);
SELECT pg_temp.err($$SELECT unschedule('their-tick')$$);
SELECT pg_temp.err($$SELECT run_schedules('theirs')$$);
SELECT pg_temp.err($$SELECT run_schedules()$$);
SELECT run_schedules('work');
SELECT name, queue FROM schedules ORDER BY name;
SELECT unschedule('managed');
RESET ROLE;
SELECT pg_temp.schedules_digest() = :'before' AS unchanged;
SET ROLE regress_cq_sched_worker;
SELECT name, queue FROM schedules ORDER BY name;
SELECT pg_temp.err($$SELECT unschedule('their-tick')$$);
RESET ROLE;
DROP OWNED BY regress_cq_sched_manager;
DROP ROLE regress_cq_sched_manager, regress_cq_sched_worker;
RESET claimqueue.debug_clock_offset;

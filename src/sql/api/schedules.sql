-- Recurring jobs (0.4.0): schedule(), unschedule(), run_schedules() (the
-- reaper's schedule pass by hand), pause_schedule() and resume_schedule()
-- (0.5.0) and the view schedules. The table
-- claimqueue.schedules is in src/sql/tables.sql; the grants in api/roles.sql.
-- A schedule belongs to a queue: creating, replacing or removing it needs the
-- manage privilege on that queue, and the view shows only the schedules of
-- the queues the caller holds a privilege on.

CREATE OR REPLACE FUNCTION @extschema@.schedule(
    name         text,
    cron         text,
    queue        text,
    payload      jsonb   DEFAULT '{}',
    timezone     text    DEFAULT 'UTC',
    priority     integer DEFAULT 0,
    max_attempts integer DEFAULT NULL,
    catch_up     text    DEFAULT 'one',
    enabled      boolean DEFAULT true)
RETURNS timestamptz
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_schedule';
COMMENT ON FUNCTION @extschema@.schedule(text, text, text, jsonb, text, integer, integer, text, boolean)
    IS 'create or replace a schedule: one job into queue per slot of cron (five fields, @hourly, every N seconds) in timezone; returns its next run';

CREATE OR REPLACE FUNCTION @extschema@.unschedule(name text)
RETURNS void
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_unschedule';
COMMENT ON FUNCTION @extschema@.unschedule(text)
    IS 'remove a schedule; its jobs already enqueued stay';

-- Pausing: a paused schedule fires no job until it is resumed; resuming
-- starts from the first slot after now, without the slots it was paused for.
CREATE OR REPLACE FUNCTION @extschema@.pause_schedule(name text)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_pause_schedule';
COMMENT ON FUNCTION @extschema@.pause_schedule(text)
    IS 'stop a schedule from firing; true if it was running, false if already paused';

CREATE OR REPLACE FUNCTION @extschema@.resume_schedule(name text)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_resume_schedule';
COMMENT ON FUNCTION @extschema@.resume_schedule(text)
    IS 'let a paused schedule fire again from its first slot after now (no missed slots); true if it was paused';

CREATE OR REPLACE FUNCTION @extschema@.run_schedules(queue text DEFAULT NULL)
RETURNS bigint
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_run_schedules';
COMMENT ON FUNCTION @extschema@.run_schedules(text)
    IS 'the reaper''s schedule pass by hand: enqueues the jobs of due slots and advances each schedule; returns the jobs enqueued';

CREATE OR REPLACE VIEW @extschema@.schedules AS
SELECT s.name, s.cron, s.timezone, q.name AS queue, s.next_run_at, s.last_run_at,
       s.last_job_id, s.enabled, s.catch_up, s.priority, s.max_attempts, s.payload,
       s.paused
FROM claimqueue.schedules s
JOIN claimqueue.queues q ON q.queue_id = s.queue_id
WHERE q.queue_id IN (SELECT claimqueue.visible_queues());
COMMENT ON VIEW @extschema@.schedules
    IS 'recurring jobs and their next and latest runs; only queues the caller holds a privilege on';

REVOKE ALL ON FUNCTION
    @extschema@.schedule(text, text, text, jsonb, text, integer, integer, text, boolean),
    @extschema@.unschedule(text),
    @extschema@.pause_schedule(text),
    @extschema@.resume_schedule(text),
    @extschema@.run_schedules(text)
FROM PUBLIC;
REVOKE ALL ON @extschema@.schedules FROM PUBLIC;

-- claimqueue 0.1.0 -> 0.2.0. test/upgrade/run.sh checks that 0.1.0 updated by
-- this script is the same extension as a fresh CREATE EXTENSION of 0.2.0.
\echo Use "ALTER EXTENSION claimqueue UPDATE TO '0.2.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- Background maintenance (0.2.0): the reaper worker in every database with
-- the extension (library in shared_preload_libraries), purge() and
-- reaper_stats. src/worker/README.md describes the worker.
-- ---------------------------------------------------------------------------

-- Retention: finished jobs by queue and age, so purging never scans the
-- ready and running ones, nor the whole table.
CREATE INDEX jobs_finished_idx ON claimqueue.jobs (queue_id, finished_at)
    WHERE state IN ('done', 'failed', 'cancelled');

CREATE FUNCTION @extschema@.purge(queue text DEFAULT NULL)
RETURNS bigint
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_purge';
COMMENT ON FUNCTION @extschema@.purge(text)
    IS 'one retention pass by hand: deletes done, failed and cancelled jobs that finished longer ago than their queue''s retention; returns how many';

-- This database's reaper (one row); behind the reaper_stats view.
CREATE FUNCTION claimqueue.reaper_status(
    OUT preloaded    boolean,
    OUT enabled      boolean,
    OUT state        text,
    OUT pid          integer,
    OUT started_at   timestamptz,
    OUT last_pass_at timestamptz,
    OUT passes       bigint,
    OUT jobs_reaped  bigint,
    OUT jobs_purged  bigint,
    OUT last_error   text)
LANGUAGE c VOLATILE
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_reaper_status';

CREATE VIEW @extschema@.reaper_stats AS
SELECT * FROM claimqueue.reaper_status();
COMMENT ON VIEW @extschema@.reaper_stats
    IS 'this database''s reaper: state, pid, last pass, jobs reaped and purged since the server started';

-- Starts this database's reaper when CREATE/ALTER EXTENSION commits.
CREATE FUNCTION claimqueue.start_reaper() RETURNS boolean
    LANGUAGE c VOLATILE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'cq_start_reaper';
SELECT claimqueue.start_reaper();

REVOKE ALL ON FUNCTION
    @extschema@.purge(text),
    claimqueue.reaper_status(),
    claimqueue.start_reaper()
FROM PUBLIC;
REVOKE ALL ON @extschema@.reaper_stats FROM PUBLIC;

-- ---------------------------------------------------------------------------
-- Waiting dequeue (issue 7): dequeue_wait() sleeps in the server until a job
-- may be claimable, then claims; next_due() says when a queue's next ready job
-- is due. Waiting needs the library in shared_preload_libraries.
-- src/wait/README.md describes the wake-ups.
-- ---------------------------------------------------------------------------

CREATE FUNCTION @extschema@.next_due(queue text)
RETURNS timestamptz
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_next_due';
COMMENT ON FUNCTION @extschema@.next_due(text)
    IS 'when the queue''s next ready job is due (its earliest run_at; in the past if one is claimable now), NULL if it has no ready job';

-- A procedure, neither SECURITY DEFINER nor with SET search_path: PostgreSQL
-- lets a procedure COMMIT only without both, and dequeue_wait commits before
-- it sleeps so that a waiting worker holds back no snapshot (no xmin). It
-- reads no table itself: it calls dequeue() and next_due() (SECURITY DEFINER,
-- schema-qualified), so a caller needs EXECUTE on those two as well.
CREATE PROCEDURE @extschema@.dequeue_wait(
    queue  text,
    worker text,
    batch  integer  DEFAULT 1,
    lease  interval DEFAULT NULL,
    wait   interval DEFAULT '30 seconds',
    INOUT jobs jsonb DEFAULT NULL)
LANGUAGE c
AS 'MODULE_PATHNAME', 'cq_dequeue_wait';
COMMENT ON PROCEDURE @extschema@.dequeue_wait(text, text, integer, interval, interval, jsonb)
    IS 'dequeue() that, when nothing is claimable, commits and sleeps until a job may be (enqueue commit, run_at, reaper) or wait runs out; jobs: jsonb array of the claimed jobs, [] if none';

-- This database's waiting workers, one row each (tests and monitoring):
-- deadline and timer_at on claimqueue's clock; wakeups counts the times a
-- commit, a timer hand-over or another waiter woke it.
CREATE FUNCTION claimqueue.waiters(
    OUT pid      integer,
    OUT queue    text,
    OUT since    timestamptz,
    OUT deadline timestamptz,
    OUT timer_at timestamptz,
    OUT wakeups  bigint)
RETURNS SETOF record
LANGUAGE c VOLATILE
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_waiters';

REVOKE ALL ON FUNCTION
    @extschema@.next_due(text),
    claimqueue.waiters()
FROM PUBLIC;
REVOKE ALL ON PROCEDURE
    @extschema@.dequeue_wait(text, text, integer, interval, interval, jsonb)
FROM PUBLIC;

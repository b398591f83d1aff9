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

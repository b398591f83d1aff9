-- Background maintenance (0.2.0): the reaper worker in every database with
-- the extension (library in shared_preload_libraries), the same passes by
-- hand (reap(), purge()) and reaper_stats. src/worker/README.md describes the
-- worker.

CREATE OR REPLACE FUNCTION @extschema@.reap(queue text DEFAULT NULL)
RETURNS bigint
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_reap';
COMMENT ON FUNCTION @extschema@.reap(text)
    IS 'one pass by hand: running jobs whose lease expired go back to ready (with backoff) or to failed; returns how many';

CREATE OR REPLACE FUNCTION @extschema@.purge(queue text DEFAULT NULL)
RETURNS bigint
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_purge';
COMMENT ON FUNCTION @extschema@.purge(text)
    IS 'one retention pass by hand: deletes done, failed and cancelled jobs that finished longer ago than their queue''s retention; returns how many';

-- This database's reaper (one row); behind the reaper_stats view.
CREATE OR REPLACE FUNCTION claimqueue.reaper_status(
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

CREATE OR REPLACE VIEW @extschema@.reaper_stats AS
SELECT * FROM claimqueue.reaper_status();
COMMENT ON VIEW @extschema@.reaper_stats
    IS 'this database''s reaper: state, pid, last pass, jobs reaped and purged since the server started';

-- Every database's reaper (0.5.0), one row each, as pg_stat_activity shows
-- sessions: the database, the state and pid to whoever may read the view;
-- the start, passes, counters and last error only for this database or to a
-- role with the privileges of pg_read_all_stats (NULL otherwise).
CREATE OR REPLACE FUNCTION claimqueue.reaper_status_all(
    OUT database     text,
    OUT state        text,
    OUT pid          integer,
    OUT started_at   timestamptz,
    OUT last_pass_at timestamptz,
    OUT passes       bigint,
    OUT jobs_reaped  bigint,
    OUT jobs_purged  bigint,
    OUT last_error   text)
RETURNS SETOF record
LANGUAGE c VOLATILE
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_reaper_status_all';

CREATE OR REPLACE VIEW @extschema@.all_reaper_stats AS
SELECT * FROM claimqueue.reaper_status_all();
COMMENT ON VIEW @extschema@.all_reaper_stats
    IS 'every database''s reaper: state and pid; start, passes, counters and last error for this database, or for all with pg_read_all_stats';

-- Starts this database's reaper when CREATE/ALTER EXTENSION commits: every
-- script calls it, since a database's reaper waits while its schema is older
-- than the library.
CREATE OR REPLACE FUNCTION claimqueue.start_reaper() RETURNS boolean
    LANGUAGE c VOLATILE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'cq_start_reaper';
SELECT claimqueue.start_reaper();

REVOKE ALL ON FUNCTION
    @extschema@.reap(text),
    @extschema@.purge(text),
    claimqueue.reaper_status(),
    claimqueue.reaper_status_all(),
    claimqueue.start_reaper()
FROM PUBLIC;
REVOKE ALL ON @extschema@.reaper_stats, @extschema@.all_reaper_stats FROM PUBLIC;

-- Claim positions and cursors (0.3.0): every entry into the claimable set
-- draws a fresh position, and claims read each (queue, priority) lane in
-- position order from a cursor kept in shared memory, so a claim never walks
-- the index entries of jobs already claimed, even while an old snapshot keeps
-- them (src/cursors/README.md; the column pos and the index jobs_ready_idx are
-- in src/sql/tables.sql). Since 0.4.0 the cursors' invariants are checked on
-- demand and their shared table is shown.

-- Called by the claim engine's statements for each job entering the ready
-- state: a new position if the job is due at `now`, else NULL. Internal. It
-- reads shared memory only (no SQL, no name to resolve), once per row of those
-- statements: it has no SET search_path, whose save and restore every call
-- would pay.
CREATE OR REPLACE FUNCTION claimqueue.ready_position(queue_id integer, priority integer,
                                          run_at timestamptz, now timestamptz)
RETURNS bigint
LANGUAGE c VOLATILE STRICT SECURITY INVOKER
AS 'MODULE_PATHNAME', 'cq_ready_position';
COMMENT ON FUNCTION claimqueue.ready_position(integer, integer, timestamptz, timestamptz)
    IS 'internal: the claim position of a job entering the ready state (NULL until due)';

-- This database's claim lanes since the server started (tests, diagnosis).
CREATE OR REPLACE FUNCTION claimqueue.claim_cursors(
    OUT queue_id     integer,
    OUT priority     integer,
    OUT cursor       bigint,
    OUT max_position bigint)
RETURNS SETOF record
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_claim_cursors';
COMMENT ON FUNCTION claimqueue.claim_cursors()
    IS 'claim lanes of this database: the cursor below which no job is claimable, and the highest position drawn';

-- One row per broken invariant of this database's claim lanes (empty when all
-- hold): a cursor outside [0, counter], a cursor past a claimable job, or a
-- claimable job above what the lane knows as its highest position.
CREATE OR REPLACE FUNCTION claimqueue.check_claim_cursors(
    OUT queue_id     integer,
    OUT priority     integer,
    OUT cursor       bigint,
    OUT lowest_ready bigint,
    OUT max_position bigint,
    OUT counter      bigint,
    OUT problem      text)
RETURNS SETOF record
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_check_claim_cursors';
COMMENT ON FUNCTION claimqueue.check_claim_cursors()
    IS 'broken invariants of this database''s claim cursors, one row each; empty when all hold';

-- The reaper's sweep of this database's claim cursors, now (it runs about once
-- a minute by itself): lowers every cursor that breaks its invariant, with a
-- LOG line each; returns how many.
CREATE OR REPLACE FUNCTION claimqueue.sweep_claim_cursors() RETURNS bigint
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_sweep_claim_cursors';
COMMENT ON FUNCTION claimqueue.sweep_claim_cursors()
    IS 'the reaper''s sweep of this database''s claim cursors, run now; returns the cursors it lowered';

-- The shared table of claim cursors (one row when preloaded, none otherwise).
CREATE OR REPLACE FUNCTION claimqueue.claim_cursor_table(
    OUT capacity      integer,
    OUT in_use        integer,
    OUT this_database integer,
    OUT refusals      bigint)
RETURNS SETOF record
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_claim_cursor_table';

CREATE OR REPLACE VIEW @extschema@.claim_cursor_usage AS
SELECT * FROM claimqueue.claim_cursor_table();
COMMENT ON VIEW @extschema@.claim_cursor_usage
    IS 'claim cursor entries: capacity (claimqueue.claim_cursor_queues), in use in the cluster and in this database, and how often a queue found the table full since the server started';

REVOKE ALL ON FUNCTION
    claimqueue.ready_position(integer, integer, timestamptz, timestamptz),
    claimqueue.claim_cursors(),
    claimqueue.check_claim_cursors(),
    claimqueue.sweep_claim_cursors(),
    claimqueue.claim_cursor_table()
FROM PUBLIC;
REVOKE ALL ON @extschema@.claim_cursor_usage FROM PUBLIC;

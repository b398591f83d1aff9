-- claimqueue 0.2.0 -> 0.3.0. test/upgrade/run.sh checks that 0.2.0 (and 0.1.0)
-- updated by this script is the same extension as a fresh CREATE EXTENSION of 0.3.0.
\echo Use "ALTER EXTENSION claimqueue UPDATE TO '0.3.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- Claim positions (0.3.0): every entry into the claimable set draws a fresh
-- position, and claims read each (queue, priority) lane in position order from
-- a cursor kept in shared memory, so a claim never walks the index entries of
-- jobs already claimed, even while an old snapshot keeps them
-- (src/engine/README.md, "Claim cursors").
-- ---------------------------------------------------------------------------

-- pos: the claim position of a ready job that is due; NULL while it waits
-- for its run_at (it gets one when due) and meaningless in other states.
ALTER TABLE claimqueue.jobs ADD COLUMN pos bigint;

-- Jobs ready and due keep their claim order (run_at, then id, within each
-- priority); positions drawn from now on are higher than these.
UPDATE claimqueue.jobs j SET pos = o.n
FROM (SELECT id, row_number() OVER (ORDER BY run_at, id) AS n
      FROM claimqueue.jobs WHERE state = 'ready' AND run_at <= pg_catalog.now()) o
WHERE j.id = o.id;

DROP INDEX claimqueue.jobs_ready_idx;
-- The claim path: claimable jobs only, one lane per (queue, priority) in
-- position order, so a claim's cost grows neither with the finished jobs kept
-- nor (with its cursor) with the jobs claimed before it.
CREATE INDEX jobs_ready_idx ON claimqueue.jobs (queue_id, priority DESC, pos)
    WHERE state = 'ready' AND pos IS NOT NULL;
-- Ready jobs waiting for their run_at, found when due.
CREATE INDEX jobs_scheduled_idx ON claimqueue.jobs (queue_id, run_at)
    WHERE state = 'ready' AND pos IS NULL;

-- Called by the claim engine's statements for each job entering the ready
-- state: a new position if the job is due at `now`, else NULL. Internal.
CREATE FUNCTION claimqueue.ready_position(queue_id integer, priority integer,
                                          run_at timestamptz, now timestamptz)
RETURNS bigint
LANGUAGE c VOLATILE STRICT SECURITY INVOKER
AS 'MODULE_PATHNAME', 'cq_ready_position';
COMMENT ON FUNCTION claimqueue.ready_position(integer, integer, timestamptz, timestamptz)
    IS 'internal: the claim position of a job entering the ready state (NULL until due)';

-- This database's claim lanes since the server started (tests, diagnosis).
CREATE FUNCTION claimqueue.claim_cursors(
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

REVOKE ALL ON FUNCTION
    claimqueue.ready_position(integer, integer, timestamptz, timestamptz),
    claimqueue.claim_cursors()
FROM PUBLIC;

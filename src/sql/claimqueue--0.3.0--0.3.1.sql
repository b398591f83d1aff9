-- claimqueue 0.3.0 -> 0.3.1. test/upgrade/run.sh checks that 0.3.0 (and every
-- earlier version) updated by this script is the same extension as a fresh
-- CREATE EXTENSION of 0.3.1.
\echo Use "ALTER EXTENSION claimqueue UPDATE TO '0.3.1'" to load this file. \quit

-- Durations compare by the API's rule, extract(epoch ...): a year is 365.25
-- days, where interval's own comparison counts 360 and refused values the API
-- had accepted. Every stored value passes (the API only ever wrote values
-- that are positive, or not negative, by this rule).
ALTER TABLE claimqueue.queues
    DROP CONSTRAINT queues_lease_check,
    DROP CONSTRAINT queues_backoff_base_check,
    DROP CONSTRAINT queues_retention_check,
    DROP CONSTRAINT queues_check,
    ADD CONSTRAINT queues_lease_check CHECK (extract(epoch FROM lease) > 0),
    ADD CONSTRAINT queues_backoff_base_check CHECK (extract(epoch FROM backoff_base) >= 0),
    ADD CONSTRAINT queues_retention_check CHECK (extract(epoch FROM retention) >= 0),
    ADD CONSTRAINT queues_check
        CHECK (extract(epoch FROM backoff_cap) >= extract(epoch FROM backoff_base));

-- ---------------------------------------------------------------------------
-- 0.3.1: the claim cursors' invariants, checked on demand; the table of claim
-- cursors, shown; the role that called the API function running now.
-- ---------------------------------------------------------------------------

-- One row per broken invariant of this database's claim lanes (empty when all
-- hold): a cursor outside [0, counter], a cursor past a claimable job, or a
-- claimable job above what the lane knows as its highest position.
CREATE FUNCTION claimqueue.check_claim_cursors(
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
CREATE FUNCTION claimqueue.sweep_claim_cursors() RETURNS bigint
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_sweep_claim_cursors';
COMMENT ON FUNCTION claimqueue.sweep_claim_cursors()
    IS 'the reaper''s sweep of this database''s claim cursors, run now; returns the cursors it lowered';

-- The shared table of claim cursors (one row when preloaded, none otherwise).
CREATE FUNCTION claimqueue.claim_cursor_table(
    OUT capacity      integer,
    OUT in_use        integer,
    OUT this_database integer,
    OUT refusals      bigint)
RETURNS SETOF record
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_claim_cursor_table';

CREATE VIEW @extschema@.claim_cursor_usage AS
SELECT * FROM claimqueue.claim_cursor_table();
COMMENT ON VIEW @extschema@.claim_cursor_usage
    IS 'claim cursor entries: capacity (claimqueue.claim_cursor_queues), in use in the cluster and in this database, and how often a queue found the table full since the server started';

-- The role that called the claimqueue API function running now (NULL outside
-- one): a trigger on claimqueue.jobs runs as the extension's owner, like the
-- function that fired it, and can ask this who the caller was.
CREATE FUNCTION claimqueue.api_caller() RETURNS regrole
LANGUAGE c STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_api_caller';
COMMENT ON FUNCTION claimqueue.api_caller()
    IS 'the role that called the claimqueue API function running now; NULL outside one';

REVOKE ALL ON FUNCTION
    claimqueue.check_claim_cursors(),
    claimqueue.sweep_claim_cursors(),
    claimqueue.claim_cursor_table(),
    claimqueue.api_caller()
FROM PUBLIC;
REVOKE ALL ON @extschema@.claim_cursor_usage FROM PUBLIC;
GRANT SELECT ON @extschema@.claim_cursor_usage
TO claimqueue_producer, claimqueue_consumer, claimqueue_admin;

-- The database's reaper waited while the schema was older than the library;
-- start it when this update commits.
SELECT claimqueue.start_reaper();

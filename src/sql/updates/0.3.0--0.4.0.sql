-- 0.3.0 -> 0.4.0: the duration checks of claimqueue.queues follow the API's
-- rule; recurring jobs (claimqueue.schedules); queues can be paused and keep
-- failed jobs for a retention of their own; jobs keep a result.

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

-- A claim runs no SQL statement since 0.4.0 (src/engine/job_rows.hpp): there
-- is no plan left for explain_claim() to show.
DROP FUNCTION claimqueue.explain_claim(text, integer);

-- Recurring jobs (0.4.0): a schedule enqueues one job into its queue for each
-- slot of its cron expression, in its time zone (api/schedules.sql,
-- src/engine/schedules.cpp). next_run_at is the earliest slot that has no job
-- yet (NULL: disabled, or no slot before the year 10000); the reaper enqueues
-- a due slot's job and advances next_run_at in one transaction.
CREATE TABLE claimqueue.schedules (
    name          text PRIMARY KEY
                  CHECK (name ~ '^[a-z0-9_][a-z0-9_.-]{0,62}$'),
    queue_id      integer NOT NULL
                  REFERENCES claimqueue.queues ON DELETE CASCADE ON UPDATE CASCADE,
    cron          text NOT NULL,
    timezone      text NOT NULL,
    payload       jsonb NOT NULL CHECK (pg_catalog.jsonb_typeof(payload) = 'object'),
    priority      smallint NOT NULL CHECK (priority BETWEEN -100 AND 100),
    max_attempts  integer CHECK (max_attempts BETWEEN 1 AND 10000),  -- NULL: the queue's
    catch_up      text NOT NULL CHECK (catch_up IN ('one', 'all', 'none')),
    enabled       boolean NOT NULL,
    next_run_at   timestamptz,
    last_run_at   timestamptz,       -- the slot of the latest job enqueued
    last_job_id   bigint,            -- that job (it may have been purged since)
    created_at    timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE claimqueue.schedules IS 'recurring jobs: one job into the queue per slot of the cron expression';
-- The reaper's pass finds the due schedules without reading the others.
CREATE INDEX schedules_due_idx ON claimqueue.schedules (next_run_at)
    WHERE next_run_at IS NOT NULL;
SELECT pg_catalog.pg_extension_config_dump('claimqueue.schedules', '');

-- Pausing a queue, and a retention of its own for failed jobs (NULL: the
-- queue's retention, as before).
ALTER TABLE claimqueue.queues
    ADD COLUMN paused boolean NOT NULL DEFAULT false,
    ADD COLUMN failed_retention interval
        CONSTRAINT queues_failed_retention_check
        CHECK (extract(epoch FROM failed_retention) >= 0);

-- Finished jobs by state too, so that the purge of one state does not walk
-- the jobs of another kept longer. Rebuilt: this takes a SHARE lock on
-- claimqueue.jobs while the index is built.
DROP INDEX claimqueue.jobs_finished_idx;
CREATE INDEX jobs_finished_idx ON claimqueue.jobs (queue_id, state, finished_at)
    WHERE state IN ('done', 'failed', 'cancelled');

-- create_queue() and alter_queue() take failed_retention (api/queues.sql).
DROP FUNCTION @extschema@.create_queue(text, interval, integer, interval, interval, interval, boolean);
DROP FUNCTION @extschema@.alter_queue(text, interval, integer, interval, interval, interval);

-- Results (0.4.0): complete() stores the job's result in the row it marks
-- done. NULL for every job finished before.
ALTER TABLE claimqueue.jobs ADD COLUMN result jsonb;

-- complete, complete_batch and complete_and_dequeue take a result as a new
-- last argument with a default, so existing calls keep working; a new
-- argument is a new function to PostgreSQL, so the old ones go (an overload
-- would make complete($1, $2) ambiguous) and api/ creates the new ones, with
-- the roles' grants. EXECUTE granted on an old one to a role directly goes
-- with it: say so, naming the roles, so it can be granted again.
DO $grants$
DECLARE
    lost record;
BEGIN
    FOR lost IN
        SELECT p.oid::pg_catalog.regprocedure AS fn,
               pg_catalog.string_agg(DISTINCT a.grantee::pg_catalog.regrole::pg_catalog.text, ', ') AS roles
        FROM pg_catalog.pg_proc p, pg_catalog.aclexplode(p.proacl) a
        WHERE p.oid IN (pg_catalog.to_regprocedure('@extschema@.complete(bigint, integer)'),
                        pg_catalog.to_regprocedure('@extschema@.complete_batch(bigint[], integer[])'),
                        pg_catalog.to_regprocedure('@extschema@.complete_and_dequeue(bigint, integer, text, text, integer, interval)'))
          AND a.grantee <> p.proowner AND a.grantee <> 0
          AND a.grantee::pg_catalog.regrole::pg_catalog.text NOT IN ('claimqueue_consumer', 'claimqueue_admin')
        GROUP BY p.oid
    LOOP
        RAISE WARNING 'EXECUTE on % granted to % is dropped with it', lost.fn, lost.roles
            USING HINT = 'Grant EXECUTE on its 0.4.0 signature (with a jsonb result argument) again, or grant the roles claimqueue_consumer.';
    END LOOP;
END
$grants$;
DROP FUNCTION IF EXISTS @extschema@.complete(bigint, integer);
DROP FUNCTION IF EXISTS @extschema@.complete_batch(bigint[], integer[]);
DROP FUNCTION IF EXISTS @extschema@.complete_and_dequeue(bigint, integer, text, text, integer, interval);

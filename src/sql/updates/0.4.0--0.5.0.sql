-- 0.4.0 -> 0.5.0: what changes in the tables (src/sql/README.md, "Changing
-- the schema"). Functions, views and grants come from api/ after this part.

-- Claims that die with their session (release_on_disconnect): the owner
-- token of such a claim, and the index the reaper finds them by.
ALTER TABLE claimqueue.jobs ADD COLUMN owner_session bigint;
CREATE INDEX jobs_owned_idx ON claimqueue.jobs (owner_session)
    WHERE state = 'running' AND owner_session IS NOT NULL;

-- dequeue, complete_and_dequeue and dequeue_wait take release_on_disconnect
-- as a new last argument: a new signature, defined again by api/. IF EXISTS:
-- an upgrade from an older release runs this part before api/ has made the
-- 0.4.0 ones.
DROP FUNCTION IF EXISTS @extschema@.dequeue(text, text, integer, interval);
DROP FUNCTION IF EXISTS @extschema@.complete_and_dequeue(bigint, integer, text, text, integer, interval, jsonb);
DROP PROCEDURE IF EXISTS @extschema@.dequeue_wait(text, text, integer, interval, interval, jsonb);

-- queue_metrics has a new last column, done_id_bound: its function's result
-- changes, so both are made again by api/.
DROP VIEW IF EXISTS @extschema@.queue_metrics;
DROP FUNCTION IF EXISTS claimqueue.queue_metrics_rows();

-- Their result is a named row type now (tables.sql says why), which api/
-- names; its columns are 0.4.0's.
CREATE TYPE claimqueue.claimed_job AS (
    id               bigint,
    payload          jsonb,
    attempt          integer,
    max_attempts     integer,
    priority         integer,
    lease_expires_at timestamptz,
    enqueued_at      timestamptz);
COMMENT ON TYPE claimqueue.claimed_job IS 'a job dequeue() claimed: attempt is its fencing token';

-- Concurrency limits: the job's key, the queue's limits (NULL: none), and the
-- index a limited claim counts running jobs from.
ALTER TABLE claimqueue.queues
    ADD COLUMN max_running integer
        CONSTRAINT queues_max_running_check CHECK (max_running >= 1),
    ADD COLUMN max_running_per_key integer
        CONSTRAINT queues_max_running_per_key_check CHECK (max_running_per_key >= 1);
ALTER TABLE claimqueue.jobs ADD COLUMN concurrency_key text;
CREATE INDEX jobs_running_key_idx ON claimqueue.jobs (queue_id, concurrency_key)
    WHERE state = 'running' AND concurrency_key IS NOT NULL;
-- The running jobs' index leads with the queue: a max_running claim counts
-- its queue's running jobs from it, and the reaper reads each queue's
-- expired leases in order.
DROP INDEX claimqueue.jobs_running_idx;
CREATE INDEX jobs_running_idx ON claimqueue.jobs (queue_id, lease_expires_at)
    WHERE state = 'running' AND lease_expires_at IS NOT NULL;

-- Fair claiming: the queue's setting, and the index of ready jobs by key hash.
ALTER TABLE claimqueue.queues ADD COLUMN fair boolean NOT NULL DEFAULT false;
CREATE INDEX jobs_fair_idx ON claimqueue.jobs
    (queue_id, priority DESC, (pg_catalog.hashtextextended(concurrency_key, 0)), pos)
    WHERE state = 'ready' AND pos IS NOT NULL AND concurrency_key IS NOT NULL;

-- New trailing arguments (concurrency_key; max_running, max_running_per_key):
-- the old signatures go, api/ defines the new ones. IF EXISTS: an upgrade
-- from before 0.4.0 runs this part before any api/ made the 0.4.0 ones.
DROP FUNCTION IF EXISTS @extschema@.enqueue(text, jsonb, timestamptz, integer, integer, text);
DROP FUNCTION IF EXISTS @extschema@.enqueue_batch(text, jsonb[], timestamptz, integer, integer);
DROP FUNCTION IF EXISTS @extschema@.create_queue(text, interval, integer, interval, interval, interval, boolean, interval);
DROP FUNCTION IF EXISTS @extschema@.alter_queue(text, interval, integer, interval, interval, interval, interval);

-- Done jobs leave the finished jobs' index: a completion writes no entry but
-- the primary key's, and retention reads the table for done jobs in ranges of
-- blocks. Failed and cancelled ones keep an index (retry_jobs, retention).
DROP INDEX claimqueue.jobs_finished_idx;
CREATE INDEX jobs_dead_letters_idx ON claimqueue.jobs (queue_id, state, finished_at)
    WHERE state IN ('failed', 'cancelled');

-- The error history (fail() appends each failed attempt, job_errors() reads
-- it), and fail()'s new trailing arguments retryable and error_detail: the
-- old signature goes, api/ defines the new one.
ALTER TABLE claimqueue.jobs ADD COLUMN errors jsonb;
DROP FUNCTION IF EXISTS @extschema@.fail(bigint, integer, text, interval);

-- Queue history: the reaper samples every queue's queue_metrics totals
-- and gauges about once a minute and keeps two hours of samples, so the table
-- stays at about 120 rows a queue and a chart of the last hour's throughput
-- reads no job row. Not kept by pg_dump: the totals restart with the server.
CREATE TABLE claimqueue.queue_samples (
    queue_id           integer NOT NULL
                       REFERENCES claimqueue.queues ON DELETE CASCADE ON UPDATE CASCADE,
    sampled_at         timestamptz NOT NULL,
    enqueued           bigint NOT NULL,
    claimed            bigint NOT NULL,
    completed          bigint NOT NULL,
    failed             bigint NOT NULL,
    reaped             bigint NOT NULL,
    retried            bigint NOT NULL,
    cancelled          bigint NOT NULL,
    ready_or_scheduled bigint,          -- NULL: the gauges were not counted yet
    running            bigint,
    counters_since     timestamptz NOT NULL,
    PRIMARY KEY (queue_id, sampled_at)
);
COMMENT ON TABLE claimqueue.queue_samples
    IS 'queue_metrics sampled by the reaper about once a minute, two hours kept (queue_history)';

-- Paused schedules (pause_schedule, resume_schedule): an operator's pause,
-- apart from the definition's enabled, so declaring a schedule again keeps
-- it. A paused schedule has no next run.
ALTER TABLE claimqueue.schedules ADD COLUMN paused boolean NOT NULL DEFAULT false;

-- Each grant keeps its grantee's name: under Citus the grants are checked by
-- it on every node, since a role's oid differs from node to node.
ALTER TABLE claimqueue.queue_grants ADD COLUMN grantee_name name;
UPDATE claimqueue.queue_grants g SET grantee_name = r.rolname
  FROM pg_catalog.pg_roles r WHERE r.oid = g.grantee::pg_catalog.oid;

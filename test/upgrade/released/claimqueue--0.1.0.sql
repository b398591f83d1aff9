-- claimqueue 0.1.0: queue tables (schema claimqueue) and the SQL API (the extension's schema).
\echo Use "CREATE EXTENSION claimqueue" to load this file. \quit

-- Internals live in a schema of their own; the API goes into the extension's
-- schema (public by default) so clients can call dequeue() unqualified.
CREATE SCHEMA claimqueue;
REVOKE ALL ON SCHEMA claimqueue FROM PUBLIC;

CREATE TABLE claimqueue.queues (
    queue_id      serial PRIMARY KEY,
    name          text NOT NULL UNIQUE
                  CHECK (name ~ '^[a-z0-9_][a-z0-9_.-]{0,62}$'),
    lease         interval NOT NULL DEFAULT '30 seconds' CHECK (lease > '0'),
    max_attempts  integer NOT NULL DEFAULT 5 CHECK (max_attempts BETWEEN 1 AND 10000),
    backoff_base  interval NOT NULL DEFAULT '1 second' CHECK (backoff_base >= '0'),
    backoff_cap   interval NOT NULL DEFAULT '1 hour',
    retention     interval NOT NULL DEFAULT '7 days' CHECK (retention >= '0'),
    created_at    timestamptz NOT NULL DEFAULT pg_catalog.now(),
    CHECK (backoff_cap >= backoff_base)
);
COMMENT ON TABLE claimqueue.queues IS 'claimqueue queues and their per-queue defaults';

-- One row per job. State machine: ready -> running -> done | ready (retry) | failed;
-- ready|running -> cancelled; failed|cancelled -> ready (retry()).
CREATE TABLE claimqueue.jobs (
    id               bigserial PRIMARY KEY,
    queue_id         integer NOT NULL,
    state            text NOT NULL DEFAULT 'ready'
                     CHECK (state IN ('ready', 'running', 'done', 'failed', 'cancelled')),
    priority         smallint NOT NULL DEFAULT 0 CHECK (priority BETWEEN -100 AND 100),
    attempt          integer NOT NULL DEFAULT 0,   -- the fencing token of the latest claim
    max_attempts     integer NOT NULL CHECK (max_attempts >= 1),
    run_at           timestamptz NOT NULL,
    created_at       timestamptz NOT NULL,
    started_at       timestamptz,
    finished_at      timestamptz,
    lease_expires_at timestamptz,
    worker           text,
    dedup_key        text,
    last_error       text,
    payload          jsonb NOT NULL
);
COMMENT ON TABLE claimqueue.jobs IS 'claimqueue jobs, all states';

-- The claim path: only ready jobs are indexed, in claim order, so a claim's
-- cost does not grow with the finished jobs kept.
CREATE INDEX jobs_ready_idx ON claimqueue.jobs (queue_id, priority DESC, run_at, id)
    WHERE state = 'ready';
-- Expired leases are found without scanning finished jobs. The predicate names
-- lease_expires_at so that only lease queries can use this index: a lookup of
-- one running job by id (complete, fail, heartbeat) must take the primary key,
-- however few running jobs the statistics last saw.
CREATE INDEX jobs_running_idx ON claimqueue.jobs (lease_expires_at)
    WHERE state = 'running' AND lease_expires_at IS NOT NULL;
-- One live job per dedup key and queue; finished jobs free the key.
CREATE UNIQUE INDEX jobs_dedup_idx ON claimqueue.jobs (queue_id, dedup_key)
    WHERE dedup_key IS NOT NULL AND state IN ('ready', 'running');

-- Kept by pg_dump, every row. The default queue is created by CREATE EXTENSION
-- itself, so on restore its dumped row (settings and id) is merged into the one
-- CREATE EXTENSION made, by the trigger below, instead of colliding with it.
SELECT pg_catalog.pg_extension_config_dump('claimqueue.queues', '');
SELECT pg_catalog.pg_extension_config_dump('claimqueue.queues_queue_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('claimqueue.jobs', '');
SELECT pg_catalog.pg_extension_config_dump('claimqueue.jobs_id_seq', '');

INSERT INTO claimqueue.queues (queue_id, name) VALUES (1, 'default');
SELECT pg_catalog.setval('claimqueue.queues_queue_id_seq', 1);

-- An INSERT of a queue named default while one exists (only a restore does
-- that: create_queue() checks first) updates the existing row instead.
CREATE FUNCTION claimqueue.merge_default_queue() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    UPDATE claimqueue.queues
       SET queue_id = NEW.queue_id, lease = NEW.lease, max_attempts = NEW.max_attempts,
           backoff_base = NEW.backoff_base, backoff_cap = NEW.backoff_cap,
           retention = NEW.retention, created_at = NEW.created_at
     WHERE name = NEW.name;
    IF FOUND THEN
        RETURN NULL;
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER merge_default_queue BEFORE INSERT ON claimqueue.queues
    FOR EACH ROW WHEN (NEW.name = 'default') EXECUTE FUNCTION claimqueue.merge_default_queue();

-- Warns when the library is not in shared_preload_libraries.
CREATE FUNCTION claimqueue.check_preload() RETURNS boolean
    LANGUAGE c VOLATILE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'cq_check_preload';
SELECT claimqueue.check_preload();

-- ---------------------------------------------------------------------------
-- SQL API. Every function is SECURITY DEFINER with a pinned search_path: the
-- tables are reachable only through these functions and the views below.
-- EXECUTE is revoked from PUBLIC; grant it to the roles that need it.
-- ---------------------------------------------------------------------------

CREATE FUNCTION @extschema@.create_queue(
    name          text,
    lease         interval DEFAULT '30 seconds',
    max_attempts  integer  DEFAULT 5,
    backoff_base  interval DEFAULT '1 second',
    backoff_cap   interval DEFAULT '1 hour',
    retention     interval DEFAULT '7 days',
    if_not_exists boolean  DEFAULT false)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_create_queue';
COMMENT ON FUNCTION @extschema@.create_queue(text, interval, integer, interval, interval, interval, boolean)
    IS 'create a queue with its defaults; true if created, false if it existed and if_not_exists';

CREATE FUNCTION @extschema@.alter_queue(
    name          text,
    lease         interval DEFAULT NULL,
    max_attempts  integer  DEFAULT NULL,
    backoff_base  interval DEFAULT NULL,
    backoff_cap   interval DEFAULT NULL,
    retention     interval DEFAULT NULL)
RETURNS void
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_alter_queue';
COMMENT ON FUNCTION @extschema@.alter_queue(text, interval, integer, interval, interval, interval)
    IS 'change a queue''s defaults; NULL leaves a setting as it is';

CREATE FUNCTION @extschema@.drop_queue(name text, force boolean DEFAULT false)
RETURNS bigint
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_drop_queue';
COMMENT ON FUNCTION @extschema@.drop_queue(text, boolean)
    IS 'drop a queue and its jobs; refuses while jobs are ready or running unless force; returns jobs deleted';

CREATE FUNCTION @extschema@.enqueue(
    queue        text,
    payload      jsonb       DEFAULT '{}',
    run_at       timestamptz DEFAULT NULL,
    priority     integer     DEFAULT 0,
    max_attempts integer     DEFAULT NULL,
    dedup_key    text        DEFAULT NULL)
RETURNS bigint
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_enqueue';
COMMENT ON FUNCTION @extschema@.enqueue(text, jsonb, timestamptz, integer, integer, text)
    IS 'add a job; claimable once this transaction commits and run_at has passed; a live job with the same dedup_key is returned instead';

CREATE FUNCTION @extschema@.enqueue_batch(
    queue        text,
    payloads     jsonb[],
    run_at       timestamptz DEFAULT NULL,
    priority     integer     DEFAULT 0,
    max_attempts integer     DEFAULT NULL)
RETURNS SETOF bigint
LANGUAGE c VOLATILE SECURITY DEFINER ROWS 100
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_enqueue_batch';
COMMENT ON FUNCTION @extschema@.enqueue_batch(text, jsonb[], timestamptz, integer, integer)
    IS 'add one job per payload in one statement; returns the ids in payload order';

CREATE FUNCTION @extschema@.dequeue(
    queue  text,
    worker text,
    batch  integer  DEFAULT 1,
    lease  interval DEFAULT NULL)
RETURNS TABLE (
    id               bigint,
    payload          jsonb,
    attempt          integer,
    max_attempts     integer,
    priority         integer,
    lease_expires_at timestamptz,
    enqueued_at      timestamptz)
LANGUAGE c VOLATILE SECURITY DEFINER ROWS 1
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_dequeue';
COMMENT ON FUNCTION @extschema@.dequeue(text, text, integer, interval)
    IS 'claim up to batch ready jobs (priority, then FIFO) with FOR UPDATE SKIP LOCKED; attempt is the fencing token';

CREATE FUNCTION @extschema@.complete(id bigint, attempt integer)
RETURNS void
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_complete';
COMMENT ON FUNCTION @extschema@.complete(bigint, integer)
    IS 'mark a running job done; raises QC003 (stale_claim) unless it is still running under this attempt';

-- Named apart from complete(): an overload would make complete($1, $2) with
-- untyped parameters (node-postgres, pgbench -M prepared) ambiguous.
CREATE FUNCTION @extschema@.complete_batch(ids bigint[], attempts integer[])
RETURNS void
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_complete_many';
COMMENT ON FUNCTION @extschema@.complete_batch(bigint[], integer[])
    IS 'complete up to 1000 running jobs in one statement, all or nothing; QC003 names the first one no longer held';

CREATE FUNCTION @extschema@.fail(
    id       bigint,
    attempt  integer,
    error    text     DEFAULT NULL,
    retry_in interval DEFAULT NULL)
RETURNS text
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_fail';
COMMENT ON FUNCTION @extschema@.fail(bigint, integer, text, interval)
    IS 'record a failed attempt: back to ready after a backoff (or retry_in), or failed when attempts are used up; returns the new state';

CREATE FUNCTION @extschema@.heartbeat(id bigint, attempt integer, extend interval DEFAULT NULL)
RETURNS timestamptz
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_heartbeat';
COMMENT ON FUNCTION @extschema@.heartbeat(bigint, integer, interval)
    IS 'extend the lease of a running job (by the queue''s lease, or extend); returns the new expiry';

CREATE FUNCTION @extschema@.retry(id bigint, run_at timestamptz DEFAULT NULL)
RETURNS void
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_retry';
COMMENT ON FUNCTION @extschema@.retry(bigint, timestamptz)
    IS 'put a failed or cancelled job back to ready with one more attempt';

CREATE FUNCTION @extschema@.cancel(id bigint)
RETURNS void
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_cancel';
COMMENT ON FUNCTION @extschema@.cancel(bigint)
    IS 'cancel a ready or running job; a running job''s worker then gets QC003 on complete/fail';

CREATE FUNCTION @extschema@.reap(queue text DEFAULT NULL)
RETURNS bigint
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_reap';
COMMENT ON FUNCTION @extschema@.reap(text)
    IS 'one pass by hand: running jobs whose lease expired go back to ready (with backoff) or to failed; returns how many';

-- Plain reads, never SKIP LOCKED: a locked row is still counted.
CREATE VIEW @extschema@.queue_stats AS
SELECT q.name AS queue,
       count(j.id) FILTER (WHERE j.state = 'ready' AND j.run_at <= pg_catalog.now()) AS ready,
       count(j.id) FILTER (WHERE j.state = 'ready' AND j.run_at > pg_catalog.now())  AS scheduled,
       count(j.id) FILTER (WHERE j.state = 'running')   AS running,
       count(j.id) FILTER (WHERE j.state = 'done')      AS done,
       count(j.id) FILTER (WHERE j.state = 'failed')    AS failed,
       count(j.id) FILTER (WHERE j.state = 'cancelled') AS cancelled,
       pg_catalog.now() - min(j.run_at) FILTER (WHERE j.state = 'ready' AND j.run_at <= pg_catalog.now())
           AS oldest_ready_age,
       count(j.id) FILTER (WHERE j.state = 'running' AND j.lease_expires_at < pg_catalog.now())
           AS expired_leases
FROM claimqueue.queues q
LEFT JOIN claimqueue.jobs j ON j.queue_id = q.queue_id
GROUP BY q.queue_id, q.name;
COMMENT ON VIEW @extschema@.queue_stats IS 'per-queue job counts by state, read without SKIP LOCKED';

CREATE VIEW @extschema@.queue_jobs AS
SELECT j.id, q.name AS queue, j.state, j.priority, j.attempt, j.max_attempts,
       j.run_at, j.created_at, j.started_at, j.finished_at, j.lease_expires_at,
       j.worker, j.dedup_key, j.last_error, j.payload
FROM claimqueue.jobs j
JOIN claimqueue.queues q ON q.queue_id = j.queue_id;
COMMENT ON VIEW @extschema@.queue_jobs IS 'every job with its queue name, timestamps, worker and last error';

CREATE VIEW @extschema@.queue_settings AS
SELECT name AS queue, lease, max_attempts, backoff_base, backoff_cap, retention, created_at
FROM claimqueue.queues;
COMMENT ON VIEW @extschema@.queue_settings IS 'each queue''s defaults';

-- Development aid for tests: the plan of the claim statement dequeue() runs.
CREATE FUNCTION claimqueue.explain_claim(queue text, batch integer DEFAULT 1)
RETURNS SETOF text
LANGUAGE c VOLATILE
SET search_path = pg_catalog, pg_temp
SET plan_cache_mode = force_generic_plan
AS 'MODULE_PATHNAME', 'cq_explain_claim';

REVOKE ALL ON FUNCTION
    @extschema@.create_queue(text, interval, integer, interval, interval, interval, boolean),
    @extschema@.alter_queue(text, interval, integer, interval, interval, interval),
    @extschema@.drop_queue(text, boolean),
    @extschema@.enqueue(text, jsonb, timestamptz, integer, integer, text),
    @extschema@.enqueue_batch(text, jsonb[], timestamptz, integer, integer),
    @extschema@.dequeue(text, text, integer, interval),
    @extschema@.complete(bigint, integer),
    @extschema@.complete_batch(bigint[], integer[]),
    @extschema@.fail(bigint, integer, text, interval),
    @extschema@.heartbeat(bigint, integer, interval),
    @extschema@.retry(bigint, timestamptz),
    @extschema@.cancel(bigint),
    @extschema@.reap(text),
    claimqueue.check_preload(),
    claimqueue.explain_claim(text, integer),
    claimqueue.merge_default_queue()
FROM PUBLIC;
REVOKE ALL ON @extschema@.queue_stats, @extschema@.queue_jobs, @extschema@.queue_settings FROM PUBLIC;

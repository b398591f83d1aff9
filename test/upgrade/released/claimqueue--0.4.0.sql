-- claimqueue 0.4.0: queue tables (schema claimqueue) and the SQL API (the extension's schema).
-- Built by make from src/sql (tables.sql, api/, install_end.sql): edit those, not this file.
\echo Use "CREATE EXTENSION claimqueue" to load this file. \quit

-- ---- src/sql/tables.sql ----

-- The tables: schema, tables, indexes, sequences, config-dump marks and the
-- rows CREATE EXTENSION starts with. First in the install script only; an
-- upgrade makes its table changes in src/sql/updates/ instead, so a change
-- here needs its twin there (src/sql/README.md).

-- Internals live in a schema of their own; the API goes into the extension's
-- schema (public by default) so clients can call dequeue() unqualified.
CREATE SCHEMA claimqueue;
REVOKE ALL ON SCHEMA claimqueue FROM PUBLIC;

CREATE TABLE claimqueue.queues (
    queue_id      serial PRIMARY KEY,
    name          text NOT NULL UNIQUE
                  CHECK (name ~ '^[a-z0-9_][a-z0-9_.-]{0,62}$'),
    -- Durations compare by the API's rule, extract(epoch ...): a day is 24 hours,
    -- a month 30 days, a year 365.25 days (interval's own < counts a year as
    -- 360 days, and would refuse values the API accepts).
    lease         interval NOT NULL DEFAULT '30 seconds'
                  CONSTRAINT queues_lease_check CHECK (extract(epoch FROM lease) > 0),
    max_attempts  integer NOT NULL DEFAULT 5 CHECK (max_attempts BETWEEN 1 AND 10000),
    backoff_base  interval NOT NULL DEFAULT '1 second'
                  CONSTRAINT queues_backoff_base_check CHECK (extract(epoch FROM backoff_base) >= 0),
    backoff_cap   interval NOT NULL DEFAULT '1 hour',
    retention     interval NOT NULL DEFAULT '7 days'
                  CONSTRAINT queues_retention_check CHECK (extract(epoch FROM retention) >= 0),
    created_at    timestamptz NOT NULL DEFAULT pg_catalog.now(),
    -- 0.4.0. A paused queue takes enqueues and claims nothing (pause_queue).
    paused        boolean NOT NULL DEFAULT false,
    -- How long failed jobs are kept; NULL: as long as retention says.
    failed_retention interval
                  CONSTRAINT queues_failed_retention_check
                  CHECK (extract(epoch FROM failed_retention) >= 0),
    CONSTRAINT queues_check
        CHECK (extract(epoch FROM backoff_cap) >= extract(epoch FROM backoff_base))
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
    payload          jsonb NOT NULL,
    pos              bigint,       -- claim position while ready and due (0.3.0, jobs_ready_idx)
    result           jsonb         -- what complete() stored (0.4.0); NULL: none
);
COMMENT ON TABLE claimqueue.jobs IS 'claimqueue jobs, all states';

-- Claim positions (0.3.0): every entry into the claimable set draws a fresh
-- position, and claims read each (queue, priority) lane in position order from
-- a cursor kept in shared memory, so a claim never walks the index entries of
-- jobs already claimed, even while an old snapshot keeps them
-- (src/cursors/README.md).
--
-- The claim path: claimable jobs only, one lane per (queue, priority) in
-- position order, so a claim's cost grows neither with the finished jobs kept
-- nor (with its cursor) with the jobs claimed before it.
CREATE INDEX jobs_ready_idx ON claimqueue.jobs (queue_id, priority DESC, pos)
    WHERE state = 'ready' AND pos IS NOT NULL;
-- Ready jobs waiting for their run_at, found when due.
CREATE INDEX jobs_scheduled_idx ON claimqueue.jobs (queue_id, run_at)
    WHERE state = 'ready' AND pos IS NULL;
-- Expired leases are found without scanning finished jobs. The predicate names
-- lease_expires_at so that only lease queries can use this index: a lookup of
-- one running job by id (complete, fail, heartbeat) must take the primary key,
-- however few running jobs the statistics last saw.
CREATE INDEX jobs_running_idx ON claimqueue.jobs (lease_expires_at)
    WHERE state = 'running' AND lease_expires_at IS NOT NULL;
-- One live job per dedup key and queue; finished jobs free the key.
CREATE UNIQUE INDEX jobs_dedup_idx ON claimqueue.jobs (queue_id, dedup_key)
    WHERE dedup_key IS NOT NULL AND state IN ('ready', 'running');
-- Retention: finished jobs by queue, state and age, so purging never scans
-- the ready and running ones, nor the whole table; and the failed jobs, kept
-- for failed_retention, are not walked by the purge of the done and
-- cancelled ones (nor the other way round).
CREATE INDEX jobs_finished_idx ON claimqueue.jobs (queue_id, state, finished_at)
    WHERE state IN ('done', 'failed', 'cancelled');

-- Kept by pg_dump, every row. The default queue is created by CREATE EXTENSION
-- itself, so on restore its dumped row (settings and id) is merged into the one
-- CREATE EXTENSION made, by the trigger merge_default_queue (api/queues.sql),
-- instead of colliding with it.
SELECT pg_catalog.pg_extension_config_dump('claimqueue.queues', '');
SELECT pg_catalog.pg_extension_config_dump('claimqueue.queues_queue_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('claimqueue.jobs', '');
SELECT pg_catalog.pg_extension_config_dump('claimqueue.jobs_id_seq', '');

INSERT INTO claimqueue.queues (queue_id, name) VALUES (1, 'default');
SELECT pg_catalog.setval('claimqueue.queues_queue_id_seq', 1);

-- Per-queue privileges: produce (enqueue), consume (dequeue, complete, fail,
-- heartbeat) and manage (alter, drop, retry, cancel, reap, purge, grants).
-- Grantee 0 ('-') is PUBLIC. Members of claimqueue_admin, superusers and the
-- extension's owner need no grant.
CREATE TABLE claimqueue.queue_grants (
    queue_id  integer NOT NULL
              REFERENCES claimqueue.queues ON DELETE CASCADE ON UPDATE CASCADE,
    grantee   regrole NOT NULL,
    privilege text NOT NULL CHECK (privilege IN ('produce', 'consume', 'manage')),
    PRIMARY KEY (queue_id, grantee, privilege)
);
COMMENT ON TABLE claimqueue.queue_grants IS 'who may produce into, consume from or manage each queue (grantee 0: PUBLIC)';
SELECT pg_catalog.pg_extension_config_dump('claimqueue.queue_grants', '');

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

-- Advisory-lock namespaces (api/locks.sql has the mapping): the first int4 key
-- of a lock is its namespace's id, the second a registered key's id in
-- 'registered' namespaces. Namespace 1 is claimqueue's own ('internal').
CREATE TABLE claimqueue.lock_namespaces (
    namespace_id  serial PRIMARY KEY,
    name          text NOT NULL UNIQUE
                  CHECK (name ~ '^[a-z0-9_][a-z0-9_.-]{0,62}$'),
    key_mode      text NOT NULL
                  CHECK (key_mode IN ('registered', 'hash', 'integer')
                         OR (key_mode = 'internal' AND namespace_id = 1)),
    created_at    timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE claimqueue.lock_namespaces
    IS 'advisory-lock namespaces: the first int4 key of each lock; ids are never reused';

CREATE TABLE claimqueue.lock_keys (
    key_id        serial PRIMARY KEY,
    namespace_id  integer NOT NULL REFERENCES claimqueue.lock_namespaces,
    key           text NOT NULL CHECK (octet_length(key) BETWEEN 1 AND 512),
    created_at    timestamptz NOT NULL DEFAULT pg_catalog.now(),
    UNIQUE (namespace_id, key)
);
COMMENT ON TABLE claimqueue.lock_keys
    IS 'registered lock keys: the second int4 key of locks in registered namespaces; ids are never reused';

INSERT INTO claimqueue.lock_namespaces (namespace_id, name, key_mode) VALUES (1, 'claimqueue', 'internal');
SELECT pg_catalog.setval('claimqueue.lock_namespaces_namespace_id_seq', 1);

-- Kept by pg_dump, all but the reserved namespace, which CREATE EXTENSION makes.
SELECT pg_catalog.pg_extension_config_dump('claimqueue.lock_namespaces', 'WHERE namespace_id <> 1');
SELECT pg_catalog.pg_extension_config_dump('claimqueue.lock_namespaces_namespace_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('claimqueue.lock_keys', '');
SELECT pg_catalog.pg_extension_config_dump('claimqueue.lock_keys_key_id_seq', '');

-- ---- src/sql/api/queues.sql ----

-- Queues: create, alter and drop them; the merge of a restored default queue;
-- the preload check.
--
-- The SQL API (this file and the rest of src/sql/api/, in every script, so
-- everything is CREATE OR REPLACE). Every function pins search_path (but
-- dequeue_wait(), a procedure that commits, and ready_position(), which runs
-- no SQL: api/waiting.sql, api/cursors.sql) and names what it uses with its
-- schema. The queue functions are SECURITY INVOKER C functions
-- that check the caller's privileges on the queue (queue_grants,
-- api/access.sql), then run as the extension's owner: the tables are
-- reachable only through these functions and the views. EXECUTE is revoked
-- from PUBLIC and granted to the roles claimqueue_producer, _consumer and
-- _admin (api/roles.sql).

-- An INSERT of a queue named default while one exists (only a restore does
-- that: create_queue() checks first) updates the existing row instead.
CREATE OR REPLACE FUNCTION claimqueue.merge_default_queue() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    UPDATE claimqueue.queues
       SET queue_id = NEW.queue_id, lease = NEW.lease, max_attempts = NEW.max_attempts,
           backoff_base = NEW.backoff_base, backoff_cap = NEW.backoff_cap,
           retention = NEW.retention, created_at = NEW.created_at, paused = NEW.paused,
           failed_retention = NEW.failed_retention
     WHERE name = NEW.name;
    IF FOUND THEN
        RETURN NULL;
    END IF;
    RETURN NEW;
END
$$;
CREATE OR REPLACE TRIGGER merge_default_queue BEFORE INSERT ON claimqueue.queues
    FOR EACH ROW WHEN (NEW.name = 'default') EXECUTE FUNCTION claimqueue.merge_default_queue();

-- Every change of the queues tells all sessions to forget what they remembered
-- of them (ids by name, leases, backoffs, paused: src/engine/queue_cache.hpp),
-- at their next transaction or claim; create_queue, alter_queue, drop_queue,
-- pause_queue, resume_queue, a restore and a superuser's own DML alike.
CREATE OR REPLACE FUNCTION claimqueue.queues_changed() RETURNS trigger
    LANGUAGE c
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'cq_table_changed';
REVOKE ALL ON FUNCTION claimqueue.queues_changed() FROM PUBLIC;
CREATE OR REPLACE TRIGGER queues_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON claimqueue.queues
    FOR EACH STATEMENT EXECUTE FUNCTION claimqueue.queues_changed();

-- Warns when the library is not in shared_preload_libraries (called at the
-- end of CREATE EXTENSION: src/sql/install_end.sql).
CREATE OR REPLACE FUNCTION claimqueue.check_preload() RETURNS boolean
    LANGUAGE c VOLATILE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'cq_check_preload';

CREATE OR REPLACE FUNCTION @extschema@.create_queue(
    name          text,
    lease         interval DEFAULT '30 seconds',
    max_attempts  integer  DEFAULT 5,
    backoff_base  interval DEFAULT '1 second',
    backoff_cap   interval DEFAULT '1 hour',
    retention     interval DEFAULT '7 days',
    if_not_exists boolean  DEFAULT false,
    failed_retention interval DEFAULT NULL)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_create_queue';
COMMENT ON FUNCTION @extschema@.create_queue(text, interval, integer, interval, interval, interval, boolean, interval)
    IS 'create a queue with its defaults; true if created, false if it existed and if_not_exists; failed_retention NULL keeps failed jobs as long as retention';

CREATE OR REPLACE FUNCTION @extschema@.alter_queue(
    name          text,
    lease         interval DEFAULT NULL,
    max_attempts  integer  DEFAULT NULL,
    backoff_base  interval DEFAULT NULL,
    backoff_cap   interval DEFAULT NULL,
    retention     interval DEFAULT NULL,
    failed_retention interval DEFAULT NULL)
RETURNS void
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_alter_queue';
COMMENT ON FUNCTION @extschema@.alter_queue(text, interval, integer, interval, interval, interval, interval)
    IS 'change a queue''s defaults; NULL leaves a setting as it is';

-- Pausing: a paused queue takes enqueues and claims nothing until it is
-- resumed; running jobs finish and expired leases are returned as usual.
CREATE OR REPLACE FUNCTION @extschema@.pause_queue(name text)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_pause_queue';
COMMENT ON FUNCTION @extschema@.pause_queue(text)
    IS 'stop claims from a queue (enqueues go on); true if it was running, false if already paused';

CREATE OR REPLACE FUNCTION @extschema@.resume_queue(name text)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_resume_queue';
COMMENT ON FUNCTION @extschema@.resume_queue(text)
    IS 'let a paused queue be claimed from again, waking its waiters at commit; true if it was paused';

CREATE OR REPLACE FUNCTION @extschema@.drop_queue(name text, force boolean DEFAULT false)
RETURNS bigint
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_drop_queue';
COMMENT ON FUNCTION @extschema@.drop_queue(text, boolean)
    IS 'drop a queue and its jobs; refuses while jobs are ready or running unless force; returns jobs deleted';

REVOKE ALL ON FUNCTION
    @extschema@.create_queue(text, interval, integer, interval, interval, interval, boolean, interval),
    @extschema@.alter_queue(text, interval, integer, interval, interval, interval, interval),
    @extschema@.drop_queue(text, boolean),
    @extschema@.pause_queue(text),
    @extschema@.resume_queue(text),
    claimqueue.check_preload(),
    claimqueue.merge_default_queue()
FROM PUBLIC;

-- ---- src/sql/api/jobs.sql ----

-- Jobs: enqueue, claim (dequeue), complete (alone, in a batch, or with the
-- next claim in one call, each with an optional result), fail, heartbeat,
-- retry, cancel, retry and cancel in bulk, and the status and result of
-- finished jobs (job_status).

CREATE OR REPLACE FUNCTION @extschema@.enqueue(
    queue        text,
    payload      jsonb       DEFAULT '{}',
    run_at       timestamptz DEFAULT NULL,
    priority     integer     DEFAULT 0,
    max_attempts integer     DEFAULT NULL,
    dedup_key    text        DEFAULT NULL)
RETURNS bigint
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_enqueue';
COMMENT ON FUNCTION @extschema@.enqueue(text, jsonb, timestamptz, integer, integer, text)
    IS 'add a job; claimable once this transaction commits and run_at has passed; a live job with the same dedup_key is returned instead';

CREATE OR REPLACE FUNCTION @extschema@.enqueue_batch(
    queue        text,
    payloads     jsonb[],
    run_at       timestamptz DEFAULT NULL,
    priority     integer     DEFAULT 0,
    max_attempts integer     DEFAULT NULL)
RETURNS SETOF bigint
LANGUAGE c VOLATILE SECURITY INVOKER ROWS 100
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_enqueue_batch';
COMMENT ON FUNCTION @extschema@.enqueue_batch(text, jsonb[], timestamptz, integer, integer)
    IS 'add one job per payload in one statement; returns the ids in payload order';

CREATE OR REPLACE FUNCTION @extschema@.dequeue(
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
LANGUAGE c VOLATILE SECURITY INVOKER ROWS 1
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_dequeue';
COMMENT ON FUNCTION @extschema@.dequeue(text, text, integer, interval)
    IS 'claim up to batch ready jobs (priority, then FIFO) with FOR UPDATE SKIP LOCKED; attempt is the fencing token';

-- result (0.4.0) is stored in the same row update that marks the job done;
-- complete(id, attempt) stores none. One signature, not an overload: see
-- complete_batch below.
CREATE OR REPLACE FUNCTION @extschema@.complete(id bigint, attempt integer, result jsonb DEFAULT NULL)
RETURNS void
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_complete';
COMMENT ON FUNCTION @extschema@.complete(bigint, integer, jsonb)
    IS 'mark a running job done, storing result (NULL: none); raises QC003 (stale_claim) unless it is still running under this attempt';

-- Named apart from complete(): an overload would make complete($1, $2) with
-- untyped parameters (node-postgres, pgbench -M prepared) ambiguous.
CREATE OR REPLACE FUNCTION @extschema@.complete_batch(
    ids      bigint[],
    attempts integer[],
    results  jsonb[] DEFAULT NULL)
RETURNS void
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_complete_many';
COMMENT ON FUNCTION @extschema@.complete_batch(bigint[], integer[], jsonb[])
    IS 'complete up to 1000 running jobs in one statement, all or nothing, results[i] the result of ids[i] (NULL: none); QC003 names the first one no longer held';

CREATE OR REPLACE FUNCTION @extschema@.fail(
    id       bigint,
    attempt  integer,
    error    text     DEFAULT NULL,
    retry_in interval DEFAULT NULL)
RETURNS text
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_fail';
COMMENT ON FUNCTION @extschema@.fail(bigint, integer, text, interval)
    IS 'record a failed attempt: back to ready after a backoff (or retry_in), or failed when attempts are used up; returns the new state';

CREATE OR REPLACE FUNCTION @extschema@.heartbeat(id bigint, attempt integer, extend interval DEFAULT NULL)
RETURNS timestamptz
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_heartbeat';
COMMENT ON FUNCTION @extschema@.heartbeat(bigint, integer, interval)
    IS 'extend the lease of a running job (by the queue''s lease, or extend); returns the new expiry';

CREATE OR REPLACE FUNCTION @extschema@.retry(id bigint, run_at timestamptz DEFAULT NULL)
RETURNS void
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_retry';
COMMENT ON FUNCTION @extschema@.retry(bigint, timestamptz)
    IS 'put a failed or cancelled job back to ready with one more attempt';

CREATE OR REPLACE FUNCTION @extschema@.cancel(id bigint)
RETURNS void
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_cancel';
COMMENT ON FUNCTION @extschema@.cancel(bigint)
    IS 'cancel a ready or running job; a running job''s worker then gets QC003 on complete/fail';

-- Dead letters in bulk: many failed (or cancelled) jobs back to ready, or
-- many ready (or running) jobs cancelled, in statements of a bounded size,
-- skipping rows others hold.
CREATE OR REPLACE FUNCTION @extschema@.retry_jobs(
    queue           text,
    states          text[]      DEFAULT '{failed}',
    finished_before timestamptz DEFAULT NULL,
    max_jobs        integer     DEFAULT NULL)
RETURNS bigint
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_retry_jobs';
COMMENT ON FUNCTION @extschema@.retry_jobs(text, text[], timestamptz, integer)
    IS 'put the queue''s failed (or cancelled) jobs back to ready with a fresh budget of attempts; returns how many';

CREATE OR REPLACE FUNCTION @extschema@.cancel_jobs(
    queue          text,
    states         text[]      DEFAULT '{ready}',
    created_before timestamptz DEFAULT NULL,
    max_jobs       integer     DEFAULT NULL)
RETURNS bigint
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_cancel_jobs';
COMMENT ON FUNCTION @extschema@.cancel_jobs(text, text[], timestamptz, integer)
    IS 'cancel the queue''s ready (or running) jobs; returns how many';

-- A worker that commits once per job: the previous job's completion and the
-- next claim in one call, so a loop of one statement per job in autocommit
-- costs one round trip and one durable commit.
CREATE OR REPLACE FUNCTION @extschema@.complete_and_dequeue(
    id      bigint,
    attempt integer,
    queue   text,
    worker  text,
    batch   integer  DEFAULT 1,
    lease   interval DEFAULT NULL,
    result  jsonb    DEFAULT NULL)
RETURNS TABLE (
    id               bigint,
    payload          jsonb,
    attempt          integer,
    max_attempts     integer,
    priority         integer,
    lease_expires_at timestamptz,
    enqueued_at      timestamptz)
LANGUAGE c VOLATILE SECURITY INVOKER ROWS 1
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_complete_and_dequeue';
COMMENT ON FUNCTION @extschema@.complete_and_dequeue(bigint, integer, text, text, integer, interval, jsonb)
    IS 'complete(id, attempt, result), then dequeue(queue, worker, batch, lease), in one call; a stale attempt raises QC003 and claims nothing; id and attempt NULL only claim';

-- Request/response and fan-in: the state, attempt, result and last error of
-- each job, one row per element of ids, in their order. A job in a queue the
-- caller holds no privilege on reads as one that does not exist: state and
-- the rest NULL, so existence does not leak across queues.
CREATE OR REPLACE FUNCTION @extschema@.job_status(ids bigint[])
RETURNS TABLE (
    id         bigint,
    state      text,
    attempt    integer,
    result     jsonb,
    last_error text)
LANGUAGE c VOLATILE SECURITY INVOKER ROWS 10
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_job_status';
COMMENT ON FUNCTION @extschema@.job_status(bigint[])
    IS 'state, attempt, result and last_error of each job, in the order of ids; NULLs for a job that does not exist or is in a queue the caller has no privilege on';

REVOKE ALL ON FUNCTION
    @extschema@.enqueue(text, jsonb, timestamptz, integer, integer, text),
    @extschema@.enqueue_batch(text, jsonb[], timestamptz, integer, integer),
    @extschema@.dequeue(text, text, integer, interval),
    @extschema@.complete(bigint, integer, jsonb),
    @extschema@.complete_batch(bigint[], integer[], jsonb[]),
    @extschema@.fail(bigint, integer, text, interval),
    @extschema@.heartbeat(bigint, integer, interval),
    @extschema@.retry(bigint, timestamptz),
    @extschema@.cancel(bigint),
    @extschema@.retry_jobs(text, text[], timestamptz, integer),
    @extschema@.cancel_jobs(text, text[], timestamptz, integer),
    @extschema@.complete_and_dequeue(bigint, integer, text, text, integer, interval, jsonb),
    @extschema@.job_status(bigint[])
FROM PUBLIC;

-- ---- src/sql/api/access.sql ----

-- Queue privileges: grant_queue() and revoke_queue(), the queues a caller may
-- see, the role that called the API function running now. The table
-- claimqueue.queue_grants is in src/sql/tables.sql; the roles and what each
-- may call are in api/roles.sql.

-- Every change tells all sessions to forget the grants they remembered
-- (src/api/access.cpp).
CREATE OR REPLACE FUNCTION claimqueue.queue_grants_changed() RETURNS trigger
    LANGUAGE c
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'cq_queue_grants_changed';
REVOKE ALL ON FUNCTION claimqueue.queue_grants_changed() FROM PUBLIC;
CREATE OR REPLACE TRIGGER queue_grants_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON claimqueue.queue_grants
    FOR EACH STATEMENT EXECUTE FUNCTION claimqueue.queue_grants_changed();

-- The queues the caller holds any privilege on (all for an administrator):
-- the views show only these. Callable by everyone: it tells a role only
-- about its own access.
CREATE OR REPLACE FUNCTION claimqueue.visible_queues() RETURNS SETOF integer
    LANGUAGE c STABLE ROWS 10
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'cq_visible_queues';

-- The role that called the claimqueue API function running now (NULL outside
-- one): a trigger on claimqueue.jobs runs as the extension's owner, like the
-- function that fired it, and can ask this who the caller was.
CREATE OR REPLACE FUNCTION claimqueue.api_caller() RETURNS regrole
LANGUAGE c STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_api_caller';
COMMENT ON FUNCTION claimqueue.api_caller()
    IS 'the role that called the claimqueue API function running now; NULL outside one';

CREATE OR REPLACE FUNCTION @extschema@.grant_queue(queue text, privilege text, role text)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_grant_queue';
COMMENT ON FUNCTION @extschema@.grant_queue(text, text, text)
    IS 'let role (or public) produce into, consume from or manage queue; true if the grant is new';

CREATE OR REPLACE FUNCTION @extschema@.revoke_queue(queue text, privilege text, role text)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_revoke_queue';
COMMENT ON FUNCTION @extschema@.revoke_queue(text, text, text)
    IS 'take back a grant_queue() grant; true if it existed';

CREATE OR REPLACE VIEW @extschema@.queue_privileges AS
SELECT q.name AS queue, g.privilege,
       CASE WHEN g.grantee::pg_catalog.oid = 0 THEN 'PUBLIC' ELSE g.grantee::pg_catalog.text END AS grantee
FROM claimqueue.queue_grants g
JOIN claimqueue.queues q ON q.queue_id = g.queue_id
WHERE q.queue_id IN (SELECT claimqueue.visible_queues());
COMMENT ON VIEW @extschema@.queue_privileges
    IS 'per-queue grants, for the queues the caller holds a privilege on';

REVOKE ALL ON FUNCTION
    @extschema@.grant_queue(text, text, text),
    @extschema@.revoke_queue(text, text, text),
    claimqueue.api_caller()
FROM PUBLIC;
REVOKE ALL ON @extschema@.queue_privileges FROM PUBLIC;
GRANT EXECUTE ON FUNCTION claimqueue.visible_queues() TO PUBLIC;

-- ---- src/sql/api/views.sql ----

-- The views of queues and jobs: counts per state, every job, each queue's
-- settings; each shows only the queues the caller holds a privilege on
-- (claimqueue.visible_queues(), api/access.sql).

-- Plain reads, never SKIP LOCKED: a locked row is still counted.
CREATE OR REPLACE VIEW @extschema@.queue_stats AS
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
           AS expired_leases,
       q.paused
FROM claimqueue.queues q
LEFT JOIN claimqueue.jobs j ON j.queue_id = q.queue_id
WHERE q.queue_id IN (SELECT claimqueue.visible_queues())
GROUP BY q.queue_id, q.name;
COMMENT ON VIEW @extschema@.queue_stats IS 'per-queue job counts by state, read without SKIP LOCKED; only queues the caller holds a privilege on';

CREATE OR REPLACE VIEW @extschema@.queue_jobs AS
SELECT j.id, q.name AS queue, j.state, j.priority, j.attempt, j.max_attempts,
       j.run_at, j.created_at, j.started_at, j.finished_at, j.lease_expires_at,
       j.worker, j.dedup_key, j.last_error, j.payload, j.result
FROM claimqueue.jobs j
JOIN claimqueue.queues q ON q.queue_id = j.queue_id
WHERE q.queue_id IN (SELECT claimqueue.visible_queues());
COMMENT ON VIEW @extschema@.queue_jobs IS 'every job with its queue name, timestamps, worker, last error and result; only queues the caller holds a privilege on';

CREATE OR REPLACE VIEW @extschema@.queue_settings AS
SELECT name AS queue, lease, max_attempts, backoff_base, backoff_cap, retention, created_at,
       paused, failed_retention
FROM claimqueue.queues
WHERE queue_id IN (SELECT claimqueue.visible_queues());
COMMENT ON VIEW @extschema@.queue_settings IS 'each queue''s defaults; only queues the caller holds a privilege on';

REVOKE ALL ON @extschema@.queue_stats, @extschema@.queue_jobs, @extschema@.queue_settings FROM PUBLIC;

-- ---- src/sql/api/reaper.sql ----

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
    claimqueue.start_reaper()
FROM PUBLIC;
REVOKE ALL ON @extschema@.reaper_stats FROM PUBLIC;

-- ---- src/sql/api/locks.sql ----

-- Advisory-lock namespaces (issue 4): the lock functions and the
-- advisory_locks view; the tables lock_namespaces and lock_keys are in
-- src/sql/tables.sql.
--
-- A lock (namespace, key) is PostgreSQL's two-int4 advisory lock
-- (namespace_id, key_id), the same lock as pg_advisory_lock(int4, int4):
-- pg_locks shows it with classid = namespace_id, objid = key_id (as oid) and
-- objsubid = 2, apart from single-bigint locks (objsubid = 1). A namespace's
-- key mode is fixed when it is registered: 'registered' keys get ids from
-- lock_keys, 'hash' keys are the 32-bit FNV-1a of their UTF-8 bytes, 'integer'
-- keys are the int4 given. Namespace 1 is claimqueue's own ('internal': key 0
-- is the reaper, key n > 0 the administration lock of queue_id n).

CREATE OR REPLACE FUNCTION @extschema@.lock_namespace(name text, key_mode text DEFAULT NULL)
RETURNS integer
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_lock_namespace';
COMMENT ON FUNCTION @extschema@.lock_namespace(text, text)
    IS 'register a lock namespace (key mode registered, hash (the default) or integer) or return the id of an existing one';

CREATE OR REPLACE FUNCTION @extschema@.register_lock_key(namespace text, key text)
RETURNS integer
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_register_lock_key';
COMMENT ON FUNCTION @extschema@.register_lock_key(text, text)
    IS 'register a key in a registered-mode namespace, or return its id; ids never collide';

CREATE OR REPLACE FUNCTION @extschema@.lock_key_id(namespace text, key text)
RETURNS integer
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_lock_key_id';
COMMENT ON FUNCTION @extschema@.lock_key_id(text, text)
    IS 'the second int4 key a text key locks in its namespace (registered id or hash); registers nothing';

CREATE OR REPLACE FUNCTION @extschema@.lock_key_hash(key text)
RETURNS integer
LANGUAGE c IMMUTABLE PARALLEL SAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_lock_key_hash';
COMMENT ON FUNCTION @extschema@.lock_key_hash(text)
    IS '32-bit FNV-1a of the key''s UTF-8 bytes as int4: the key id of a text key in a hash namespace';

-- The lock family, as PostgreSQL's pg_advisory_* family. Text keys
-- (registered and hash namespaces) and integer keys (integer namespaces) have
-- distinct names, never overloads: advisory_lock($1, $2) with untyped
-- parameters (node-postgres, pgbench -M prepared) must resolve to one function.

CREATE OR REPLACE FUNCTION @extschema@.advisory_lock(namespace text, key text)
RETURNS void
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_advisory_lock';
COMMENT ON FUNCTION @extschema@.advisory_lock(text, text)
    IS 'session lock, exclusive; waits; taken again, it must be unlocked again (text key)';

CREATE OR REPLACE FUNCTION @extschema@.advisory_lock_shared(namespace text, key text)
RETURNS void
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_advisory_lock_shared';
COMMENT ON FUNCTION @extschema@.advisory_lock_shared(text, text)
    IS 'session lock, shared; waits (text key)';

CREATE OR REPLACE FUNCTION @extschema@.try_advisory_lock(namespace text, key text)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_try_advisory_lock';
COMMENT ON FUNCTION @extschema@.try_advisory_lock(text, text)
    IS 'session lock, exclusive, if free now; true if taken (text key)';

CREATE OR REPLACE FUNCTION @extschema@.try_advisory_lock_shared(namespace text, key text)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_try_advisory_lock_shared';
COMMENT ON FUNCTION @extschema@.try_advisory_lock_shared(text, text)
    IS 'session lock, shared, if free now; true if taken (text key)';

CREATE OR REPLACE FUNCTION @extschema@.advisory_xact_lock(namespace text, key text)
RETURNS void
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_advisory_xact_lock';
COMMENT ON FUNCTION @extschema@.advisory_xact_lock(text, text)
    IS 'transaction lock, exclusive; waits; released at commit or rollback (text key)';

CREATE OR REPLACE FUNCTION @extschema@.advisory_xact_lock_shared(namespace text, key text)
RETURNS void
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_advisory_xact_lock_shared';
COMMENT ON FUNCTION @extschema@.advisory_xact_lock_shared(text, text)
    IS 'transaction lock, shared; waits; released at commit or rollback (text key)';

CREATE OR REPLACE FUNCTION @extschema@.try_advisory_xact_lock(namespace text, key text)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_try_advisory_xact_lock';
COMMENT ON FUNCTION @extschema@.try_advisory_xact_lock(text, text)
    IS 'transaction lock, exclusive, if free now; true if taken (text key)';

CREATE OR REPLACE FUNCTION @extschema@.try_advisory_xact_lock_shared(namespace text, key text)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_try_advisory_xact_lock_shared';
COMMENT ON FUNCTION @extschema@.try_advisory_xact_lock_shared(text, text)
    IS 'transaction lock, shared, if free now; true if taken (text key)';

CREATE OR REPLACE FUNCTION @extschema@.advisory_unlock(namespace text, key text)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_advisory_unlock';
COMMENT ON FUNCTION @extschema@.advisory_unlock(text, text)
    IS 'release one hold of an exclusive session lock; false (and a warning) if not held (text key)';

CREATE OR REPLACE FUNCTION @extschema@.advisory_unlock_shared(namespace text, key text)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_advisory_unlock_shared';
COMMENT ON FUNCTION @extschema@.advisory_unlock_shared(text, text)
    IS 'release one hold of a shared session lock; false (and a warning) if not held (text key)';

CREATE OR REPLACE FUNCTION @extschema@.advisory_lock_int(namespace text, key integer)
RETURNS void
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_advisory_lock_int';
COMMENT ON FUNCTION @extschema@.advisory_lock_int(text, integer)
    IS 'session lock, exclusive; waits; taken again, it must be unlocked again (integer key)';

CREATE OR REPLACE FUNCTION @extschema@.advisory_lock_shared_int(namespace text, key integer)
RETURNS void
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_advisory_lock_shared_int';
COMMENT ON FUNCTION @extschema@.advisory_lock_shared_int(text, integer)
    IS 'session lock, shared; waits (integer key)';

CREATE OR REPLACE FUNCTION @extschema@.try_advisory_lock_int(namespace text, key integer)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_try_advisory_lock_int';
COMMENT ON FUNCTION @extschema@.try_advisory_lock_int(text, integer)
    IS 'session lock, exclusive, if free now; true if taken (integer key)';

CREATE OR REPLACE FUNCTION @extschema@.try_advisory_lock_shared_int(namespace text, key integer)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_try_advisory_lock_shared_int';
COMMENT ON FUNCTION @extschema@.try_advisory_lock_shared_int(text, integer)
    IS 'session lock, shared, if free now; true if taken (integer key)';

CREATE OR REPLACE FUNCTION @extschema@.advisory_xact_lock_int(namespace text, key integer)
RETURNS void
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_advisory_xact_lock_int';
COMMENT ON FUNCTION @extschema@.advisory_xact_lock_int(text, integer)
    IS 'transaction lock, exclusive; waits; released at commit or rollback (integer key)';

CREATE OR REPLACE FUNCTION @extschema@.advisory_xact_lock_shared_int(namespace text, key integer)
RETURNS void
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_advisory_xact_lock_shared_int';
COMMENT ON FUNCTION @extschema@.advisory_xact_lock_shared_int(text, integer)
    IS 'transaction lock, shared; waits; released at commit or rollback (integer key)';

CREATE OR REPLACE FUNCTION @extschema@.try_advisory_xact_lock_int(namespace text, key integer)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_try_advisory_xact_lock_int';
COMMENT ON FUNCTION @extschema@.try_advisory_xact_lock_int(text, integer)
    IS 'transaction lock, exclusive, if free now; true if taken (integer key)';

CREATE OR REPLACE FUNCTION @extschema@.try_advisory_xact_lock_shared_int(namespace text, key integer)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_try_advisory_xact_lock_shared_int';
COMMENT ON FUNCTION @extschema@.try_advisory_xact_lock_shared_int(text, integer)
    IS 'transaction lock, shared, if free now; true if taken (integer key)';

CREATE OR REPLACE FUNCTION @extschema@.advisory_unlock_int(namespace text, key integer)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_advisory_unlock_int';
COMMENT ON FUNCTION @extschema@.advisory_unlock_int(text, integer)
    IS 'release one hold of an exclusive session lock; false (and a warning) if not held (integer key)';

CREATE OR REPLACE FUNCTION @extschema@.advisory_unlock_shared_int(namespace text, key integer)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_advisory_unlock_shared_int';
COMMENT ON FUNCTION @extschema@.advisory_unlock_shared_int(text, integer)
    IS 'release one hold of a shared session lock; false (and a warning) if not held (integer key)';

CREATE OR REPLACE FUNCTION @extschema@.advisory_unlock_all(namespace text)
RETURNS integer
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_advisory_unlock_all';
COMMENT ON FUNCTION @extschema@.advisory_unlock_all(text)
    IS 'release every session lock this session took in the namespace through these functions; returns the holds released';

-- pg_locks decoded: one row per advisory lock held or awaited in a namespace of
-- this database. key is the registered key, claimqueue's own lock (reaper,
-- queue name) or the int4 key (hash and integer namespaces) as text.
CREATE OR REPLACE VIEW @extschema@.advisory_locks AS
SELECT n.name AS namespace,
       n.namespace_id,
       n.key_mode,
       CASE n.key_mode
           WHEN 'registered' THEN k.key
           WHEN 'internal' THEN CASE WHEN l.key_id = 0 THEN 'reaper'
                                     WHEN q.name IS NOT NULL THEN 'queue ' || q.name
                                     ELSE 'queue_id ' || l.key_id::text END
           ELSE l.key_id::text
       END AS key,
       l.key_id,
       l.mode,
       l.granted,
       l.pid,
       a.application_name,
       l.waitstart
FROM (SELECT pl.*,
             (CASE WHEN pl.objid::pg_catalog.int8 > 2147483647
                   THEN pl.objid::pg_catalog.int8 - 4294967296
                   ELSE pl.objid::pg_catalog.int8 END)::pg_catalog.int4 AS key_id
      FROM pg_catalog.pg_locks pl
      WHERE pl.locktype = 'advisory' AND pl.objsubid = 2
        AND pl.database = (SELECT d.oid FROM pg_catalog.pg_database d
                           WHERE d.datname = pg_catalog.current_database())) l
JOIN claimqueue.lock_namespaces n ON n.namespace_id::pg_catalog.int8 = l.classid::pg_catalog.int8
LEFT JOIN claimqueue.lock_keys k
       ON n.key_mode = 'registered' AND k.namespace_id = n.namespace_id AND k.key_id = l.key_id
LEFT JOIN claimqueue.queues q ON n.key_mode = 'internal' AND q.queue_id = l.key_id
LEFT JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid;
COMMENT ON VIEW @extschema@.advisory_locks
    IS 'advisory locks in lock namespaces, decoded from pg_locks: namespace, key, mode, granted, holder';

REVOKE ALL ON FUNCTION
    @extschema@.lock_namespace(text, text),
    @extschema@.register_lock_key(text, text),
    @extschema@.lock_key_id(text, text),
    @extschema@.lock_key_hash(text),
    @extschema@.advisory_lock(text, text),
    @extschema@.advisory_lock_shared(text, text),
    @extschema@.try_advisory_lock(text, text),
    @extschema@.try_advisory_lock_shared(text, text),
    @extschema@.advisory_xact_lock(text, text),
    @extschema@.advisory_xact_lock_shared(text, text),
    @extschema@.try_advisory_xact_lock(text, text),
    @extschema@.try_advisory_xact_lock_shared(text, text),
    @extschema@.advisory_unlock(text, text),
    @extschema@.advisory_unlock_shared(text, text),
    @extschema@.advisory_lock_int(text, integer),
    @extschema@.advisory_lock_shared_int(text, integer),
    @extschema@.try_advisory_lock_int(text, integer),
    @extschema@.try_advisory_lock_shared_int(text, integer),
    @extschema@.advisory_xact_lock_int(text, integer),
    @extschema@.advisory_xact_lock_shared_int(text, integer),
    @extschema@.try_advisory_xact_lock_int(text, integer),
    @extschema@.try_advisory_xact_lock_shared_int(text, integer),
    @extschema@.advisory_unlock_int(text, integer),
    @extschema@.advisory_unlock_shared_int(text, integer),
    @extschema@.advisory_unlock_all(text)
FROM PUBLIC;
REVOKE ALL ON @extschema@.advisory_locks FROM PUBLIC;

-- ---- src/sql/api/waiting.sql ----

-- Waiting dequeue (issue 7): dequeue_wait() sleeps in the server until a job
-- may be claimable, then claims; next_due() says when a queue's next ready job
-- is due. Waiting needs the library in shared_preload_libraries.
-- src/wait/README.md describes the wake-ups.

CREATE OR REPLACE FUNCTION @extschema@.next_due(queue text)
RETURNS timestamptz
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_next_due';
COMMENT ON FUNCTION @extschema@.next_due(text)
    IS 'when the queue''s next ready job is due (its earliest run_at; in the past if one is claimable now), NULL if it has no ready job';

-- A procedure, neither SECURITY DEFINER nor with SET search_path: PostgreSQL
-- lets a procedure COMMIT only without both, and dequeue_wait commits before
-- it sleeps so that a waiting worker holds back no snapshot (no xmin). It
-- reads no table itself: it calls dequeue() and next_due() (schema-qualified;
-- they check the caller's EXECUTE and queue grants), so a caller needs EXECUTE
-- on those two as well: claimqueue_consumer has all three.
CREATE OR REPLACE PROCEDURE @extschema@.dequeue_wait(
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

-- Request/response and fan-in (0.4.0): waits until every job in ids is
-- finished (done, failed or cancelled) or timeout runs out, woken by the
-- commit that finishes each job; jobs: job_status(ids) as a jsonb array. A
-- procedure for the same reason as dequeue_wait: it commits before it sleeps.
-- It reads no table itself: it calls job_status() (schema-qualified), which
-- checks the caller's EXECUTE and which queues it may see.
CREATE OR REPLACE PROCEDURE @extschema@.await_jobs(
    ids     bigint[],
    timeout interval DEFAULT '30 seconds',
    INOUT jobs jsonb DEFAULT NULL)
LANGUAGE c
AS 'MODULE_PATHNAME', 'cq_await_jobs';
COMMENT ON PROCEDURE @extschema@.await_jobs(bigint[], interval, jsonb)
    IS 'wait until every job in ids is done, failed or cancelled (woken by the finishing commits) or timeout runs out; jobs: job_status(ids) as a jsonb array';

-- This database's waiting workers, one row each (tests and monitoring):
-- deadline and timer_at on claimqueue's clock; wakeups counts the times a
-- commit, a timer hand-over or another waiter woke it; queue is NULL for a
-- session in await_jobs().
CREATE OR REPLACE FUNCTION claimqueue.waiters(
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
    @extschema@.dequeue_wait(text, text, integer, interval, interval, jsonb),
    @extschema@.await_jobs(bigint[], interval, jsonb)
FROM PUBLIC;

-- ---- src/sql/api/cursors.sql ----

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

-- ---- src/sql/api/metrics.sql ----

-- Queue metrics without scans (0.4.0): per-queue totals and gauges kept in
-- shared memory (src/metrics), counted by each transaction and applied when
-- it commits. The view reads no job row: the totals and gauges come from
-- shared memory, the oldest ready job's age from one probe per lane at its
-- claim cursor. Each caller sees only the queues it holds a privilege on.

CREATE OR REPLACE FUNCTION claimqueue.queue_metrics_rows(
    OUT queue_id           integer,
    OUT enqueued           bigint,
    OUT claimed            bigint,
    OUT completed          bigint,
    OUT failed             bigint,
    OUT reaped             bigint,
    OUT retried            bigint,
    OUT cancelled          bigint,
    OUT ready_or_scheduled bigint,
    OUT running            bigint,
    OUT oldest_ready_age   interval,
    OUT counters_since     timestamptz,
    OUT gauges_since       timestamptz)
RETURNS SETOF record
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_queue_metrics';
COMMENT ON FUNCTION claimqueue.queue_metrics_rows()
    IS 'internal: the metrics of the queues the caller holds a privilege on, behind queue_metrics';

CREATE OR REPLACE VIEW @extschema@.queue_metrics AS
SELECT q.name AS queue, m.enqueued, m.claimed, m.completed, m.failed, m.reaped, m.retried,
       m.cancelled, m.ready_or_scheduled, m.running, m.oldest_ready_age, m.counters_since,
       m.gauges_since
FROM claimqueue.queue_metrics_rows() m
JOIN claimqueue.queues q ON q.queue_id = m.queue_id;
COMMENT ON VIEW @extschema@.queue_metrics
    IS 'per-queue totals since counters_since and gauges (ready, scheduled included; running) since gauges_since, from shared memory; only queues the caller holds a privilege on';

-- Every queue's gauges counted again from the table, now (superuser). The
-- reaper counts them by itself once after a start and for each new queue.
CREATE OR REPLACE FUNCTION claimqueue.recount_queue_metrics() RETURNS bigint
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_recount_queue_metrics';
COMMENT ON FUNCTION claimqueue.recount_queue_metrics()
    IS 'counts every queue''s ready and running jobs again for queue_metrics; returns how many queues';

REVOKE ALL ON FUNCTION
    claimqueue.queue_metrics_rows(),
    claimqueue.recount_queue_metrics()
FROM PUBLIC;
REVOKE ALL ON @extschema@.queue_metrics FROM PUBLIC;

-- ---- src/sql/api/schedules.sql ----

-- Recurring jobs (0.4.0): schedule(), unschedule(), run_schedules() (the
-- reaper's schedule pass by hand) and the view schedules. The table
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

CREATE OR REPLACE FUNCTION @extschema@.run_schedules(queue text DEFAULT NULL)
RETURNS bigint
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_run_schedules';
COMMENT ON FUNCTION @extschema@.run_schedules(text)
    IS 'the reaper''s schedule pass by hand: enqueues the jobs of due slots and advances each schedule; returns the jobs enqueued';

CREATE OR REPLACE VIEW @extschema@.schedules AS
SELECT s.name, s.cron, s.timezone, q.name AS queue, s.next_run_at, s.last_run_at,
       s.last_job_id, s.enabled, s.catch_up, s.priority, s.max_attempts, s.payload
FROM claimqueue.schedules s
JOIN claimqueue.queues q ON q.queue_id = s.queue_id
WHERE q.queue_id IN (SELECT claimqueue.visible_queues());
COMMENT ON VIEW @extschema@.schedules
    IS 'recurring jobs and their next and latest runs; only queues the caller holds a privilege on';

REVOKE ALL ON FUNCTION
    @extschema@.schedule(text, text, text, jsonb, text, integer, integer, text, boolean),
    @extschema@.unschedule(text),
    @extschema@.run_schedules(text)
FROM PUBLIC;
REVOKE ALL ON @extschema@.schedules FROM PUBLIC;

-- ---- src/sql/api/roles.sql ----

-- Roles (0.2.0), last in every script: what each may call. Three NOLOGIN
-- roles, created unless they exist (roles belong to the cluster: DROP
-- EXTENSION leaves them, and pg_dump does not dump them; pg_dumpall does):
--   claimqueue_producer  EXECUTE on enqueue, enqueue_batch, job_status,
--                        await_jobs
--   claimqueue_consumer  EXECUTE on dequeue, complete, complete_batch,
--                        complete_and_dequeue, fail, heartbeat, next_due,
--                        dequeue_wait, job_status, await_jobs
--   claimqueue_admin     EXECUTE on all of these and the administration
--                        functions (schedule, unschedule, run_schedules
--                        among them); every queue without a grant
-- All three may read the views. Per-queue grants (grant_queue, api/access.sql)
-- come on top: a producer or consumer acts only on the queues it holds the
-- privilege for. Every function and view has had EXECUTE or SELECT revoked
-- from PUBLIC in its own file, before these grants.
DO $roles$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'claimqueue_producer') THEN
        CREATE ROLE claimqueue_producer NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'claimqueue_consumer') THEN
        CREATE ROLE claimqueue_consumer NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'claimqueue_admin') THEN
        CREATE ROLE claimqueue_admin NOLOGIN;
    END IF;
END
$roles$;

GRANT EXECUTE ON FUNCTION
    @extschema@.enqueue(text, jsonb, timestamptz, integer, integer, text),
    @extschema@.enqueue_batch(text, jsonb[], timestamptz, integer, integer)
TO claimqueue_producer, claimqueue_admin;
GRANT EXECUTE ON FUNCTION
    @extschema@.dequeue(text, text, integer, interval),
    @extschema@.complete(bigint, integer, jsonb),
    @extschema@.complete_batch(bigint[], integer[], jsonb[]),
    @extschema@.fail(bigint, integer, text, interval),
    @extschema@.heartbeat(bigint, integer, interval)
TO claimqueue_consumer, claimqueue_admin;
GRANT EXECUTE ON FUNCTION
    @extschema@.create_queue(text, interval, integer, interval, interval, interval, boolean, interval),
    @extschema@.alter_queue(text, interval, integer, interval, interval, interval, interval),
    @extschema@.drop_queue(text, boolean),
    @extschema@.pause_queue(text),
    @extschema@.resume_queue(text),
    @extschema@.retry_jobs(text, text[], timestamptz, integer),
    @extschema@.cancel_jobs(text, text[], timestamptz, integer),
    @extschema@.retry(bigint, timestamptz),
    @extschema@.cancel(bigint),
    @extschema@.reap(text),
    @extschema@.purge(text),
    @extschema@.grant_queue(text, text, text),
    @extschema@.revoke_queue(text, text, text)
TO claimqueue_admin;
GRANT SELECT ON @extschema@.queue_stats, @extschema@.queue_jobs, @extschema@.queue_settings,
    @extschema@.queue_privileges, @extschema@.reaper_stats
TO claimqueue_producer, claimqueue_consumer, claimqueue_admin;
GRANT EXECUTE ON FUNCTION
    @extschema@.next_due(text),
    @extschema@.complete_and_dequeue(bigint, integer, text, text, integer, interval, jsonb)
TO claimqueue_consumer, claimqueue_admin;
GRANT EXECUTE ON PROCEDURE @extschema@.dequeue_wait(text, text, integer, interval, interval, jsonb)
TO claimqueue_consumer, claimqueue_admin;
-- Whoever may see a queue may read its jobs' results and wait for them: a
-- producer awaits the jobs it enqueued.
GRANT EXECUTE ON FUNCTION @extschema@.job_status(bigint[])
TO claimqueue_producer, claimqueue_consumer, claimqueue_admin;
GRANT EXECUTE ON PROCEDURE @extschema@.await_jobs(bigint[], interval, jsonb)
TO claimqueue_producer, claimqueue_consumer, claimqueue_admin;
GRANT SELECT ON @extschema@.claim_cursor_usage
TO claimqueue_producer, claimqueue_consumer, claimqueue_admin;
GRANT EXECUTE ON FUNCTION
    @extschema@.schedule(text, text, text, jsonb, text, integer, integer, text, boolean),
    @extschema@.unschedule(text),
    @extschema@.run_schedules(text)
TO claimqueue_admin;
GRANT SELECT ON @extschema@.schedules
TO claimqueue_producer, claimqueue_consumer, claimqueue_admin;
-- A view calls its functions as its reader: the roles that may read these
-- views may call the functions behind them. queue_metrics_rows() shows each
-- caller only the queues it holds a privilege on.
GRANT SELECT ON @extschema@.queue_metrics
TO claimqueue_producer, claimqueue_consumer, claimqueue_admin;
GRANT EXECUTE ON FUNCTION
    claimqueue.queue_metrics_rows(),
    claimqueue.reaper_status(),
    claimqueue.claim_cursor_table()
TO claimqueue_producer, claimqueue_consumer, claimqueue_admin;

-- ---- src/sql/install_end.sql ----

-- Last in the install script only: CREATE EXTENSION warns, with a hint, when
-- the library is not in shared_preload_libraries (no reaper, no claim
-- cursors). An update does not warn.
SELECT claimqueue.check_preload();

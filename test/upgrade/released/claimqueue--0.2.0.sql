-- claimqueue 0.2.0: queue tables (schema claimqueue) and the SQL API (the extension's schema).
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
-- SQL API. Every function pins search_path and is a SECURITY INVOKER C
-- function that checks the caller's privileges on the queue (queue_grants,
-- below), then runs as the extension's owner: the tables are reachable only
-- through these functions and the views below. EXECUTE is revoked from PUBLIC
-- and granted to the roles claimqueue_producer, _consumer and _admin.
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
LANGUAGE c VOLATILE SECURITY INVOKER
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
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_alter_queue';
COMMENT ON FUNCTION @extschema@.alter_queue(text, interval, integer, interval, interval, interval)
    IS 'change a queue''s defaults; NULL leaves a setting as it is';

CREATE FUNCTION @extschema@.drop_queue(name text, force boolean DEFAULT false)
RETURNS bigint
LANGUAGE c VOLATILE SECURITY INVOKER
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
LANGUAGE c VOLATILE SECURITY INVOKER
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
LANGUAGE c VOLATILE SECURITY INVOKER ROWS 100
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
LANGUAGE c VOLATILE SECURITY INVOKER ROWS 1
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_dequeue';
COMMENT ON FUNCTION @extschema@.dequeue(text, text, integer, interval)
    IS 'claim up to batch ready jobs (priority, then FIFO) with FOR UPDATE SKIP LOCKED; attempt is the fencing token';

CREATE FUNCTION @extschema@.complete(id bigint, attempt integer)
RETURNS void
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_complete';
COMMENT ON FUNCTION @extschema@.complete(bigint, integer)
    IS 'mark a running job done; raises QC003 (stale_claim) unless it is still running under this attempt';

-- Named apart from complete(): an overload would make complete($1, $2) with
-- untyped parameters (node-postgres, pgbench -M prepared) ambiguous.
CREATE FUNCTION @extschema@.complete_batch(ids bigint[], attempts integer[])
RETURNS void
LANGUAGE c VOLATILE SECURITY INVOKER
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
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_fail';
COMMENT ON FUNCTION @extschema@.fail(bigint, integer, text, interval)
    IS 'record a failed attempt: back to ready after a backoff (or retry_in), or failed when attempts are used up; returns the new state';

CREATE FUNCTION @extschema@.heartbeat(id bigint, attempt integer, extend interval DEFAULT NULL)
RETURNS timestamptz
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_heartbeat';
COMMENT ON FUNCTION @extschema@.heartbeat(bigint, integer, interval)
    IS 'extend the lease of a running job (by the queue''s lease, or extend); returns the new expiry';

CREATE FUNCTION @extschema@.retry(id bigint, run_at timestamptz DEFAULT NULL)
RETURNS void
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_retry';
COMMENT ON FUNCTION @extschema@.retry(bigint, timestamptz)
    IS 'put a failed or cancelled job back to ready with one more attempt';

CREATE FUNCTION @extschema@.cancel(id bigint)
RETURNS void
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_cancel';
COMMENT ON FUNCTION @extschema@.cancel(bigint)
    IS 'cancel a ready or running job; a running job''s worker then gets QC003 on complete/fail';

CREATE FUNCTION @extschema@.reap(queue text DEFAULT NULL)
RETURNS bigint
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_reap';
COMMENT ON FUNCTION @extschema@.reap(text)
    IS 'one pass by hand: running jobs whose lease expired go back to ready (with backoff) or to failed; returns how many';

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
-- Every change tells all sessions to forget the grants they remembered
-- (src/api/access.cpp).
CREATE FUNCTION claimqueue.queue_grants_changed() RETURNS trigger
    LANGUAGE c
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'cq_queue_grants_changed';
REVOKE ALL ON FUNCTION claimqueue.queue_grants_changed() FROM PUBLIC;
CREATE TRIGGER queue_grants_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON claimqueue.queue_grants
    FOR EACH STATEMENT EXECUTE FUNCTION claimqueue.queue_grants_changed();

-- The queues the caller holds any privilege on (all for an administrator):
-- the views show only these. Callable by everyone: it tells a role only
-- about its own access.
CREATE FUNCTION claimqueue.visible_queues() RETURNS SETOF integer
    LANGUAGE c STABLE ROWS 10
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'cq_visible_queues';

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
WHERE q.queue_id IN (SELECT claimqueue.visible_queues())
GROUP BY q.queue_id, q.name;
COMMENT ON VIEW @extschema@.queue_stats IS 'per-queue job counts by state, read without SKIP LOCKED; only queues the caller holds a privilege on';

CREATE VIEW @extschema@.queue_jobs AS
SELECT j.id, q.name AS queue, j.state, j.priority, j.attempt, j.max_attempts,
       j.run_at, j.created_at, j.started_at, j.finished_at, j.lease_expires_at,
       j.worker, j.dedup_key, j.last_error, j.payload
FROM claimqueue.jobs j
JOIN claimqueue.queues q ON q.queue_id = j.queue_id
WHERE q.queue_id IN (SELECT claimqueue.visible_queues());
COMMENT ON VIEW @extschema@.queue_jobs IS 'every job with its queue name, timestamps, worker and last error; only queues the caller holds a privilege on';

CREATE VIEW @extschema@.queue_settings AS
SELECT name AS queue, lease, max_attempts, backoff_base, backoff_cap, retention, created_at
FROM claimqueue.queues
WHERE queue_id IN (SELECT claimqueue.visible_queues());
COMMENT ON VIEW @extschema@.queue_settings IS 'each queue''s defaults; only queues the caller holds a privilege on';

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
LANGUAGE c VOLATILE SECURITY INVOKER
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
-- Advisory-lock namespaces (issue 4)
--
-- A lock (namespace, key) is PostgreSQL's two-int4 advisory lock
-- (namespace_id, key_id), the same lock as pg_advisory_lock(int4, int4):
-- pg_locks shows it with classid = namespace_id, objid = key_id (as oid) and
-- objsubid = 2, apart from single-bigint locks (objsubid = 1). A namespace's
-- key mode is fixed when it is registered: 'registered' keys get ids from
-- lock_keys, 'hash' keys are the 32-bit FNV-1a of their UTF-8 bytes, 'integer'
-- keys are the int4 given. Namespace 1 is claimqueue's own ('internal': key 0
-- is the reaper, key n > 0 the administration lock of queue_id n).
-- ---------------------------------------------------------------------------

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

CREATE FUNCTION @extschema@.lock_namespace(name text, key_mode text DEFAULT NULL)
RETURNS integer
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_lock_namespace';
COMMENT ON FUNCTION @extschema@.lock_namespace(text, text)
    IS 'register a lock namespace (key mode registered, hash (the default) or integer) or return the id of an existing one';

CREATE FUNCTION @extschema@.register_lock_key(namespace text, key text)
RETURNS integer
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_register_lock_key';
COMMENT ON FUNCTION @extschema@.register_lock_key(text, text)
    IS 'register a key in a registered-mode namespace, or return its id; ids never collide';

CREATE FUNCTION @extschema@.lock_key_id(namespace text, key text)
RETURNS integer
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_lock_key_id';
COMMENT ON FUNCTION @extschema@.lock_key_id(text, text)
    IS 'the second int4 key a text key locks in its namespace (registered id or hash); registers nothing';

CREATE FUNCTION @extschema@.lock_key_hash(key text)
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

CREATE FUNCTION @extschema@.advisory_lock(namespace text, key text)
RETURNS void
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_advisory_lock';
COMMENT ON FUNCTION @extschema@.advisory_lock(text, text)
    IS 'session lock, exclusive; waits; taken again, it must be unlocked again (text key)';

CREATE FUNCTION @extschema@.advisory_lock_shared(namespace text, key text)
RETURNS void
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_advisory_lock_shared';
COMMENT ON FUNCTION @extschema@.advisory_lock_shared(text, text)
    IS 'session lock, shared; waits (text key)';

CREATE FUNCTION @extschema@.try_advisory_lock(namespace text, key text)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_try_advisory_lock';
COMMENT ON FUNCTION @extschema@.try_advisory_lock(text, text)
    IS 'session lock, exclusive, if free now; true if taken (text key)';

CREATE FUNCTION @extschema@.try_advisory_lock_shared(namespace text, key text)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_try_advisory_lock_shared';
COMMENT ON FUNCTION @extschema@.try_advisory_lock_shared(text, text)
    IS 'session lock, shared, if free now; true if taken (text key)';

CREATE FUNCTION @extschema@.advisory_xact_lock(namespace text, key text)
RETURNS void
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_advisory_xact_lock';
COMMENT ON FUNCTION @extschema@.advisory_xact_lock(text, text)
    IS 'transaction lock, exclusive; waits; released at commit or rollback (text key)';

CREATE FUNCTION @extschema@.advisory_xact_lock_shared(namespace text, key text)
RETURNS void
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_advisory_xact_lock_shared';
COMMENT ON FUNCTION @extschema@.advisory_xact_lock_shared(text, text)
    IS 'transaction lock, shared; waits; released at commit or rollback (text key)';

CREATE FUNCTION @extschema@.try_advisory_xact_lock(namespace text, key text)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_try_advisory_xact_lock';
COMMENT ON FUNCTION @extschema@.try_advisory_xact_lock(text, text)
    IS 'transaction lock, exclusive, if free now; true if taken (text key)';

CREATE FUNCTION @extschema@.try_advisory_xact_lock_shared(namespace text, key text)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_try_advisory_xact_lock_shared';
COMMENT ON FUNCTION @extschema@.try_advisory_xact_lock_shared(text, text)
    IS 'transaction lock, shared, if free now; true if taken (text key)';

CREATE FUNCTION @extschema@.advisory_unlock(namespace text, key text)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_advisory_unlock';
COMMENT ON FUNCTION @extschema@.advisory_unlock(text, text)
    IS 'release one hold of an exclusive session lock; false (and a warning) if not held (text key)';

CREATE FUNCTION @extschema@.advisory_unlock_shared(namespace text, key text)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_advisory_unlock_shared';
COMMENT ON FUNCTION @extschema@.advisory_unlock_shared(text, text)
    IS 'release one hold of a shared session lock; false (and a warning) if not held (text key)';

CREATE FUNCTION @extschema@.advisory_lock_int(namespace text, key integer)
RETURNS void
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_advisory_lock_int';
COMMENT ON FUNCTION @extschema@.advisory_lock_int(text, integer)
    IS 'session lock, exclusive; waits; taken again, it must be unlocked again (integer key)';

CREATE FUNCTION @extschema@.advisory_lock_shared_int(namespace text, key integer)
RETURNS void
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_advisory_lock_shared_int';
COMMENT ON FUNCTION @extschema@.advisory_lock_shared_int(text, integer)
    IS 'session lock, shared; waits (integer key)';

CREATE FUNCTION @extschema@.try_advisory_lock_int(namespace text, key integer)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_try_advisory_lock_int';
COMMENT ON FUNCTION @extschema@.try_advisory_lock_int(text, integer)
    IS 'session lock, exclusive, if free now; true if taken (integer key)';

CREATE FUNCTION @extschema@.try_advisory_lock_shared_int(namespace text, key integer)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_try_advisory_lock_shared_int';
COMMENT ON FUNCTION @extschema@.try_advisory_lock_shared_int(text, integer)
    IS 'session lock, shared, if free now; true if taken (integer key)';

CREATE FUNCTION @extschema@.advisory_xact_lock_int(namespace text, key integer)
RETURNS void
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_advisory_xact_lock_int';
COMMENT ON FUNCTION @extschema@.advisory_xact_lock_int(text, integer)
    IS 'transaction lock, exclusive; waits; released at commit or rollback (integer key)';

CREATE FUNCTION @extschema@.advisory_xact_lock_shared_int(namespace text, key integer)
RETURNS void
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_advisory_xact_lock_shared_int';
COMMENT ON FUNCTION @extschema@.advisory_xact_lock_shared_int(text, integer)
    IS 'transaction lock, shared; waits; released at commit or rollback (integer key)';

CREATE FUNCTION @extschema@.try_advisory_xact_lock_int(namespace text, key integer)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_try_advisory_xact_lock_int';
COMMENT ON FUNCTION @extschema@.try_advisory_xact_lock_int(text, integer)
    IS 'transaction lock, exclusive, if free now; true if taken (integer key)';

CREATE FUNCTION @extschema@.try_advisory_xact_lock_shared_int(namespace text, key integer)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_try_advisory_xact_lock_shared_int';
COMMENT ON FUNCTION @extschema@.try_advisory_xact_lock_shared_int(text, integer)
    IS 'transaction lock, shared, if free now; true if taken (integer key)';

CREATE FUNCTION @extschema@.advisory_unlock_int(namespace text, key integer)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_advisory_unlock_int';
COMMENT ON FUNCTION @extschema@.advisory_unlock_int(text, integer)
    IS 'release one hold of an exclusive session lock; false (and a warning) if not held (integer key)';

CREATE FUNCTION @extschema@.advisory_unlock_shared_int(namespace text, key integer)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_advisory_unlock_shared_int';
COMMENT ON FUNCTION @extschema@.advisory_unlock_shared_int(text, integer)
    IS 'release one hold of a shared session lock; false (and a warning) if not held (integer key)';

CREATE FUNCTION @extschema@.advisory_unlock_all(namespace text)
RETURNS integer
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_advisory_unlock_all';
COMMENT ON FUNCTION @extschema@.advisory_unlock_all(text)
    IS 'release every session lock this session took in the namespace through these functions; returns the holds released';

-- pg_locks decoded: one row per advisory lock held or awaited in a namespace of
-- this database. key is the registered key, claimqueue's own lock (reaper,
-- queue name) or the int4 key (hash and integer namespaces) as text.
CREATE VIEW @extschema@.advisory_locks AS
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
-- End of advisory-lock namespaces (issue 4)

-- ---------------------------------------------------------------------------
-- Roles and queue privileges (0.2.0). Three NOLOGIN roles, created unless
-- they exist (roles belong to the cluster: DROP EXTENSION leaves them, and
-- pg_dump does not dump them; pg_dumpall does):
--   claimqueue_producer  EXECUTE on enqueue, enqueue_batch
--   claimqueue_consumer  EXECUTE on dequeue, complete, complete_batch, fail, heartbeat
--   claimqueue_admin     EXECUTE on everything; every queue without a grant
-- and per-queue grants (grant_queue) on top: a producer or consumer acts
-- only on the queues it holds the privilege for.
-- ---------------------------------------------------------------------------
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

CREATE FUNCTION @extschema@.grant_queue(queue text, privilege text, role text)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_grant_queue';
COMMENT ON FUNCTION @extschema@.grant_queue(text, text, text)
    IS 'let role (or public) produce into, consume from or manage queue; true if the grant is new';

CREATE FUNCTION @extschema@.revoke_queue(queue text, privilege text, role text)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_revoke_queue';
COMMENT ON FUNCTION @extschema@.revoke_queue(text, text, text)
    IS 'take back a grant_queue() grant; true if it existed';

CREATE VIEW @extschema@.queue_privileges AS
SELECT q.name AS queue, g.privilege,
       CASE WHEN g.grantee::pg_catalog.oid = 0 THEN 'PUBLIC' ELSE g.grantee::pg_catalog.text END AS grantee
FROM claimqueue.queue_grants g
JOIN claimqueue.queues q ON q.queue_id = g.queue_id
WHERE q.queue_id IN (SELECT claimqueue.visible_queues());
COMMENT ON VIEW @extschema@.queue_privileges
    IS 'per-queue grants, for the queues the caller holds a privilege on';

REVOKE ALL ON FUNCTION
    @extschema@.grant_queue(text, text, text),
    @extschema@.revoke_queue(text, text, text)
FROM PUBLIC;
REVOKE ALL ON @extschema@.queue_privileges FROM PUBLIC;
GRANT EXECUTE ON FUNCTION claimqueue.visible_queues() TO PUBLIC;

GRANT EXECUTE ON FUNCTION
    @extschema@.enqueue(text, jsonb, timestamptz, integer, integer, text),
    @extschema@.enqueue_batch(text, jsonb[], timestamptz, integer, integer)
TO claimqueue_producer, claimqueue_admin;
GRANT EXECUTE ON FUNCTION
    @extschema@.dequeue(text, text, integer, interval),
    @extschema@.complete(bigint, integer),
    @extschema@.complete_batch(bigint[], integer[]),
    @extschema@.fail(bigint, integer, text, interval),
    @extschema@.heartbeat(bigint, integer, interval)
TO claimqueue_consumer, claimqueue_admin;
GRANT EXECUTE ON FUNCTION
    @extschema@.create_queue(text, interval, integer, interval, interval, interval, boolean),
    @extschema@.alter_queue(text, interval, integer, interval, interval, interval),
    @extschema@.drop_queue(text, boolean),
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

-- ---------------------------------------------------------------------------
-- Waiting dequeue (issue 7): dequeue_wait() sleeps in the server until a job
-- may be claimable, then claims; next_due() says when a queue's next ready job
-- is due. Waiting needs the library in shared_preload_libraries.
-- src/wait/README.md describes the wake-ups.
-- ---------------------------------------------------------------------------

CREATE FUNCTION @extschema@.next_due(queue text)
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
GRANT EXECUTE ON FUNCTION @extschema@.next_due(text) TO claimqueue_consumer, claimqueue_admin;
GRANT EXECUTE ON PROCEDURE @extschema@.dequeue_wait(text, text, integer, interval, interval, jsonb)
    TO claimqueue_consumer, claimqueue_admin;

-- ---------------------------------------------------------------------------
-- Performance (issue 5)
-- ---------------------------------------------------------------------------

-- A worker that commits once per job: the previous job's completion and the
-- next claim in one call, so a loop of one statement per job in autocommit
-- costs one round trip and one durable commit.
CREATE FUNCTION @extschema@.complete_and_dequeue(
    id      bigint,
    attempt integer,
    queue   text,
    worker  text,
    batch   integer  DEFAULT 1,
    lease   interval DEFAULT NULL)
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
COMMENT ON FUNCTION @extschema@.complete_and_dequeue(bigint, integer, text, text, integer, interval)
    IS 'complete(id, attempt), then dequeue(queue, worker, batch, lease), in one call; a stale attempt raises QC003 and claims nothing; id and attempt NULL only claim';

REVOKE ALL ON FUNCTION
    @extschema@.complete_and_dequeue(bigint, integer, text, text, integer, interval)
FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    @extschema@.complete_and_dequeue(bigint, integer, text, text, integer, interval)
TO claimqueue_consumer, claimqueue_admin;
-- End of performance (issue 5)

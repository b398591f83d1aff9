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
-- Queue privileges (0.2.0): the API functions now run as the caller, check its
-- privileges on the queue, and only then act as the extension's owner.
-- ---------------------------------------------------------------------------
ALTER FUNCTION @extschema@.create_queue(text, interval, integer, interval, interval, interval, boolean) SECURITY INVOKER;
ALTER FUNCTION @extschema@.alter_queue(text, interval, integer, interval, interval, interval) SECURITY INVOKER;
ALTER FUNCTION @extschema@.drop_queue(text, boolean) SECURITY INVOKER;
ALTER FUNCTION @extschema@.enqueue(text, jsonb, timestamptz, integer, integer, text) SECURITY INVOKER;
ALTER FUNCTION @extschema@.enqueue_batch(text, jsonb[], timestamptz, integer, integer) SECURITY INVOKER;
ALTER FUNCTION @extschema@.dequeue(text, text, integer, interval) SECURITY INVOKER;
ALTER FUNCTION @extschema@.complete(bigint, integer) SECURITY INVOKER;
ALTER FUNCTION @extschema@.complete_batch(bigint[], integer[]) SECURITY INVOKER;
ALTER FUNCTION @extschema@.fail(bigint, integer, text, interval) SECURITY INVOKER;
ALTER FUNCTION @extschema@.heartbeat(bigint, integer, interval) SECURITY INVOKER;
ALTER FUNCTION @extschema@.retry(bigint, timestamptz) SECURITY INVOKER;
ALTER FUNCTION @extschema@.cancel(bigint) SECURITY INVOKER;
ALTER FUNCTION @extschema@.reap(text) SECURITY INVOKER;

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
           AS expired_leases
FROM claimqueue.queues q
LEFT JOIN claimqueue.jobs j ON j.queue_id = q.queue_id
WHERE q.queue_id IN (SELECT claimqueue.visible_queues())
GROUP BY q.queue_id, q.name;
COMMENT ON VIEW @extschema@.queue_stats IS 'per-queue job counts by state, read without SKIP LOCKED; only queues the caller holds a privilege on';

CREATE OR REPLACE VIEW @extschema@.queue_jobs AS
SELECT j.id, q.name AS queue, j.state, j.priority, j.attempt, j.max_attempts,
       j.run_at, j.created_at, j.started_at, j.finished_at, j.lease_expires_at,
       j.worker, j.dedup_key, j.last_error, j.payload
FROM claimqueue.jobs j
JOIN claimqueue.queues q ON q.queue_id = j.queue_id
WHERE q.queue_id IN (SELECT claimqueue.visible_queues());
COMMENT ON VIEW @extschema@.queue_jobs IS 'every job with its queue name, timestamps, worker and last error; only queues the caller holds a privilege on';

CREATE OR REPLACE VIEW @extschema@.queue_settings AS
SELECT name AS queue, lease, max_attempts, backoff_base, backoff_cap, retention, created_at
FROM claimqueue.queues
WHERE queue_id IN (SELECT claimqueue.visible_queues());
COMMENT ON VIEW @extschema@.queue_settings IS 'each queue''s defaults; only queues the caller holds a privilege on';

-- 0.1.0 had no per-queue privileges: whoever could EXECUTE a function could
-- use it on every queue. The queues that exist keep that (grants to PUBLIC;
-- revoke_queue(queue, privilege, 'public') closes them); new ones start closed.
INSERT INTO claimqueue.queue_grants (queue_id, grantee, privilege)
SELECT q.queue_id, 0::pg_catalog.oid::pg_catalog.regrole, p.privilege
FROM claimqueue.queues q
CROSS JOIN (VALUES ('produce'), ('consume'), ('manage')) AS p(privilege);

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

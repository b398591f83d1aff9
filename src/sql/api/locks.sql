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

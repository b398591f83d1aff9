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
-- that: create_queue() checks first) updates the existing row instead. On a
-- Citus shard of the table (claimqueue.distribute()) it does nothing: the
-- rows that reach a shard were merged, if at all, on the table itself.
CREATE OR REPLACE FUNCTION claimqueue.merge_default_queue() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_TABLE_NAME <> 'queues' THEN
        RETURN NEW;
    END IF;
    UPDATE claimqueue.queues
       SET queue_id = NEW.queue_id, lease = NEW.lease, max_attempts = NEW.max_attempts,
           backoff_base = NEW.backoff_base, backoff_cap = NEW.backoff_cap,
           retention = NEW.retention, created_at = NEW.created_at, paused = NEW.paused,
           failed_retention = NEW.failed_retention, max_running = NEW.max_running,
           max_running_per_key = NEW.max_running_per_key, fair = NEW.fair
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
    failed_retention interval DEFAULT NULL,
    max_running   integer  DEFAULT NULL,
    max_running_per_key integer DEFAULT NULL,
    fair          boolean  DEFAULT false)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_create_queue';
COMMENT ON FUNCTION @extschema@.create_queue(text, interval, integer, interval, interval, interval, boolean, interval, integer, integer, boolean)
    IS 'create a queue with its defaults; true if created, false if it existed and if_not_exists; failed_retention NULL keeps failed jobs as long as retention; max_running and max_running_per_key NULL: no limit; fair: claims rotate across concurrency keys';

CREATE OR REPLACE FUNCTION @extschema@.alter_queue(
    name          text,
    lease         interval DEFAULT NULL,
    max_attempts  integer  DEFAULT NULL,
    backoff_base  interval DEFAULT NULL,
    backoff_cap   interval DEFAULT NULL,
    retention     interval DEFAULT NULL,
    failed_retention interval DEFAULT NULL,
    max_running   integer  DEFAULT NULL,
    max_running_per_key integer DEFAULT NULL,
    fair          boolean  DEFAULT NULL)
RETURNS void
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_alter_queue';
COMMENT ON FUNCTION @extschema@.alter_queue(text, interval, integer, interval, interval, interval, interval, integer, integer, boolean)
    IS 'change a queue''s defaults; NULL leaves a setting as it is (max_running and max_running_per_key: 0 removes the limit; fair: claims rotate across concurrency keys, or not)';

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
    @extschema@.create_queue(text, interval, integer, interval, interval, interval, boolean, interval, integer, integer, boolean),
    @extschema@.alter_queue(text, interval, integer, interval, interval, interval, interval, integer, integer, boolean),
    @extschema@.drop_queue(text, boolean),
    @extschema@.pause_queue(text),
    @extschema@.resume_queue(text),
    claimqueue.check_preload(),
    claimqueue.merge_default_queue()
FROM PUBLIC;

-- The distributed mode on a Citus cluster (docs/citus.md): distribute()
-- spreads the jobs over the workers by queue and makes the queue definitions
-- reference tables, on the coordinator, in one transaction.

-- claimqueue.distribute(): the queue definitions (queues, queue_grants,
-- schedules, queue_samples) become reference tables and claimqueue.jobs a
-- table distributed by the queue's name (a column queue it adds), its primary
-- key (id, queue); the calls that name a queue are delegated to the node
-- holding its shard (create_distributed_function). Job ids stay
-- unique across the cluster: each node draws them from its own range of
-- 2^48, by its Citus group id. Refused without Citus, off the coordinator and
-- while jobs run (their claims would be fenced against rows that moved). A
-- second call only gives a worker added since its range of job ids.
-- Superusers only. Queue grants (by role oid) are not checked right on the
-- workers yet: it runs only with preview => true.
CREATE OR REPLACE FUNCTION claimqueue.distribute(preview boolean DEFAULT false) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    already boolean;
    running bigint;
    t regclass;
    api_schema name;
    fn text;
    failed text;
    fk_tables text[];
    fk_names text[];
    fk_defs text[];
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'citus') THEN
        RAISE EXCEPTION 'claimqueue.distribute() needs the citus extension in this database'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Install Citus on every node, run CREATE EXTENSION citus and add the workers (docs/citus.md).';
    END IF;
    IF NOT pg_catalog.citus_is_coordinator() THEN
        RAISE EXCEPTION 'claimqueue.distribute() must run on the coordinator, not on node %',
                        pg_catalog.current_setting('port')
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Connect to the Citus coordinator and call it there.';
    END IF;
    IF NOT preview THEN
        RAISE EXCEPTION 'claimqueue.distribute() is a preview: queue grants are not checked right on the workers yet'
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'Grants are kept by role oid, which differs from node to node; '
                           'and there is no way back but a dump and restore.',
                  HINT = 'To try the distributed mode on a cluster that serves no work, call claimqueue.distribute(preview => true).';
    END IF;
    already := EXISTS (SELECT 1 FROM pg_catalog.pg_dist_partition
                       WHERE logicalrelid = 'claimqueue.jobs'::pg_catalog.regclass);
    IF NOT already THEN
        -- No claim may start or end while the rows move.
        LOCK TABLE claimqueue.queues, claimqueue.jobs IN EXCLUSIVE MODE;
        SELECT pg_catalog.count(*) INTO running FROM claimqueue.jobs WHERE state = 'running';
    END IF;
    IF running > 0 THEN
        RAISE EXCEPTION 'claimqueue.distribute() cannot run while jobs are running (% running)', running
            USING ERRCODE = 'object_in_use',
                  DETAIL = 'A running job''s claim would be fenced against a row that moved.',
                  HINT = 'Stop the workers, let them complete or fail their jobs (or let the reaper take back the leases), then call it again.';
    END IF;

    -- Every node draws job ids from its own range: group g from g * 2^48 + 1
    -- (the coordinator is group 0, and keeps the ids it made).
    SELECT pg_catalog.string_agg(r.nodename || ':' || r.nodeport || ': ' || r.result, '; ')
      INTO failed
      FROM pg_catalog.run_command_on_workers($cmd$
        DO $do$
        DECLARE g bigint := (SELECT groupid FROM pg_catalog.pg_dist_local_group);
        BEGIN
            SET LOCAL citus.enable_ddl_propagation = off;
            IF (SELECT min_value FROM pg_catalog.pg_sequences
                WHERE schemaname = 'claimqueue' AND sequencename = 'jobs_id_seq') <> (g << 48) + 1 THEN
                EXECUTE pg_catalog.format(
                    'ALTER SEQUENCE claimqueue.jobs_id_seq MINVALUE %s MAXVALUE %s START %s RESTART',
                    (g << 48) + 1, ((g + 1) << 48) - 1, (g << 48) + 1);
            END IF;
        END
        $do$
      $cmd$) r
     WHERE NOT r.success;
    IF failed IS NOT NULL THEN
        RAISE EXCEPTION 'claimqueue.distribute() could not set the job id ranges of the workers'
            USING ERRCODE = 'object_not_in_prerequisite_state', DETAIL = failed;
    END IF;
    IF already THEN
        RAISE NOTICE 'claimqueue is distributed already: only the workers'' job id ranges were checked';
        RETURN;
    END IF;
    ALTER SEQUENCE claimqueue.jobs_id_seq MAXVALUE 281474976710655;

    -- The jobs are distributed by the queue's name, which the API's calls
    -- take: Citus delegates a call to the node holding the shard of its queue
    -- argument, hashed as the distribution column's type. The column exists
    -- only here, on every node (the workers' copies of the table are the
    -- extension's own, not made by Citus); the engine fills it where it finds it.
    ALTER TABLE claimqueue.jobs ADD COLUMN queue text;
    UPDATE claimqueue.jobs j SET queue = q.name FROM claimqueue.queues q WHERE q.queue_id = j.queue_id;
    ALTER TABLE claimqueue.jobs ALTER COLUMN queue SET NOT NULL;
    -- A distributed table's unique constraints include its distribution column.
    ALTER TABLE claimqueue.jobs DROP CONSTRAINT jobs_pkey,
        ADD CONSTRAINT jobs_pkey PRIMARY KEY (id, queue);
    DROP INDEX claimqueue.jobs_dedup_idx;
    CREATE UNIQUE INDEX jobs_dedup_idx ON claimqueue.jobs (queue_id, dedup_key, queue)
        WHERE dedup_key IS NOT NULL AND state IN ('ready', 'running');
    SELECT pg_catalog.string_agg(r.nodename || ':' || r.nodeport || ': ' || r.result, '; ')
      INTO failed
      FROM pg_catalog.run_command_on_workers($cmd$
        SET citus.enable_ddl_propagation = off;
        ALTER TABLE claimqueue.jobs ADD COLUMN IF NOT EXISTS queue text NOT NULL;
        ALTER TABLE claimqueue.jobs DROP CONSTRAINT jobs_pkey, ADD CONSTRAINT jobs_pkey PRIMARY KEY (id, queue);
        DROP INDEX claimqueue.jobs_dedup_idx;
        CREATE UNIQUE INDEX jobs_dedup_idx ON claimqueue.jobs (queue_id, dedup_key, queue)
            WHERE dedup_key IS NOT NULL AND state IN ('ready', 'running')
      $cmd$) r
     WHERE NOT r.success;
    IF failed IS NOT NULL THEN
        RAISE EXCEPTION 'claimqueue.distribute() could not change claimqueue.jobs on the workers'
            USING ERRCODE = 'object_not_in_prerequisite_state', DETAIL = failed;
    END IF;

    -- The foreign keys to claimqueue.queues go while the tables become
    -- reference tables, on every node (Citus would otherwise convert the
    -- tables that still reference queues, and recreate them under the views),
    -- and come back on the reference tables, whose shards then have them.
    SELECT pg_catalog.array_agg(conrelid::pg_catalog.regclass::text ORDER BY conname),
           pg_catalog.array_agg(conname::text ORDER BY conname),
           pg_catalog.array_agg(pg_catalog.pg_get_constraintdef(oid) ORDER BY conname)
      INTO fk_tables, fk_names, fk_defs
      FROM pg_catalog.pg_constraint
     WHERE contype = 'f' AND confrelid = 'claimqueue.queues'::pg_catalog.regclass;
    FOR i IN 1 .. COALESCE(pg_catalog.array_length(fk_names, 1), 0) LOOP
        EXECUTE pg_catalog.format('ALTER TABLE %s DROP CONSTRAINT %I', fk_tables[i], fk_names[i]);
        SELECT pg_catalog.string_agg(r.nodename || ':' || r.nodeport || ': ' || r.result, '; ')
          INTO failed
          FROM pg_catalog.run_command_on_workers(pg_catalog.format(
                   'SET citus.enable_ddl_propagation = off; ALTER TABLE %s DROP CONSTRAINT IF EXISTS %I',
                   fk_tables[i], fk_names[i])) r
         WHERE NOT r.success;
        IF failed IS NOT NULL THEN
            RAISE EXCEPTION 'claimqueue.distribute() could not change % on the workers', fk_tables[i]
                USING ERRCODE = 'object_not_in_prerequisite_state', DETAIL = failed;
        END IF;
    END LOOP;

    -- Each grant names its grantee as the coordinator knows it now: every
    -- node checks the grants by that name (src/engine/grants.cpp).
    UPDATE claimqueue.queue_grants g SET grantee_name = r.rolname
      FROM pg_catalog.pg_roles r
     WHERE r.oid = g.grantee::pg_catalog.oid AND g.grantee_name IS DISTINCT FROM r.rolname;

    -- The triggers of queues and queue_grants are safe on their shards: the
    -- restore merge skips shards, and the cache triggers invalidate the
    -- table itself (api/queues.sql, src/api/access.cpp).
    PERFORM pg_catalog.set_config('citus.enable_unsafe_triggers', 'on', true);
    FOREACH t IN ARRAY ARRAY['claimqueue.queues', 'claimqueue.queue_grants', 'claimqueue.schedules',
                             'claimqueue.queue_samples']::pg_catalog.regclass[] LOOP
        PERFORM pg_catalog.create_reference_table(t);
    END LOOP;
    FOR i IN 1 .. COALESCE(pg_catalog.array_length(fk_names, 1), 0) LOOP
        EXECUTE pg_catalog.format('ALTER TABLE %s ADD CONSTRAINT %I %s',
                                  fk_tables[i], fk_names[i], fk_defs[i]);
    END LOOP;
    PERFORM pg_catalog.create_distributed_table('claimqueue.jobs', 'queue');
    -- The calls that take a queue run on the node holding its shard: Citus
    -- delegates them there by that argument, in a transaction block too
    -- (force_delegation), where the queue must be a constant.
    SELECT n.nspname INTO api_schema
      FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
     WHERE e.extname = 'claimqueue';
    FOREACH fn IN ARRAY ARRAY[
        'enqueue(text, jsonb, timestamptz, integer, integer, text, text)',
        'enqueue_batch(text, jsonb[], timestamptz, integer, integer, text)',
        'dequeue(text, text, integer, interval, boolean)',
        'complete_and_dequeue(bigint, integer, text, text, integer, interval, jsonb, boolean)',
        'complete_in(text, bigint, integer, jsonb)',
        'complete_batch_in(text, bigint[], integer[], jsonb[])',
        'fail_in(text, bigint, integer, text, interval, boolean, jsonb)',
        'heartbeat_in(text, bigint, integer, interval)',
        'snooze_in(text, bigint, integer, interval)',
        'dequeue_wait(text, text, integer, interval, interval, jsonb, boolean)'] LOOP
        -- CALL is delegated outside a transaction block only, whatever the flag.
        PERFORM pg_catalog.create_distributed_function(
            pg_catalog.format('%I.%s', api_schema, fn)::pg_catalog.regprocedure,
            distribution_arg_name := 'queue', colocate_with := 'claimqueue.jobs',
            force_delegation := CASE WHEN fn NOT LIKE 'dequeue_wait(%' THEN true END);
    END LOOP;
    -- The rows now live in the shards; the coordinator's own copies would
    -- only mislead a reader of the tables underneath.
    FOREACH t IN ARRAY ARRAY['claimqueue.jobs', 'claimqueue.queue_samples', 'claimqueue.schedules',
                             'claimqueue.queue_grants', 'claimqueue.queues']::pg_catalog.regclass[] LOOP
        PERFORM pg_catalog.truncate_local_data_after_distributing_table(t);
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION claimqueue.distribute(boolean) FROM PUBLIC;

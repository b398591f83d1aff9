-- The distributed mode on a Citus cluster (docs/citus.md): distribute()
-- spreads the jobs over the workers by queue and makes the queue definitions
-- reference tables, on the coordinator, in one transaction.

-- claimqueue.distribute(): the queue definitions (queues, queue_grants,
-- schedules, queue_samples) become reference tables and claimqueue.jobs a
-- table distributed by queue_id, its primary key (id, queue_id). Job ids stay
-- unique across the cluster: each node draws them from its own range of
-- 2^48, by its Citus group id. Refused without Citus, off the coordinator and
-- while jobs run (their claims would be fenced against rows that moved). A
-- second call only gives a worker added since its range of job ids.
-- Superusers only. Calls are not routed to the workers yet, and the hot path
-- refuses a distributed table, so a queue stops working after it: it runs only
-- with preview => true, for trying the layout on a cluster that serves no work.
CREATE OR REPLACE FUNCTION claimqueue.distribute(preview boolean DEFAULT false) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    already boolean;
    running bigint;
    t regclass;
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
        RAISE EXCEPTION 'claimqueue.distribute() is a preview: this version does not route calls to the workers'
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'After it, enqueue, dequeue and the other calls that write jobs are refused on every node, '
                           'and there is no way back but a dump and restore.',
                  HINT = 'To try the layout on a cluster that serves no work, call claimqueue.distribute(preview => true).';
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

    -- A distributed table's unique constraints include its distribution column.
    ALTER TABLE claimqueue.jobs DROP CONSTRAINT jobs_pkey,
        ADD CONSTRAINT jobs_pkey PRIMARY KEY (id, queue_id);

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
    PERFORM pg_catalog.create_distributed_table('claimqueue.jobs', 'queue_id');
    -- The rows now live in the shards; the coordinator's own copies would
    -- only mislead a reader of the tables underneath.
    FOREACH t IN ARRAY ARRAY['claimqueue.jobs', 'claimqueue.queue_samples', 'claimqueue.schedules',
                             'claimqueue.queue_grants', 'claimqueue.queues']::pg_catalog.regclass[] LOOP
        PERFORM pg_catalog.truncate_local_data_after_distributing_table(t);
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION claimqueue.distribute(boolean) FROM PUBLIC;

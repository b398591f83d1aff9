\i test/regress/setup.sql
-- Logical decoding (and so a publication) sees every change the API makes to
-- claimqueue.jobs, as ordinary INSERTs and UPDATEs: the hot path writes rows
-- through the executor and the table AM like a statement does. Needs
-- wal_level = logical (scripts/test.sh runs the regression cluster so);
-- test_decoding is PostgreSQL's own example output plugin.
SELECT 'init' FROM pg_create_logical_replication_slot('cq_regress_slot', 'test_decoding');
SELECT create_queue('decoded');
SELECT count(*) FROM enqueue_batch('decoded', array_fill('{}'::jsonb, ARRAY[3]));
SELECT count(*) FROM dequeue('decoded', 'w', 3);
SELECT complete(1, 1);
SELECT fail(2, 1, 'boom', retry_in => '1 hour');
SELECT heartbeat(3, 1) > now() AS extended;
-- One line per change of claimqueue.jobs: the operation, the job and its state.
SELECT (regexp_match(data, '^table claimqueue\.jobs: (\w+): id\[bigint\]:(\d+)'))[1] AS change,
       (regexp_match(data, '^table claimqueue\.jobs: \w+: id\[bigint\]:(\d+)'))[1]::int AS job,
       (regexp_match(data, 'state\[text\]:''(\w+)'''))[1] AS state
FROM pg_logical_slot_get_changes('cq_regress_slot', NULL, NULL,
                                 'include-xids', '0', 'skip-empty-xacts', '1')
WHERE data LIKE 'table claimqueue.jobs:%';
SELECT 'dropped' FROM pg_drop_replication_slot('cq_regress_slot');

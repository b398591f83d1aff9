\i test/regress/setup.sql
SELECT create_queue('bulk');
-- One id per payload, in payload order.
SELECT * FROM enqueue_batch('bulk', ARRAY['{"n": 1}', '{"n": 2}', '{"n": 3}']::jsonb[]);
SELECT enqueue_batch('bulk', ARRAY['{"n": 4}']::jsonb[], priority => 3, max_attempts => 1);
SELECT id, payload, priority, max_attempts FROM pg_temp.jobs;
-- Claimed in the same order.
SELECT id, payload FROM dequeue('bulk', 'w1', batch => 10);
-- An empty array enqueues nothing.
SELECT count(*) FROM enqueue_batch('bulk', '{}'::jsonb[]);
-- 10,000 jobs in one call.
SELECT count(*), min(b), max(b) FROM enqueue_batch('bulk',
    (SELECT array_agg(jsonb_build_object('n', g)) FROM generate_series(1, 10000) g)) AS b;
-- Bad input changes nothing.
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT enqueue_batch('nope', ARRAY['{}']::jsonb[])$$);
SELECT pg_temp.err($$SELECT enqueue_batch('nope', '{}'::jsonb[])$$);
SELECT pg_temp.err($$SELECT enqueue_batch('bulk', NULL)$$);
SELECT pg_temp.err($$SELECT enqueue_batch('bulk', ARRAY['{}', NULL]::jsonb[])$$);
SELECT pg_temp.err($$SELECT enqueue_batch('bulk', ARRAY[['{}'], ['{}']]::jsonb[])$$);
SELECT pg_temp.err($$SELECT enqueue_batch('bulk', ARRAY['{}']::jsonb[], priority => 500)$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;

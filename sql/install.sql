\i test/regress/setup.sql
-- API in the extension's schema, tables and internals in schema claimqueue.
SELECT e.extname, n.nspname AS api_schema, e.extversion
FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
WHERE e.extname = 'claimqueue';
SELECT c.relname, c.relkind
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'claimqueue' ORDER BY c.relname;
SELECT p.proname
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = 'public' ORDER BY p.proname;
-- A queue named default exists, with the documented defaults.
SELECT queue, lease, max_attempts, backoff_base, backoff_cap, retention FROM queue_settings ORDER BY queue;
-- Unqualified calls work with the default search_path.
SHOW search_path;
SELECT enqueue('default', '{"hello": "world"}');
SELECT id, payload, attempt FROM dequeue('default', 'w1');
-- The preload check reports what it finds (the tests run preloaded).
SELECT claimqueue.check_preload();
-- Another schema: CREATE EXTENSION ... SCHEMA cq puts the API there.
DROP VIEW IF EXISTS pg_temp.jobs;
DROP EXTENSION claimqueue;
CREATE SCHEMA cq;
CREATE EXTENSION claimqueue SCHEMA cq;
SELECT cq.enqueue('default', '{"in": "cq"}');
SELECT id, payload FROM cq.dequeue('default', 'w1');
-- dequeue_wait() calls the dequeue() of its own schema (cq, not on the search_path).
SELECT cq.enqueue('default', '{"in": "cq", "n": 2}');
CALL cq.dequeue_wait('default', 'w1', wait => '0') \gset
SELECT jsonb_path_query_array(:'jobs', '$[*].payload') AS claimed;
-- So does await_jobs() call the job_status() of its own schema.
SELECT cq.complete(1, 1, '{"in": "cq"}');
CALL cq.await_jobs('{1,2}', '0');
SELECT count(*) AS api_functions_in_public
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = 'public' AND p.proname IN ('enqueue', 'dequeue');
DROP EXTENSION claimqueue;
DROP SCHEMA cq;
-- Nothing is left behind by DROP EXTENSION.
SELECT count(*) AS leftover FROM pg_namespace WHERE nspname = 'claimqueue';
CREATE EXTENSION claimqueue;

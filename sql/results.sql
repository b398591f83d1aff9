\i test/regress/setup.sql
-- Results (0.4.0): complete(), complete_batch() and complete_and_dequeue()
-- store a job's result in the row update that marks it done; job_status()
-- reads state, attempt, result and last_error back, only for the queues the
-- caller may see. (Waiting for them: sql/await_jobs.sql.)
SELECT create_queue('work', max_attempts => 1);
SELECT count(*) FROM enqueue_batch('work', (SELECT array_agg(jsonb_build_object('n', g)) FROM generate_series(1, 8) g));
SELECT count(*) FROM dequeue('work', 'w1', batch => 6);
-- complete(id, attempt, result) stores it; complete(id, attempt) stores none.
SELECT complete(1, 1, '{"sum": 42}');
SELECT complete(2, 1);
SELECT complete(id => 3, attempt => 1, result => '"text result"');
SELECT id, state, result FROM claimqueue.jobs WHERE id <= 3 ORDER BY id;
-- Untyped parameters (node-postgres, pgbench -M prepared) still resolve, with
-- two arguments and with three.
PREPARE two_args AS SELECT complete($1, $2);
PREPARE three_args AS SELECT complete($1, $2, $3);
EXECUTE two_args(4, 1);
EXECUTE three_args(5, 1, '[1, 2]');
SELECT id, state, result FROM claimqueue.jobs WHERE id IN (4, 5) ORDER BY id;
-- job_status(): one row per id in the order given, repeated ids repeated;
-- an id that does not exist reads as NULLs.
SELECT fail(6, 1, 'boom');
SELECT * FROM job_status('{5,1,6,7,99,1}');
SELECT * FROM job_status('{}');
-- The result is part of the same row version as done: no second write (one
-- new version per completion, so n_tup_upd counts one).
SELECT count(*) FROM dequeue('work', 'w1');
BEGIN;
SELECT n_tup_upd AS before FROM pg_stat_xact_user_tables WHERE relid = 'claimqueue.jobs'::regclass \gset
SELECT complete(7, 1, '{"one": "write"}');
SELECT n_tup_upd - :before AS updates FROM pg_stat_xact_user_tables WHERE relid = 'claimqueue.jobs'::regclass;
COMMIT;
-- A stale claim stores nothing (QC003), and neither does bad input.
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT complete(1, 1, '{"again": true}')$$);
SELECT pg_temp.err($$SELECT complete(8, 1, '{"never claimed": true}')$$);
SELECT pg_temp.err($$SELECT complete(NULL, 1, '{}')$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
-- Results count against claimqueue.max_payload_size (54000, naming both sizes).
SELECT id, attempt FROM dequeue('work', 'w1');
SELECT pg_temp.fingerprint() AS before \gset
SET claimqueue.max_payload_size = '100B';
SELECT pg_temp.err($$SELECT complete(8, 1, jsonb_build_object('pad', repeat('x', 200)))$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
SELECT complete(8, 1, '{"small": true}');
RESET claimqueue.max_payload_size;
SELECT result FROM job_status('{8}');
-- A large result is stored out of line (TOAST) and read back whole.
SELECT count(*) FROM enqueue_batch('work', ARRAY['{}', '{}']::jsonb[]);
SELECT id, attempt FROM dequeue('work', 'w1', batch => 2);
SELECT complete(9, 1, jsonb_build_object('pad', repeat('x', 500000)));
SELECT length(result->>'pad') AS pad FROM job_status('{9}');

-- complete_batch(ids, attempts, results): results[i] belongs to ids[i], a NULL
-- element stores none; all or nothing.
SELECT count(*) FROM enqueue_batch('work', (SELECT array_agg('{}'::jsonb) FROM generate_series(1, 3)));
SELECT array_agg(id ORDER BY id) AS ids FROM dequeue('work', 'w1', batch => 4) \gset
SELECT :'ids' AS ids;
-- Results of another length than ids: 22023 naming both lengths, nothing changed.
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT complete_batch('{10,11,12,13}', '{1,1,1,1}', '{"{}"}')$$);
SELECT pg_temp.err($$SELECT complete_batch('{10,11,12,13}', '{1,1,1,1}', '{1,2,3,4,5}')$$);
SELECT pg_temp.err($$SELECT complete_batch('{10,11}', '{1,1}', '{{1},{2}}')$$);
SET claimqueue.max_payload_size = '100B';
SELECT pg_temp.err($$SELECT complete_batch('{10,11}', '{1,1}', ARRAY['{}', jsonb_build_object('pad', repeat('x', 200))])$$);
RESET claimqueue.max_payload_size;
-- A stale claim in the batch: no result of the batch is stored.
SELECT pg_temp.err($$SELECT complete_batch('{10,11}', '{1,2}', '{"{\"r\": 10}","{\"r\": 11}"}')$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
SELECT complete_batch('{10,11,12}', '{1,1,1}', ARRAY['{"r": 10}', NULL, '{"r": 12}']::jsonb[]);
-- Without results, as before 0.4.0.
SELECT complete_batch('{13}', '{1}');
SELECT id, state, result FROM job_status('{10,11,12,13}');

-- complete_and_dequeue(..., result): the result of the job completed, then
-- the next claim.
SELECT count(*) FROM enqueue_batch('work', ARRAY['{}', '{}']::jsonb[]);
SELECT id, attempt FROM dequeue('work', 'w1');
SELECT id, attempt FROM complete_and_dequeue(14, 1, 'work', 'w1', result => '{"r": 14}');
SELECT id, attempt FROM complete_and_dequeue(15, 1, 'work', 'w1');
SELECT id, state, result FROM job_status('{14,15}');
-- A result without a job to complete is refused (22023), nothing claimed.
SELECT enqueue('work', '{}');
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT * FROM complete_and_dequeue(NULL, NULL, 'work', 'w1', result => '{}')$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;

-- Every other path keeps its row as before: fail to ready and to failed,
-- cancel, the reaper, retry; none writes a result.
SELECT create_queue('paths', max_attempts => 2, backoff_base => '0');
SELECT enqueue('paths', '{"p": 1}') AS p1 \gset
SELECT enqueue('paths', '{"p": 2}') AS p2 \gset
SELECT id, attempt FROM dequeue('paths', 'w2', batch => 2, lease => '1 hour');
SELECT fail(:p1, 1, 'first');
SET claimqueue.debug_clock_offset = '2h';
SELECT reap('paths');
SELECT id, attempt FROM dequeue('paths', 'w2', batch => 2);
SELECT fail(:p1, 2, 'second');
SELECT cancel(:p2);
SELECT retry(:p1);
SELECT id, state, attempt, result, last_error FROM job_status(ARRAY[:p1, :p2]::bigint[]);
RESET claimqueue.debug_clock_offset;

-- Visibility: a role sees the jobs of the queues it holds a privilege on;
-- another queue's jobs read as missing ones (NULLs), whether they exist or not.
SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_cq_requester, regress_cq_stranger;
RESET client_min_messages;
CREATE ROLE regress_cq_requester IN ROLE claimqueue_producer;
CREATE ROLE regress_cq_stranger;
SELECT create_queue('requests');
SELECT grant_queue('requests', 'produce', 'regress_cq_requester');
SET ROLE regress_cq_requester;
SELECT enqueue('requests', '{"ask": 1}') AS asked \gset
RESET ROLE;
SELECT id, attempt FROM dequeue('requests', 'w3');
SELECT complete(:asked, 1, '{"answer": 1}');
SET ROLE regress_cq_requester;
-- Its own job with the result; job 1 (queue work) and job 9999 (none) alike.
SELECT * FROM job_status(ARRAY[:asked, 1, 9999]::bigint[]);
RESET ROLE;
SET ROLE regress_cq_stranger;
SELECT pg_temp.err($$SELECT * FROM job_status('{1}')$$);
RESET ROLE;
-- Bad input.
SELECT pg_temp.err($$SELECT * FROM job_status(NULL)$$);
SELECT pg_temp.err($$SELECT * FROM job_status('{1,NULL}')$$);
SELECT pg_temp.err($$SELECT * FROM job_status('{{1},{2}}')$$);

-- The view queue_jobs shows the result; purge deletes it with its job.
SELECT id, state, result FROM queue_jobs WHERE id IN (1, 2) ORDER BY id;
BEGIN;  -- the background reaper must not purge first
SELECT alter_queue('work', retention => '0');
SELECT purge('work') > 0 AS purged;
COMMIT;
SELECT * FROM job_status('{1}');
SELECT count(*) AS results_left FROM claimqueue.jobs j JOIN claimqueue.queues q USING (queue_id)
WHERE q.name = 'work' AND j.result IS NOT NULL;
DROP ROLE regress_cq_requester, regress_cq_stranger;

\i test/regress/setup.sql
-- cancel_jobs(): a queue's ready (or running) jobs cancelled in bulk.
SELECT create_queue('work');
SELECT enqueue('work', jsonb_build_object('n', g)) FROM generate_series(1, 5) g;
SELECT enqueue('work', '{"n": 6}', run_at => now() + interval '1 day');
SELECT id, attempt FROM dequeue('work', 'w1');
-- Ready jobs by default (delayed ones too), at most max_jobs of them.
SELECT cancel_jobs('work', max_jobs => 2);
SELECT cancel_jobs('work');
SELECT id, state, finished FROM pg_temp.jobs;
-- Running jobs only when asked; their worker then gets QC003.
SELECT cancel_jobs('work', '{running}');
SELECT pg_temp.err($$SELECT complete(1, 1)$$);
SELECT id, state, leased, finished FROM pg_temp.jobs WHERE id = 1;
-- created_before: only jobs created before it.
SELECT enqueue('work', '{"n": 7}');
SET claimqueue.debug_clock_offset = '1h';
SELECT enqueue('work', '{"n": 8}');
RESET claimqueue.debug_clock_offset;
SELECT cancel_jobs('work', '{ready,running}', created_before => now() + interval '30 minutes');
SELECT id, state FROM pg_temp.jobs WHERE id > 6;
-- Many jobs: in statements of 1,000, all in this call.
SELECT create_queue('many');
SELECT count(*) FROM enqueue_batch('many', array_fill('{}'::jsonb, ARRAY[2500]));
SELECT cancel_jobs('many', max_jobs => 1500);
SELECT cancel_jobs('many');
SELECT retry_jobs('many', '{cancelled}');
SELECT queue, ready, cancelled FROM queue_stats WHERE queue = 'many';
SELECT count(*) AS broken_cursors FROM claimqueue.check_claim_cursors();
-- Bad input, unknown queues and REPEATABLE READ change nothing.
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT cancel_jobs('work', '{failed}')$$);
SELECT pg_temp.err($$SELECT cancel_jobs('work', '{ready,NULL}')$$);
SELECT pg_temp.err($$SELECT cancel_jobs('work', NULL)$$);
SELECT pg_temp.err($$SELECT cancel_jobs('work', max_jobs => -1)$$);
SELECT pg_temp.err($$SELECT cancel_jobs('nope')$$);
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT pg_temp.err($$SELECT cancel_jobs('work')$$);
COMMIT;
SELECT pg_temp.fingerprint() = :'before' AS unchanged;

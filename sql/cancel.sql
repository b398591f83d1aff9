\i test/regress/setup.sql
SELECT create_queue('work');
SELECT enqueue('work', '{"n": 1}');
SELECT enqueue('work', '{"n": 2}');
-- A ready job is cancelled and never claimed.
SELECT cancel(1);
SELECT id, payload FROM dequeue('work', 'w1', batch => 10);
-- A running job can be cancelled; its worker then gets QC003.
SELECT cancel(2);
SELECT pg_temp.err($$SELECT complete(2, 1)$$);
SELECT id, state, attempt, leased, finished FROM pg_temp.jobs;
-- Finished jobs, unknown ids and NULL change nothing.
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT cancel(1)$$);
SELECT pg_temp.err($$SELECT cancel(99)$$);
SELECT pg_temp.err($$SELECT cancel(NULL)$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
SELECT cancel(1);

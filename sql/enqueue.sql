\i test/regress/setup.sql
SELECT create_queue('emails', max_attempts => 7);
SELECT enqueue('emails');
SELECT enqueue('emails', '{"to": "a@example.com"}');
SELECT enqueue('emails', '[1, 2, 3]', priority => 5);
SELECT enqueue('emails', '"just a string"', max_attempts => 2);
SELECT enqueue('emails', '{}', run_at => now() + interval '1 hour');
SELECT id, state, priority, attempt, max_attempts, payload, delayed, leased, started, finished
FROM pg_temp.jobs;
-- created_at and run_at default to the enqueue time.
SELECT count(*) FROM claimqueue.jobs WHERE id <= 4 AND run_at = created_at;
-- dedup_key: a live job with the same key is returned, nothing is inserted.
SELECT create_queue('signup');
SELECT enqueue('signup', '{"v": 1}', dedup_key => 'welcome:42') AS first,
       enqueue('signup', '{"v": 2}', dedup_key => 'welcome:42') AS second;
-- The key is per queue.
SELECT enqueue('default', '{"v": 3}', dedup_key => 'welcome:42');
-- A running job still holds its key; a finished one frees it.
SELECT id, attempt FROM dequeue('signup', 'w1');
SELECT enqueue('signup', '{"v": 4}', dedup_key => 'welcome:42');
SELECT complete(6, 1);
SELECT enqueue('signup', '{"v": 5}', dedup_key => 'welcome:42');
SELECT id, queue, state, payload, dedup_key FROM pg_temp.jobs WHERE dedup_key IS NOT NULL;
-- Transactional: a rolled-back enqueue leaves nothing.
BEGIN;
SELECT enqueue('emails', '{"rolled": "back"}');
ROLLBACK;
SELECT count(*) FROM claimqueue.jobs WHERE payload ? 'rolled';
-- Bad input: errors name the value, nothing changes.
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT enqueue(NULL)$$);
SELECT pg_temp.err($$SELECT enqueue('')$$);
SELECT pg_temp.err($$SELECT enqueue('nope')$$);
SELECT pg_temp.err($$SELECT enqueue('NOPE')$$);
SELECT pg_temp.err($$SELECT enqueue(repeat('x', 100))$$);
SELECT pg_temp.err($$SELECT enqueue('emails', NULL)$$);
SELECT pg_temp.err($$SELECT enqueue('emails', '{}', priority => 101)$$);
SELECT pg_temp.err($$SELECT enqueue('emails', '{}', priority => -101)$$);
SELECT pg_temp.err($$SELECT enqueue('emails', '{}', priority => NULL)$$);
SELECT pg_temp.err($$SELECT enqueue('emails', '{}', max_attempts => 0)$$);
SELECT pg_temp.err($$SELECT enqueue('emails', '{}', run_at => 'infinity')$$);
SELECT pg_temp.err($$SELECT enqueue('emails', '{}', run_at => '-infinity')$$);
SELECT pg_temp.err($$SELECT enqueue('emails', '{}', dedup_key => '')$$);
SELECT pg_temp.err($$SELECT enqueue('emails', '{}', dedup_key => repeat('k', 513))$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
-- The full message for an unknown queue, with its hint.
SELECT enqueue('nope');
-- enqueue() without a dedup key writes its row through the executor's
-- single-row path, no INSERT statement, and the row is what an INSERT would
-- write: a column someone added takes its default, a CHECK constraint someone
-- added is enforced and a unique index someone added is checked, and a
-- refused row leaves nothing behind. The id comes from the table's sequence.
ALTER TABLE claimqueue.jobs ADD COLUMN origin text NOT NULL DEFAULT 'app',
    ADD CONSTRAINT small_payload CHECK (pg_column_size(payload) < 100);
CREATE UNIQUE INDEX one_per_order ON claimqueue.jobs ((payload->>'order')) WHERE payload ? 'order';
SELECT enqueue('emails', '{"order": 1}') = currval('claimqueue.jobs_id_seq') AS id_from_sequence;
SELECT state, attempt, max_attempts, origin, pos IS NOT NULL AS positioned
FROM claimqueue.jobs WHERE payload = '{"order": 1}';
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT enqueue('emails', jsonb_build_object('pad', repeat('x', 200)))$$);
SELECT pg_temp.err($$SELECT enqueue('emails', '{"order": 1}')$$);
-- enqueue_batch() writes its rows the same way: one refused row refuses the call.
SELECT pg_temp.err($$SELECT enqueue_batch('emails',
    ARRAY['{"order": 5}', jsonb_build_object('pad', repeat('x', 200))]::jsonb[])$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
SELECT count(*) AS enqueued FROM enqueue_batch('emails', ARRAY['{"order": 6}', '{"order": 7}']::jsonb[]);
SELECT count(*) AS batch, min(origin) AS origin FROM claimqueue.jobs
WHERE payload->>'order' IN ('6', '7');
-- A job for later has no claim position until it is due.
SELECT enqueue('emails', '{"order": 2}', run_at => now() + interval '1 day') AS later \gset
SELECT pos IS NULL AS waits FROM claimqueue.jobs WHERE id = :later;
DROP INDEX claimqueue.one_per_order;
ALTER TABLE claimqueue.jobs DROP CONSTRAINT small_payload, DROP COLUMN origin;
-- With the added column dropped, the writer is built again for the new shape.
SELECT enqueue('emails', '{"order": 3}') AS reshaped \gset
SELECT state, payload FROM claimqueue.jobs WHERE id = :reshaped;

\i test/regress/setup.sql
-- queue_history: the reaper's samples of queue_metrics (about once a minute,
-- two hours kept), sampled here by hand. Each check reads the samples of its
-- own transaction (sampled_at = now()), so a reaper's sample between them
-- changes nothing shown.
SELECT create_queue('h');
-- Every queue given its slot now (a recount takes it), so that each sample has a
-- row of 'default' too, whenever the reaper's first pass comes.
SELECT claimqueue.recount_queue_metrics() IS NOT NULL AS counted;
SELECT count(*) FROM enqueue_batch('h', ARRAY['{"n": 1}', '{"n": 2}', '{"n": 3}']::jsonb[]);
SELECT count(*) FROM dequeue('h', 'w', batch => 2);
SELECT complete(1, 1);

BEGIN;
SELECT claimqueue.sample_queue_history() >= 1 AS sampled;
SELECT queue, enqueued, claimed, completed, failed, counters_since IS NOT NULL AS counting
FROM queue_history WHERE sampled_at = now() AND queue = 'h';
COMMIT;

-- What each counter added since the queue's previous sample.
SELECT complete(2, 1);
BEGIN;
SELECT claimqueue.sample_queue_history() >= 1 AS sampled;
SELECT h.queue, h.completed,
       h.completed_delta = h.completed - (SELECT s.completed FROM claimqueue.queue_samples s
                                          JOIN claimqueue.queues q USING (queue_id)
                                          WHERE q.name = 'h' AND s.sampled_at < now()
                                          ORDER BY s.sampled_at DESC LIMIT 1) AS delta_agrees,
       h.failed_delta, h.enqueued_delta IS NOT NULL AS has_enqueued_delta
FROM queue_history h WHERE h.sampled_at = now() AND h.queue = 'h';
COMMIT;

-- Across a restart of the totals (counters_since changed) there is no delta.
BEGIN;
INSERT INTO claimqueue.queue_samples
SELECT queue_id, now() - interval '1 microsecond', 100, 100, 100, 0, 0, 0, 0, 0, 0, '2000-01-01'
FROM claimqueue.queues WHERE name = 'h';
SELECT claimqueue.sample_queue_history() >= 1 AS sampled;
SELECT queue, completed_delta, failed_delta, enqueued_delta
FROM queue_history WHERE sampled_at = now() AND queue = 'h';
COMMIT;

-- Two hours are kept: older samples go with the next sample.
INSERT INTO claimqueue.queue_samples
SELECT queue_id, now() - interval '3 hours', 0, 0, 0, 0, 0, 0, 0, 0, 0, now()
FROM claimqueue.queues WHERE name = 'h';
SELECT claimqueue.sample_queue_history() >= 1 AS sampled;
SELECT count(*) AS older_than_two_hours FROM claimqueue.queue_samples
WHERE sampled_at < now() - interval '2 hours';

-- Each role sees only the queues it holds a privilege on; only a superuser samples.
CREATE ROLE regress_cq_history_reader IN ROLE claimqueue_consumer;
SELECT grant_queue('default', 'consume', 'regress_cq_history_reader');
SET ROLE regress_cq_history_reader;
SELECT DISTINCT queue FROM queue_history ORDER BY queue;
SELECT pg_temp.err('SELECT claimqueue.sample_queue_history()');
RESET ROLE;
SELECT revoke_queue('default', 'consume', 'regress_cq_history_reader');
DROP ROLE regress_cq_history_reader;

-- A dropped queue's samples go with it.
SELECT drop_queue('h', force => true);
SELECT count(*) AS samples_of_dropped FROM claimqueue.queue_samples s
WHERE NOT EXISTS (SELECT 1 FROM claimqueue.queues q WHERE q.queue_id = s.queue_id);

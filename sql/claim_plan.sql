\i test/regress/setup.sql
-- The claim reads the partial ready index in claim order, one lane from its
-- cursor: finished jobs are never visited, so the claim's cost does not grow
-- with the history kept.
SELECT create_queue('plan');
SELECT count(*) FROM enqueue_batch('plan',
    (SELECT array_agg('{}'::jsonb) FROM generate_series(1, 20000)));
UPDATE claimqueue.jobs SET state = 'done', attempt = 1, finished_at = now() WHERE id <= 19990;
ANALYZE claimqueue.jobs;
-- The generic plan dequeue() runs for one lane: $1 queue id, $2 worker, $3 batch,
-- $4 now, $5 lease, $6 priority, $7 the lane's cursor (claim_cursors.hpp).
SELECT * FROM claimqueue.explain_claim('plan', 10) AS plan;
-- The same plan's claim takes the ten ready jobs, in order.
SELECT array_agg(id ORDER BY id) FROM dequeue('plan', 'w1', batch => 10);

-- pgbench script for test/stress/run.sh: one worker iteration per transaction.
-- Claim one job, record its side effect and complete it, all in ONE
-- transaction: either all three happen or none does. The reconciliation in
-- run.sh then proves every job's effect was recorded exactly once, by the
-- claim that completed it.
--
-- dequeue() returns zero or one row and pgbench's \gset fails on zero rows,
-- so the aggregate always yields one row: id = 0 means nothing was claimable.
--
-- :rollback_pct (run.sh passes it with -D) is the percentage of transactions
-- that roll back instead of committing, as a worker crashing before COMMIT
-- would: their claim, effect and completion must all vanish together.
\set roll random(1, 100)
BEGIN;
SELECT coalesce(max(id), 0) AS id, coalesce(max(attempt), 0) AS attempt
FROM dequeue('stress', 'w' || :client_id) \gset
\if :id
INSERT INTO effects (job_id, attempt, worker) VALUES (:id, :attempt, 'w' || :client_id);
SELECT complete(:id, :attempt);
\endif
\if :roll <= :rollback_pct
ROLLBACK;
\else
COMMIT;
\endif

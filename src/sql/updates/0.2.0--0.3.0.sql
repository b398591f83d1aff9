-- 0.2.0 -> 0.3.0: claim positions (the column pos, its indexes, the positions
-- of the jobs ready now).

-- pos: the claim position of a ready job that is due; NULL while it waits
-- for its run_at (it gets one when due) and meaningless in other states.
ALTER TABLE claimqueue.jobs ADD COLUMN pos bigint;

-- Jobs ready and due keep their claim order (run_at, then id, within each
-- priority); positions drawn from now on are higher than these.
UPDATE claimqueue.jobs j SET pos = o.n
FROM (SELECT id, row_number() OVER (ORDER BY run_at, id) AS n
      FROM claimqueue.jobs WHERE state = 'ready' AND run_at <= pg_catalog.now()) o
WHERE j.id = o.id;

DROP INDEX claimqueue.jobs_ready_idx;
-- The claim path: claimable jobs only, one lane per (queue, priority) in
-- position order, so a claim's cost grows neither with the finished jobs kept
-- nor (with its cursor) with the jobs claimed before it.
CREATE INDEX jobs_ready_idx ON claimqueue.jobs (queue_id, priority DESC, pos)
    WHERE state = 'ready' AND pos IS NOT NULL;
-- Ready jobs waiting for their run_at, found when due.
CREATE INDEX jobs_scheduled_idx ON claimqueue.jobs (queue_id, run_at)
    WHERE state = 'ready' AND pos IS NULL;

-- The views of queues and jobs: counts per state, every job, each queue's
-- settings; each shows only the queues the caller holds a privilege on
-- (claimqueue.visible_queues(), api/access.sql).

-- Plain reads, never SKIP LOCKED: a locked row is still counted.
CREATE OR REPLACE VIEW @extschema@.queue_stats AS
SELECT q.name AS queue,
       count(j.id) FILTER (WHERE j.state = 'ready' AND j.run_at <= pg_catalog.now()) AS ready,
       count(j.id) FILTER (WHERE j.state = 'ready' AND j.run_at > pg_catalog.now())  AS scheduled,
       count(j.id) FILTER (WHERE j.state = 'running')   AS running,
       count(j.id) FILTER (WHERE j.state = 'done')      AS done,
       count(j.id) FILTER (WHERE j.state = 'failed')    AS failed,
       count(j.id) FILTER (WHERE j.state = 'cancelled') AS cancelled,
       pg_catalog.now() - min(j.run_at) FILTER (WHERE j.state = 'ready' AND j.run_at <= pg_catalog.now())
           AS oldest_ready_age,
       count(j.id) FILTER (WHERE j.state = 'running' AND j.lease_expires_at < pg_catalog.now())
           AS expired_leases,
       q.paused
FROM claimqueue.queues q
LEFT JOIN claimqueue.jobs j ON j.queue_id = q.queue_id
WHERE q.queue_id IN (SELECT claimqueue.visible_queues())
GROUP BY q.queue_id, q.name;
COMMENT ON VIEW @extschema@.queue_stats IS 'per-queue job counts by state, read without SKIP LOCKED; only queues the caller holds a privilege on';

CREATE OR REPLACE VIEW @extschema@.queue_jobs AS
SELECT j.id, q.name AS queue, j.state, j.priority, j.attempt, j.max_attempts,
       j.run_at, j.created_at, j.started_at, j.finished_at, j.lease_expires_at,
       j.worker, j.dedup_key, j.last_error, j.payload, j.result, j.concurrency_key,
       -- 0.5.0: what a page of jobs is read by (the queue's id leads every
       -- index), the claim position, and whether the claim dies with its session.
       j.queue_id, j.pos AS claim_position, j.owner_session IS NOT NULL AS session_bound
FROM claimqueue.jobs j
JOIN claimqueue.queues q ON q.queue_id = j.queue_id
WHERE q.queue_id IN (SELECT claimqueue.visible_queues());
COMMENT ON VIEW @extschema@.queue_jobs IS 'every job with its queue name, timestamps, worker, last error and result; only queues the caller holds a privilege on';

CREATE OR REPLACE VIEW @extschema@.queue_settings AS
SELECT name AS queue, lease, max_attempts, backoff_base, backoff_cap, retention, created_at,
       paused, failed_retention, max_running, max_running_per_key, fair, queue_id
FROM claimqueue.queues
WHERE queue_id IN (SELECT claimqueue.visible_queues());
COMMENT ON VIEW @extschema@.queue_settings IS 'each queue''s defaults; only queues the caller holds a privilege on';

REVOKE ALL ON @extschema@.queue_stats, @extschema@.queue_jobs, @extschema@.queue_settings FROM PUBLIC;

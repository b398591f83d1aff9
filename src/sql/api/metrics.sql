-- Queue metrics without scans (0.4.0): per-queue totals and gauges kept in
-- shared memory (src/metrics), counted by each transaction and applied when
-- it commits. The view reads no job row: the totals and gauges come from
-- shared memory, the oldest ready job's age from one probe per lane at its
-- claim cursor. Each caller sees only the queues it holds a privilege on.

CREATE OR REPLACE FUNCTION claimqueue.queue_metrics_rows(
    OUT queue_id           integer,
    OUT enqueued           bigint,
    OUT claimed            bigint,
    OUT completed          bigint,
    OUT failed             bigint,
    OUT reaped             bigint,
    OUT retried            bigint,
    OUT cancelled          bigint,
    OUT ready_or_scheduled bigint,
    OUT running            bigint,
    OUT oldest_ready_age   interval,
    OUT counters_since     timestamptz,
    OUT gauges_since       timestamptz,
    OUT done_id_bound      bigint)
RETURNS SETOF record
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_queue_metrics';
COMMENT ON FUNCTION claimqueue.queue_metrics_rows()
    IS 'internal: the metrics of the queues the caller holds a privilege on, behind queue_metrics';

CREATE OR REPLACE VIEW @extschema@.queue_metrics AS
SELECT q.name AS queue, m.enqueued, m.claimed, m.completed, m.failed, m.reaped, m.retried,
       m.cancelled, m.ready_or_scheduled, m.running, m.oldest_ready_age, m.counters_since,
       m.gauges_since, m.done_id_bound
FROM claimqueue.queue_metrics_rows() m
JOIN claimqueue.queues q ON q.queue_id = m.queue_id;
COMMENT ON VIEW @extschema@.queue_metrics
    IS 'per-queue totals since counters_since and gauges (ready, scheduled included; running) since gauges_since, from shared memory; done_id_bound: no done job of the queue has a greater id (NULL until counted); only queues the caller holds a privilege on';

-- Every queue's gauges counted again from the table, now (superuser). The
-- reaper counts them by itself once after a start and for each new queue.
CREATE OR REPLACE FUNCTION claimqueue.recount_queue_metrics() RETURNS bigint
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_recount_queue_metrics';
COMMENT ON FUNCTION claimqueue.recount_queue_metrics()
    IS 'counts every queue''s ready and running jobs again for queue_metrics; returns how many queues';

REVOKE ALL ON FUNCTION
    claimqueue.queue_metrics_rows(),
    claimqueue.recount_queue_metrics()
FROM PUBLIC;
REVOKE ALL ON @extschema@.queue_metrics FROM PUBLIC;

-- Queue history (0.5.0): one sample of every queue's totals and gauges into
-- claimqueue.queue_samples, and the samples older than two hours deleted. The
-- reaper calls it about once a minute; by hand it samples now (superuser).
CREATE OR REPLACE FUNCTION claimqueue.sample_queue_history() RETURNS bigint
LANGUAGE sql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
    WITH trimmed AS (
        DELETE FROM claimqueue.queue_samples
        WHERE sampled_at < pg_catalog.now() - interval '2 hours'),
    sampled AS (
        INSERT INTO claimqueue.queue_samples
        SELECT m.queue_id, pg_catalog.now(), m.enqueued, m.claimed, m.completed, m.failed,
               m.reaped, m.retried, m.cancelled,
               CASE WHEN m.gauges_since IS NOT NULL THEN m.ready_or_scheduled END,
               CASE WHEN m.gauges_since IS NOT NULL THEN m.running END,
               m.counters_since
        FROM claimqueue.queue_metrics_rows() m
        WHERE m.counters_since IS NOT NULL
        ON CONFLICT (queue_id, sampled_at) DO NOTHING
        RETURNING 1)
    SELECT pg_catalog.count(*) FROM sampled
$$;
COMMENT ON FUNCTION claimqueue.sample_queue_history()
    IS 'samples every queue''s queue_metrics into queue_history and drops samples older than two hours; returns the rows sampled';

-- The samples, with what each counter added since the queue's previous sample
-- (NULL for a queue's first sample, and across a server restart, when the
-- totals started again: counters_since changed).
CREATE OR REPLACE VIEW @extschema@.queue_history AS
SELECT q.name AS queue, s.sampled_at, s.enqueued, s.claimed, s.completed, s.failed, s.reaped,
       s.retried, s.cancelled, s.ready_or_scheduled, s.running, s.counters_since,
       CASE WHEN pg_catalog.lag(s.counters_since) OVER w = s.counters_since
            THEN s.completed - pg_catalog.lag(s.completed) OVER w END AS completed_delta,
       CASE WHEN pg_catalog.lag(s.counters_since) OVER w = s.counters_since
            THEN s.failed - pg_catalog.lag(s.failed) OVER w END AS failed_delta,
       CASE WHEN pg_catalog.lag(s.counters_since) OVER w = s.counters_since
            THEN s.enqueued - pg_catalog.lag(s.enqueued) OVER w END AS enqueued_delta
FROM claimqueue.queue_samples s
JOIN claimqueue.queues q ON q.queue_id = s.queue_id
WHERE q.queue_id IN (SELECT claimqueue.visible_queues())
WINDOW w AS (PARTITION BY s.queue_id ORDER BY s.sampled_at);
COMMENT ON VIEW @extschema@.queue_history
    IS 'queue_metrics sampled about once a minute by the reaper, two hours kept, with what completed, failed and enqueued added since the previous sample; only queues the caller holds a privilege on';

REVOKE ALL ON FUNCTION claimqueue.sample_queue_history() FROM PUBLIC;
REVOKE ALL ON @extschema@.queue_history FROM PUBLIC;

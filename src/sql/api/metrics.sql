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
    OUT gauges_since       timestamptz)
RETURNS SETOF record
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_queue_metrics';
COMMENT ON FUNCTION claimqueue.queue_metrics_rows()
    IS 'internal: the metrics of the queues the caller holds a privilege on, behind queue_metrics';

CREATE OR REPLACE VIEW @extschema@.queue_metrics AS
SELECT q.name AS queue, m.enqueued, m.claimed, m.completed, m.failed, m.reaped, m.retried,
       m.cancelled, m.ready_or_scheduled, m.running, m.oldest_ready_age, m.counters_since,
       m.gauges_since
FROM claimqueue.queue_metrics_rows() m
JOIN claimqueue.queues q ON q.queue_id = m.queue_id;
COMMENT ON VIEW @extschema@.queue_metrics
    IS 'per-queue totals since counters_since and gauges (ready, scheduled included; running) since gauges_since, from shared memory; only queues the caller holds a privilege on';

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

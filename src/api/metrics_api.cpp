// SQL API, queue metrics (src/metrics/metrics.hpp): claimqueue.queue_metrics_rows()
// behind the queue_metrics view, and claimqueue.recount_queue_metrics().
#include "pg/firewall.hpp"

extern "C" {
#include "access/tupdesc.h"
#include "executor/tuptable.h"
#include "utils/fmgrprotos.h"
#include "utils/timestamp.h"
}

#include "api/access.hpp"
#include "cursors/cursors.hpp"
#include "engine/claim.hpp"
#include "engine/grants.hpp"
#include "engine/job_rows.hpp"
#include "engine/job_shards.hpp"
#include "engine/maintenance.hpp"
#include "metrics/metrics.hpp"
#include "pg/clock.hpp"
#include "pg/statement.hpp"

using namespace claimqueue;

namespace {

constexpr int kColumns = 14;

// Under Citus, on the coordinator: the metrics of the whole cluster, read from
// every worker's queue_metrics_rows() through Citus (as the extension's owner,
// the API's user: $1 keeps the queues the caller may see). A queue's totals are summed over the
// nodes (a shard move leaves the counts made before it on the old node); its
// gauges, oldest ready age and done bound are the node's that holds its shard.
// The value Citus hashes is the distribution column's: the queue's id or name.
// A worker that does not answer is left out.
Statement kClusterMetrics = {
    "WITH answers AS ("
    "   SELECT w.nodename, w.nodeport, w.result"
    "   FROM pg_catalog.run_command_on_workers("
    "     'SELECT COALESCE(pg_catalog.json_agg(m), ''[]'')"
    "      FROM claimqueue.queue_metrics_rows() m') w"
    "   WHERE w.success),"
    " per_node AS ("
    "   SELECT a.nodename, a.nodeport, m.*"
    "   FROM answers a CROSS JOIN LATERAL pg_catalog.json_to_recordset(a.result::pg_catalog.json)"
    "     AS m(queue_id integer, enqueued bigint, claimed bigint, completed bigint, failed bigint,"
    "          reaped bigint, retried bigint, cancelled bigint, ready_or_scheduled bigint,"
    "          running bigint, oldest_ready_age interval, counters_since timestamptz,"
    "          gauges_since timestamptz, done_id_bound bigint)),"
    " by_column AS ("
    "   SELECT pg_catalog.column_to_column_name(logicalrelid, partkey) = 'queue_id' AS by_id"
    "   FROM pg_catalog.pg_dist_partition"
    "   WHERE logicalrelid = 'claimqueue.jobs'::pg_catalog.regclass),"
    " holder AS ("
    "   SELECT q.queue_id, p.nodename, p.nodeport"
    "   FROM claimqueue.queues q CROSS JOIN by_column c"
    "   JOIN pg_catalog.pg_dist_shard_placement p"
    "     ON p.shardid = pg_catalog.get_shard_id_for_distribution_column('claimqueue.jobs',"
    "          CASE WHEN c.by_id THEN q.queue_id::text ELSE q.name END))"
    " SELECT m.queue_id, sum(m.enqueued)::bigint, sum(m.claimed)::bigint,"
    "   sum(m.completed)::bigint, sum(m.failed)::bigint, sum(m.reaped)::bigint,"
    "   sum(m.retried)::bigint, sum(m.cancelled)::bigint,"
    "   max(m.ready_or_scheduled) FILTER (WHERE h.queue_id IS NOT NULL),"
    "   max(m.running) FILTER (WHERE h.queue_id IS NOT NULL),"
    "   max(m.oldest_ready_age) FILTER (WHERE h.queue_id IS NOT NULL),"
    "   min(m.counters_since),"
    "   max(m.gauges_since) FILTER (WHERE h.queue_id IS NOT NULL),"
    "   max(m.done_id_bound) FILTER (WHERE h.queue_id IS NOT NULL)"
    " FROM per_node m LEFT JOIN holder h ON h.queue_id = m.queue_id"
    "   AND h.nodename = m.nodename AND h.nodeport = m.nodeport"
    " WHERE m.queue_id = ANY ($1::integer[])"
    " GROUP BY m.queue_id ORDER BY m.queue_id",
    1, {INT4ARRAYOID}, nullptr};

// OldestClaimableAt with the statements routed to `route` (a Citus shard's
// name; nullptr: claimqueue.jobs itself).
bool OldestClaimableOn(const char *route, int32 queue_id, TimestampTz *oldest)
{
    if (route == nullptr)
        return OldestClaimableAt(queue_id, oldest);
    const char *previous = RouteJobsTo(route);
    char *restore = previous != nullptr ? pstrdup(previous) : nullptr;
    bool found = OldestClaimableAt(queue_id, oldest);
    (void) RouteJobsTo(restore);
    return found;
}

// The ids of the queues the caller may see, palloc'd; *n set.
int32 *VisibleQueueIds(int *n)
{
    TupleDesc desc = CreateTemplateTupleDesc(1);
    TupleDescInitEntry(desc, 1, "queue_id", INT4OID, -1, 0);
    Tuplestorestate *store = tuplestore_begin_heap(false, false, work_mem);
    VisibleQueues(CurrentCaller()->user, CurrentCaller()->admin, store, desc);
    int64 count = tuplestore_tuple_count(store);
    int32 *ids = (int32 *) palloc(sizeof(int32) * (count + 1));
    TupleTableSlot *slot = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
    *n = 0;
    while (tuplestore_gettupleslot(store, true, false, slot)) {
        bool isnull;
        Datum id = slot_getattr(slot, 1, &isnull);
        if (!isnull)
            ids[(*n)++] = DatumGetInt32(id);
    }
    ExecDropSingleTupleTableSlot(slot);
    tuplestore_end(store);
    return ids;
}

}  // namespace

// claimqueue.queue_metrics_rows() -> (queue_id, enqueued, claimed, completed,
// failed, reaped, retried, cancelled, ready_or_scheduled, running,
// oldest_ready_age, counters_since, gauges_since, done_id_bound): one row per
// queue the caller may see, from shared memory; NULL where a queue has no slot
// (not preloaded, the table full) and gauges and bound NULL until counted.
CQ_QUEUE_FUNCTION(cq_queue_metrics)
{
    ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
    InitMaterializedSRF(fcinfo, 0);
    int n;
    int32 *ids = VisibleQueueIds(&n);
    if (LocalGroupId() == 0 && DistributedByCitus(JobsRelid())) {
        // Copied row by row: the statement's rows sent straight into the
        // tuplestore (ExecuteInto) crashed the backend under Citus 14.0.1.
        Datum *visible = (Datum *) palloc(sizeof(Datum) * (n + 1));
        for (int i = 0; i < n; i++)
            visible[i] = Int32GetDatum(ids[i]);
        Datum args[1] = {PointerGetDatum(construct_array(visible, n, INT4OID, 4, true,
                                                         TYPALIGN_INT))};
        ConnectSpi();
        uint64 rows = Execute(&kClusterMetrics, args, nullptr);
        MemoryContext spi = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
        for (uint64 row = 0; row < rows; row++) {
            Datum values[kColumns];
            bool nulls[kColumns];
            for (int c = 0; c < kColumns; c++)
                values[c] = ResultValue(row, c + 1, &nulls[c]);
            tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
        }
        MemoryContextSwitchTo(spi);
        FinishSpi();
        return (Datum) 0;
    }
    TimestampTz now = ClockNow();
    ConnectSpi();  // the lanes' probes
    for (int i = 0; i < n; i++) {
        Datum values[kColumns];
        bool nulls[kColumns];
        for (int c = 0; c < kColumns; c++) {
            values[c] = (Datum) 0;
            nulls[c] = true;
        }
        values[0] = Int32GetDatum(ids[i]);
        nulls[0] = false;
        QueueMetrics m;
        bool counted = ReadQueueMetrics(ids[i], &m);
        if (counted) {
            for (int t = 0; t < kJobTotals; t++) {
                values[1 + t] = Int64GetDatum(m.totals[t]);
                nulls[1 + t] = false;
            }
            if (m.gauges_since != 0) {
                values[8] = Int64GetDatum(m.ready);
                values[9] = Int64GetDatum(m.running);
                values[12] = TimestampTzGetDatum(m.gauges_since);
                values[13] = Int64GetDatum(m.done_id_bound);
                nulls[8] = nulls[9] = nulls[12] = nulls[13] = false;
            }
            values[11] = TimestampTzGetDatum(m.counters_since);
            nulls[11] = false;
        }
        // No probe when the gauges say there is nothing ready, nor for a
        // queue whose jobs are on another node (Citus); on this node's shard
        // of the queue, the probe reads the shard.
        TimestampTz oldest;
        Oid holder;
        const char *route;
        if (!(counted && m.gauges_since != 0 && m.ready == 0) &&
            QueueJobsHere(ids[i], &holder, &route) && OldestClaimableOn(route, ids[i], &oldest)) {
            values[10] = DirectFunctionCall2(timestamp_mi, TimestampTzGetDatum(now),
                                             TimestampTzGetDatum(oldest));
            nulls[10] = false;
        }
        tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    }
    FinishSpi();
    return (Datum) 0;
}

// claimqueue.recount_queue_metrics() -> queues recounted: every queue's gauges
// counted again from the table, now (superuser; the reaper does it by itself
// after a start). READ COMMITTED, in a transaction that changed no job.
CQ_FUNCTION(cq_recount_queue_metrics)
{
    RequireReadCommitted("recount_queue_metrics()");
    PG_RETURN_INT64(RecountQueues(false, QueueJobsHere));
}

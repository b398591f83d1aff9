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
#include "engine/maintenance.hpp"
#include "metrics/metrics.hpp"
#include "pg/clock.hpp"
#include "pg/statement.hpp"

using namespace claimqueue;

namespace {

constexpr int kColumns = 14;

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

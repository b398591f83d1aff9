// Reaping and retention (see maintenance.hpp).
#include "engine/maintenance.hpp"

#include "engine/claim.hpp"
#include "engine/clock.hpp"
#include "engine/queues.hpp"
#include "engine/statement.hpp"
#include "wait/ready_notices.hpp"

namespace claimqueue {
namespace {

// Oldest expiry first, so a pass that stops at `limit` reaps in lease order.
Statement kLockExpired = {
    "SELECT j.id, j.attempt, j.max_attempts, q.backoff_base, q.backoff_cap, q.name"
    " FROM claimqueue.jobs j JOIN claimqueue.queues q ON q.queue_id = j.queue_id"
    " WHERE j.state = 'running' AND j.lease_expires_at < $1 AND ($2::text IS NULL OR q.name = $2)"
    " ORDER BY j.lease_expires_at LIMIT $3 FOR UPDATE OF j SKIP LOCKED",
    3, {TIMESTAMPTZOID, TEXTOID, INT4OID}, nullptr};

Statement kReturnExpired = {
    "UPDATE claimqueue.jobs j SET state = u.state, run_at = coalesce(u.run_at, j.run_at),"
    " finished_at = CASE WHEN u.state = 'failed' THEN $4 END, lease_expires_at = NULL,"
    " last_error = 'lease expired (worker ' || coalesce(j.worker, '?') || ', attempt '"
    "              || j.attempt::text || ')'"
    " FROM unnest($1::bigint[], $2::text[], $3::timestamptz[]) AS u(id, state, run_at)"
    " WHERE j.id = u.id",
    4, {INT8ARRAYOID, TEXTARRAYOID, TIMESTAMPTZARRAYOID, TIMESTAMPTZOID}, nullptr};

// Finished jobs past their queue's retention (a fixed duration, the epoch rule
// of clock.hpp), found per queue through jobs_finished_idx. The DELETE checks
// the state again: the rows are locked by then, so this only documents intent.
Statement kPurge = {
    "WITH doomed AS ("
    "   SELECT j.id FROM claimqueue.queues q"
    "   JOIN claimqueue.jobs j ON j.queue_id = q.queue_id"
    "   WHERE ($2::text IS NULL OR q.name = $2)"
    "     AND j.state IN ('done', 'failed', 'cancelled')"
    "     AND j.finished_at < $1 - pg_catalog.make_interval("
    "                              secs => pg_catalog.date_part('epoch', q.retention))"
    "   LIMIT $3 FOR UPDATE OF j SKIP LOCKED)"
    " DELETE FROM claimqueue.jobs j WHERE j.id = ANY (ARRAY(SELECT id FROM doomed))"
    "   AND j.state IN ('done', 'failed', 'cancelled')",
    3, {TIMESTAMPTZOID, TEXTOID, INT4OID}, nullptr};

constexpr int kSqlFunctionBatch = 1000;

}  // namespace

int64 ReapExpiredBatch(text *queue, int limit)
{
    ConnectSpi();
    TimestampTz now = ClockNow();
    Datum find[3] = {TimestampTzGetDatum(now), PointerGetDatum(queue), Int32GetDatum(limit)};
    uint64 n = Execute(&kLockExpired, find, queue ? nullptr : " n ");
    if (n > 0) {
        Datum *ids = (Datum *) palloc(sizeof(Datum) * n);
        Datum *states = (Datum *) palloc(sizeof(Datum) * n);
        Datum *run_ats = (Datum *) palloc(sizeof(Datum) * n);
        bool *run_at_nulls = (bool *) palloc(sizeof(bool) * n);
        for (uint64 i = 0; i < n; i++) {
            int32 attempt = DatumGetInt32(ResultValue(i, 2));
            bool dead = attempt >= DatumGetInt32(ResultValue(i, 3));
            ids[i] = ResultValue(i, 1);
            states[i] = CStringGetTextDatum(dead ? "failed" : "ready");
            run_at_nulls[i] = dead;
            run_ats[i] = dead ? 0
                              : TimestampTzGetDatum(AfterBackoff(now, attempt, ResultValue(i, 4),
                                                                 ResultValue(i, 5)));
            if (!dead)  // its queue's waiters wake once this batch commits
                NoteJobsReady(TextDatumGetCString(ResultValue(i, 6)), 1,
                              DatumGetTimestampTz(run_ats[i]));
        }
        int dims[1] = {(int) n};
        int lbs[1] = {1};
        Datum update[4] = {
            PointerGetDatum(Int8Array(ids, (int) n)),
            PointerGetDatum(construct_array(states, (int) n, TEXTOID, -1, false, TYPALIGN_INT)),
            PointerGetDatum(construct_md_array(run_ats, run_at_nulls, 1, dims, lbs, TIMESTAMPTZOID,
                                               8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)),
            TimestampTzGetDatum(now)};
        Execute(&kReturnExpired, update, nullptr);
    }
    FinishSpi();
    return (int64) n;
}

int64 PurgeFinishedBatch(text *queue, int limit)
{
    ConnectSpi();
    Datum args[3] = {TimestampTzGetDatum(ClockNow()), PointerGetDatum(queue),
                     Int32GetDatum(limit)};
    uint64 n = Execute(&kPurge, args, queue ? nullptr : " n ");
    FinishSpi();
    return (int64) n;
}

int64 ReapExpired(text *queue)
{
    ConnectSpi();  // the batches nest their own SPI connections inside this one
    if (queue)
        RequireQueueExists(queue);
    int64 total = 0;
    for (int64 n = kSqlFunctionBatch; n == kSqlFunctionBatch;) {
        n = ReapExpiredBatch(queue, kSqlFunctionBatch);
        total += n;
    }
    FinishSpi();
    if (total > 0)
        ereport(LOG, (errmsg("claimqueue: reaped %lld expired leases", (long long) total)));
    return total;
}

int64 PurgeFinished(text *queue)
{
    ConnectSpi();  // the batches nest their own SPI connections inside this one
    if (queue)
        RequireQueueExists(queue);
    int64 total = 0;
    for (int64 n = kSqlFunctionBatch; n == kSqlFunctionBatch;) {
        n = PurgeFinishedBatch(queue, kSqlFunctionBatch);
        total += n;
    }
    FinishSpi();
    if (total > 0)
        ereport(LOG, (errmsg("claimqueue: purged %lld finished jobs past retention",
                             (long long) total)));
    return total;
}

}  // namespace claimqueue

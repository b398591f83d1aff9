// The claim engine (see claim.hpp).
#include "engine/claim.hpp"

extern "C" {
#include "commands/prepare.h"
#include "common/pg_prng.h"
}

#include "core/rules.hpp"
#include "pg/clock.hpp"
#include "engine/queue_cache.hpp"
#include "engine/queues.hpp"
#include "pg/statement.hpp"
#include "pg/errors.h"
#include "cursors/cursors.hpp"
#include "wait/ready_notices.hpp"

namespace claimqueue {
namespace {

// The claim's second half, shared by both forms: mark the candidates running
// ($1 queue id, $2 worker, $4 now, $5 lease or NULL for the queue's) and
// return dequeue()'s columns in claim order.
#define CQ_CLAIM_UPDATE(order)                                                                \
    " claimed AS ("                                                                            \
    "   UPDATE claimqueue.jobs j"                                                              \
    "   SET state = 'running', attempt = j.attempt + 1, worker = $2, started_at = $4,"         \
    "       lease_expires_at = " CQ_PLUS_DURATION("$4", "coalesce($5, (SELECT q.lease"         \
    "           FROM claimqueue.queues q WHERE q.queue_id = $1))")                             \
    "   WHERE j.id = ANY (ARRAY(SELECT id FROM candidate))"                                    \
    "   RETURNING j.id, j.payload, j.attempt, j.max_attempts, j.priority, j.lease_expires_at," \
    "             j.created_at, j.pos)"                                                        \
    " SELECT id, payload, attempt, max_attempts, priority::integer, lease_expires_at, created_at" \
    " FROM claimed ORDER BY " order

// A claim takes jobs one lane (queue, priority) at a time, highest priority
// first, each lane in position order from its cursor (claim_cursors.hpp):
// lock up to $3 claimable jobs at or past position $7, skipping rows other
// sessions hold, and mark them running in the same statement. The ready index
// (queue_id, priority DESC, pos) WHERE state = 'ready' AND pos IS NOT NULL
// serves filter and order, so neither finished nor already-claimed jobs below
// the cursor are visited.
#define CQ_CLAIM_SQL                                                                          \
    "WITH candidate AS ("                                                                      \
    "   SELECT j.id FROM claimqueue.jobs j"                                                    \
    "   WHERE j.queue_id = $1 AND j.priority = $6 AND j.state = 'ready'"                       \
    "     AND j.pos IS NOT NULL AND j.pos >= $7"                                               \
    "   ORDER BY j.pos"                                                                        \
    "   LIMIT $3"                                                                              \
    "   FOR UPDATE OF j SKIP LOCKED),"                                                         \
    CQ_CLAIM_UPDATE("pos")

Statement kClaim = {
    CQ_CLAIM_SQL, 7,
    {INT4OID, TEXTOID, INT4OID, TIMESTAMPTZOID, INTERVALOID, INT2OID, INT8OID}, nullptr};

// Without a cursor (library not preloaded, or the table of cursors full): one
// statement over all lanes, from the start of each.
Statement kClaimWithoutCursor = {
    "WITH candidate AS ("
    "   SELECT j.id FROM claimqueue.jobs j"
    "   WHERE j.queue_id = $1 AND j.state = 'ready' AND j.pos IS NOT NULL"
    "   ORDER BY j.priority DESC, j.pos"
    "   LIMIT $3"
    "   FOR UPDATE OF j SKIP LOCKED),"
    CQ_CLAIM_UPDATE("priority DESC, pos"),
    5, {INT4OID, TEXTOID, INT4OID, TIMESTAMPTZOID, INTERVALOID}, nullptr};

Statement kComplete = {
    "UPDATE claimqueue.jobs SET state = 'done', finished_at = $3, lease_expires_at = NULL"
    " WHERE id = $1 AND attempt = $2 AND state = 'running'",
    3, {INT8OID, INT4OID, TIMESTAMPTZOID}, nullptr};

Statement kCompleteMany = {
    "UPDATE claimqueue.jobs j SET state = 'done', finished_at = $3, lease_expires_at = NULL"
    " FROM unnest($1::bigint[], $2::integer[]) AS u(id, attempt)"
    " WHERE j.id = u.id AND j.attempt = u.attempt AND j.state = 'running'"
    " RETURNING j.id",
    3, {INT8ARRAYOID, INT4ARRAYOID, TIMESTAMPTZOID}, nullptr};

Statement kJobState = {
    "SELECT state, attempt FROM claimqueue.jobs WHERE id = $1", 1, {INT8OID}, nullptr};

Statement kLockForFail = {
    "SELECT j.attempt, j.max_attempts, q.backoff_base, q.backoff_cap, q.name"
    " FROM claimqueue.jobs j JOIN claimqueue.queues q ON q.queue_id = j.queue_id"
    " WHERE j.id = $1 AND j.attempt = $2 AND j.state = 'running' FOR UPDATE OF j",
    2, {INT8OID, INT4OID}, nullptr};

Statement kRecordFailure = {
    "UPDATE claimqueue.jobs SET state = $2, run_at = coalesce($3, run_at), last_error = $4,"
    " finished_at = $5, lease_expires_at = NULL,"
    " pos = CASE WHEN $2 = 'ready' THEN claimqueue.ready_position(queue_id, priority, $3, $6) END"
    " WHERE id = $1",
    6, {INT8OID, TEXTOID, TIMESTAMPTZOID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID}, nullptr};

Statement kHeartbeat = {
    "UPDATE claimqueue.jobs j SET lease_expires_at = "
    CQ_PLUS_DURATION("$3", "coalesce($4, (SELECT q.lease FROM claimqueue.queues q"
                                        " WHERE q.queue_id = j.queue_id))")
    " WHERE j.id = $1 AND j.attempt = $2 AND j.state = 'running' RETURNING j.lease_expires_at",
    4, {INT8OID, INT4OID, TIMESTAMPTZOID, INTERVALOID}, nullptr};

// A revived job must not take a dedup_key that a live job holds.
Statement kRetry = {
    "UPDATE claimqueue.jobs j SET state = 'ready', run_at = $2, finished_at = NULL,"
    " lease_expires_at = NULL, max_attempts = greatest(j.max_attempts, j.attempt + 1),"
    " pos = claimqueue.ready_position(j.queue_id, j.priority, $2, $3)"
    " WHERE j.id = $1 AND j.state IN ('failed', 'cancelled')"
    " AND NOT EXISTS (SELECT 1 FROM claimqueue.jobs o WHERE o.queue_id = j.queue_id"
    "                 AND o.dedup_key = j.dedup_key AND o.state IN ('ready', 'running'))"
    " RETURNING (SELECT q.name FROM claimqueue.queues q WHERE q.queue_id = j.queue_id)",
    3, {INT8OID, TIMESTAMPTZOID, TIMESTAMPTZOID}, nullptr};

Statement kLiveTwin = {
    "SELECT o.id, o.dedup_key FROM claimqueue.jobs j JOIN claimqueue.jobs o"
    " ON o.queue_id = j.queue_id AND o.dedup_key = j.dedup_key"
    " WHERE j.id = $1 AND o.state IN ('ready', 'running')",
    1, {INT8OID}, nullptr};

Statement kCancel = {
    "UPDATE claimqueue.jobs SET state = 'cancelled', finished_at = $2, lease_expires_at = NULL"
    " WHERE id = $1 AND state IN ('ready', 'running')",
    2, {INT8OID, TIMESTAMPTZOID}, nullptr};

// The job's current state; its attempt goes to *attempt when given. Raises
// QC002 when no job has that id.
char *JobState(int64 id, int32 *attempt = nullptr)
{
    Datum args[1] = {Int64GetDatum(id)};
    if (Execute(&kJobState, args, nullptr, 1) == 0)
        ereport(ERROR, (errcode(ERRCODE_CQ_JOB_NOT_FOUND),
                        errmsg("job %lld does not exist", (long long) id)));
    if (attempt)
        *attempt = DatumGetInt32(ResultValue(0, 2));
    return TextDatumGetCString(ResultValue(0, 1));
}

// Called when a fenced UPDATE matched nothing: says why, with the right code.
[[noreturn]] void ReportNotHeld(int64 id, int32 attempt, const char *action)
{
    Datum args[1] = {Int64GetDatum(id)};
    // Under REPEATABLE READ or SERIALIZABLE the snapshot may predate the
    // claim: if the job is running under this attempt by now, the claim is
    // valid and only this transaction is too old to act on it.
    if (IsolationUsesXactSnapshot() && ExecuteLatest(&kJobState, args, nullptr, 1) == 1 &&
        DatumGetInt32(ResultValue(0, 2)) == attempt &&
        strcmp(TextDatumGetCString(ResultValue(0, 1)), "running") == 0)
        ereport(ERROR,
                (errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
                 errmsg("could not %s job %lld: it was claimed after this transaction's snapshot",
                        action, (long long) id),
                 errhint("Retry the transaction; attempt %d still holds the job.", attempt)));
    int32 current;
    char *state = JobState(id, &current);
    ereport(ERROR,
            (errcode(ERRCODE_CQ_STALE_CLAIM),
             errmsg("cannot %s job %lld: attempt %d no longer holds it", action, (long long) id,
                    attempt),
             errdetail("The job is %s and its latest attempt is %d.", state, current),
             attempt > current
                 ? errhint("Attempt %d was never issued; pass the attempt that dequeue() "
                           "returned with the job.", attempt)
                 : errhint("The lease of attempt %d expired and the job was reclaimed, or it "
                           "was finished or cancelled. Discard this attempt's work and roll "
                           "back.", attempt)));
    pg_unreachable();
}

// For retry and cancel: the job is missing or in a state the action does not take.
[[noreturn]] void ReportWrongState(int64 id, const char *action, const char *allowed)
{
    char *state = JobState(id);
    ereport(ERROR, (errcode(ERRCODE_CQ_JOB_STATE_CONFLICT),
                    errmsg("cannot %s job %lld: it is %s", action, (long long) id, state),
                    errhint("%s applies to %s jobs.", action, allowed)));
    pg_unreachable();
}

}  // namespace

TimestampTz AfterBackoff(TimestampTz now, int attempts_made, Datum base, Datum cap)
{
    int64 delay = rules::BackoffUsec(attempts_made, IntervalUsec(DatumGetIntervalP(base)),
                                     IntervalUsec(DatumGetIntervalP(cap)),
                                     pg_prng_double(&pg_global_prng_state));
    return now + delay;
}

void RequireReadCommitted(const char *function)
{
    if (IsolationUsesXactSnapshot())
        ereport(ERROR,
                (errcode(ERRCODE_CQ_ISOLATION_NOT_SUPPORTED),
                 errmsg("%s cannot run under %s isolation", function,
                        IsolationIsSerializable() ? "SERIALIZABLE" : "REPEATABLE READ"),
                 errdetail("A claim must see jobs committed after the transaction began and skip "
                           "rows locked by others; a transaction snapshot does neither."),
                 errhint("Run %s in a READ COMMITTED transaction.", function)));
}

namespace {

// The claim, inside the caller's SPI connection, by queue id: one statement
// per lane the cursors' walk yields, highest priority first, from the lane's
// cursor. The statements' columns are dequeue()'s, so rows go straight into
// the caller's store.
uint64 ClaimFromQueue(int32 queue_id, text *worker, int32 batch, Interval *lease,
                      TimestampTz now, Tuplestorestate *out, MemoryContext out_context)
{
    Datum args[7] = {Int32GetDatum(queue_id), PointerGetDatum(worker), Int32GetDatum(batch),
                     TimestampTzGetDatum(now), PointerGetDatum(lease), 0, 0};
    const char *nulls = lease ? nullptr : "    n  ";
    LaneWalk walk;
    BeginLaneWalk(&walk, queue_id, now);
    uint64 claimed = 0;
    if (!WalkHasCursors(&walk)) {
        claimed = ExecuteInto(&kClaimWithoutCursor, args, nulls, out, out_context);
    } else {
        int priority;
        int64 from;
        while (claimed < (uint64) batch && NextLane(&walk, &priority, &from)) {
            args[2] = Int32GetDatum(batch - (int32) claimed);
            args[5] = Int16GetDatum(priority);
            args[6] = Int64GetDatum(from);
            claimed += ExecuteInto(&kClaim, args, nulls, out, out_context);
        }
    }
    EndLaneWalk(&walk);
    return claimed;
}

// The claim by queue name, with the id from the queue cache when it has one,
// so a claim needs no lookup. A claim that finds nothing under a cached id
// looks the name up again (it raises QC001 if the queue is gone): a queue
// dropped and re-created under the same name has a new id.
uint64 ClaimInto(text *queue, text *worker, int32 batch, Interval *lease, TimestampTz now,
                 Tuplestorestate *out, MemoryContext out_context)
{
    int32 cached = CachedQueueId(queue);
    int32 queue_id = cached != 0 ? cached : QueueIdOf(queue);
    uint64 n = ClaimFromQueue(queue_id, worker, batch, lease, now, out, out_context);
    if (n == 0 && cached != 0) {
        int32 current = QueueIdOf(queue);
        if (current != queue_id)
            n = ClaimFromQueue(current, worker, batch, lease, now, out, out_context);
    }
    return n;
}

// complete(), inside the caller's SPI connection.
void CompleteInto(int64 id, int32 attempt, TimestampTz now)
{
    Datum args[3] = {Int64GetDatum(id), Int32GetDatum(attempt), TimestampTzGetDatum(now)};
    if (Execute(&kComplete, args, nullptr) != 1)
        ReportNotHeld(id, attempt, "complete");
}

}  // namespace

uint64 ClaimJobs(text *queue, text *worker, int32 batch, Interval *lease, Tuplestorestate *out,
                 MemoryContext out_context)
{
    ConnectSpi();
    NoteClaimStarting();  // before the clock is read for the leases
    uint64 n = ClaimInto(queue, worker, batch, lease, ClockNow(), out, out_context);
    FinishSpi();
    return n;
}

uint64 CompleteAndClaimJobs(const int64 *id, int32 attempt, text *queue, text *worker,
                            int32 batch, Interval *lease, Tuplestorestate *out,
                            MemoryContext out_context)
{
    ConnectSpi();
    NoteClaimStarting();  // before the clock is read for the leases
    TimestampTz now = ClockNow();
    if (id != nullptr)
        CompleteInto(*id, attempt, now);  // raises before anything is claimed
    uint64 n = ClaimInto(queue, worker, batch, lease, now, out, out_context);
    FinishSpi();
    return n;
}

bool NextDue(text *queue, TimestampTz *due)
{
    ConnectSpi();
    bool found = NextDueAt(QueueIdOf(queue), due);
    FinishSpi();
    return found;
}

void CompleteJob(int64 id, int32 attempt)
{
    ConnectSpi();
    CompleteInto(id, attempt, ClockNow());
    FinishSpi();
}

void CompleteJobs(int n, const int64 *ids, const int32 *attempts)
{
    ConnectSpi();
    Datum *id_datums = (Datum *) palloc(sizeof(Datum) * n);
    Datum *attempt_datums = (Datum *) palloc(sizeof(Datum) * n);
    for (int i = 0; i < n; i++) {
        id_datums[i] = Int64GetDatum(ids[i]);
        attempt_datums[i] = Int32GetDatum(attempts[i]);
    }
    Datum args[3] = {
        PointerGetDatum(Int8Array(id_datums, n)),
        PointerGetDatum(construct_array(attempt_datums, n, INT4OID, sizeof(int32), true,
                                        TYPALIGN_INT)),
        TimestampTzGetDatum(ClockNow())};
    uint64 done = Execute(&kCompleteMany, args, nullptr);
    if (done != (uint64) n) {
        // Name the first job that was not held; the error undoes the others.
        bool *held = (bool *) palloc0(sizeof(bool) * n);
        for (uint64 row = 0; row < done; row++) {
            int64 id = DatumGetInt64(ResultValue(row, 1));
            for (int i = 0; i < n; i++)
                if (ids[i] == id)
                    held[i] = true;
        }
        for (int i = 0; i < n; i++)
            if (!held[i])
                ReportNotHeld(ids[i], attempts[i], "complete");
    }
    FinishSpi();
}

const char *FailJob(int64 id, int32 attempt, text *error, Interval *retry_in)
{
    ConnectSpi();
    Datum key[2] = {Int64GetDatum(id), Int32GetDatum(attempt)};
    if (Execute(&kLockForFail, key, nullptr) != 1)
        ReportNotHeld(id, attempt, "fail");
    int32 max_attempts = DatumGetInt32(ResultValue(0, 2));
    TimestampTz now = ClockNow();
    bool dead = attempt >= max_attempts;
    TimestampTz next_run = 0;
    if (!dead)
        next_run = retry_in ? now + IntervalUsec(retry_in)
                            : AfterBackoff(now, attempt, ResultValue(0, 3), ResultValue(0, 4));
    const char *state = dead ? "failed" : "ready";
    Datum args[6] = {Int64GetDatum(id), CStringGetTextDatum(state),
                     TimestampTzGetDatum(next_run), PointerGetDatum(error),
                     TimestampTzGetDatum(now), TimestampTzGetDatum(now)};
    char nulls[7] = "      ";
    if (dead)
        nulls[2] = 'n';
    else
        nulls[4] = 'n';
    if (error == nullptr)
        nulls[3] = 'n';
    if (!dead)  // retried: its queue's waiters wake at commit
        NoteJobsReady(TextDatumGetCString(ResultValue(0, 5)), 1, next_run);
    Execute(&kRecordFailure, args, nulls);
    FinishSpi();
    return state;
}

TimestampTz HeartbeatJob(int64 id, int32 attempt, Interval *extend)
{
    ConnectSpi();
    Datum args[4] = {Int64GetDatum(id), Int32GetDatum(attempt), TimestampTzGetDatum(ClockNow()),
                     PointerGetDatum(extend)};
    const char *nulls = extend ? nullptr : "   n";
    if (Execute(&kHeartbeat, args, nulls) != 1)
        ReportNotHeld(id, attempt, "heartbeat");
    TimestampTz expires = DatumGetTimestampTz(ResultValue(0, 1));
    FinishSpi();
    return expires;
}

void RetryJob(int64 id, Datum run_at, bool run_at_null)
{
    ConnectSpi();
    TimestampTz now = ClockNow();
    Datum args[3] = {Int64GetDatum(id), run_at_null ? TimestampTzGetDatum(now) : run_at,
                     TimestampTzGetDatum(now)};
    if (Execute(&kRetry, args, nullptr) != 1) {
        if (Execute(&kLiveTwin, args, nullptr, 1) == 1)
            ereport(ERROR,
                    (errcode(ERRCODE_CQ_JOB_STATE_CONFLICT),
                     errmsg("cannot retry job %lld: job %lld holds its dedup_key \"%s\"",
                            (long long) id, (long long) DatumGetInt64(ResultValue(0, 1)),
                            TextDatumGetCString(ResultValue(0, 2))),
                     errhint("Retry it once job %lld has finished, or cancel that job.",
                             (long long) DatumGetInt64(ResultValue(0, 1)))));
        ReportWrongState(id, "retry", "failed and cancelled");
    }
    NoteJobsReady(TextDatumGetCString(ResultValue(0, 1)), 1, DatumGetTimestampTz(args[1]));
    FinishSpi();
}

void CancelJob(int64 id)
{
    ConnectSpi();
    Datum args[2] = {Int64GetDatum(id), TimestampTzGetDatum(ClockNow())};
    if (Execute(&kCancel, args, nullptr) != 1)
        ReportWrongState(id, "cancel", "ready and running");
    FinishSpi();
}

void ExplainClaim(text *queue, int32 batch, Tuplestorestate *out, TupleDesc out_desc)
{
    // The generic plan, which is what dequeue() runs (statement.cpp prepares
    // every statement with CURSOR_OPT_GENERIC_PLAN): PREPARE the same text and
    // EXPLAIN EXECUTE it under plan_cache_mode = force_generic_plan (set on
    // the SQL function), so $n stay symbolic. The prepared statement is
    // session-level, so it is dropped on every exit, errors included.
    static const char *const kName = "claimqueue_explain_claim";
    DropPreparedStatement(kName, false);
    ConnectSpi();
    PG_TRY();
    {
        StringInfoData sql;
        initStringInfo(&sql);
        appendStringInfo(&sql,
                         "PREPARE %s(integer, text, integer, timestamptz, interval, smallint,"
                         " bigint) AS " CQ_CLAIM_SQL,
                         kName);
        if (SPI_execute(sql.data, false, 0) < 0)
            elog(ERROR, "claimqueue: could not prepare the claim statement");
        resetStringInfo(&sql);
        appendStringInfo(&sql, "EXPLAIN (COSTS OFF) EXECUTE %s(%d, 'explain', %d, now(), NULL, 0, 0)",
                         kName, QueueIdOf(queue), batch);
        if (SPI_execute(sql.data, false, 0) < 0)
            elog(ERROR, "claimqueue: could not explain the claim statement");
        for (uint64 row = 0; row < SPI_processed; row++) {
            bool isnull;
            Datum line = ResultValue(row, 1, &isnull);
            tuplestore_putvalues(out, out_desc, &line, &isnull);
        }
    }
    PG_FINALLY();
    {
        DropPreparedStatement(kName, false);
    }
    PG_END_TRY();
    FinishSpi();
}

}  // namespace claimqueue

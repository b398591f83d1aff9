// SQL API, waiting: the procedures dequeue_wait() and await_jobs(), and
// next_due(). src/wait/README.md has the wake-up rules and why both are
// procedures.
#include "pg/firewall.hpp"

extern "C" {
#include "access/htup_details.h"
#include "commands/extension.h"
#include "utils/inval.h"
#include "nodes/parsenodes.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "utils/snapmgr.h"
}

#include "api/access.hpp"
#include "api/args.hpp"
#include "core/rules.hpp"
#include "engine/claim.hpp"
#include "pg/clock.hpp"
#include "wait/waiters.hpp"

using namespace claimqueue;

namespace {

// Sleep after finding a due job locked by a claim still in progress (it may
// roll back, and no commit will announce it): 10 ms, doubling up to 1 s.
constexpr int64 kLockedRetryMinUsec = 10 * 1000;
constexpr int64 kLockedRetryMaxUsec = 1000 * 1000;
// One sleep is at most an hour (WaitLatch's timeout ends up in an int of
// milliseconds); a longer wait just looks again in between.
constexpr int64 kMaxSleepMs = 3600 * 1000;

// The statements dequeue_wait runs through SPI: the SQL functions dequeue() and
// next_due() of the extension's schema, so their privilege checks (EXECUTE,
// the queue's consume grant) and pinned search_path apply, as without waiting.
struct WaitQueries {
    char *claim;
    char *next_due;
    Datum args[4];
    char nulls[5];
};

// Runs `sql` through SPI. An error of dequeue() or next_due() (QC001, 42501,
// ...) is re-raised as it is, without SPI's "SQL statement" context line: the
// caller wrote CALL dequeue_wait, not our query.
int ExecuteQuietly(const char *sql, int nargs, Oid *types, Datum *args, const char *nulls,
                   bool read_only)
{
    MemoryContext caller = CurrentMemoryContext;
    volatile int rc = 0;
    PG_TRY();
    {
        rc = SPI_execute_with_args(sql, nargs, types, args, nulls, read_only, 1);
    }
    PG_CATCH();
    {
        MemoryContextSwitchTo(caller);
        ErrorData *error = CopyErrorData();
        FlushErrorState();
        error->context = nullptr;
        ReThrowError(error);
    }
    PG_END_TRY();
    return rc;
}

// Claims through dequeue(); returns the jobs as a jsonb array (in the caller's
// memory context) and their number in *n.
Datum Claim(WaitQueries *q, int64 *n)
{
    static Oid types[4] = {TEXTOID, TEXTOID, INT4OID, INTERVALOID};
    int rc = ExecuteQuietly(q->claim, 4, types, q->args, q->nulls, false);
    if (rc != SPI_OK_SELECT || SPI_processed != 1)
        elog(ERROR, "claimqueue: dequeue_wait's claim failed: %s", SPI_result_code_string(rc));
    bool isnull;
    *n = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
    Datum jobs = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
    return SPI_datumTransfer(jobs, false, -1);
}

// next_due(queue), or 0 when the queue has no ready job.
TimestampTz NextDueVia(WaitQueries *q)
{
    static Oid types[1] = {TEXTOID};
    int rc = ExecuteQuietly(q->next_due, 1, types, q->args, nullptr, true);
    if (rc != SPI_OK_SELECT || SPI_processed != 1)
        elog(ERROR, "claimqueue: dequeue_wait's next_due failed: %s", SPI_result_code_string(rc));
    bool isnull;
    Datum due = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
    return isnull ? 0 : DatumGetTimestampTz(due);
}

// After a sleep, before the next look: catalog and grant changes that
// committed meanwhile (a revoke_queue, a REVOKE EXECUTE, DROP EXTENSION) take
// effect now, not at the next transaction. The transaction SPI_commit started
// before the sleep has not looked at any of them yet, and the look's first
// step is the privilege check, which would otherwise use what this session
// remembered before it slept. `waiter` says who waited ("dequeue_wait()
// waited on queue ..."), `lost` what did not happen.
void RecheckAfterSleep(const char *waiter, const char *procedure, const char *lost)
{
    AcceptInvalidationMessages();
    if (!OidIsValid(get_extension_oid("claimqueue", true)))
        ereport(ERROR,
                (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                 errmsg("extension \"claimqueue\" was dropped while %s", waiter),
                 errdetail("%s", lost),
                 errhint("Create the extension again, or stop calling %s.", procedure)));
}

// True when this call may commit: CALL on its own, outside a transaction block.
bool CanCommit(FunctionCallInfo fcinfo)
{
    return fcinfo->context != nullptr && IsA(fcinfo->context, CallContext) &&
           !((CallContext *) fcinfo->context)->atomic;
}

}  // namespace

// claimqueue.waiters(): this database's waiting workers (tests, monitoring)
CQ_FUNCTION(cq_waiters)
{
    InitMaterializedSRF(fcinfo, 0);
    ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
    ListWaiters(rsinfo->setResult, rsinfo->setDesc);
    return (Datum) 0;
}

// next_due(queue) -> when the queue's next ready job is due, NULL if it has none
CQ_QUEUE_FUNCTION(cq_next_due)
{
    text *queue = QueueNameArg(fcinfo, 0);
    RequireQueuePrivilege(queue, QueuePrivilege::kConsume, "next_due()");
    TimestampTz due;
    if (!NextDue(queue, &due))
        PG_RETURN_NULL();
    PG_RETURN_TIMESTAMPTZ(due);
}

// CALL dequeue_wait(queue, worker, batch, lease, wait, jobs,
// release_on_disconnect): dequeue() that, when nothing is claimable, commits
// and sleeps until a job may be claimable or `wait` runs out, then claims.
// Returns the jobs as a jsonb array ([] if none). release_on_disconnect comes
// after the INOUT jobs so that positional calls of 0.4.0 keep their meaning
// (and 0.4.0's procedure passes no such argument).
CQ_FUNCTION(cq_dequeue_wait)
{
    ClaimArgs claim = ClaimArgsFrom(fcinfo, 0);
    bool release_on_disconnect = ReleaseOnDisconnectArg(fcinfo, 6);
    text *queue = claim.queue;
    text *worker = claim.worker;
    int32 batch = claim.batch;
    Interval *lease = claim.lease;
    Interval *wait = IntervalArg(fcinfo, 4, "wait");
    CheckIntervalArg("wait", wait, false);
    int64 wait_usec = IntervalUsec(wait);
    char *queue_name = text_to_cstring(queue);

    bool can_commit = CanCommit(fcinfo);
    if (wait_usec > 0 && !WaitersAvailable())
        ereport(ERROR,
                (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                 errmsg("dequeue_wait() cannot wait on queue \"%s\": claimqueue is not in "
                        "shared_preload_libraries", queue_name),
                 errdetail("Waiters are registered in shared memory, which exists only when "
                           "the library is preloaded."),
                 errhint("Add claimqueue to shared_preload_libraries and restart the server, "
                         "or pass wait => '0' and poll with dequeue().")));
    if (wait_usec > 0 && !can_commit)
        ereport(ERROR,
                (errcode(ERRCODE_ACTIVE_SQL_TRANSACTION),
                 errmsg("dequeue_wait() cannot wait inside a transaction block"),
                 errdetail("It commits before it sleeps, so that a waiting worker holds no "
                           "snapshot back; only a CALL on its own can commit."),
                 errhint("CALL dequeue_wait() in autocommit mode, outside BEGIN ... COMMIT and "
                         "outside functions, or use dequeue() inside the transaction.")));

    TupleDesc result_desc;
    if (get_call_result_type(fcinfo, nullptr, &result_desc) != TYPEFUNC_COMPOSITE)
        elog(ERROR, "claimqueue: dequeue_wait must be declared with an INOUT jobs argument");
    result_desc = BlessTupleDesc(result_desc);

    // Everything the loop keeps lives in this context, which outlives the
    // commits (the CALL's portal memory).
    WaitQueries q;
    const char *schema =
        quote_identifier(get_namespace_name(get_func_namespace(fcinfo->flinfo->fn_oid)));
    q.claim = psprintf(
        "SELECT coalesce(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(d) OPERATOR(pg_catalog.-) "
        "'o'::pg_catalog.text ORDER BY d.o), '[]'::pg_catalog.jsonb), pg_catalog.count(*)"
        " FROM %s.dequeue($1, $2, $3, $4%s) WITH ORDINALITY AS d(id, payload, attempt,"
        " max_attempts, priority, lease_expires_at, enqueued_at, o)",
        schema, release_on_disconnect ? ", release_on_disconnect => true" : "");
    q.next_due = psprintf("SELECT %s.next_due($1)", schema);
    q.args[0] = PointerGetDatum(queue);
    q.args[1] = PointerGetDatum(worker);
    q.args[2] = Int32GetDatum(batch);
    q.args[3] = PointerGetDatum(lease);
    strlcpy(q.nulls, lease ? "    " : "   n", sizeof(q.nulls));

    int rc = SPI_connect_ext(can_commit ? SPI_OPT_NONATOMIC : 0);
    if (rc != SPI_OK_CONNECT)
        elog(ERROR, "claimqueue: SPI_connect failed: %s", SPI_result_code_string(rc));
    int64 n = 0;  // jobs claimed
    Datum jobs = 0;
    if (wait_usec == 0) {
        jobs = Claim(&q, &n);
    } else {
        TimestampTz deadline = ClockNow() + wait_usec;
        RegisterWaiter(queue_name, deadline);
        volatile bool uncounted_full_batch = false;
        volatile Datum claimed = 0;
        PG_TRY();
        {
            int64 locked_retry = kLockedRetryMinUsec;
            for (;;) {
                // Registered before this look: a job committed after it wakes us.
                bool counted = WaiterLooks();
                int64 got;
                Datum found = Claim(&q, &got);
                TimestampTz now = ClockNow();
                if (got > 0 || now >= deadline) {
                    claimed = found;
                    n = got;
                    uncounted_full_batch = got == batch && !counted;
                    break;
                }
                TimestampTz due = NextDueVia(&q);
                TimestampTz until = WaiterSleepUntil(due > now ? due : 0);
                if (due != 0 && due <= now) {
                    // Due but skipped: locked by a claim in progress.
                    until = Min(until, now + locked_retry);
                    locked_retry = Min(locked_retry * 2, kLockedRetryMaxUsec);
                } else {
                    locked_retry = kLockedRetryMinUsec;
                }
                // Commit: from here until the next claim this backend holds no
                // snapshot and no transaction id (backend_xmin stays NULL).
                SPI_commit();
                InvalidateCatalogSnapshot();
                long timeout_ms = (long) Min((until - ClockNow() + 999) / 1000, kMaxSleepMs);
                if (timeout_ms > 0)
                    (void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
                                     timeout_ms, PG_WAIT_EXTENSION);
                ResetLatch(MyLatch);
                CHECK_FOR_INTERRUPTS();
                RecheckAfterSleep(psprintf("dequeue_wait() waited on queue \"%s\"", queue_name),
                                  "dequeue_wait()", "No job was claimed.");
            }
        }
        PG_FINALLY();
        {
            DeregisterWaiter(uncounted_full_batch);
        }
        PG_END_TRY();
        jobs = claimed;
    }
    rc = SPI_finish();
    if (rc != SPI_OK_FINISH)
        elog(ERROR, "claimqueue: SPI_finish failed: %s", SPI_result_code_string(rc));

    bool isnull = false;
    HeapTuple row = heap_form_tuple(result_desc, &jobs, &isnull);
    return HeapTupleGetDatum(row);
}

namespace {

// What one look of await_jobs() found: every job's status as a jsonb array
// (only when it is the answer), and the jobs still ready or running.
struct AwaitLook {
    int64 unfinished;
    JobFilter unfinished_jobs;
    Datum jobs;  // in the caller's memory context; 0 unless `keep`
};

// job_status(ids) through SPI, as the caller (its EXECUTE and which queues it
// may see are checked there). `keep`: copy the statuses out, as the answer.
void LookAtJobs(const char *sql, ArrayType *ids, bool keep, AwaitLook *look)
{
    static Oid types[1] = {INT8ARRAYOID};
    Datum args[1] = {PointerGetDatum(ids)};
    int rc = ExecuteQuietly(sql, 1, types, args, nullptr, false);
    if (rc != SPI_OK_SELECT || SPI_processed != 1)
        elog(ERROR, "claimqueue: await_jobs's look failed: %s", SPI_result_code_string(rc));
    HeapTuple row = SPI_tuptable->vals[0];
    TupleDesc desc = SPI_tuptable->tupdesc;
    bool isnull;
    memset(&look->unfinished_jobs, 0, sizeof(look->unfinished_jobs));
    look->unfinished = 0;
    Datum unfinished = SPI_getbinval(row, desc, 2, &isnull);
    if (!isnull) {
        Datum *values;
        int n;
        deconstruct_array(DatumGetArrayTypeP(unfinished), INT8OID, 8, FLOAT8PASSBYVAL,
                          TYPALIGN_DOUBLE, &values, nullptr, &n);
        for (int i = 0; i < n; i++)
            AddToJobFilter(&look->unfinished_jobs, DatumGetInt64(values[i]));
        look->unfinished = n;
    }
    look->jobs = 0;
    if (keep || look->unfinished == 0)
        look->jobs = SPI_datumTransfer(SPI_getbinval(row, desc, 1, &isnull), false, -1);
    SPI_freetuptable(SPI_tuptable);
}

}  // namespace

// CALL await_jobs(ids, timeout, jobs): waits until every job in ids is done,
// failed or cancelled (or cannot be seen), woken by the commits that finish
// them, or until timeout runs out; commits before each sleep, as dequeue_wait
// does. Returns job_status(ids) as a jsonb array, never an error on timeout.
CQ_FUNCTION(cq_await_jobs)
{
    ArrayType *ids = ArrayArg(fcinfo, 0, "ids");
    int n = ArrayGetNItems(ARR_NDIM(ids), ARR_DIMS(ids));
    rules::CheckAwaitCount(n);
    Interval *timeout = IntervalArg(fcinfo, 1, "timeout");
    CheckIntervalArg("timeout", timeout, false);
    int64 timeout_usec = IntervalUsec(timeout);

    bool can_commit = CanCommit(fcinfo);
    if (timeout_usec > 0 && !WaitersAvailable())
        ereport(ERROR,
                (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                 errmsg("await_jobs() cannot wait: claimqueue is not in shared_preload_libraries"),
                 errdetail("Waiters are registered in shared memory, which exists only when "
                           "the library is preloaded."),
                 errhint("Add claimqueue to shared_preload_libraries and restart the server, "
                         "or pass timeout => '0' and poll.")));
    if (timeout_usec > 0 && !can_commit)
        ereport(ERROR,
                (errcode(ERRCODE_ACTIVE_SQL_TRANSACTION),
                 errmsg("await_jobs() cannot wait inside a transaction block"),
                 errdetail("It commits before it sleeps, so that a waiting session holds no "
                           "snapshot back; only a CALL on its own can commit."),
                 errhint("CALL await_jobs() in autocommit mode, outside BEGIN ... COMMIT and "
                         "outside functions, or use job_status() inside the transaction.")));

    TupleDesc result_desc;
    if (get_call_result_type(fcinfo, nullptr, &result_desc) != TYPEFUNC_COMPOSITE)
        elog(ERROR, "claimqueue: await_jobs must be declared with an INOUT jobs argument");
    result_desc = BlessTupleDesc(result_desc);

    // Everything the loop keeps lives in this context, which outlives the
    // commits (the CALL's portal memory).
    const char *schema =
        quote_identifier(get_namespace_name(get_func_namespace(fcinfo->flinfo->fn_oid)));
    char *look_sql = psprintf(
        "SELECT coalesce(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(s) OPERATOR(pg_catalog.-) "
        "'o'::pg_catalog.text ORDER BY s.o), '[]'::pg_catalog.jsonb),"
        " pg_catalog.array_agg(s.id) FILTER (WHERE s.state OPERATOR(pg_catalog.=) ANY"
        " ('{ready,running}'::pg_catalog.text[]))"
        " FROM %s.job_status($1) WITH ORDINALITY AS s(id, state, attempt, result, last_error, o)",
        schema);

    int rc = SPI_connect_ext(can_commit ? SPI_OPT_NONATOMIC : 0);
    if (rc != SPI_OK_CONNECT)
        elog(ERROR, "claimqueue: SPI_connect failed: %s", SPI_result_code_string(rc));
    // A first look needs no slot: jobs already finished are the answer.
    TimestampTz deadline = ClockNow() + timeout_usec;
    AwaitLook look;
    LookAtJobs(look_sql, ids, timeout_usec == 0, &look);
    if (timeout_usec > 0 && look.unfinished > 0) {
        JobFilter all;
        memset(&all, 0, sizeof(all));
        const int64 *values = (const int64 *) ARR_DATA_PTR(ids);
        for (int i = 0; i < n; i++)
            AddToJobFilter(&all, values[i]);
        // Registered before the looks that count: a commit that finishes a
        // job after a look's snapshot finds the slot and wakes us.
        RegisterJobWaiter(&all, deadline);
        PG_TRY();
        {
            for (;;) {
                // Every awaited job wakes us from here until the look has
                // told which are unfinished: a finishing commit the look's
                // snapshot missed finds our filter full.
                JobWaiterLooks(&all);
                bool last = ClockNow() >= deadline;
                LookAtJobs(look_sql, ids, last, &look);
                if (look.unfinished == 0 || last)
                    break;
                JobWaiterWatches(&look.unfinished_jobs);
                // Commit: from here until the next look this backend holds no
                // snapshot and no transaction id (backend_xmin stays NULL).
                SPI_commit();
                InvalidateCatalogSnapshot();
                long timeout_ms =
                    (long) Min((deadline - ClockNow() + 999) / 1000, kMaxSleepMs);
                if (timeout_ms > 0)
                    (void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
                                     timeout_ms, PG_WAIT_EXTENSION);
                ResetLatch(MyLatch);
                CHECK_FOR_INTERRUPTS();
                RecheckAfterSleep("await_jobs() waited", "await_jobs()",
                                  "No job status was read.");
            }
        }
        PG_FINALLY();
        {
            DeregisterWaiter(false);
        }
        PG_END_TRY();
    }
    Datum jobs = look.jobs;
    rc = SPI_finish();
    if (rc != SPI_OK_FINISH)
        elog(ERROR, "claimqueue: SPI_finish failed: %s", SPI_result_code_string(rc));

    bool isnull = false;
    HeapTuple row = heap_form_tuple(result_desc, &jobs, &isnull);
    return HeapTupleGetDatum(row);
}

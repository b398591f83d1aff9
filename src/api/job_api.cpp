// SQL API, jobs: enqueue, enqueue_batch, dequeue, complete, fail, heartbeat,
// retry, cancel, and retry_jobs and cancel_jobs in bulk. Arguments are
// checked here, before anything changes; the claim engine (src/engine) does
// the work.
#include "pg/firewall.hpp"

extern "C" {
#include "access/detoast.h"
}

#include "api/access.hpp"
#include "api/args.hpp"
#include "core/rules.hpp"
#include "engine/bulk_jobs.hpp"
#include "engine/claim.hpp"
#include "pg/clock.hpp"
#include "engine/enqueue.hpp"
#include "engine/grants.hpp"
#include "engine/job_rows.hpp"
#include "engine/queue_cache.hpp"
#include "engine/queues.hpp"
#include "pg/settings.hpp"

using namespace claimqueue;

namespace {

[[noreturn]] void ReportInfiniteRunAt(TimestampTz run_at)
{
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("run_at '%s' is not a finite timestamp",
                           TIMESTAMP_IS_NOBEGIN(run_at) ? "-infinity" : "infinity"),
                    errhint("Pass NULL to run the job now.")));
    pg_unreachable();
}

int64 JobIdArg(FunctionCallInfo fcinfo, int n)
{
    RequireArg(fcinfo, n, "job id");
    return PG_GETARG_INT64(n);
}

int32 AttemptArg(FunctionCallInfo fcinfo, int n)
{
    RequireArg(fcinfo, n, "attempt");
    int32 attempt = PG_GETARG_INT32(n);
    if (attempt < 1)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("attempt %d is not a claim's attempt", attempt),
                        errhint("Pass the attempt that dequeue() returned with the job; it "
                                "starts at 1.")));
    return attempt;
}

// The options enqueue and enqueue_batch share: run_at (n), priority (n+1), max_attempts (n+2).
NewJob JobOptions(FunctionCallInfo fcinfo, int n)
{
    NewJob job = {};
    job.run_at_null = PG_ARGISNULL(n);
    job.run_at = job.run_at_null ? 0 : PG_GETARG_DATUM(n);
    if (!job.run_at_null && TIMESTAMP_NOT_FINITE(PG_GETARG_TIMESTAMPTZ(n)))
        ReportInfiniteRunAt(PG_GETARG_TIMESTAMPTZ(n));
    RequireArg(fcinfo, n + 1, "priority");
    rules::CheckPriority(PG_GETARG_INT32(n + 1));
    job.priority = PG_GETARG_INT32(n + 1);
    job.max_attempts_null = PG_ARGISNULL(n + 2);
    if (!job.max_attempts_null) {
        rules::CheckMaxAttempts(PG_GETARG_INT32(n + 2));
        job.max_attempts = PG_GETARG_DATUM(n + 2);
    }
    return job;
}

// The concurrency key, argument n, when the SQL declares it (0.5.0); nullptr
// when NULL or absent. Checked as a dedup key is (length).
text *ConcurrencyKeyArg(FunctionCallInfo fcinfo, int n)
{
    if (PG_NARGS() <= n)
        return nullptr;
    text *key = TextArg(fcinfo, n, "concurrency_key", true);
    if (key != nullptr)
        rules::CheckConcurrencyKey(View(key));
    return key;
}

// Every payload of a batch against claimqueue.max_payload_size, naming the first too large.
void CheckPayloadSizes(ArrayType *payloads)
{
    ArrayIterator it = array_create_iterator(payloads, 0, nullptr);
    Datum element;
    bool isnull;
    for (int64 position = 1; array_iterate(it, &element, &isnull); position++)
        if (!isnull)
            rules::CheckPayloadSize((int64) toast_raw_datum_size(element), max_payload_size,
                                    position);
    array_free_iterator(it);
}

// The result argument n of complete() or complete_and_dequeue(), checked
// against claimqueue.max_payload_size; nullptr when NULL (no result).
struct varlena *ResultArg(FunctionCallInfo fcinfo, int n)
{
    if (PG_NARGS() <= n || PG_ARGISNULL(n))
        return nullptr;
    Datum result = PG_GETARG_DATUM(n);
    rules::CheckResultSize((int64) toast_raw_datum_size(result), max_payload_size);
    return (struct varlena *) DatumGetPointer(result);
}

// The result store of dequeue() and complete_and_dequeue(). In FROM (the usual
// call) the caller passes the row type it expects; copying it spares building
// the type from pg_proc on every call.
void InitClaimSRF(FunctionCallInfo fcinfo)
{
    ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
    bool expected =
        rsinfo != nullptr && IsA(rsinfo, ReturnSetInfo) && rsinfo->expectedDesc != nullptr;
    InitMaterializedSRF(fcinfo, expected ? MAT_SRF_USE_EXPECTED_DESC : 0);
}

}  // namespace

// enqueue(queue, payload, run_at, priority, max_attempts, dedup_key, concurrency_key) -> id
CQ_QUEUE_FUNCTION(cq_enqueue)
{
    text *queue = QueueNameArg(fcinfo, 0);
    RequireArg(fcinfo, 1, "payload");
    NewJob job = JobOptions(fcinfo, 2);
    job.payload = PG_GETARG_DATUM(1);
    rules::CheckPayloadSize((int64) toast_raw_datum_size(job.payload), max_payload_size);
    text *dedup_key = TextArg(fcinfo, 5, "dedup_key", true);
    if (dedup_key)
        rules::CheckDedupKey(View(dedup_key));
    job.concurrency_key = ConcurrencyKeyArg(fcinfo, 6);
    RequireQueuePrivilege(queue, QueuePrivilege::kProduce, "enqueue()");
    PG_RETURN_INT64(EnqueueJob(queue, job, dedup_key));
}

// enqueue_batch(queue, payloads jsonb[], run_at, priority, max_attempts, concurrency_key)
// -> SETOF id
CQ_QUEUE_FUNCTION(cq_enqueue_batch)
{
    text *queue = QueueNameArg(fcinfo, 0);
    ArrayType *payloads = ArrayArg(fcinfo, 1, "payloads", "Use '{}' for a job without data.");
    NewJob common = JobOptions(fcinfo, 2);
    common.concurrency_key = ConcurrencyKeyArg(fcinfo, 5);
    CheckPayloadSizes(payloads);

    RequireQueuePrivilege(queue, QueuePrivilege::kProduce, "enqueue_batch()");

    Tuplestorestate *out = InitScalarSRF(fcinfo, INT8OID);
    ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
    int64 *ids;
    int n = EnqueueBatch(queue, PointerGetDatum(payloads), common, &ids);
    for (int i = 0; i < n; i++) {
        Datum value = Int64GetDatum(ids[i]);
        bool isnull = false;
        tuplestore_putvalues(out, rsinfo->setDesc, &value, &isnull);
    }
    return (Datum) 0;
}

// The claim arguments, checked, and the caller's consume grant on the queue.
static ClaimArgs CheckedClaimArgs(FunctionCallInfo fcinfo, int first, const char *function)
{
    ClaimArgs args = ClaimArgsFrom(fcinfo, first);
    RequireReadCommitted(function);
    RequireQueuePrivilege(args.queue, QueuePrivilege::kConsume, function);
    return args;
}

// dequeue(queue, worker, batch, lease, release_on_disconnect) -> claimed jobs
// (0.4.0 passes no release_on_disconnect)
CQ_QUEUE_FUNCTION(cq_dequeue)
{
    ClaimArgs args = CheckedClaimArgs(fcinfo, 0, "dequeue()");
    bool release_on_disconnect = ReleaseOnDisconnectArg(fcinfo, 4);
    InitClaimSRF(fcinfo);
    ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
    ClaimJobs(args.queue, args.worker, args.batch, args.lease, release_on_disconnect,
              rsinfo->setResult, rsinfo->setDesc);
    return (Datum) 0;
}

// complete_and_dequeue(id, attempt, queue, worker, batch, lease, result,
// release_on_disconnect) -> claimed jobs: complete(id, attempt, result) then
// dequeue(queue, worker, batch, lease, release_on_disconnect) in one call, for
// a worker that commits once per job. id and attempt NULL: only the claim.
// (0.4.0 passes no release_on_disconnect.)
CQ_QUEUE_FUNCTION(cq_complete_and_dequeue)
{
    bool has_previous = !PG_ARGISNULL(0);
    int64 id = 0;
    int32 attempt = 0;
    if (has_previous) {
        id = PG_GETARG_INT64(0);
        attempt = AttemptArg(fcinfo, 1);
    } else if (!PG_ARGISNULL(1))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                        errmsg("job id must not be NULL when attempt %d is given",
                               PG_GETARG_INT32(1)),
                        errhint("Pass both the id and the attempt of the job to complete, or "
                                "both NULL to only claim.")));
    ClaimArgs args = CheckedClaimArgs(fcinfo, 2, "complete_and_dequeue()");
    struct varlena *result = ResultArg(fcinfo, 6);
    bool release_on_disconnect = ReleaseOnDisconnectArg(fcinfo, 7);
    if (result != nullptr && !has_previous)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("a result needs a job to complete: id and attempt are NULL"),
                        errhint("Pass the id and attempt of the job the result belongs to, or "
                                "no result to only claim.")));
    if (has_previous)
        RequireJobPrivilege(id, QueuePrivilege::kConsume, "complete_and_dequeue()");

    InitClaimSRF(fcinfo);
    ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
    CompleteAndClaimJobs(has_previous ? &id : nullptr, attempt, result, args.queue,
                         args.worker, args.batch, args.lease, release_on_disconnect,
                         rsinfo->setResult, rsinfo->setDesc);
    return (Datum) 0;
}

// complete(id, attempt, result)
CQ_QUEUE_FUNCTION(cq_complete)
{
    int64 id = JobIdArg(fcinfo, 0);
    int32 attempt = AttemptArg(fcinfo, 1);
    struct varlena *result = ResultArg(fcinfo, 2);
    RequireJobPrivilege(id, QueuePrivilege::kConsume, "complete()");
    CompleteJob(id, attempt, result);
    PG_RETURN_VOID();
}

// complete_batch's results, aligned with its n ids: nullptr when the argument
// is NULL (no results), else n elements (an element NULL: no result), each
// checked against claimqueue.max_payload_size.
static struct varlena **BatchResults(FunctionCallInfo fcinfo, int n)
{
    if (PG_NARGS() <= 2 || PG_ARGISNULL(2))
        return nullptr;
    ArrayType *array = PG_GETARG_ARRAYTYPE_P(2);
    if (ARR_NDIM(array) > 1)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("results must be a one-dimensional array, not %d-dimensional",
                               ARR_NDIM(array))));
    int n_results = ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
    if (n_results != n)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("%d ids but %d results", n, n_results),
                        errhint("Pass one result per id, in the same order (NULL for a job "
                                "without one), or results => NULL.")));
    struct varlena **results = (struct varlena **) palloc0(sizeof(struct varlena *) * (n + 1));
    ArrayIterator it = array_create_iterator(array, 0, nullptr);
    Datum element;
    bool isnull;
    for (int i = 0; array_iterate(it, &element, &isnull); i++) {
        if (isnull)
            continue;
        rules::CheckResultSize((int64) toast_raw_datum_size(element), max_payload_size, i + 1);
        results[i] = (struct varlena *) DatumGetPointer(element);
    }
    array_free_iterator(it);
    return results;
}

// complete_batch(ids bigint[], attempts integer[], results jsonb[]): many claims
// in one statement, all or nothing (the batch counterpart of dequeue(batch => n)).
CQ_QUEUE_FUNCTION(cq_complete_many)
{
    ArrayType *id_array = ArrayArg(fcinfo, 0, "ids");
    ArrayType *attempt_array = ArrayArg(fcinfo, 1, "attempts");
    int n = ArrayGetNItems(ARR_NDIM(id_array), ARR_DIMS(id_array));
    int n_attempts = ArrayGetNItems(ARR_NDIM(attempt_array), ARR_DIMS(attempt_array));
    if (n != n_attempts)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("%d ids but %d attempts", n, n_attempts),
                        errhint("Pass one attempt per id, in the same order, as dequeue() "
                                "returned them.")));
    if (n > rules::kMaxBatch)
        ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                        errmsg("cannot complete %d jobs at once", n),
                        errhint("Complete at most %d jobs per call, as many as one dequeue() "
                                "can claim.", rules::kMaxBatch)));
    struct varlena **results = BatchResults(fcinfo, n);
    if (n == 0)
        PG_RETURN_VOID();  // nothing claimed, nothing to complete
    const int64 *ids = (const int64 *) ARR_DATA_PTR(id_array);
    const int32 *attempts = (const int32 *) ARR_DATA_PTR(attempt_array);
    for (int i = 0; i < n; i++) {
        if (attempts[i] < 1)
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("attempt %d of job %lld is not a claim's attempt", attempts[i],
                                   (long long) ids[i])));
        for (int k = 0; k < i; k++)
            if (ids[k] == ids[i])
                ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                                errmsg("job %lld appears twice in ids", (long long) ids[i])));
    }
    // A job the caller may not see is taken, in its turn, as one that does
    // not exist: the jobs before it are completed (or raise) first.
    int visible = RequireJobsPrivilege(n, ids, QueuePrivilege::kConsume, "complete_batch()");
    CompleteJobs(visible, ids, attempts, results);
    if (visible < n)
        ReportJobNotFound(ids[visible]);
    PG_RETURN_VOID();
}

// job_status(ids bigint[]) -> (id, state, attempt, result, last_error), one row
// per element of ids, in order; NULLs for a job the caller may not see.
CQ_QUEUE_FUNCTION(cq_job_status)
{
    ArrayType *ids = ArrayArg(fcinfo, 0, "ids");
    InitMaterializedSRF(fcinfo, 0);
    ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
    const Caller *caller = CurrentCaller();
    JobStatuses(ids, caller->user, caller->admin, rsinfo->setResult,
                rsinfo->econtext->ecxt_per_query_memory);
    return (Datum) 0;
}

// fail(id, attempt, error, retry_in, retryable, error_detail) -> 'ready' |
// 'failed' (0.4.0 passes neither retryable nor error_detail)
CQ_QUEUE_FUNCTION(cq_fail)
{
    int64 id = JobIdArg(fcinfo, 0);
    int32 attempt = AttemptArg(fcinfo, 1);
    text *error = TextArg(fcinfo, 2, "error", true);
    Interval *retry_in = IntervalArg(fcinfo, 3, "retry_in", true);
    if (retry_in)
        CheckIntervalArg("retry_in", retry_in, false);
    bool retryable = true;
    if (PG_NARGS() > 4) {
        RequireArg(fcinfo, 4, "retryable");
        retryable = PG_GETARG_BOOL(4);
    }
    if (!retryable && retry_in)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("retry_in '%s' is given for an error that is not retryable",
                               IntervalText(retry_in)),
                        errhint("Pass retryable => true to retry after retry_in, or no retry_in "
                                "to fail the job at once.")));
    Jsonb *detail = nullptr;
    if (PG_NARGS() > 5 && !PG_ARGISNULL(5)) {
        detail = PG_GETARG_JSONB_P(5);
        if (!JB_ROOT_IS_OBJECT(detail))
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("error_detail must be a JSON object, not %s",
                                   JB_ROOT_IS_SCALAR(detail) ? "a scalar" : "an array"),
                            errhint("Pass an object such as {\"class\": \"TypeError\", "
                                    "\"stack\": \"...\"}, or NULL.")));
    }
    rules::CheckErrorEntrySize(error ? (int64) VARSIZE_ANY_EXHDR(error) : 0,
                               detail ? (int64) VARSIZE(detail) : 0);
    RequireJobPrivilege(id, QueuePrivilege::kConsume, "fail()");
    PG_RETURN_TEXT_P(cstring_to_text(FailJob(id, attempt, error, retry_in, retryable, detail)));
}

// snooze(id, attempt, delay) -> new run_at: back to ready, no attempt spent
CQ_QUEUE_FUNCTION(cq_snooze)
{
    int64 id = JobIdArg(fcinfo, 0);
    int32 attempt = AttemptArg(fcinfo, 1);
    Interval *delay = IntervalArg(fcinfo, 2, "delay");
    CheckIntervalArg("delay", delay, false);
    RequireJobPrivilege(id, QueuePrivilege::kConsume, "snooze()");
    PG_RETURN_TIMESTAMPTZ(SnoozeJob(id, attempt, delay));
}

// job_errors(id) -> (attempt, failed_at, error, detail), oldest first; no rows
// for a job the caller may not see.
CQ_QUEUE_FUNCTION(cq_job_errors)
{
    int64 id = JobIdArg(fcinfo, 0);
    InitMaterializedSRF(fcinfo, 0);
    ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
    const Caller *caller = CurrentCaller();
    JobErrors(id, caller->user, caller->admin, rsinfo->setResult,
              rsinfo->econtext->ecxt_per_query_memory);
    return (Datum) 0;
}

// heartbeat(id, attempt, extend) -> new lease expiry
CQ_QUEUE_FUNCTION(cq_heartbeat)
{
    int64 id = JobIdArg(fcinfo, 0);
    int32 attempt = AttemptArg(fcinfo, 1);
    Interval *extend = IntervalArg(fcinfo, 2, "extend", true);
    if (extend)
        CheckIntervalArg("extend", extend, true);
    RequireJobPrivilege(id, QueuePrivilege::kConsume, "heartbeat()");
    PG_RETURN_TIMESTAMPTZ(HeartbeatJob(id, attempt, extend));
}

// The calls that name the job's queue in front (complete_in, ...; 0.5.0):
// the queue routes the call on a Citus cluster, where Citus delegates it to
// the worker holding the queue's shard. Here the queue must exist (QC001);
// the rest is the call without it, `body`, with the same arguments after the
// queue, for jobs of that queue only (QC002 for a job of another).
static Datum WithoutQueue(FunctionCallInfo fcinfo, Datum (*body)(FunctionCallInfo))
{
    text *queue = QueueNameArg(fcinfo, 0);
    if (CachedQueueId(queue) == 0)
        (void) LookUpQueueId(queue);  // QC001 when it does not exist
    ExpectJobsOfQueue(text_to_cstring(queue));
    int n = PG_NARGS() - 1;
    LOCAL_FCINFO(inner, FUNC_MAX_ARGS);
    InitFunctionCallInfoData(*inner, fcinfo->flinfo, n, fcinfo->fncollation, fcinfo->context,
                             fcinfo->resultinfo);
    for (int i = 0; i < n; i++)
        inner->args[i] = fcinfo->args[i + 1];
    Datum result = body(inner);
    ExpectJobsOfQueue(nullptr);  // an error leaves it to the transaction's end
    fcinfo->isnull = inner->isnull;
    return result;
}

// complete_in(queue, id, attempt, result)
CQ_QUEUE_FUNCTION(cq_complete_in)
{
    return WithoutQueue(fcinfo, cq_complete_as_owner);
}

// complete_batch_in(queue, ids, attempts, results)
CQ_QUEUE_FUNCTION(cq_complete_batch_in)
{
    return WithoutQueue(fcinfo, cq_complete_many_as_owner);
}

// fail_in(queue, id, attempt, error, retry_in, retryable, error_detail)
CQ_QUEUE_FUNCTION(cq_fail_in)
{
    return WithoutQueue(fcinfo, cq_fail_as_owner);
}

// heartbeat_in(queue, id, attempt, extend)
CQ_QUEUE_FUNCTION(cq_heartbeat_in)
{
    return WithoutQueue(fcinfo, cq_heartbeat_as_owner);
}

// snooze_in(queue, id, attempt, delay)
CQ_QUEUE_FUNCTION(cq_snooze_in)
{
    return WithoutQueue(fcinfo, cq_snooze_as_owner);
}

// retry(id, run_at)
CQ_QUEUE_FUNCTION(cq_retry)
{
    int64 id = JobIdArg(fcinfo, 0);
    bool run_at_null = PG_ARGISNULL(1);
    if (!run_at_null && TIMESTAMP_NOT_FINITE(PG_GETARG_TIMESTAMPTZ(1)))
        ReportInfiniteRunAt(PG_GETARG_TIMESTAMPTZ(1));
    RequireJobPrivilege(id, QueuePrivilege::kManage, "retry()");
    RetryJob(id, run_at_null ? 0 : PG_GETARG_DATUM(1), run_at_null);
    PG_RETURN_VOID();
}

// cancel(id)
CQ_QUEUE_FUNCTION(cq_cancel)
{
    int64 id = JobIdArg(fcinfo, 0);
    RequireJobPrivilege(id, QueuePrivilege::kManage, "cancel()");
    CancelJob(id);
    PG_RETURN_VOID();
}

namespace {

// The states argument of retry_jobs() and cancel_jobs(): a one-dimensional
// text[] without NULLs whose every element is one of `allowed` (two states).
Datum StatesArg(FunctionCallInfo fcinfo, int n, const char *function,
                const char *const allowed[2])
{
    ArrayType *states = ArrayArg(fcinfo, n, "states");
    Datum *values;
    int count;
    deconstruct_array(states, TEXTOID, -1, false, TYPALIGN_INT, &values, nullptr, &count);
    for (int i = 0; i < count; i++) {
        char *state = TextDatumGetCString(values[i]);
        if (strcmp(state, allowed[0]) != 0 && strcmp(state, allowed[1]) != 0)
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("%s cannot take jobs in state \"%s\"", function, state),
                            errhint("%s takes %s and %s jobs.", function, allowed[0],
                                    allowed[1])));
    }
    return PointerGetDatum(states);
}

// max_jobs: NULL (0 here) for all, else at least 1.
int64 MaxJobsArg(FunctionCallInfo fcinfo, int n)
{
    if (PG_ARGISNULL(n))
        return 0;
    int32 max_jobs = PG_GETARG_INT32(n);
    if (max_jobs < 1)
        ereport(ERROR, (errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
                        errmsg("max_jobs %d is out of range", max_jobs),
                        errhint("Pass at least 1, or NULL for every job that matches.")));
    return max_jobs;
}

const char *const kRetryStates[2] = {"failed", "cancelled"};
const char *const kCancelStates[2] = {"ready", "running"};

}  // namespace

// retry_jobs(queue, states, finished_before, max_jobs) -> jobs made ready
CQ_QUEUE_FUNCTION(cq_retry_jobs)
{
    text *queue = QueueNameArg(fcinfo, 0);
    Datum states = StatesArg(fcinfo, 1, "retry_jobs()", kRetryStates);
    TimestampTz before = PG_ARGISNULL(2) ? 0 : PG_GETARG_TIMESTAMPTZ(2);
    int64 max_jobs = MaxJobsArg(fcinfo, 3);
    // SKIP LOCKED and jobs that failed after the transaction began: as purge().
    RequireReadCommitted("retry_jobs()");
    RequireQueuePrivilege(queue, QueuePrivilege::kManage, "retry_jobs()");
    PG_RETURN_INT64(RetryJobs(queue, states, PG_ARGISNULL(2) ? nullptr : &before, max_jobs));
}

// cancel_jobs(queue, states, created_before, max_jobs) -> jobs cancelled
CQ_QUEUE_FUNCTION(cq_cancel_jobs)
{
    text *queue = QueueNameArg(fcinfo, 0);
    Datum states = StatesArg(fcinfo, 1, "cancel_jobs()", kCancelStates);
    TimestampTz before = PG_ARGISNULL(2) ? 0 : PG_GETARG_TIMESTAMPTZ(2);
    int64 max_jobs = MaxJobsArg(fcinfo, 3);
    RequireReadCommitted("cancel_jobs()");
    RequireQueuePrivilege(queue, QueuePrivilege::kManage, "cancel_jobs()");
    PG_RETURN_INT64(CancelJobs(queue, states, PG_ARGISNULL(2) ? nullptr : &before, max_jobs));
}

// claimqueue.explain_claim(queue, batch): until 0.4.0, the plan of the SQL
// statement dequeue() ran. Claims no longer run one (job_rows.hpp). Not dead:
// the released install scripts of 0.1.0 to 0.3.0 declare the symbol, and
// CREATE FUNCTION looks it up in this library, so without it test/upgrade
// cannot install them, nor a restore or pg_upgrade bring back a database
// still at one of them.
CQ_FUNCTION(cq_explain_claim)
{
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("explain_claim() is gone: since claimqueue 0.4.0 a claim runs no SQL "
                           "statement to explain"),
                    errhint("Run ALTER EXTENSION claimqueue UPDATE; a claim is an index scan of "
                            "jobs_ready_idx from its lane's cursor (src/engine/job_rows.hpp).")));
    return (Datum) 0;
}

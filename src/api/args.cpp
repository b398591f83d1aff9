// Argument checks for the SQL-callable functions (see args.hpp).
#include "api/args.hpp"

#include "core/rules.hpp"
#include "pg/clock.hpp"

namespace claimqueue {

void RequireArg(FunctionCallInfo fcinfo, int n, const char *what)
{
    if (PG_ARGISNULL(n))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                        errmsg("%s must not be NULL", what)));
}

ArrayType *ArrayArg(FunctionCallInfo fcinfo, int n, const char *what, const char *null_hint)
{
    RequireArg(fcinfo, n, what);
    ArrayType *array = PG_GETARG_ARRAYTYPE_P(n);
    if (ARR_NDIM(array) > 1)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("%s must be a one-dimensional array, not %d-dimensional", what,
                               ARR_NDIM(array))));
    if (array_contains_nulls(array))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                        errmsg("%s must not contain NULL elements", what),
                        null_hint != nullptr ? errhint("%s", null_hint) : 0));
    return array;
}

// True when argument n is NULL and optional; raises 22004 when it is NULL
// and required.
static bool AbsentOptional(FunctionCallInfo fcinfo, int n, const char *what, bool optional)
{
    if (!PG_ARGISNULL(n))
        return false;
    if (!optional)
        RequireArg(fcinfo, n, what);
    return true;
}

text *TextArg(FunctionCallInfo fcinfo, int n, const char *what, bool optional)
{
    return AbsentOptional(fcinfo, n, what, optional) ? nullptr : PG_GETARG_TEXT_PP(n);
}

Interval *IntervalArg(FunctionCallInfo fcinfo, int n, const char *what, bool optional)
{
    return AbsentOptional(fcinfo, n, what, optional) ? nullptr : PG_GETARG_INTERVAL_P(n);
}

Tuplestorestate *InitScalarSRF(FunctionCallInfo fcinfo, Oid type)
{
    ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
    if (rsinfo == nullptr || !IsA(rsinfo, ReturnSetInfo) ||
        (rsinfo->allowedModes & SFRM_Materialize) == 0)
        ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                        errmsg("set-valued function called in context that cannot accept a set")));
    MemoryContext old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
    TupleDesc desc = CreateTemplateTupleDesc(1);
    TupleDescInitEntry(desc, (AttrNumber) 1, "value", type, -1, 0);
    rsinfo->returnMode = SFRM_Materialize;
    rsinfo->setResult = tuplestore_begin_heap(true, false, work_mem);
    rsinfo->setDesc = desc;
    MemoryContextSwitchTo(old);
    return rsinfo->setResult;
}

void CheckIntervalArg(const char *what, Interval *value, bool lease)
{
    int64 usec = IntervalUsec(value);
    const char *shown = IntervalText(value);
    if (lease)
        rules::CheckLease(what, usec, shown);
    else
        rules::CheckDelay(what, usec, shown);
}

text *QueueNameArg(FunctionCallInfo fcinfo, int n)
{
    text *name = TextArg(fcinfo, n, "queue name");
    rules::CheckQueueName(View(name));
    return name;
}

ClaimArgs ClaimArgsFrom(FunctionCallInfo fcinfo, int first)
{
    ClaimArgs args;
    args.queue = QueueNameArg(fcinfo, first);
    args.worker = TextArg(fcinfo, first + 1, "worker");
    rules::CheckWorkerName(View(args.worker));
    RequireArg(fcinfo, first + 2, "batch");
    args.batch = PG_GETARG_INT32(first + 2);
    rules::CheckBatch(args.batch);
    args.lease = IntervalArg(fcinfo, first + 3, "lease", true);
    if (args.lease)
        CheckIntervalArg("lease", args.lease, true);
    return args;
}

bool ReleaseOnDisconnectArg(FunctionCallInfo fcinfo, int n)
{
    if (PG_NARGS() <= n)
        return false;
    RequireArg(fcinfo, n, "release_on_disconnect");
    return PG_GETARG_BOOL(n);
}

}  // namespace claimqueue

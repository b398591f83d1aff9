// Argument checks shared by the SQL-callable functions: NULL and range errors
// with the argument's name, raised before anything is changed.
#pragma once

#include "pg/pg.hpp"
#include "pg/text.hpp"

#include <string_view>

namespace claimqueue {

// Raises 22004 "<what> must not be NULL" when argument n is NULL.
void RequireArg(FunctionCallInfo fcinfo, int n, const char *what);

// Array argument n, detoasted: required (22004), one-dimensional (22023
// naming its dimensions) and without NULL elements (22004, with `null_hint`
// when given).
ArrayType *ArrayArg(FunctionCallInfo fcinfo, int n, const char *what,
                    const char *null_hint = nullptr);

// text argument n, detoasted; required unless `optional` (then NULL -> nullptr).
text *TextArg(FunctionCallInfo fcinfo, int n, const char *what, bool optional = false);

// interval argument n or nullptr when NULL and optional.
Interval *IntervalArg(FunctionCallInfo fcinfo, int n, const char *what, bool optional = false);

// Sets up a materialized result of one column of type `type` (SETOF scalar
// functions, where InitMaterializedSRF wants a row type); returns the store.
Tuplestorestate *InitScalarSRF(FunctionCallInfo fcinfo, Oid type);

// Checks an interval with rules::CheckLease (lease = true) or rules::CheckDelay,
// quoting the value as PostgreSQL prints it.
void CheckIntervalArg(const char *what, Interval *value, bool lease);

// A validated queue name (22004, 22023 or 42622 on bad input).
text *QueueNameArg(FunctionCallInfo fcinfo, int n);

// The claim arguments (queue, worker, batch, lease) of dequeue(),
// complete_and_dequeue() and dequeue_wait(), starting at argument `first`,
// each checked.
struct ClaimArgs {
    text *queue;
    text *worker;
    int32 batch;
    Interval *lease;  // nullptr: the queue's
};
ClaimArgs ClaimArgsFrom(FunctionCallInfo fcinfo, int first);

// The release_on_disconnect argument n of dequeue(), complete_and_dequeue()
// and dequeue_wait(): false when the call has fewer arguments (the 0.4.0
// signature, on a database not yet updated); 22004 when NULL.
bool ReleaseOnDisconnectArg(FunctionCallInfo fcinfo, int n);

}  // namespace claimqueue

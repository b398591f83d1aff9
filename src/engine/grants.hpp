// Per-queue grants (table claimqueue.queue_grants): which roles may produce
// into, consume from or manage a queue. Role 0 is PUBLIC.
#pragma once

#include "pg/pg.hpp"

namespace claimqueue {

// True if the grant is new. Raises QC001 for an unknown queue.
bool GrantQueue(text *queue, const char *privilege, Oid role);

// True if the grant existed. Raises QC001 for an unknown queue.
bool RevokeQueue(text *queue, const char *privilege, Oid role);

enum class GrantLookup { kNoQueue, kDenied, kGranted };

// Whether `user` holds `privilege` on `queue` by a grant (to it, to a role it
// inherits from, or to PUBLIC); kNoQueue when the queue does not exist.
GrantLookup QueueGranted(text *queue, const char *privilege, Oid user);

// The names of the queues the jobs `ids` (n of them) belong to, distinct, in
// *queues, and the position in `ids` of each one's first job in *first
// (both palloc'd), in the order of those positions; returns how many.
// Unknown ids have none.
int JobQueues(int n, const int64 *ids, text ***queues, int **first);

// job_status(): one row (id, state, attempt, result, last_error) per element
// of `ids` (bigint[]), in order, into `out` (in `out_context`); the columns
// after id are NULL for a job that does not exist or whose queue `user`
// holds no privilege on (any job when `all`), so the two look alike.
void JobStatuses(ArrayType *ids, Oid user, bool all, Tuplestorestate *out,
                 MemoryContext out_context);
// job_errors(): the error history of job `id` (attempt, failed_at, error,
// detail), oldest first, into `out`; no rows for a job that does not exist or
// that `user` may not see (unless `all`).
void JobErrors(int64 id, Oid user, bool all, Tuplestorestate *out, MemoryContext out_context);

// Appends the ids of the queues `user` holds any privilege on (every queue
// when `all`) to `out`, one int4 column.
void VisibleQueues(Oid user, bool all, Tuplestorestate *out, TupleDesc out_desc);

}  // namespace claimqueue

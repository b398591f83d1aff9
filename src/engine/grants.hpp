// Per-queue grants (table claimqueue.queue_grants): which roles may produce
// into, consume from or manage a queue. Role 0 is PUBLIC.
#pragma once

#include "pg.hpp"

namespace claimqueue {

// True if the grant is new. Raises QC001 for an unknown queue.
bool GrantQueue(text *queue, const char *privilege, Oid role);

// True if the grant existed. Raises QC001 for an unknown queue.
bool RevokeQueue(text *queue, const char *privilege, Oid role);

// Appends the ids of the queues `user` holds any privilege on (every queue
// when `all`) to `out`, one int4 column.
void VisibleQueues(Oid user, bool all, Tuplestorestate *out, TupleDesc out_desc);

}  // namespace claimqueue

// claimqueue's own advisory locks, in its reserved lock namespace (id 1, see
// locks/namespaces.hpp): the administration lock of each queue, keyed by its
// queue_id (enqueue holds SHARE, drop_queue holds EXCLUSIVE, so no job is ever
// inserted into a queue that is being dropped), and the reaper's lock, key 0.
// Queue ids come from a sequence starting at 1 and are never reused, so no two
// of these locks ever share a key.
#pragma once

#include "pg/pg.hpp"

#include "locks/namespaces.hpp"

namespace claimqueue {

// Takes the transaction-level administration lock of the queue named `name`
// in `mode`, or nothing when no such queue exists (the caller's own lookup
// then reports it). Called before the caller's queue lookup; if the queue was
// dropped and created again while this waited, the new queue's lock is taken.
// Returns the id locked, 0 when there is no such queue. With the id in the
// queue cache, it runs no statement.
int32 LockQueueName(text *name, LOCKMODE mode);

// The one-reaper-per-database guarantee: a session-level exclusive advisory
// lock in the reserved namespace, taken without waiting. False when another
// process (a second reaper) holds it.
bool TryLockReaper();

}  // namespace claimqueue

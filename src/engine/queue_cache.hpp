// What this backend remembers of the queues, so that a worker's calls after
// its first need no lookup: each queue's id by name, and the per-queue grants
// each role was found to hold. One cache with one rule: it is dropped when
// claimqueue.queues or claimqueue.queue_grants changes (their triggers send a
// relcache invalidation, which reaches other sessions at their next
// transaction start or lock), on any relcache reset, and, for the grants,
// when roles or memberships change. Only what was found is remembered; a
// refusal is looked up each time.
#pragma once

#include "pg/pg.hpp"

namespace claimqueue {

// The id this backend last saw for queue `name`, or 0. Between invalidations
// it is the id, with one exception that callers handle: a queue dropped and
// re-created by a transaction that has committed but whose invalidation this
// backend has not taken in yet (a claim finds nothing and looks again).
int32 CachedQueueId(text *name);
void RememberQueueId(text *name, int32 queue_id);

// A queue's settings that the claim engine's hot path needs, by id, loaded
// from claimqueue.queues on the first call after an invalidation (inside a
// transaction; it connects to SPI itself for that). nullptr when the queue
// does not exist. Valid until the next invalidation: copy what you keep.
// Loaded with the latest snapshot, never the transaction's: an entry loaded
// after an invalidation was taken in must show the change that sent it.
struct QueueFacts {
    int32 queue_id;
    char name[NAMEDATALEN];
    Interval lease;
    Interval backoff_base;
    Interval backoff_cap;
    bool paused;  // pause_queue(): claims take nothing
    int32 max_attempts;  // a new job's, when enqueue() names none
    // Concurrency limits (0.5.0; 0: none, as on a database still at 0.4.0).
    int32 max_running;
    int32 max_running_per_key;
    bool fair;  // claims rotate across concurrency keys (0.5.0)
    // The queue row's xmin (0.5.0): changes with every change of its settings,
    // so what is kept under one set of limits is not used under the next.
    TransactionId settings_xmin;
};
const QueueFacts *QueueFactsById(int32 queue_id);

// Whether `user` was found to hold privilege number `privilege` on `name`.
bool CachedGrant(Oid user, int privilege, text *name);
void RememberGrant(Oid user, int privilege, text *name);

// The session module calls these.
void QueueCacheAtRelationChange(Oid relid);
void QueueCacheAtRoleChange();

}  // namespace claimqueue

// Queue metrics without scans: per-queue totals (jobs enqueued, claimed,
// completed, failed, reaped, retried, cancelled) and gauges (jobs in state
// ready, scheduled ones included, and running) kept in shared memory, keyed by
// (database, queue id). README.md beside this file has the rules.
//
// The engine counts each transition in backend-local memory (no lock, no
// shared write per job); the transaction's commit applies its sums to shared
// memory once per queue. A rollback, or a rolled-back savepoint, leaves no
// trace. Exists only when the library is preloaded.
#pragma once

#include "pg/pg.hpp"

namespace claimqueue {

// A job's change of state, as the engine makes it.
enum class Transition {
    kEnqueue,        // inserted: ready (or scheduled)
    kClaim,          // ready -> running
    kComplete,       // running -> done
    kFailRetry,      // running -> ready, by fail() with a retry
    kSnooze,         // running -> ready, by snooze(): no attempt spent, no total counted
    kFailDead,       // running -> failed, by fail() on the last attempt
    kReapRetry,      // running -> ready, lease expired (reaper, reap())
    kReapDead,       // running -> failed, lease expired with attempts used up
    kRetry,          // failed or cancelled -> ready, by retry()
    kCancelReady,    // ready -> cancelled
    kCancelRunning,  // running -> cancelled
};

void RequestMetricsState();  // from _PG_init while preloading

// A DROP DATABASE or DROP EXTENSION claimqueue (the session module calls it):
// the database's slots are freed when the transaction commits.
void MetricsAtDatabaseDrop(Oid database);

// Counts `n` jobs of queue `queue_id` making `transition` in this transaction.
void CountTransition(int32 queue_id, Transition transition, int64 n = 1);

// Counts job `job_id` of queue `queue_id` moved to done (Transition::kComplete),
// and raises the queue's done_id_bound to it when this transaction commits
// (at its pre-commit: before the job shows as done).
void CountCompletion(int32 queue_id, int64 job_id);

// At the end of every (sub)transaction (the session module calls them).
void MetricsAtTransactionEnd(XactEvent event);
void MetricsAtSubtransactionEnd(SubXactEvent event);

// When this transaction commits, queue `queue_id`'s slot (drop_queue) is freed.
// DROP EXTENSION and DROP DATABASE free their database's slots by themselves.
void FreeQueueMetricsAtCommit(int32 queue_id);

// Recounts the gauges of queue `queue_id` from the table (an index-only count
// of its ready and running jobs), exactly: committers of the queue wait at
// pre-commit while the count's snapshot is taken and read. READ COMMITTED,
// outside any transaction that changed jobs. False when the queue has no slot
// (table full, not preloaded) or another recount of it runs.
// `where`, when given, says where the queue's jobs are on this node: false
// when none of them is (under Citus, a queue whose shard is elsewhere: its
// gauges here are zero); else the relation, and the route for RouteJobsTo
// (nullptr: claimqueue.jobs itself). The engine's QueueJobsHere.
using QueueJobsWhere = bool (*)(int32 queue_id, Oid *relid, const char **route);
bool RecountQueueMetrics(int32 queue_id, QueueJobsWhere where = nullptr);

// Recounts every queue of this database (inside a transaction of its own):
// with `uncounted_only`, those whose gauges were not counted since their slot
// was taken (the reaper, every pass: after a start, a new queue). Nothing
// while a transaction is prepared in this database (its changes, applied at
// PREPARE, could not be placed). Returns how many it recounted.
int64 RecountQueues(bool uncounted_only, QueueJobsWhere where = nullptr);

constexpr int kJobTotals = 7;  // enqueued, claimed, completed, failed, reaped, retried, cancelled

struct QueueMetrics {
    int64 totals[kJobTotals];
    int64 ready;                  // jobs in state ready, scheduled ones included
    int64 running;
    TimestampTz counters_since;   // when the slot was taken (totals count from then)
    TimestampTz gauges_since;     // last recount; 0: not counted yet (gauges unknown)
    int64 done_id_bound;          // no job of the queue done has a greater id; known once counted
};

// Queue `queue_id` of this database; false when it has no slot.
bool ReadQueueMetrics(int32 queue_id, QueueMetrics *out);

}  // namespace claimqueue

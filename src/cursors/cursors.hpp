// Claim cursors: where a claim starts, so it never walks the index entries of
// jobs already claimed, even while an old snapshot keeps them (README.md
// beside this file has the design and the proof that no ready job is ever left
// behind a cursor). Everything about positions lives here: drawing them,
// promoting jobs that waited for their run_at, each lane's cursor, the claim's
// walk over the lanes, the reaper's sweep and the invariant check.
//
// Every entry into the claimable set draws a fresh position; a queue has one
// lane per priority, ordered by position, and each lane a cursor: the lowest
// position at which a claimable job may still be. Kept in shared memory, so
// cursors exist only when the library is preloaded; without it (or while the
// table of queues is full) claims scan each lane from its start.
#pragma once

#include "pg/pg.hpp"

namespace claimqueue {

constexpr int kMinPriority = -100;
constexpr int kMaxPriority = 100;
constexpr int kLanes = kMaxPriority - kMinPriority + 1;

void RequestCursorState();  // from _PG_init while preloading

// A DROP DATABASE or DROP EXTENSION claimqueue (the session module calls it):
// the database's entries are freed when the transaction commits.
void CursorsAtDatabaseDrop(Oid database);

// At the end of every transaction (the session module calls it): releases
// this backend's in-flight slots and pins, notes scheduled jobs at commit,
// frees dropped queues' entries at commit, keeps a prepared transaction's
// positions and claims as floors.
void CursorsAtTransactionEnd(XactEvent event);

// --- Entering the claimable set -------------------------------------------

// The position of a job of queue `queue_id` and `priority` that becomes
// claimable now. Until this transaction ends, no cursor moves past it.
int64 DrawPosition(int32 queue_id, int priority);

// A job of `queue_id` waits until `run_at` (position NULL): once this
// transaction commits, claims know to look for due jobs from then on.
void NoteScheduled(int32 queue_id, TimestampTz run_at);

// The position of a job entering the ready state (claimqueue.ready_position):
// a new one when it is due at `now`, else -1 (it waits for run_at, noted).
int64 ReadyPosition(int32 queue_id, int priority, TimestampTz run_at, TimestampTz now);

// --- A claim's walk over a queue's lanes -------------------------------------

struct QueueCursors;

// The lanes a claim reads, highest priority first:
//   LaneWalk walk;
//   BeginLaneWalk(&walk, queue_id, now);  // promotes due jobs, loads lanes, reads the bound
//   ... take the claim's snapshot (after BeginLaneWalk) ...
//   if (!WalkHasCursors(&walk))  ... claim from the start of the queue's ready jobs ...
//   while (NextLane(&walk, &priority, &from)) {
//       ... claim in that lane from position `from`, noting the position of the
//       first job the snapshot shows claimable there, locked or not ...
//       LaneSeen(&walk, priority, first_seen);  // -1: none
//   }
//   EndLaneWalk(&walk);
// An error in between leaves nothing behind (the transaction's end releases
// what the walk holds).
struct LaneWalk {
    int32 queue_id;
    QueueCursors *cursors;  // pinned; nullptr: claim without cursors
    int next_priority;
    int64 bound;            // no position below it is in flight (read before the snapshot)
};
void BeginLaneWalk(LaneWalk *walk, int32 queue_id, TimestampTz now);
bool WalkHasCursors(const LaneWalk *walk);
// The next lane that may hold a job at or past its cursor; *from is the cursor.
bool NextLane(LaneWalk *walk, int *priority, int64 *from);
// Where a probe lets a cursor move up to: the first claimable position the
// claim's snapshot showed (-1: none), never past the bound (the probe of the
// proof in README.md). Fair claiming's per-tenant floors follow the same rule.
int64 SeenBound(const LaneWalk *walk, int64 first_seen);
// Moves the lane's cursor up to SeenBound(walk, first_seen).
void LaneSeen(LaneWalk *walk, int priority, int64 first_seen);
void EndLaneWalk(LaneWalk *walk);

// next_due(): when the queue's next ready job is due (inside SPI): the run_at
// of the first claimable job in claim order, else the earliest run_at of the
// jobs waiting for theirs; false when it has none.
bool NextDueAt(int32 queue_id, TimestampTz *due);

// For queue_metrics (inside SPI): the earliest run_at of the jobs each lane
// would claim next, read by one probe per lane from its cursor (a few index
// entries: neither finished jobs nor entries below the cursor are visited).
// False when the queue has no claimable job, or no cursors (not preloaded,
// table full).
bool OldestClaimableAt(int32 queue_id, TimestampTz *run_at);

// --- Leases (the reaper's scan) ---------------------------------------------

// A claim calls this before it computes its leases: until its transaction
// ends, the reaper's lease scan does not start after this moment.
void NoteClaimStarting();

// The reaper's scan of expired leases may start at this bound (and at the
// earliest lease its own snapshot shows running): every lease of a claim
// still in flight, or prepared and not yet committed, is later. Read it
// before the snapshot that probes.
TimestampTz LeaseBound();

// --- Freeing entries ----------------------------------------------------------

// When this transaction commits, the entry of queue `queue_id` of this
// database (drop_queue), or every entry of `database` (DROP EXTENSION, DROP
// DATABASE) is freed for other queues. Nothing happens on abort.
void FreeQueueCursorsAtCommit(int32 queue_id);
void FreeDatabaseCursorsAtCommit(Oid database);

// --- The reaper ---------------------------------------------------------------

// Promotes up to `limit` due waiting jobs of every queue in this database,
// whatever the cursors say (inside a transaction); returns how many.
int64 PromoteDueBatch(text *queue, int limit);

// For every lane of this database, lowers a cursor that breaks its invariant
// (past a claimable job, or past the last position drawn) with a LOG line,
// and loads positions the lane did not know of; returns the number of
// cursors lowered. Also claimqueue.sweep_claim_cursors().
int64 SweepCursors();

// Every pass: lifts the floors that prepared transactions put under the
// cursors and the lease scan once none is prepared.
void LiftPreparedFloorsWhenNone();

// --- Observation ------------------------------------------------------------

struct LaneView {
    int32 queue_id;
    int priority;
    int64 cursor;
    int64 max_position;
    bool loaded;
};

// claimqueue.claim_cursors(): this database's lanes that have had jobs, one
// row each (queue_id, priority, cursor, max_position).
void PutLanes(Tuplestorestate *out, TupleDesc desc);

// claimqueue.check_claim_cursors(): one row per broken invariant of this
// database's lanes (queue_id, priority, cursor, lowest_ready, max_position,
// counter, problem); returns how many. Empty when all hold.
int64 CheckCursorInvariants(Tuplestorestate *out, TupleDesc desc);

struct CursorTableUsage {
    int capacity;       // claimqueue.claim_cursor_queues
    int in_use;         // entries held by a queue, all databases
    int this_database;  // ... of this database
    int64 refusals;     // times a queue found the table full, since the start
};
// false when there are no cursors (not preloaded).
bool GetCursorTableUsage(CursorTableUsage *usage);

}  // namespace claimqueue

// Claim cursors: where a claim starts, so it never walks the index entries of
// jobs already claimed (src/engine/README.md, "Claim cursors", has the design
// and the proof that no ready job is ever left behind a cursor).
//
// Every entry into the claimable set draws a fresh position; a queue has one
// lane per priority, ordered by position, and each lane a cursor: the lowest
// position at which a claimable job may still be. Kept in shared memory, so it
// exists only when the library is preloaded; without it (or when the table of
// queues is full) claims scan from the start of each lane, as before.
//
// Invariants (checked by CheckCursorInvariants, repaired by the sweep):
//   0 <= cursor <= counter, and no job the lane can claim is below its cursor.
#pragma once

#include "pg.hpp"

namespace claimqueue {

constexpr int kMinPriority = -100;
constexpr int kMaxPriority = 100;
constexpr int kLanes = kMaxPriority - kMinPriority + 1;

void RequestCursorState();  // from _PG_init while preloading

// --- Entering the claimable set -------------------------------------------

// The position of a job of queue `queue_id` and `priority` that becomes
// claimable now. Until this transaction ends, no cursor moves past it.
int64 DrawPosition(int32 queue_id, int priority);

// A job of `queue_id` waits until `run_at` (position NULL): once this
// transaction commits, claims know to look for due jobs from then on.
void NoteScheduled(int32 queue_id, TimestampTz run_at);

// --- Claiming ---------------------------------------------------------------

struct QueueCursors;

// The cursors of a queue in this database, pinned: the entry stays this
// queue's until UnpinCursors (or the end of the transaction), even if the
// queue is dropped meanwhile. nullptr: not preloaded, cursors off, or the
// table full (then claims run without cursors). Every write to a cursor goes
// through a pinned entry, so a freed entry is never reused under a writer.
// Without `take`, only an entry the queue already has is pinned.
QueueCursors *PinCursors(int32 queue_id, bool take = true);
void UnpinCursors(QueueCursors *q);

// True until someone has loaded the lanes of jobs that entered before this
// server started (or before the queue's entry existed); LoadLane then Loaded.
bool NeedsLoading(QueueCursors *q);
void LoadLane(QueueCursors *q, int priority, int64 max_position);
void MarkLoaded(QueueCursors *q);

// Whether the lane may hold a claimable job at or past its cursor.
bool LaneMayHaveJobs(QueueCursors *q, int priority);
int64 LaneCursor(QueueCursors *q, int priority);

// No position below this is held by a transaction still in flight, nor will
// one be drawn: read it before the snapshot of the statement that probes.
// Never above the counter.
int64 PositionBound();

// The next position to be drawn (every drawn position is below it).
int64 PositionCounter();

// Moves the lane's cursor up to `position` (never down). A position outside
// [0, counter] is refused with a LOG line: no rule can produce one.
void AdvanceLane(QueueCursors *q, int priority, int64 position);
// Moves it down to `position` (the sweep's repair); true when it moved.
bool LowerLane(QueueCursors *q, int priority, int64 position);

// Due jobs that wait with position NULL: PromotionDue tells whether some may
// be due at `now`; a promoter calls BeginPromotion before its statement and
// NotePromoted with the earliest run_at still waiting (DT_NOEND if none).
bool PromotionDue(QueueCursors *q, TimestampTz now);
void BeginPromotion(QueueCursors *q);
void NotePromoted(QueueCursors *q, TimestampTz next_run_at);

// --- Freeing entries ----------------------------------------------------------

// When this transaction commits, the entry of queue `queue_id` of this
// database (drop_queue), or every entry of `database` (DROP EXTENSION, DROP
// DATABASE) is freed for other queues. Nothing happens on abort.
void FreeQueueCursorsAtCommit(int32 queue_id);
void FreeDatabaseCursorsAtCommit(Oid database);

// --- Leases (the reaper's scan) ---------------------------------------------

// A claim calls this before it computes its leases: until its transaction
// ends, the reaper's lease scan does not start after this moment.
void NoteClaimStarting();

// The reaper's scan of expired leases may start at this bound (and at the
// earliest lease its own snapshot shows running): every lease of a claim
// still in flight, or prepared and not yet committed, is later. Read it
// before the snapshot that probes.
TimestampTz LeaseBound();

// --- Prepared transactions (the reaper) -----------------------------------

// Prepared transactions' positions and claims hold cursors and the lease scan
// back (they commit later, in another session); the reaper lifts both floors
// when none is prepared.
bool PreparedFloorsHeld();
uint64 PreparedFloorGeneration();
void LiftPreparedFloors(uint64 generation_seen);

// --- Observation ------------------------------------------------------------

struct LaneView {
    int32 queue_id;
    int priority;
    int64 cursor;
    int64 max_position;
    bool loaded;
};
// The lanes of this database that have had jobs; palloc'd; *n set.
LaneView *ListLanes(int *n);

// The queues of this database that have an entry whose lanes are loaded;
// palloc'd; *n set.
int32 *ListLoadedQueues(int *n);

struct CursorTableUsage {
    int capacity;       // claimqueue.claim_cursor_queues
    int in_use;         // entries held by a queue, all databases
    int this_database;  // ... of this database
    int64 refusals;     // times a queue found the table full, since the start
};
// false when there are no cursors (not preloaded).
bool GetCursorTableUsage(CursorTableUsage *usage);

}  // namespace claimqueue

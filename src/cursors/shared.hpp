// The claim cursors' shared state (shared.cpp), for the module's own files
// (lanes.cpp, sweep.cpp): the table of queues' entries in shared memory, each
// queue's lanes and their cursors, the position counter and the in-flight
// slots. Everything outside src/cursors uses cursors.hpp instead.
//
// Invariants (checked by CheckCursorInvariants, repaired by the sweep):
//   0 <= cursor <= counter, and no job the lane can claim is below its cursor.
#pragma once

#include "cursors/cursors.hpp"

namespace claimqueue {

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

// --- Prepared transactions (the reaper) -----------------------------------

// Prepared transactions' positions and claims hold cursors and the lease scan
// back (they commit later, in another session); the reaper lifts both floors
// when none is prepared.
bool PreparedFloorsHeld();
uint64 PreparedFloorGeneration();
void LiftPreparedFloors(uint64 generation_seen);

// --- Reading the table (sweep.cpp) ---------------------------------------------

// A lane's claimable positions as a statement's snapshot shows them.
struct LaneBounds {
    bool any;  // some job of the lane is claimable
    int64 lowest;
    int64 highest;
};
// Each lane's bounds for one queue, by priority - kMinPriority (inside SPI).
void ReadLaneBounds(int32 queue_id, LaneBounds bounds[kLanes]);

// --- Observation ------------------------------------------------------------

// The lanes of this database that have had jobs; palloc'd; *n set.
LaneView *ListLanes(int *n);

// The queues of this database that have an entry whose lanes are loaded;
// palloc'd; *n set.
int32 *ListLoadedQueues(int *n);

}  // namespace claimqueue

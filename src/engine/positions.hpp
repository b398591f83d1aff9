// Claim positions (see src/shmem/claim_cursors.hpp for the cursors): jobs that
// waited for their run_at get a position when due; a queue's lanes are loaded
// from the table the first time this server sees the queue; the reaper's
// sweep puts right a cursor that passed a claimable job (which the rules make
// impossible, short of rows written outside claimqueue's functions).
#pragma once

#include "pg.hpp"

namespace claimqueue {

struct QueueCursors;

// Gives the queue's due waiting jobs their positions (inside an SPI
// connection). With cursors, only when the earliest waiting run_at has come.
void PromoteDue(int32 queue_id, TimestampTz now, QueueCursors *cursors);

// Loads the queue's lanes as the table has them (inside an SPI connection).
void LoadLanes(int32 queue_id, QueueCursors *cursors);

// The reaper: promotes up to `limit` due waiting jobs of every queue in this
// database, whatever the cursors say; returns how many.
int64 PromoteDueBatch(text *queue, int limit);

// The reaper: for every lane of this database, lowers a cursor that breaks
// its invariant (past a claimable job, or past the last position drawn) with
// a LOG line, and loads positions the lane did not know of; returns the
// number of cursors lowered.
int64 SweepCursors();

// The reaper, every pass: lifts the floors that prepared transactions put
// under the cursors and the lease scan once none is prepared.
void LiftPreparedFloorsWhenNone();

// claimqueue.check_claim_cursors(): one row per broken invariant of this
// database's lanes (queue_id, priority, cursor, lowest_ready, max_position,
// counter, problem); returns how many. Empty when all hold.
int64 CheckCursorInvariants(Tuplestorestate *out, TupleDesc desc);

}  // namespace claimqueue

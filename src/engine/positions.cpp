// Claim positions: promotion of due jobs, lane loading, the sweep (see
// positions.hpp).
#include "engine/positions.hpp"

extern "C" {
#include "access/twophase.h"
}

#include "engine/clock.hpp"
#include "engine/statement.hpp"
#include "shmem/claim_cursors.hpp"

namespace claimqueue {
namespace {

// Each lane's lowest and highest position, read from the ready index one
// priority at a time (a skip scan over at most 201 priorities): what the
// server knew before it started, for a queue seen for the first time.
Statement kLaneBounds = {
    "WITH RECURSIVE lane(priority) AS ("
    "   (SELECT j.priority FROM claimqueue.jobs j"
    "    WHERE j.queue_id = $1 AND j.state = 'ready' AND j.pos IS NOT NULL"
    "    ORDER BY j.priority DESC LIMIT 1)"
    "   UNION ALL"
    "   SELECT (SELECT j.priority FROM claimqueue.jobs j"
    "           WHERE j.queue_id = $1 AND j.state = 'ready' AND j.pos IS NOT NULL"
    "             AND j.priority < lane.priority ORDER BY j.priority DESC LIMIT 1)"
    "   FROM lane WHERE lane.priority IS NOT NULL)"
    " SELECT lane.priority::integer,"
    "   (SELECT j.pos FROM claimqueue.jobs j WHERE j.queue_id = $1 AND j.state = 'ready'"
    "      AND j.pos IS NOT NULL AND j.priority = lane.priority ORDER BY j.pos LIMIT 1),"
    "   (SELECT j.pos FROM claimqueue.jobs j WHERE j.queue_id = $1 AND j.state = 'ready'"
    "      AND j.pos IS NOT NULL AND j.priority = lane.priority ORDER BY j.pos DESC LIMIT 1)"
    " FROM lane WHERE lane.priority IS NOT NULL",
    1, {INT4OID}, nullptr};

// Jobs that waited for their run_at (position NULL) and are due get a
// position, oldest run_at first; also returns the earliest run_at of those
// still waiting (NULL: none), jobs another session is promoting included.
Statement kPromote = {
    "WITH due AS ("
    "   SELECT j.id FROM claimqueue.jobs j"
    "   WHERE j.queue_id = $1 AND j.state = 'ready' AND j.pos IS NULL AND j.run_at <= $2"
    "   ORDER BY j.run_at LIMIT $3 FOR UPDATE OF j SKIP LOCKED),"
    " promoted AS ("
    "   UPDATE claimqueue.jobs j"
    "   SET pos = claimqueue.ready_position(j.queue_id, j.priority, j.run_at, $2)"
    "   WHERE j.id = ANY (ARRAY(SELECT id FROM due)) RETURNING j.id)"
    " SELECT (SELECT count(*) FROM promoted),"
    "   (SELECT min(s.run_at) FROM claimqueue.jobs s"
    "    WHERE s.queue_id = $1 AND s.state = 'ready' AND s.pos IS NULL"
    "      AND s.id <> ALL (ARRAY(SELECT id FROM due)))",
    3, {INT4OID, TIMESTAMPTZOID, INT4OID}, nullptr};

// The reaper's promotion, every queue: jobs written as ready without a
// position (or whose transaction was prepared) are never later than one pass.
Statement kPromoteAll = {
    "WITH due AS ("
    "   SELECT j.id FROM claimqueue.jobs j"
    "   WHERE j.state = 'ready' AND j.pos IS NULL AND j.run_at <= $1"
    "   ORDER BY j.run_at LIMIT $2 FOR UPDATE OF j SKIP LOCKED)"
    " UPDATE claimqueue.jobs j"
    " SET pos = claimqueue.ready_position(j.queue_id, j.priority, j.run_at, $1)"
    " WHERE j.id = ANY (ARRAY(SELECT id FROM due))",
    2, {TIMESTAMPTZOID, INT4OID}, nullptr};

Statement kQueueIds = {
    "SELECT queue_id FROM claimqueue.queues ORDER BY queue_id", 0, {}, nullptr};

Statement kPreparedTransactions = {
    "SELECT count(*) FROM pg_catalog.pg_prepared_xacts", 0, {}, nullptr};

constexpr int kPromoteBatch = 1000;

// Gives due waiting jobs of the queue their positions. With cursors, only when
// the earliest waiting run_at has come (or is not known yet).
}  // namespace

void PromoteDue(int32 queue_id, TimestampTz now, QueueCursors *cursors)
{
    if (cursors != nullptr) {
        if (!PromotionDue(cursors, now))
            return;
        BeginPromotion(cursors);
    }
    Datum args[3] = {Int32GetDatum(queue_id), TimestampTzGetDatum(now),
                     Int32GetDatum(kPromoteBatch)};
    Execute(&kPromote, args, nullptr, 1);
    if (cursors == nullptr)
        return;
    bool isnull;
    int64 promoted = DatumGetInt64(ResultValue(0, 1));
    Datum next = ResultValue(0, 2, &isnull);
    // A full batch may have left due jobs behind: look again next time.
    NotePromoted(cursors, promoted == kPromoteBatch ? now
                          : isnull                  ? DT_NOEND
                                                    : DatumGetTimestampTz(next));
}

// Lanes of jobs that became claimable before this server (or this queue's
// cursors) existed.
void LoadLanes(int32 queue_id, QueueCursors *cursors)
{
    Datum args[1] = {Int32GetDatum(queue_id)};
    uint64 n = Execute(&kLaneBounds, args, nullptr);
    for (uint64 i = 0; i < n; i++)
        LoadLane(cursors, DatumGetInt32(ResultValue(i, 1)), DatumGetInt64(ResultValue(i, 3)));
    MarkLoaded(cursors);
}

int64 PromoteDueBatch(text *, int limit)
{
    ConnectSpi();
    Datum args[2] = {TimestampTzGetDatum(ClockNow()), Int32GetDatum(limit)};
    uint64 n = Execute(&kPromoteAll, args, nullptr);
    FinishSpi();
    return (int64) n;
}

int64 SweepCursors()
{
    ConnectSpi();
    // Prepared transactions hold every cursor back until none is left.
    if (max_prepared_xacts > 0) {
        uint64 generation = PreparedFloorGeneration();
        if (Execute(&kPreparedTransactions, nullptr, nullptr, 1) == 1 &&
            DatumGetInt64(ResultValue(0, 1)) == 0)
            LiftPreparedFloor(generation);
    }
    uint64 nqueues = Execute(&kQueueIds, nullptr, nullptr);
    int32 *queue_ids = (int32 *) palloc(sizeof(int32) * (nqueues + 1));
    for (uint64 i = 0; i < nqueues; i++)
        queue_ids[i] = DatumGetInt32(ResultValue(i, 1));
    int64 lowered = 0;
    for (uint64 i = 0; i < nqueues; i++) {
        QueueCursors *cursors = CursorsFor(queue_ids[i]);
        if (cursors == nullptr)
            continue;
        // Cursors read before the statement's snapshot: a job that snapshot
        // shows claimable below one of them is one the cursor really passed
        // (a job claimed since would show as claimed, not ready).
        int64 before[kLanes];
        for (int p = kMinPriority; p <= kMaxPriority; p++)
            before[p - kMinPriority] = LaneCursor(cursors, p);
        Datum args[1] = {Int32GetDatum(queue_ids[i])};
        uint64 n = Execute(&kLaneBounds, args, nullptr);
        for (uint64 row = 0; row < n; row++) {
            int priority = DatumGetInt32(ResultValue(row, 1));
            int64 lowest = DatumGetInt64(ResultValue(row, 2));
            int64 cursor = before[priority - kMinPriority];
            LoadLane(cursors, priority, DatumGetInt64(ResultValue(row, 3)));
            if (lowest < cursor && LowerLane(cursors, priority, lowest)) {
                lowered++;
                ereport(LOG, (errmsg("claimqueue: the claim cursor of queue %d, priority %d was "
                                     "past a claimable job (position %lld < %lld); lowered",
                                     queue_ids[i], priority, (long long) lowest,
                                     (long long) cursor)));
            }
        }
    }
    FinishSpi();
    return lowered;
}

}  // namespace claimqueue

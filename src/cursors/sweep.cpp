// The reaper's side of the claim cursors: the sweep that repairs a cursor
// breaking its invariant, the invariant check, lifting prepared transactions'
// floors; and the lanes as claim_cursors() shows them (see cursors.hpp).
#include "cursors/shared.hpp"

extern "C" {
#include "access/twophase.h"
}

#include "core/cursor_repair.hpp"
#include "pg/clock.hpp"
#include "pg/statement.hpp"

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

Statement kQueueIds = {
    "SELECT queue_id FROM claimqueue.queues ORDER BY queue_id", 0, {}, nullptr};

Statement kPreparedTransactions = {
    "SELECT count(*) FROM pg_catalog.pg_prepared_xacts", 0, {}, nullptr};

}  // namespace

void LiftPreparedFloorsWhenNone()
{
    // Prepared transactions hold every cursor and the lease scan back until
    // none is left; a PREPARE after the count below changes the generation,
    // and the floors then stay.
    if (max_prepared_xacts == 0 || !PreparedFloorsHeld())
        return;
    uint64 generation = PreparedFloorGeneration();
    ConnectSpi();
    bool none = Execute(&kPreparedTransactions, nullptr, nullptr, 1) == 1 &&
                DatumGetInt64(ResultValue(0, 1)) == 0;
    FinishSpi();
    if (none)
        LiftPreparedFloors(generation);
}

void ReadLaneBounds(int32 queue_id, LaneBounds bounds[kLanes])
{
    for (int i = 0; i < kLanes; i++)
        bounds[i] = {false, 0, 0};
    Datum args[1] = {Int32GetDatum(queue_id)};
    uint64 n = Execute(&kLaneBounds, args, nullptr);
    for (uint64 row = 0; row < n; row++) {
        int priority = DatumGetInt32(ResultValue(row, 1));
        bounds[priority - kMinPriority] = {true, DatumGetInt64(ResultValue(row, 2)),
                                           DatumGetInt64(ResultValue(row, 3))};
    }
}

int64 SweepCursors()
{
    ConnectSpi();
    uint64 nqueues = Execute(&kQueueIds, nullptr, nullptr);
    int32 *queue_ids = (int32 *) palloc(sizeof(int32) * (nqueues + 1));
    for (uint64 i = 0; i < nqueues; i++)
        queue_ids[i] = DatumGetInt32(ResultValue(i, 1));
    LaneBounds *bounds = (LaneBounds *) palloc(sizeof(LaneBounds) * kLanes);
    int64 repaired = 0;
    for (uint64 i = 0; i < nqueues; i++) {
        // A queue without an entry has no cursor to repair: its first claim
        // loads its lanes from the table.
        QueueCursors *cursors = PinCursors(queue_ids[i], false);
        if (cursors == nullptr)
            continue;
        // Cursors read before the statement's snapshot: a job that snapshot
        // shows claimable below one of them is one the cursor really passed (a
        // job claimed since would show as claimed, not ready). The counter is
        // read after them, so a cursor moved meanwhile is still below it.
        int64 before[kLanes];
        for (int p = kMinPriority; p <= kMaxPriority; p++)
            before[p - kMinPriority] = LaneCursor(cursors, p);
        pg_memory_barrier();
        int64 counter = PositionCounter();
        ReadLaneBounds(queue_ids[i], bounds);
        for (int p = kMinPriority; p <= kMaxPriority; p++) {
            const LaneBounds &lane = bounds[p - kMinPriority];
            if (lane.any)
                LoadLane(cursors, p, lane.highest);
            uint64 cursor = (uint64) before[p - kMinPriority];
            CursorRepair repair = RepairCursor(cursor, (uint64) counter, lane.any,
                                               (uint64) lane.lowest);
            if (repair.needed && LowerLane(cursors, p, (int64) repair.target)) {
                repaired++;
                ereport(LOG, (errmsg("claimqueue: the claim cursor of queue %d, priority %d was "
                                     "%s (cursor %llu, lowest claimable %s, counter %lld); "
                                     "lowered to %llu",
                                     queue_ids[i], p, repair.why, (unsigned long long) cursor,
                                     lane.any ? psprintf("%lld", (long long) lane.lowest) : "none",
                                     (long long) counter, (unsigned long long) repair.target)));
            }
        }
        UnpinCursors(cursors);
    }
    FinishSpi();
    return repaired;
}

namespace {

// Every lane's claimable positions in this database, for the invariant check.
Statement kAllLaneBounds = {
    "SELECT j.queue_id, j.priority::integer, min(j.pos), max(j.pos) FROM claimqueue.jobs j"
    " WHERE j.state = 'ready' AND j.pos IS NOT NULL GROUP BY 1, 2",
    0, {}, nullptr};

void PutViolation(Tuplestorestate *out, TupleDesc desc, int32 queue_id, int priority,
                  int64 cursor, const LaneBounds *lane, int64 max_position, int64 counter,
                  const char *problem)
{
    Datum values[7] = {Int32GetDatum(queue_id), Int32GetDatum(priority), Int64GetDatum(cursor),
                       Int64GetDatum(lane ? lane->lowest : 0), Int64GetDatum(max_position),
                       Int64GetDatum(counter), CStringGetTextDatum(problem)};
    bool nulls[7] = {false, false, false, lane == nullptr || !lane->any, false, false, false};
    tuplestore_putvalues(out, desc, values, nulls);
}

}  // namespace

void PutLanes(Tuplestorestate *out, TupleDesc desc)
{
    int n;
    LaneView *lanes = ListLanes(&n);
    for (int i = 0; i < n; i++) {
        Datum values[4] = {Int32GetDatum(lanes[i].queue_id), Int32GetDatum(lanes[i].priority),
                           Int64GetDatum(lanes[i].cursor), Int64GetDatum(lanes[i].max_position)};
        bool nulls[4] = {false, false, false, false};
        tuplestore_putvalues(out, desc, values, nulls);
    }
}

int64 CheckCursorInvariants(Tuplestorestate *out, TupleDesc desc)
{
    // Cursors, then the counter, before the statement's snapshot (as the
    // sweep reads them); the lanes' highest positions after it, since a job
    // the snapshot shows was drawn, and its lane's maximum raised, before it.
    int nbefore;
    LaneView *before = ListLanes(&nbefore);
    pg_memory_barrier();
    int64 counter = PositionCounter();
    ConnectSpi();
    uint64 nrows = Execute(&kAllLaneBounds, nullptr, nullptr);
    struct Row {
        int32 queue_id;
        int priority;
        LaneBounds bounds;
    };
    Row *rows = (Row *) palloc(sizeof(Row) * (nrows + 1));
    for (uint64 i = 0; i < nrows; i++)
        rows[i] = {DatumGetInt32(ResultValue(i, 1)), DatumGetInt32(ResultValue(i, 2)),
                   {true, DatumGetInt64(ResultValue(i, 3)), DatumGetInt64(ResultValue(i, 4))}};
    FinishSpi();
    int nafter, nloaded;
    LaneView *after = ListLanes(&nafter);
    int32 *loaded = ListLoadedQueues(&nloaded);

    auto find_row = [&](int32 queue_id, int priority) -> const LaneBounds * {
        for (uint64 i = 0; i < nrows; i++)
            if (rows[i].queue_id == queue_id && rows[i].priority == priority)
                return &rows[i].bounds;
        return nullptr;
    };
    int64 violations = 0;
    for (int i = 0; i < nbefore; i++) {
        const LaneView &lane = before[i];
        const LaneBounds *bounds = find_row(lane.queue_id, lane.priority);
        const char *problem = nullptr;
        if (lane.cursor < 0 || lane.cursor > counter)
            problem = "cursor outside [0, counter]";
        else if (bounds != nullptr && bounds->lowest < lane.cursor)
            problem = "cursor past a claimable job";
        if (problem != nullptr) {
            PutViolation(out, desc, lane.queue_id, lane.priority, lane.cursor, bounds,
                         lane.max_position, counter, problem);
            violations++;
        }
    }
    for (uint64 i = 0; i < nrows; i++) {
        bool queue_loaded = false;
        for (int k = 0; k < nloaded; k++)
            queue_loaded |= loaded[k] == rows[i].queue_id;
        if (!queue_loaded)
            continue;  // its first claim loads the lanes from the table
        int64 max_position = 0, cursor = 0;
        for (int k = 0; k < nafter; k++)
            if (after[k].queue_id == rows[i].queue_id && after[k].priority == rows[i].priority) {
                max_position = after[k].max_position;
                cursor = after[k].cursor;
            }
        if (rows[i].bounds.highest > max_position) {
            PutViolation(out, desc, rows[i].queue_id, rows[i].priority, cursor, &rows[i].bounds,
                         max_position, counter, "claimable job above the lane's highest position");
            violations++;
        }
    }
    return violations;
}

}  // namespace claimqueue

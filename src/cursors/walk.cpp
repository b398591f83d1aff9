// A claim's walk over a queue's lanes, promotion of due jobs, lane loading,
// next_due (see cursors.hpp; README.md beside this file has the rules).
#include "cursors/shared.hpp"

#include "pg/clock.hpp"
#include "pg/statement.hpp"

namespace claimqueue {
namespace {

// The first position in the lane at or past $3 that this statement's snapshot
// shows as claimable, locked by someone or not. Below it (and below the
// bound read before this snapshot) nothing is, or can become, claimable.
Statement kProbeLane = {
    "SELECT j.pos, j.run_at FROM claimqueue.jobs j"
    " WHERE j.queue_id = $1 AND j.priority = $2 AND j.state = 'ready'"
    "   AND j.pos IS NOT NULL AND j.pos >= $3"
    " ORDER BY j.pos LIMIT 1",
    3, {INT4OID, INT2OID, INT8OID}, nullptr};

// Without cursors: the run_at of the next job in claim order (already due).
Statement kFirstClaimable = {
    "SELECT j.run_at FROM claimqueue.jobs j"
    " WHERE j.queue_id = $1 AND j.state = 'ready' AND j.pos IS NOT NULL"
    " ORDER BY j.priority DESC, j.pos LIMIT 1",
    1, {INT4OID}, nullptr};

// From jobs_scheduled_idx: the earliest run_at of the jobs waiting for theirs.
Statement kEarliestScheduled = {
    "SELECT min(j.run_at) FROM claimqueue.jobs j"
    " WHERE j.queue_id = $1 AND j.state = 'ready' AND j.pos IS NULL",
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

constexpr int kPromoteBatch = 1000;

// Gives due waiting jobs of the queue their positions. With cursors, only when
// the earliest waiting run_at has come (or is not known yet).
void PromoteDue(int32 queue_id, TimestampTz now, QueueCursors *cursors)
{
    if (cursors != nullptr) {
        if (!PromotionDue(cursors, now))
            return;
        BeginPromotion(cursors);
    }
    ConnectSpi();
    Datum args[3] = {Int32GetDatum(queue_id), TimestampTzGetDatum(now),
                     Int32GetDatum(kPromoteBatch)};
    Execute(&kPromote, args, nullptr, 1);
    if (cursors == nullptr) {
        FinishSpi();
        return;
    }
    bool isnull;
    int64 promoted = DatumGetInt64(ResultValue(0, 1));
    Datum next = ResultValue(0, 2, &isnull);
    // A full batch may have left due jobs behind: look again next time.
    NotePromoted(cursors, promoted == kPromoteBatch ? now
                          : isnull                  ? DT_NOEND
                                                    : DatumGetTimestampTz(next));
    FinishSpi();
}

// Lanes of jobs that became claimable before this server (or this queue's
// entry) existed.
void LoadLanes(int32 queue_id, QueueCursors *cursors)
{
    LaneBounds *bounds = (LaneBounds *) palloc(sizeof(LaneBounds) * kLanes);
    ConnectSpi();
    ReadLaneBounds(queue_id, bounds);
    FinishSpi();
    for (int p = kMinPriority; p <= kMaxPriority; p++)
        if (bounds[p - kMinPriority].any)
            LoadLane(cursors, p, bounds[p - kMinPriority].highest);
    MarkLoaded(cursors);
    pfree(bounds);
}

// Runs kProbeLane from the lane's cursor; true when it found a job (its pos
// and run_at are then result row 0).
bool ProbeLane(int32 queue_id, QueueCursors *cursors, int priority)
{
    Datum probe[3] = {Int32GetDatum(queue_id), Int16GetDatum(priority),
                      Int64GetDatum(LaneCursor(cursors, priority))};
    return Execute(&kProbeLane, probe, nullptr, 1) == 1;
}

}  // namespace

void BeginLaneWalk(LaneWalk *walk, int32 queue_id, TimestampTz now)
{
    walk->queue_id = queue_id;
    walk->cursors = PinCursors(queue_id);  // unpinned by EndLaneWalk, or at transaction end
    walk->next_priority = kMaxPriority;
    PromoteDue(queue_id, now, walk->cursors);
    if (walk->cursors != nullptr && NeedsLoading(walk->cursors))
        LoadLanes(queue_id, walk->cursors);
    // Last, after every statement here: the claim's snapshot comes after it.
    walk->bound = walk->cursors != nullptr ? PositionBound() : 0;
}

bool WalkHasCursors(const LaneWalk *walk)
{
    return walk->cursors != nullptr;
}

bool NextLane(LaneWalk *walk, int *priority, int64 *from)
{
    for (; walk->next_priority >= kMinPriority; walk->next_priority--) {
        int p = walk->next_priority;
        if (!LaneMayHaveJobs(walk->cursors, p))
            continue;
        walk->next_priority = p - 1;
        *priority = p;
        *from = LaneCursor(walk->cursors, p);
        return true;
    }
    return false;
}

int64 SeenBound(const LaneWalk *walk, int64 first_seen)
{
    return first_seen >= 0 ? Min(first_seen, walk->bound) : walk->bound;
}

void LaneSeen(LaneWalk *walk, int priority, int64 first_seen)
{
    AdvanceLane(walk->cursors, priority, SeenBound(walk, first_seen));
}

void EndLaneWalk(LaneWalk *walk)
{
    if (walk->cursors != nullptr)
        UnpinCursors(walk->cursors);
    walk->cursors = nullptr;
}

bool NextDueAt(int32 queue_id, TimestampTz *due)
{
    Datum args[1] = {Int32GetDatum(queue_id)};
    QueueCursors *cursors = PinCursors(queue_id);
    // A claimable job first. With cursors it is looked for from each lane's
    // cursor, not from the start of the lane, which an old snapshot may keep
    // full of dead entries.
    bool found = false;
    if (cursors == nullptr || NeedsLoading(cursors)) {
        if (Execute(&kFirstClaimable, args, nullptr, 1) == 1) {
            *due = DatumGetTimestampTz(ResultValue(0, 1));
            found = true;
        }
    } else {
        for (int priority = kMaxPriority; priority >= kMinPriority && !found; priority--) {
            if (LaneMayHaveJobs(cursors, priority) && ProbeLane(queue_id, cursors, priority)) {
                *due = DatumGetTimestampTz(ResultValue(0, 2));
                found = true;
            }
        }
    }
    if (cursors != nullptr)
        UnpinCursors(cursors);
    // Then the earliest job waiting for its run_at.
    bool isnull = true;
    Datum waiting = 0;
    if (Execute(&kEarliestScheduled, args, nullptr, 1) == 1)
        waiting = ResultValue(0, 1, &isnull);
    if (!isnull) {
        *due = found ? Min(*due, DatumGetTimestampTz(waiting)) : DatumGetTimestampTz(waiting);
        found = true;
    }
    return found;
}

bool OldestClaimableAt(int32 queue_id, TimestampTz *run_at)
{
    QueueCursors *cursors = PinCursors(queue_id);
    if (cursors == nullptr)
        return false;
    if (NeedsLoading(cursors))
        LoadLanes(queue_id, cursors);  // as the queue's next claim would
    bool found = false;
    for (int priority = kMaxPriority; priority >= kMinPriority; priority--) {
        if (!LaneMayHaveJobs(cursors, priority) || !ProbeLane(queue_id, cursors, priority))
            continue;
        TimestampTz t = DatumGetTimestampTz(ResultValue(0, 2));
        *run_at = found ? Min(*run_at, t) : t;
        found = true;
    }
    UnpinCursors(cursors);
    return found;
}

int64 PromoteDueBatch(text *, int limit)
{
    ConnectSpi();
    Datum args[2] = {TimestampTzGetDatum(ClockNow()), Int32GetDatum(limit)};
    uint64 n = Execute(&kPromoteAll, args, nullptr);
    FinishSpi();
    return (int64) n;
}

}  // namespace claimqueue

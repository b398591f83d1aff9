// SQL functions of the claim cursors (src/cursors/cursors.hpp), internal to
// the extension: claimqueue.ready_position() gives a job entering the ready
// state its claim position, from the statements of the claim engine;
// claimqueue.claim_cursors() shows the lanes and check_claim_cursors() their
// broken invariants (for tests and diagnosis); claim_cursor_table() feeds the
// claim_cursor_usage view.
#include "pg/firewall.hpp"

#include "cursors/cursors.hpp"

using namespace claimqueue;

// claimqueue.ready_position(queue_id, priority, run_at, now) -> bigint: a new
// position when the job is due at `now`, else NULL (it waits for run_at).
CQ_FUNCTION(cq_ready_position)
{
    int32 queue_id = PG_GETARG_INT32(0);
    int32 priority = PG_GETARG_INT32(1);
    TimestampTz run_at = PG_GETARG_TIMESTAMPTZ(2);
    TimestampTz now = PG_GETARG_TIMESTAMPTZ(3);
    int64 position = ReadyPosition(queue_id, priority, run_at, now);
    if (position < 0)
        PG_RETURN_NULL();
    PG_RETURN_INT64(position);
}

// claimqueue.claim_cursors() -> (queue_id, priority, cursor, max_position),
// this database's lanes that have had jobs since the server started.
CQ_FUNCTION(cq_claim_cursors)
{
    ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
    InitMaterializedSRF(fcinfo, 0);
    PutLanes(rsinfo->setResult, rsinfo->setDesc);
    return (Datum) 0;
}

// claimqueue.check_claim_cursors() -> (queue_id, priority, cursor, lowest_ready,
// max_position, counter, problem): one row per broken invariant of this
// database's lanes; none when they all hold.
CQ_FUNCTION(cq_check_claim_cursors)
{
    ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
    InitMaterializedSRF(fcinfo, 0);
    CheckCursorInvariants(rsinfo->setResult, rsinfo->setDesc);
    return (Datum) 0;
}

// claimqueue.claim_cursor_table() -> (capacity, in_use, this_database,
// refusals): the table of claim cursors (no row without the preload).
CQ_FUNCTION(cq_claim_cursor_table)
{
    ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
    InitMaterializedSRF(fcinfo, 0);
    CursorTableUsage usage;
    if (GetCursorTableUsage(&usage)) {
        Datum values[4] = {Int32GetDatum(usage.capacity), Int32GetDatum(usage.in_use),
                           Int32GetDatum(usage.this_database), Int64GetDatum(usage.refusals)};
        bool nulls[4] = {false, false, false, false};
        tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    }
    return (Datum) 0;
}

// claimqueue.sweep_claim_cursors() -> cursors lowered: the reaper's sweep, now.
CQ_FUNCTION(cq_sweep_claim_cursors)
{
    PG_RETURN_INT64(SweepCursors());
}

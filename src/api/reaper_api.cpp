// SQL API, background maintenance: reap() and purge() (the reaper's passes by
// hand), claimqueue.reaper_status() (behind the reaper_stats view),
// claimqueue.reaper_status_all() (behind all_reaper_stats) and
// claimqueue.start_reaper() (install scripts).
#include "pg/firewall.hpp"

extern "C" {
#include "access/htup_details.h"
#include "access/xlog.h"
#include "catalog/pg_authid_d.h"
#include "commands/dbcommands.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
}

#include "api/access.hpp"
#include "api/args.hpp"
#include "engine/claim.hpp"
#include "engine/maintenance.hpp"
#include "pg/settings.hpp"
#include "worker/reaper_slots.hpp"
#include "worker/workers.hpp"

using namespace claimqueue;

namespace {

// The queue argument of reap() and purge(), checked: a queue the caller
// manages, or NULL (every queue) for an administrator.
text *MaintenanceTarget(FunctionCallInfo fcinfo, const char *function)
{
    text *queue = PG_ARGISNULL(0) ? nullptr : QueueNameArg(fcinfo, 0);
    RequireReadCommitted(function);
    if (queue)
        RequireQueuePrivilege(queue, QueuePrivilege::kManage, function);
    else
        RequireAdmin(psprintf("run %s on every queue", function));
    return queue;
}

}  // namespace

// reap(queue) -> jobs whose expired lease was returned
CQ_QUEUE_FUNCTION(cq_reap)
{
    PG_RETURN_INT64(ReapExpired(MaintenanceTarget(fcinfo, "reap()")));
}

// purge(queue) -> finished jobs deleted because their queue's retention passed
CQ_QUEUE_FUNCTION(cq_purge)
{
    PG_RETURN_INT64(PurgeFinished(MaintenanceTarget(fcinfo, "purge()")));
}

// claimqueue.start_reaper(): once this transaction commits, the launcher
// (re)starts this database's reaper. Returns whether a launcher can exist.
CQ_FUNCTION(cq_start_reaper)
{
    StartReaperAtCommit();
    PG_RETURN_BOOL(Shared() != nullptr);
}

// claimqueue.reaper_status(): this database's reaper, one row.
CQ_FUNCTION(cq_reaper_status)
{
    TupleDesc desc;
    if (get_call_result_type(fcinfo, nullptr, &desc) != TYPEFUNC_COMPOSITE)
        elog(ERROR, "claimqueue: reaper_status() must return a row");
    desc = BlessTupleDesc(desc);
    Datum values[10];
    bool nulls[10];
    for (int i = 0; i < 10; i++) {
        values[i] = (Datum) 0;
        nulls[i] = true;
    }
    SharedState *s = Shared();
    const char *state;
    values[0] = BoolGetDatum(s != nullptr);
    values[1] = BoolGetDatum(reaper_enabled);
    nulls[0] = nulls[1] = false;
    if (s == nullptr) {
        state = "not preloaded";
    } else if (RecoveryInProgress()) {
        state = "standby";
    } else {
        LWLockAcquire(s->lock, LW_SHARED);
        ReaperSlot *slot = FindSlot(MyDatabaseId);
        if (slot == nullptr) {
            state = s->launcher_pid == 0 ? "no launcher" : "unknown";
        } else {
            state = ReaperStateName(slot->state);
            if (slot->pid != 0) {
                values[3] = Int32GetDatum(slot->pid);
                values[4] = TimestampTzGetDatum(slot->started_at);
                nulls[3] = nulls[4] = false;
            }
            if (slot->last_pass_at != 0) {
                values[5] = TimestampTzGetDatum(slot->last_pass_at);
                nulls[5] = false;
            }
            values[6] = Int64GetDatum(slot->passes);
            values[7] = Int64GetDatum(slot->jobs_reaped);
            values[8] = Int64GetDatum(slot->jobs_purged);
            nulls[6] = nulls[7] = nulls[8] = false;
            if (slot->last_error[0] != '\0') {
                values[9] = CStringGetTextDatum(slot->last_error);
                nulls[9] = false;
            }
        }
        LWLockRelease(s->lock);
    }
    values[2] = CStringGetTextDatum(state);
    nulls[2] = false;
    PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}

// claimqueue.reaper_status_all(): every database's reaper that the launcher
// knows, one row per slot, as pg_stat_activity shows other sessions: the
// database, its reaper's state and pid to whoever may read it; when the
// reaper started, its passes, counters and last error only for this database
// or to a role with the privileges of pg_read_all_stats (an error's message
// may carry another database's data). No rows when the library was not
// preloaded or on a standby.
CQ_FUNCTION(cq_reaper_status_all)
{
    constexpr int kColumns = 9;
    ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
    InitMaterializedSRF(fcinfo, 0);
    SharedState *s = Shared();
    if (s == nullptr || RecoveryInProgress())
        return (Datum) 0;
    // A copy of the slots, read under the lock; the names are looked up after it.
    int n = 0;
    ReaperSlot *slots = (ReaperSlot *) palloc(sizeof(ReaperSlot) * s->nslots);
    LWLockAcquire(s->lock, LW_SHARED);
    for (int i = 0; i < s->nslots; i++)
        if (OidIsValid(s->slots[i].database))
            slots[n++] = s->slots[i];
    LWLockRelease(s->lock);
    bool all_stats = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
    for (int i = 0; i < n; i++) {
        const ReaperSlot *slot = &slots[i];
        char *name = get_database_name(slot->database);
        if (name == nullptr)
            continue;  // dropped since; the launcher frees its slot
        Datum values[kColumns];
        bool nulls[kColumns];
        for (int c = 0; c < kColumns; c++) {
            values[c] = (Datum) 0;
            nulls[c] = true;
        }
        values[0] = CStringGetTextDatum(name);
        values[1] = CStringGetTextDatum(ReaperStateName(slot->state));
        nulls[0] = nulls[1] = false;
        if (slot->pid != 0) {
            values[2] = Int32GetDatum(slot->pid);
            nulls[2] = false;
        }
        if (all_stats || slot->database == MyDatabaseId) {
            if (slot->pid != 0) {
                values[3] = TimestampTzGetDatum(slot->started_at);
                nulls[3] = false;
            }
            if (slot->last_pass_at != 0) {
                values[4] = TimestampTzGetDatum(slot->last_pass_at);
                nulls[4] = false;
            }
            values[5] = Int64GetDatum(slot->passes);
            values[6] = Int64GetDatum(slot->jobs_reaped);
            values[7] = Int64GetDatum(slot->jobs_purged);
            nulls[5] = nulls[6] = nulls[7] = false;
            if (slot->last_error[0] != '\0') {
                values[8] = CStringGetTextDatum(slot->last_error);
                nulls[8] = false;
            }
        }
        tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    }
    return (Datum) 0;
}

// A reaper: one background worker per database with the extension. Each pass
// returns expired leases and purges finished jobs past retention, one
// transaction per batch; quiet when there is nothing to do.
#include "worker/workers.hpp"

extern "C" {
#include "access/twophase.h"
#include "catalog/pg_extension.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/lmgr.h"
#include "tcop/tcopprot.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
}

#include "engine/job_rows.hpp"
#include "engine/job_shards.hpp"
#include "engine/maintenance.hpp"
#include "cursors/cursors.hpp"
#include "metrics/metrics.hpp"
#include "engine/queue_locks.hpp"
#include "engine/schedules.hpp"
#include "engine/schema_version.hpp"
#include "pg/statement.hpp"
#include "pg/settings.hpp"
#include "worker/reaper_slots.hpp"

extern "C" PGDLLEXPORT void cq_reaper_main(Datum arg);

namespace claimqueue {
namespace {

int my_slot = -1;

ReaperSlot *MySlot()
{
    return &Shared()->slots[my_slot];
}

// True when this reaper should exit: the launcher or a DATABASE command asked
// it to. (SIGTERM is PostgreSQL's own die(): the next CHECK_FOR_INTERRUPTS
// ends the process, inside a batch or a lock wait too.)
bool StopRequested()
{
    LWLockAcquire(Shared()->lock, LW_SHARED);
    bool stop = MySlot()->stop_requested || MySlot()->state == ReaperState::kPaused;
    LWLockRelease(Shared()->lock);
    return stop;
}

void SetState(ReaperState state)
{
    LWLockAcquire(Shared()->lock, LW_EXCLUSIVE);
    MySlot()->state = state;
    LWLockRelease(Shared()->lock);
}

// Starts a batch's transaction. False (and no transaction) when the extension
// is absent, still being created by an uncommitted transaction, or at a version
// this library does not serve (schema_version.hpp).
// The lock on the extension object keeps DROP EXTENSION from removing the
// tables under the batch; DROP EXTENSION waits for the batch instead.
bool BeginBatch(const char *activity)
{
    MemoryContext caller = CurrentMemoryContext;
    SetCurrentStatementStartTimestamp();
    StartTransactionCommand();
    PushActiveSnapshot(GetTransactionSnapshot());
    pgstat_report_activity(STATE_RUNNING, activity);
    bool usable = false;
    Oid extension = get_extension_oid("claimqueue", true);
    if (OidIsValid(extension)) {
        LockDatabaseObject(ExtensionRelationId, extension, 0, AccessShareLock);
        // The same check as the queue API's: this library's schema or the
        // previous release's (a rolling restart), no older or newer one.
        usable = get_extension_name(extension) != nullptr && Served(InstalledSchema());
    }
    if (!usable) {
        PopActiveSnapshot();
        CommitTransactionCommand();
        MemoryContextSwitchTo(caller);
        pgstat_report_activity(STATE_IDLE, nullptr);
    }
    return usable;
}

void EndBatch()
{
    MemoryContext caller = CurrentMemoryContext;
    PopActiveSnapshot();
    CommitTransactionCommand();
    MemoryContextSwitchTo(caller);
    pgstat_report_stat(false);
    pgstat_report_activity(STATE_IDLE, nullptr);
}

// Under Citus, the passes over jobs run once for each shard of it on this node
// (JobsTargets), each batch with its statements routed there: the shard's
// qualified name while one is served, "" otherwise.
char shard_route[2 * NAMEDATALEN + 8] = "";

// Runs `batch` in transactions of reaper_batch_size jobs until a batch comes
// back short. Adds the jobs handled to *total; false when the extension is gone.
bool RunBatches(int64 (*batch)(text *, int), const char *activity, int64 *total)
{
    for (;;) {
        if (!BeginBatch(activity))
            return false;
        if (shard_route[0] != '\0')
            (void) RouteJobsTo(shard_route);  // the transaction's end takes it off
        int limit = reaper_batch_size;
        int64 n = batch(nullptr, limit);
        (void) RouteJobsTo(nullptr);
        EndBatch();
        *total += n;
        if (n < limit || StopRequested())
            return true;
        CHECK_FOR_INTERRUPTS();
    }
}

// The sweep of the claim cursors, about once a minute: it walks each lane from
// its start, which is what the cursors spare the claims.
constexpr int64 kSweepIntervalUsec = 60 * USECS_PER_SEC;
TimestampTz last_sweep = 0;

int64 SweepBatch(text *, int)
{
    SweepCursors();
    return 0;
}

// Gauges of queues not counted since their slot was taken (the first pass
// after a start, a new queue): recounted in a transaction of their own.
int64 RecountBatch(text *, int)
{
    RecountQueues(true, QueueJobsHere);
    return 0;
}

int64 LiftFloorsBatch(text *, int)
{
    LiftPreparedFloorsWhenNone();
    return 0;
}

// Where the scan of expired leases starts (maintenance.hpp, LeaseScan): moved
// up after each pass, back to the start with each sweep (so a lease written
// outside claimqueue's functions is found within a minute).
TimestampTz lease_mark = DT_NOBEGIN;
TimestampTz next_lease_mark = DT_NOBEGIN;

int64 ReapFromMark(text *, int limit)
{
    LeaseScan scan = {lease_mark, lease_mark};
    int64 n = ReapExpiredFrom(nullptr, limit, &scan);
    next_lease_mark = scan.next_from;
    return n;
}

// Where the retention pass reads the table for done jobs: a range of blocks a
// pass (maintenance.hpp), so one pass's cost does not grow with the history
// kept, and a done job past its retention is deleted within one sweep. Bounded:
// while no done job can be past its retention, a pass reads none.
DoneSweep BoundedSweep()
{
    DoneSweep sweep;
    sweep.bounded = true;
    return sweep;
}
DoneSweep done_sweep = BoundedSweep();
DoneSweep *sweeping = &done_sweep;  // the table's, or the shard's being served

int64 PurgeFromSweep(text *, int limit)
{
    return PurgeFinishedFrom(nullptr, limit, sweeping);
}

// Under Citus, each local shard's own lease mark and done sweep, by shard id.
struct ShardState {
    int64 shardid;  // the key
    bool seen;      // listed by this pass
    TimestampTz lease_mark;
    DoneSweep sweep;
};
HTAB *shard_states = nullptr;

ShardState *StateOfShard(const JobsTarget &target)
{
    if (shard_states == nullptr) {
        HASHCTL ctl;
        memset(&ctl, 0, sizeof(ctl));
        ctl.keysize = sizeof(int64);
        ctl.entrysize = sizeof(ShardState);
        ctl.hcxt = TopMemoryContext;
        shard_states = hash_create("claimqueue reaper shards", 64, &ctl,
                                   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
    }
    bool found;
    ShardState *state = (ShardState *) hash_search(shard_states, &target.shardid, HASH_ENTER, &found);
    if (!found) {
        state->lease_mark = DT_NOBEGIN;
        state->sweep = BoundedSweep();
    }
    state->sweep.relid = target.relid;  // the same shard id keeps its name, not always its oid
    state->seen = true;
    return state;
}

// Forgets the shards no longer here (moved away, or the table undistributed).
void ForgetUnseenShards()
{
    if (shard_states == nullptr)
        return;
    HASH_SEQ_STATUS seq;
    hash_seq_init(&seq, shard_states);
    ShardState *state;
    while ((state = (ShardState *) hash_seq_search(&seq)) != nullptr) {
        if (!state->seen) {
            RestartDoneSweep(&state->sweep);  // frees its tables' context
            (void) hash_search(shard_states, &state->shardid, HASH_REMOVE, nullptr);
        } else {
            state->seen = false;
        }
    }
}

// Whether this node is Citus's coordinator (or a server without Citus).
bool on_coordinator = true;

// The tables this pass serves (JobsTargets), copied into the pass's context.
JobsTarget *pass_targets = nullptr;
int npass_targets = 0;

int64 ListTargetsBatch(text *, int)
{
    for (int i = 0; i < npass_targets; i++)
        if (pass_targets[i].route != nullptr)
            pfree((void *) pass_targets[i].route);
    if (pass_targets != nullptr)
        pfree(pass_targets);
    pass_targets = nullptr;
    npass_targets = 0;
    JobsTarget *targets;
    int n = JobsTargets(JobsRelid(), &targets);
    on_coordinator = LocalGroupId() == 0;
    pass_targets = (JobsTarget *) MemoryContextAlloc(TopMemoryContext, sizeof(JobsTarget) * (n + 1));
    for (int i = 0; i < n; i++) {
        pass_targets[i] = targets[i];
        pass_targets[i].route =
            targets[i].route ? MemoryContextStrdup(TopMemoryContext, targets[i].route) : nullptr;
    }
    npass_targets = n;
    return 0;
}

// Due schedules get their jobs; counted in jobs, the batch returns the
// schedules it handled.
int64 scheduled_jobs = 0;

const JobsTarget *serving = nullptr;  // the shard the batches serve (Serve)

int64 SchedulesBatch(text *, int limit)
{
    // Under Citus, the node holding a queue's shard fires its schedules: one
    // node per queue, so each slot's job is enqueued once across the cluster.
    ArrayType *ids = serving != nullptr ? QueueIdsOn(*serving) : nullptr;
    return RunDueSchedulesBatch(nullptr, limit, &scheduled_jobs, ids);
}

// The queue history (queue_history): every queue's metrics sampled about once
// a minute into a table that keeps two hours (api/metrics.sql). Only on this
// library's own schema: the previous release's has no such table.
constexpr int64 kSampleIntervalUsec = 60 * USECS_PER_SEC;
TimestampTz last_sample = 0;

Statement kSampleHistory = {"SELECT claimqueue.sample_queue_history()", 0, {}, nullptr};

int64 SampleBatch(text *, int)
{
    if (InstalledSchema() != SchemaState::kCurrent)
        return 0;
    ConnectSpi();
    Execute(&kSampleHistory, nullptr, nullptr);
    FinishSpi();
    return 0;
}

// One pass; false when the extension is gone (the reaper then exits).
void ServeNone()
{
    serving = nullptr;
    shard_route[0] = '\0';
    sweeping = &done_sweep;
}

// Serves `target` in the batches that follow: its route, its lease mark and
// its done sweep (nothing to route on one server).
ShardState *Serve(const JobsTarget &target)
{
    if (target.route == nullptr) {
        ServeNone();
        return nullptr;
    }
    serving = &target;
    strlcpy(shard_route, target.route, sizeof(shard_route));
    ShardState *state = StateOfShard(target);
    sweeping = &state->sweep;
    return state;
}


// The passes over the jobs of one table (`state`: a Citus shard's, else the
// table's own) that return claims: of ended sessions, then expired leases.
bool ReturnClaims(ShardState *state, int64 *released, int64 *reaped)
{
    // Claims of ended sessions (release_on_disconnect) first: an exiting
    // session wakes this reaper, which is what it woke it for.
    if (!RunBatches(ReapDisconnectedBatch, "claimqueue reaper: returning claims of ended sessions",
                    released))
        return false;
    if (state != nullptr)
        lease_mark = state->lease_mark;
    next_lease_mark = lease_mark;
    if (!RunBatches(ReapFromMark, "claimqueue reaper: returning expired leases", reaped))
        return false;
    lease_mark = next_lease_mark;  // its batches have committed
    if (state != nullptr)
        state->lease_mark = lease_mark;
    return true;
}

// One pass; false when the extension is gone (the reaper then exits).
bool RunPass()
{
    int64 reaped = 0, released = 0, purged = 0, promoted = 0, swept = 0, floors = 0, schedules = 0,
          recounted = 0, none = 0;
    scheduled_jobs = 0;
    TimestampTz now = GetCurrentTimestamp();
    bool sweep = now - last_sweep >= kSweepIntervalUsec;
    if (sweep) {
        lease_mark = DT_NOBEGIN;
        if (shard_states != nullptr) {
            HASH_SEQ_STATUS seq;
            hash_seq_init(&seq, shard_states);
            ShardState *state;
            while ((state = (ShardState *) hash_seq_search(&seq)) != nullptr)
                state->lease_mark = DT_NOBEGIN;
        }
    }
    // First, so that a claim of a prepared transaction that committed since
    // the last pass is reaped in this one if its lease has ended.
    if (max_prepared_xacts > 0 &&
        !RunBatches(LiftFloorsBatch, "claimqueue reaper: checking prepared transactions", &floors))
        return false;
    // One server: claimqueue.jobs. Under Citus: each of its shards here, and
    // none on the coordinator, whose own table is empty once distributed.
    if (!RunBatches(ListTargetsBatch, "claimqueue reaper: listing the tables of jobs", &none))
        return false;
    bool distributed = npass_targets != 1 || pass_targets[0].route != nullptr;
    for (int i = 0; i < npass_targets; i++)
        if (!ReturnClaims(Serve(pass_targets[i]), &released, &reaped)) {
            ServeNone();
            return false;
        }
    ServeNone();
    for (int i = 0; i < npass_targets; i++) {
        (void) Serve(pass_targets[i]);
        if (!RunBatches(SchedulesBatch, "claimqueue reaper: enqueuing scheduled jobs",
                        &schedules)) {
            ServeNone();
            return false;
        }
    }
    ServeNone();
    if (!RunBatches(RecountBatch, "claimqueue reaper: counting queue metrics", &recounted))
        return false;
    for (int i = 0; i < npass_targets; i++) {
        (void) Serve(pass_targets[i]);
        if (!RunBatches(PromoteDueBatch, "claimqueue reaper: promoting due jobs", &promoted) ||
            !RunBatches(PurgeFromSweep, "claimqueue reaper: purging finished jobs", &purged)) {
            ServeNone();
            return false;
        }
    }
    ServeNone();
    ForgetUnseenShards();
    // Under Citus the coordinator samples the history, from the cluster's
    // metrics (queue_metrics there), and the workers do not: the samples are
    // a reference table. The cursor sweep is not run under Citus yet
    // (docs/citus.md).
    if (distributed) {
        if (!on_coordinator)
            last_sample = now;
        last_sweep = now;
    }
    if (now - last_sample >= kSampleIntervalUsec) {
        int64 none = 0;
        if (!RunBatches(SampleBatch, "claimqueue reaper: sampling queue history", &none))
            return false;
        last_sample = now;
    }
    if (sweep) {
        if (!RunBatches(SweepBatch, "claimqueue reaper: sweeping claim cursors", &swept))
            return false;
        last_sweep = now;
    }
    if (reaped > 0 || purged > 0)
        ereport(LOG, (errmsg("claimqueue reaper: returned %lld expired leases, purged %lld "
                             "finished jobs past retention",
                             (long long) reaped, (long long) purged)));
    if (released > 0)
        ereport(LOG, (errmsg("claimqueue reaper: returned %lld jobs whose claiming session ended",
                             (long long) released)));
    if (scheduled_jobs > 0)
        ereport(DEBUG1, (errmsg("claimqueue reaper: enqueued %lld scheduled jobs",
                                (long long) scheduled_jobs)));
    LWLockAcquire(Shared()->lock, LW_EXCLUSIVE);
    ReaperSlot *slot = MySlot();
    if (slot->state == ReaperState::kStarting)
        slot->state = ReaperState::kRunning;
    slot->failures = 0;
    slot->passes++;
    slot->jobs_reaped += reaped + released;
    slot->jobs_purged += purged;
    slot->last_pass_at = GetCurrentTimestamp();
    slot->last_error[0] = '\0';
    LWLockRelease(Shared()->lock);
    return true;
}

// After a failed pass: every sweep starts again (its notes may tell of
// deletions the abort undid), and nothing stays routed.
void RestartSweeps()
{
    ServeNone();
    RestartDoneSweep(&done_sweep);
    if (shard_states == nullptr)
        return;
    HASH_SEQ_STATUS seq;
    hash_seq_init(&seq, shard_states);
    ShardState *state;
    while ((state = (ShardState *) hash_seq_search(&seq)) != nullptr)
        RestartDoneSweep(&state->sweep);
}

// A failed pass is logged and retried next interval; the worker stays up.
bool RunPassCatchingErrors(MemoryContext pass_context)
{
    volatile bool present = true;
    PG_TRY();
    {
        present = RunPass();
    }
    PG_CATCH();
    {
        MemoryContextSwitchTo(pass_context);
        ErrorData *error = CopyErrorData();
        FlushErrorState();
        AbortCurrentTransaction();
        RestartSweeps();
        pgstat_report_activity(STATE_IDLE, nullptr);
        LWLockAcquire(Shared()->lock, LW_EXCLUSIVE);
        // The same failure every interval is logged once, not every second.
        bool repeated = strncmp(MySlot()->last_error, error->message,
                                sizeof(MySlot()->last_error) - 1) == 0;
        strlcpy(MySlot()->last_error, error->message, sizeof(MySlot()->last_error));
        LWLockRelease(Shared()->lock);
        // The failure's own SQLSTATE, detail, hint and context go to the log
        // with it; what the reaper does about it goes with them.
        ereport(repeated ? DEBUG1 : WARNING,
                (errcode(error->sqlerrcode),
                 errmsg("claimqueue reaper: pass failed: %s", error->message),
                 error->detail ? errdetail_internal("%s", error->detail) : 0,
                 errhint("The reaper retries every %d ms; reaper_stats.last_error shows the "
                         "latest failure.%s%s", reaper_interval_ms,
                         error->hint ? " " : "", error->hint ? error->hint : ""),
                 error->context ? errcontext("%s", error->context) : 0));
        FreeErrorData(error);
    }
    PG_END_TRY();
    return present;
}

// An exit the launcher did not ask for (SIGTERM, FATAL) leaves the state
// running; the launcher then restarts the reaper after a delay.
void ReaperExit(int, Datum)
{
    LWLockAcquire(Shared()->lock, LW_EXCLUSIVE);
    ReaperSlot *slot = MySlot();
    slot->pid = 0;
    slot->latch = nullptr;
    WakeLauncherLocked();
    LWLockRelease(Shared()->lock);
}

void ReaperMain(Datum arg)
{
    Oid database;
    memcpy(&database, MyBgworkerEntry->bgw_extra, sizeof(Oid));
    my_slot = DatumGetInt32(arg);
    pqsignal(SIGHUP, SignalHandlerForConfigReload);
    pqsignal(SIGTERM, die);  // pg_terminate_backend ends a batch or a lock wait
    BackgroundWorkerUnblockSignals();

    // Paused before we even connected: a DATABASE command is waiting for the
    // database to be free, so do not connect at all.
    if (my_slot < 0 || my_slot >= Shared()->nslots || MySlot()->database != database ||
        StopRequested())
        proc_exit(0);
    BackgroundWorkerInitializeConnectionByOid(database, InvalidOid, 0);
    pgstat_report_appname("claimqueue reaper");
    // Reaping relies on READ COMMITTED (SKIP LOCKED sees the latest rows),
    // whatever default_transaction_isolation says.
    DefaultXactIsoLevel = XACT_READ_COMMITTED;

    StartTransactionCommand();
    bool alone = TryLockReaper();
    if (!alone)
        ereport(LOG, (errmsg("claimqueue reaper: another reaper already runs in database \"%s\"",
                             get_database_name(database))));
    CommitTransactionCommand();
    if (!alone)
        proc_exit(0);
    LWLockAcquire(Shared()->lock, LW_EXCLUSIVE);
    MySlot()->pid = MyProcPid;
    MySlot()->latch = MyLatch;
    MySlot()->started_at = GetCurrentTimestamp();
    LWLockRelease(Shared()->lock);
    before_shmem_exit(ReaperExit, 0);

    MemoryContext pass_context =
        AllocSetContextCreate(TopMemoryContext, "claimqueue reaper", ALLOCSET_DEFAULT_SIZES);
    for (;;) {
        if (ConfigReloadPending) {
            ConfigReloadPending = false;
            ProcessConfigFile(PGC_SIGHUP);
        }
        CHECK_FOR_INTERRUPTS();
        if (StopRequested() || !reaper_enabled)
            break;
        MemoryContextSwitchTo(pass_context);
        bool present = RunPassCatchingErrors(pass_context);
        MemoryContextSwitchTo(TopMemoryContext);
        MemoryContextReset(pass_context);
        if (!present) {
            SetState(ReaperState::kNoExtension);
            break;
        }
        (void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
                         reaper_interval_ms, PG_WAIT_EXTENSION);
        ResetLatch(MyLatch);
        CHECK_FOR_INTERRUPTS();
    }
    proc_exit(0);
}

}  // namespace
}  // namespace claimqueue

extern "C" void cq_reaper_main(Datum arg)
{
    claimqueue::RunGuarded([arg] { claimqueue::ReaperMain(arg); });
}

// The launcher: one background worker per cluster, connected to shared
// catalogs only, that keeps one reaper running in every database with the
// extension (src/worker/README.md has the per-database state machine).
#include "worker/workers.hpp"

extern "C" {
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_database.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "tcop/tcopprot.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
}

#include "pg/settings.hpp"
#include "worker/reaper_slots.hpp"

extern "C" PGDLLEXPORT void cq_launcher_main(Datum arg);

namespace claimqueue {
namespace {

struct Database {
    Oid oid;
    bool eligible;  // not a template, accepts connections, not half-dropped
};

// The launcher's own handles of the reapers it registered, by slot.
BackgroundWorkerHandle **handles = nullptr;
bool warned_no_slot = false;
bool warned_no_worker = false;

// Every database in pg_database (the autovacuum launcher reads it the same way).
Database *ScanDatabases(int *count)
{
    MemoryContext caller = CurrentMemoryContext;  // the result outlives the transaction
    SetCurrentStatementStartTimestamp();
    StartTransactionCommand();
    (void) GetTransactionSnapshot();
    int capacity = 16, n = 0;
    Database *out = (Database *) MemoryContextAlloc(caller, sizeof(Database) * capacity);
    Relation rel = table_open(DatabaseRelationId, AccessShareLock);
    TableScanDesc scan = table_beginscan_catalog(rel, 0, nullptr);
    HeapTuple tuple;
    while ((tuple = heap_getnext(scan, ForwardScanDirection)) != nullptr) {
        CHECK_FOR_INTERRUPTS();
        Form_pg_database db = (Form_pg_database) GETSTRUCT(tuple);
        if (n == capacity) {
            capacity *= 2;
            out = (Database *) repalloc(out, sizeof(Database) * capacity);
        }
        out[n].oid = db->oid;
        out[n].eligible = !db->datistemplate && db->datallowconn && !database_is_invalid_form(db);
        n++;
    }
    table_endscan(scan);
    table_close(rel, AccessShareLock);
    CommitTransactionCommand();
    MemoryContextSwitchTo(caller);
    *count = n;
    return out;
}

bool Listed(const Database *dbs, int n, Oid oid, bool *eligible)
{
    for (int i = 0; i < n; i++)
        if (dbs[i].oid == oid) {
            *eligible = dbs[i].eligible;
            return true;
        }
    return false;
}

// Starts the reaper of slot `index`; false when no background worker slot is free.
bool StartReaper(int index, Oid database)
{
    BackgroundWorker worker;
    memset(&worker, 0, sizeof(worker));
    worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
    worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
    worker.bgw_restart_time = BGW_NEVER_RESTART;  // the launcher restarts it, with backoff
    snprintf(worker.bgw_library_name, BGW_MAXLEN, "claimqueue");
    snprintf(worker.bgw_function_name, BGW_MAXLEN, "cq_reaper_main");
    snprintf(worker.bgw_name, BGW_MAXLEN, "claimqueue reaper for database %u", database);
    snprintf(worker.bgw_type, BGW_MAXLEN, "claimqueue reaper");
    worker.bgw_main_arg = Int32GetDatum(index);
    memcpy(worker.bgw_extra, &database, sizeof(Oid));
    worker.bgw_notify_pid = MyProcPid;  // SIGUSR1 (our latch) when it starts or stops

    BackgroundWorkerHandle *handle;
    MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
    bool ok = RegisterDynamicBackgroundWorker(&worker, &handle);
    MemoryContextSwitchTo(old);
    if (!ok)
        return false;
    handles[index] = handle;
    return true;
}

// Restart delay after `failures` unexpected exits in a row: one interval, doubling, at most a minute.
int64 RestartDelayUsec(int failures)
{
    int64 delay = (int64) reaper_interval_ms * 1000;
    for (int i = 1; i < failures && delay < 60 * USECS_PER_SEC; i++)
        delay *= 2;
    return Min(delay, 60 * USECS_PER_SEC);
}

// One round: notice stopped reapers, follow pg_database and the settings,
// start what should run. Returns how long to sleep (ms).
long Reconcile()
{
    SharedState *s = Shared();
    int ndbs;
    Database *dbs = ScanDatabases(&ndbs);
    TimestampTz now = GetCurrentTimestamp();

    // Reapers that stopped since the last round.
    for (int i = 0; i < s->nslots; i++) {
        if (handles[i] == nullptr)
            continue;
        pid_t pid;
        if (GetBackgroundWorkerPid(handles[i], &pid) != BGWH_STOPPED)
            continue;
        pfree(handles[i]);
        handles[i] = nullptr;
        LWLockAcquire(s->lock, LW_EXCLUSIVE);
        ReaperSlot *slot = &s->slots[i];
        slot->worker_active = false;
        slot->stop_requested = false;
        // A reaper that exits on purpose sets its state first; one that
        // died before it could (connection refused, FATAL) is retried.
        if (slot->recheck && slot->state == ReaperState::kNoExtension) {
            slot->state = ReaperState::kUnknown;
        } else if (slot->state == ReaperState::kStarting ||
                   slot->state == ReaperState::kRunning) {
            slot->failures++;
            slot->state = ReaperState::kRestartWait;
            slot->retry_at = now + RestartDelayUsec(slot->failures);
        }
        slot->recheck = false;
        LWLockRelease(s->lock);
    }

    long sleep_ms = reaper_interval_ms;
    int to_start[64];
    int nstart = 0;
    LWLockAcquire(s->lock, LW_EXCLUSIVE);
    // Slots of databases that are gone.
    for (int i = 0; i < s->nslots; i++) {
        ReaperSlot *slot = &s->slots[i];
        bool eligible;
        if (!OidIsValid(slot->database) || Listed(dbs, ndbs, slot->database, &eligible))
            continue;
        if (slot->worker_active)
            RequestStopLocked(slot);
        else if (slot->pause_count == 0)
            memset(slot, 0, sizeof(*slot));
    }
    for (int d = 0; d < ndbs; d++) {
        ReaperSlot *slot = FindOrClaimSlot(dbs[d].oid);
        if (slot == nullptr) {
            if (!warned_no_slot)
                ereport(WARNING,
                        (errmsg("claimqueue launcher: more databases than reaper slots (%d)",
                                s->nslots),
                         errhint("Raise max_worker_processes; some databases get no reaper.")));
            warned_no_slot = true;
            continue;
        }
        ReaperState st = slot->state;
        if (st == ReaperState::kPaused)
            continue;
        if (!dbs[d].eligible) {
            slot->state = ReaperState::kIneligible;
            RequestStopLocked(slot);
            continue;
        }
        if (!reaper_enabled) {
            if (st != ReaperState::kNoExtension)
                slot->state = ReaperState::kDisabled;
            RequestStopLocked(slot);
            continue;
        }
        if (st == ReaperState::kIneligible || st == ReaperState::kDisabled)
            slot->state = st = ReaperState::kUnknown;
        if (slot->worker_active)
            continue;
        if (st == ReaperState::kRestartWait && slot->retry_at > now) {
            sleep_ms = Min(sleep_ms, (long) ((slot->retry_at - now) / 1000) + 1);
            continue;
        }
        if ((st == ReaperState::kUnknown || st == ReaperState::kRestartWait) &&
            nstart < (int) lengthof(to_start))
            to_start[nstart++] = (int) (slot - s->slots);
    }
    LWLockRelease(s->lock);

    for (int k = 0; k < nstart; k++) {
        int i = to_start[k];
        Oid database = s->slots[i].database;  // only the launcher assigns slots
        if (!StartReaper(i, database)) {
            if (!warned_no_worker)
                ereport(WARNING,
                        (errmsg("claimqueue launcher: no free background worker slot for the "
                                "reaper of database %u", database),
                         errhint("Raise max_worker_processes (now %d).", max_worker_processes)));
            warned_no_worker = true;
            break;  // retried next round
        }
        warned_no_worker = false;
        LWLockAcquire(s->lock, LW_EXCLUSIVE);
        s->slots[i].worker_active = true;
        s->slots[i].stop_requested = false;
        s->slots[i].state = ReaperState::kStarting;
        LWLockRelease(s->lock);
    }
    pfree(dbs);
    return sleep_ms;
}

void LauncherExit(int, Datum)
{
    SharedState *s = Shared();
    LWLockAcquire(s->lock, LW_EXCLUSIVE);
    s->launcher_pid = 0;
    s->launcher_latch = nullptr;
    LWLockRelease(s->lock);
}

void LauncherMain()
{
    pqsignal(SIGHUP, SignalHandlerForConfigReload);
    // PostgreSQL's own die(): pg_terminate_backend ends the launcher at its
    // next CHECK_FOR_INTERRUPTS (the postmaster starts it again); so does a
    // server shutdown.
    pqsignal(SIGTERM, die);
    BackgroundWorkerUnblockSignals();
    // Shared catalogs only: no database, so none is kept busy by the launcher.
    BackgroundWorkerInitializeConnection(nullptr, nullptr, 0);
    pgstat_report_appname("claimqueue launcher");

    SharedState *s = Shared();
    handles = (BackgroundWorkerHandle **) MemoryContextAllocZero(
        TopMemoryContext, sizeof(BackgroundWorkerHandle *) * s->nslots);
    LWLockAcquire(s->lock, LW_EXCLUSIVE);
    s->launcher_pid = MyProcPid;
    s->launcher_latch = MyLatch;
    // After a launcher restart, reapers still running are adopted (their exit
    // clears pid); one registered but never connected is started again.
    for (int i = 0; i < s->nslots; i++) {
        ReaperSlot *slot = &s->slots[i];
        slot->worker_active = slot->pid != 0;
        if (slot->state == ReaperState::kStarting && slot->pid == 0)
            slot->state = ReaperState::kUnknown;
    }
    LWLockRelease(s->lock);
    before_shmem_exit(LauncherExit, 0);

    MemoryContext round_context =
        AllocSetContextCreate(TopMemoryContext, "claimqueue launcher", ALLOCSET_DEFAULT_SIZES);
    for (;;) {
        CHECK_FOR_INTERRUPTS();
        if (ConfigReloadPending) {
            ConfigReloadPending = false;
            ProcessConfigFile(PGC_SIGHUP);
        }
        MemoryContext old = MemoryContextSwitchTo(round_context);
        long sleep_ms = Reconcile();
        MemoryContextSwitchTo(old);
        MemoryContextReset(round_context);

        (void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, sleep_ms,
                         PG_WAIT_EXTENSION);
        ResetLatch(MyLatch);
    }
}

}  // namespace

void RegisterLauncher()
{
    BackgroundWorker worker;
    memset(&worker, 0, sizeof(worker));
    worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
    // Not on a standby: it starts when recovery ends, i.e. at promotion.
    worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
    worker.bgw_restart_time = 5;
    snprintf(worker.bgw_library_name, BGW_MAXLEN, "claimqueue");
    snprintf(worker.bgw_function_name, BGW_MAXLEN, "cq_launcher_main");
    snprintf(worker.bgw_name, BGW_MAXLEN, "claimqueue launcher");
    snprintf(worker.bgw_type, BGW_MAXLEN, "claimqueue launcher");
    RegisterBackgroundWorker(&worker);
}

}  // namespace claimqueue

extern "C" void cq_launcher_main(Datum)
{
    claimqueue::RunGuarded([] { claimqueue::LauncherMain(); });
}

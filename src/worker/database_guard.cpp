// Keeps reapers out of the way of DATABASE commands that need a database free
// of connections, and wakes the launcher when CREATE EXTENSION commits.
#include "worker/workers.hpp"

extern "C" {
#include "commands/dbcommands.h"
#include "commands/defrem.h"
#include "nodes/parsenodes.h"
#include "pgstat.h"
#include "tcop/utility.h"
}

#include "worker/reaper_slots.hpp"

namespace claimqueue {
namespace {

ProcessUtility_hook_type prev_process_utility = nullptr;
bool start_at_commit = false;
constexpr int kMaxPaused = 4;
Oid paused[kMaxPaused];  // databases this transaction paused; resumed at its end
int npaused = 0;

void ResumePaused()
{
    SharedState *s = Shared();
    LWLockAcquire(s->lock, LW_EXCLUSIVE);
    for (int i = 0; i < npaused; i++) {
        ReaperSlot *slot = FindSlot(paused[i]);
        if (slot != nullptr && slot->pause_count > 0 && --slot->pause_count == 0) {
            // The launcher checks again: the database may be gone, renamed or copied.
            slot->state = ReaperState::kUnknown;
            slot->stop_requested = false;
        }
    }
    npaused = 0;
    WakeLauncherLocked();
    LWLockRelease(s->lock);
}

void StartReaperNow()
{
    SharedState *s = Shared();
    LWLockAcquire(s->lock, LW_EXCLUSIVE);
    ReaperSlot *slot = FindSlot(MyDatabaseId);
    if (slot != nullptr) {
        if (slot->worker_active) {
            // It may have looked before this commit and be about to report
            // "no extension": the launcher looks again when it exits.
            slot->recheck = true;
        } else if (slot->state == ReaperState::kNoExtension ||
                   slot->state == ReaperState::kRestartWait) {
            slot->state = ReaperState::kUnknown;
            slot->failures = 0;
        }
    }
    WakeLauncherLocked();  // a database it has not seen yet is scanned now
    LWLockRelease(s->lock);
}

// Stops the reaper of `database` and keeps the launcher from starting one
// until this transaction ends; waits (at most 10 s) until no reaper process
// of that database is left.
void PauseReaper(Oid database)
{
    SharedState *s = Shared();
    if (npaused == kMaxPaused)
        return;
    LWLockAcquire(s->lock, LW_EXCLUSIVE);
    // A database the launcher has not seen yet gets a paused slot, so that it
    // does not start a reaper there in the meantime.
    ReaperSlot *slot = FindOrClaimSlot(database);
    if (slot == nullptr) {
        LWLockRelease(s->lock);
        return;
    }
    slot->pause_count++;
    slot->state = ReaperState::kPaused;
    RequestStopLocked(slot);
    paused[npaused++] = database;
    WakeLauncherLocked();
    LWLockRelease(s->lock);

    // worker_active is cleared by the launcher once the reaper has stopped,
    // including one that was registered but had not connected yet.
    for (int waited_ms = 0; waited_ms < 10000; waited_ms += 10) {
        LWLockAcquire(s->lock, LW_SHARED);
        bool active = slot->database == database && slot->worker_active;
        LWLockRelease(s->lock);
        if (!active)
            break;
        (void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 10,
                         PG_WAIT_EXTENSION);
        ResetLatch(MyLatch);
        CHECK_FOR_INTERRUPTS();
    }
}

// The database a command needs free of other connections, or nullptr.
const char *DatabaseNeedingExclusiveUse(Node *stmt)
{
    ListCell *lc;
    switch (nodeTag(stmt)) {
    case T_DropdbStmt:
        return ((DropdbStmt *) stmt)->dbname;
    case T_RenameStmt:
        if (((RenameStmt *) stmt)->renameType == OBJECT_DATABASE)
            return ((RenameStmt *) stmt)->subname;
        return nullptr;
    case T_AlterDatabaseStmt:
        foreach (lc, ((AlterDatabaseStmt *) stmt)->options)
            if (strcmp(((DefElem *) lfirst(lc))->defname, "tablespace") == 0)
                return ((AlterDatabaseStmt *) stmt)->dbname;
        return nullptr;
    case T_CreatedbStmt:
        foreach (lc, ((CreatedbStmt *) stmt)->options)
            if (strcmp(((DefElem *) lfirst(lc))->defname, "template") == 0)
                return defGetString((DefElem *) lfirst(lc));
        return nullptr;
    default:
        return nullptr;
    }
}

void GuardUtility(PlannedStmt *pstmt, const char *query, bool read_only_tree,
                  ProcessUtilityContext context, ParamListInfo params, QueryEnvironment *env,
                  DestReceiver *dest, QueryCompletion *qc)
{
    const char *name = DatabaseNeedingExclusiveUse(pstmt->utilityStmt);
    if (name != nullptr && Shared() != nullptr) {
        Oid database = get_database_oid(name, true);
        if (OidIsValid(database))
            PauseReaper(database);
    }
    if (prev_process_utility)
        prev_process_utility(pstmt, query, read_only_tree, context, params, env, dest, qc);
    else
        standard_ProcessUtility(pstmt, query, read_only_tree, context, params, env, dest, qc);
}

}  // namespace

// After commit (the new extension is visible to the reaper by then) or abort.
void GuardAtTransactionEnd(XactEvent event)
{
    switch (event) {
    case XACT_EVENT_COMMIT:
    case XACT_EVENT_PARALLEL_COMMIT:
        if (start_at_commit)
            StartReaperNow();
        start_at_commit = false;
        if (npaused > 0)
            ResumePaused();
        break;
    case XACT_EVENT_ABORT:
    case XACT_EVENT_PARALLEL_ABORT:
        start_at_commit = false;
        if (npaused > 0)
            ResumePaused();
        break;
    default:
        break;
    }
}

void InstallDatabaseGuard()
{
    prev_process_utility = ProcessUtility_hook;
    ProcessUtility_hook = GuardUtility;
}

void StartReaperAtCommit()
{
    if (Shared() == nullptr)
        return;
    start_at_commit = true;
}

}  // namespace claimqueue

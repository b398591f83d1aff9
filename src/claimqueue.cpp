// Module entry: _PG_init (settings, the session's callbacks; with
// shared_preload_libraries also shared memory, the launcher and the
// DATABASE-command guard) and the preload check. The one place that wires the
// layers together: each module says what to do at a transaction's end or when
// relations or roles change, and the session module (src/pg/session.hpp)
// calls them.
#include "pg/firewall.hpp"

#include "cursors/cursors.hpp"
#include "engine/claim_limits.hpp"
#include "engine/fair_claim.hpp"
#include "engine/job_rows.hpp"
#include "engine/queue_cache.hpp"
#include "engine/schema_version.hpp"
#include "metrics/metrics.hpp"
#include "owners/owners.hpp"
#include "pg/citus_guard.hpp"
#include "pg/session.hpp"
#include "pg/settings.hpp"
#include "wait/ready_notices.hpp"
#include "wait/waiters.hpp"
#include "worker/reaper_slots.hpp"
#include "worker/workers.hpp"

extern "C" {
PG_MODULE_MAGIC;
void _PG_init(void);
}

namespace {
// True when this library was loaded by shared_preload_libraries; forked
// backends inherit the postmaster's copy of this flag.
bool loaded_at_preload = false;
}  // namespace

extern "C" void _PG_init(void)
{
    loaded_at_preload = process_shared_preload_libraries_in_progress;

    claimqueue::DefineSettings();

    // Every backend's callbacks, in one place. Without the preload there is
    // no shared memory: the cursors' and the guard's handlers then do nothing.
    claimqueue::OnTransactionEnd(claimqueue::CursorsAtTransactionEnd);
    claimqueue::OnTransactionEnd(claimqueue::ReadyNoticesAtTransactionEnd);
    claimqueue::OnTransactionEnd(claimqueue::GuardAtTransactionEnd);
    claimqueue::OnTransactionEnd(claimqueue::JobRowsAtTransactionEnd);
    claimqueue::OnTransactionEnd(claimqueue::MetricsAtTransactionEnd);
    claimqueue::OnSubtransactionEnd(claimqueue::ReadyNoticesAtSubtransactionEnd);
    claimqueue::OnSubtransactionEnd(claimqueue::JobRowsAtSubtransactionEnd);
    claimqueue::OnSubtransactionEnd(claimqueue::MetricsAtSubtransactionEnd);
    claimqueue::OnRelationChange(claimqueue::JobRowsAtRelationChange);
    claimqueue::OnRelationChange(claimqueue::SchemaAtRelationChange);
    claimqueue::OnRelationChange(claimqueue::QueueCacheAtRelationChange);
    claimqueue::OnRoleChange(claimqueue::QueueCacheAtRoleChange);
    claimqueue::OnDatabaseDrop(claimqueue::CursorsAtDatabaseDrop);
    claimqueue::OnDatabaseDrop(claimqueue::MetricsAtDatabaseDrop);
    claimqueue::InstallSessionCallbacks();

    if (!loaded_at_preload)
        return;
    claimqueue::RequestSharedState();
    claimqueue::RequestWaiterState();
    claimqueue::RequestCursorState();
    claimqueue::RequestMetricsState();
    claimqueue::RequestOwnerState();
    claimqueue::RequestFairState();
    claimqueue::RequestLimitState();
    // A session whose claims die with it has ended: its reaper returns them now.
    claimqueue::OnOwnerExit(claimqueue::WakeReaper);
    claimqueue::InstallDatabaseGuard();
    // Citus, preloaded before claimqueue, delegates calls by their queue.
    if (shared_preload_libraries_string != nullptr &&
        strstr(shared_preload_libraries_string, "citus") != nullptr)
        claimqueue::InstallCitusCallGuard();
    // pg_upgrade's server (binary upgrade mode) must not run anything of ours.
    if (!IsBinaryUpgrade)
        claimqueue::RegisterLauncher();
}

// claimqueue.check_preload(): WARNING unless preloaded; returns whether it was.
CQ_FUNCTION(cq_check_preload)
{
    if (!loaded_at_preload)
        ereport(WARNING,
                (errmsg("claimqueue is not in shared_preload_libraries"),
                 errdetail("claimqueue's reaper, a background worker, runs only when the "
                           "library is preloaded: until then, jobs whose lease expired come back "
                           "only when reap() is called, and finished jobs are deleted only by "
                           "purge()."),
                 errhint("Add claimqueue to shared_preload_libraries in postgresql.conf and "
                         "restart the server.")));
    PG_RETURN_BOOL(loaded_at_preload);
}

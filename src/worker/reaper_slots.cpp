// The reapers' slots in shared memory (see reaper_slots.hpp).
#include "worker/reaper_slots.hpp"

#include "pg/shared_memory.hpp"

namespace claimqueue {
namespace {

SharedState *shared = nullptr;

// One slot per possible background worker: a reaper is one, so no more
// databases than that can have a reaper at once.
Size SharedSize()
{
    return add_size(offsetof(SharedState, slots),
                    mul_size(sizeof(ReaperSlot), (Size) max_worker_processes));
}

void InitShared(void *region, LWLock *lock)
{
    SharedState *s = (SharedState *) region;
    s->lock = lock;
    s->nslots = max_worker_processes;
}

const SharedRegion kReaperRegion = {"claimqueue", SharedSize, InitShared, (void **) &shared};

}  // namespace

const char *ReaperStateName(ReaperState state)
{
    switch (state) {
    case ReaperState::kUnknown: return "unknown";
    case ReaperState::kStarting: return "starting";
    case ReaperState::kRunning: return "running";
    case ReaperState::kNoExtension: return "no extension";
    case ReaperState::kRestartWait: return "restart wait";
    case ReaperState::kPaused: return "paused";
    case ReaperState::kIneligible: return "ineligible";
    case ReaperState::kDisabled: return "disabled";
    }
    return "?";
}

void RequestSharedState()
{
    AddSharedRegion(&kReaperRegion);
}

SharedState *Shared()
{
    return shared;
}

ReaperSlot *FindSlot(Oid database)
{
    if (shared == nullptr || !OidIsValid(database))
        return nullptr;
    for (int i = 0; i < shared->nslots; i++)
        if (shared->slots[i].database == database)
            return &shared->slots[i];
    return nullptr;
}

ReaperSlot *FindOrClaimSlot(Oid database)
{
    ReaperSlot *slot = FindSlot(database);
    for (int i = 0; slot == nullptr && i < shared->nslots; i++)
        if (!OidIsValid(shared->slots[i].database) && !shared->slots[i].worker_active) {
            slot = &shared->slots[i];
            memset(slot, 0, sizeof(*slot));
            slot->database = database;
        }
    return slot;
}

void RequestStopLocked(ReaperSlot *slot)
{
    if (!slot->worker_active)
        return;
    slot->stop_requested = true;
    if (slot->latch != nullptr)
        SetLatch(slot->latch);
}

void WakeLauncherLocked()
{
    if (shared != nullptr && shared->launcher_latch != nullptr)
        SetLatch(shared->launcher_latch);
}

void WakeReaper(Oid database)
{
    if (shared == nullptr)
        return;
    LWLockAcquire(shared->lock, LW_SHARED);
    ReaperSlot *slot = FindSlot(database);
    if (slot != nullptr && slot->latch != nullptr)
        SetLatch(slot->latch);
    LWLockRelease(shared->lock);
}

}  // namespace claimqueue

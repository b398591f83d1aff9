// claimqueue's shared memory (see shared_state.hpp).
#include "shmem/shared_state.hpp"

extern "C" {
#include "storage/ipc.h"
#include "storage/shmem.h"
}

namespace claimqueue {
namespace {

shmem_request_hook_type prev_shmem_request_hook = nullptr;
shmem_startup_hook_type prev_shmem_startup_hook = nullptr;
constexpr int kMaxRegions = 4;
const SharedRegion *regions[kMaxRegions];
int nregions = 0;
SharedState *shared = nullptr;

void RequestHook()
{
    if (prev_shmem_request_hook)
        prev_shmem_request_hook();
    for (int i = 0; i < nregions; i++) {
        RequestAddinShmemSpace(regions[i]->size());
        RequestNamedLWLockTranche(regions[i]->name, 1);
    }
}

void StartupHook()
{
    if (prev_shmem_startup_hook)
        prev_shmem_startup_hook();
    LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
    for (int i = 0; i < nregions; i++) {
        const SharedRegion *r = regions[i];
        bool found;
        void *region = ShmemInitStruct(r->name, r->size(), &found);
        if (!found) {
            memset(region, 0, r->size());
            r->init(region, &(GetNamedLWLockTranche(r->name))->lock);
        }
        *r->address = region;
    }
    LWLockRelease(AddinShmemInitLock);
}

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

void AddSharedRegion(const SharedRegion *region)
{
    if (nregions == 0) {
        prev_shmem_request_hook = shmem_request_hook;
        shmem_request_hook = RequestHook;
        prev_shmem_startup_hook = shmem_startup_hook;
        shmem_startup_hook = StartupHook;
    }
    if (nregions == kMaxRegions)
        elog(ERROR, "claimqueue: too many shared memory regions");
    regions[nregions++] = region;
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

}  // namespace claimqueue

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
SharedState *shared = nullptr;

// One slot per possible background worker: a reaper is one, so no more
// databases than that can have a reaper at once.
Size SharedSize()
{
    return add_size(offsetof(SharedState, slots),
                    mul_size(sizeof(ReaperSlot), (Size) max_worker_processes));
}

void RequestHook()
{
    if (prev_shmem_request_hook)
        prev_shmem_request_hook();
    RequestAddinShmemSpace(SharedSize());
    RequestNamedLWLockTranche("claimqueue", 1);
}

void StartupHook()
{
    if (prev_shmem_startup_hook)
        prev_shmem_startup_hook();
    LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
    bool found;
    shared = (SharedState *) ShmemInitStruct("claimqueue", SharedSize(), &found);
    if (!found) {
        memset(shared, 0, SharedSize());
        shared->lock = &(GetNamedLWLockTranche("claimqueue"))->lock;
        shared->nslots = max_worker_processes;
    }
    LWLockRelease(AddinShmemInitLock);
}

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
    prev_shmem_request_hook = shmem_request_hook;
    shmem_request_hook = RequestHook;
    prev_shmem_startup_hook = shmem_startup_hook;
    shmem_startup_hook = StartupHook;
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

void WakeLauncherLocked()
{
    if (shared != nullptr && shared->launcher_latch != nullptr)
        SetLatch(shared->launcher_latch);
}

}  // namespace claimqueue

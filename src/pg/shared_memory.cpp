// claimqueue's shared memory regions (see shared_memory.hpp).
#include "pg/shared_memory.hpp"

extern "C" {
#include "storage/ipc.h"
#include "storage/shmem.h"
}

namespace claimqueue {
namespace {

shmem_request_hook_type prev_shmem_request_hook = nullptr;
shmem_startup_hook_type prev_shmem_startup_hook = nullptr;
constexpr int kMaxRegions = 8;
const SharedRegion *regions[kMaxRegions];
int nregions = 0;

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

}  // namespace

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

}  // namespace claimqueue

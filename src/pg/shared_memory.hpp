// claimqueue's shared memory: named regions, each with an LWLock of its own,
// created by one pair of shared-memory hooks. Exists only when the library is
// in shared_preload_libraries; the modules that keep state there (reaper
// slots, waiters, claim cursors) each add a region from _PG_init.
#pragma once

#include "pg/pg.hpp"

extern "C" {
#include "storage/lwlock.h"
}

namespace claimqueue {

// A named region of claimqueue's shared memory with an LWLock of its own.
// `size` is asked for when shared memory is sized; when the region is created
// it is zeroed and `init` runs; *address points at it in every process.
struct SharedRegion {
    const char *name;
    Size (*size)();
    void (*init)(void *region, LWLock *lock);
    void **address;
};

// The size and init of a region that is one struct T whose `lock` member
// takes the region's LWLock, the rest starting zeroed.
template <typename T>
Size RegionSizeOf()
{
    return sizeof(T);
}
template <typename T>
void InitRegionLock(void *region, LWLock *lock)
{
    static_cast<T *>(region)->lock = lock;
}

// Adds a region; from _PG_init while preloading (the first call installs
// claimqueue's one pair of shared-memory hooks).
void AddSharedRegion(const SharedRegion *region);

}  // namespace claimqueue

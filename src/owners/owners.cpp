// The owner tokens of release_on_disconnect claims (see owners.hpp).
#include "owners/owners.hpp"

extern "C" {
#include "access/twophase.h"
#include "storage/ipc.h"
#include "storage/proc.h"
}

#include "pg/compat.hpp"
#include "pg/shared_memory.hpp"

namespace claimqueue {
namespace {

struct OwnerState {
    LWLock *lock;      // guards last_token and the draws; slots are read under it
    int64 last_token;  // the latest token drawn
    int nslots;        // one per PGPROC
    int64 slots[FLEXIBLE_ARRAY_MEMBER];  // the token its session listed, 0: none
};

OwnerState *state = nullptr;
OwnerExitHandler exit_handler = nullptr;
int64 my_token = 0;  // this session's, once drawn

int SlotCount()
{
    return MaxBackends + NUM_AUXILIARY_PROCS + max_prepared_xacts;
}

Size OwnerSize()
{
    return add_size(offsetof(OwnerState, slots), mul_size(sizeof(int64), (Size) SlotCount()));
}

// Tokens start at the time the region was made (microseconds since 2000) and
// only go up, so those written before a restart are all below the tokens of
// the new run: listed nowhere, they read as ended sessions (assuming the
// clock did not go back across the restart).
void InitOwners(void *region, LWLock *lock)
{
    OwnerState *s = (OwnerState *) region;
    s->lock = lock;
    s->nslots = SlotCount();
    s->last_token = GetCurrentTimestamp();
}

const SharedRegion kOwnerRegion = {"claimqueue owners", OwnerSize, InitOwners,
                                   (void **) &state};

// on_shmem_exit, not before_shmem_exit: by then the session's transaction has
// been aborted, so the reaper this wakes finds its rows unlocked.
void UnlistAtExit(int, Datum)
{
    if (my_token == 0 || state == nullptr)
        return;
    LWLockAcquire(state->lock, LW_EXCLUSIVE);
    state->slots[MyProcIndex()] = 0;
    LWLockRelease(state->lock);
    my_token = 0;
    if (exit_handler != nullptr && OidIsValid(MyDatabaseId))
        exit_handler(MyDatabaseId);
}

}  // namespace

void RequestOwnerState()
{
    AddSharedRegion(&kOwnerRegion);
}

bool OwnersAvailable()
{
    return state != nullptr;
}

int64 MyOwnerToken()
{
    if (my_token != 0)
        return my_token;
    if (state == nullptr)
        ereport(ERROR,
                (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                 errmsg("release_on_disconnect needs claimqueue in shared_preload_libraries"),
                 errdetail("The sessions that hold such claims are listed in shared memory, "
                           "which exists only when the library is preloaded."),
                 errhint("Add claimqueue to shared_preload_libraries and restart the server, "
                         "or claim without release_on_disconnect.")));
    // Registered before the token is listed: a session that lists one always
    // unlists it.
    on_shmem_exit(UnlistAtExit, 0);
    LWLockAcquire(state->lock, LW_EXCLUSIVE);
    int64 token = Max(state->last_token + 1, (int64) GetCurrentTimestamp());
    state->last_token = token;
    state->slots[MyProcIndex()] = token;
    LWLockRelease(state->lock);
    my_token = token;
    return token;
}

LiveOwners ListLiveOwners()
{
    LiveOwners live = {0, 0, nullptr};
    if (state == nullptr)
        return live;
    live.tokens = (Datum *) palloc(sizeof(Datum) * (state->nslots + 1));
    LWLockAcquire(state->lock, LW_SHARED);
    live.newest = state->last_token;
    for (int i = 0; i < state->nslots; i++)
        if (state->slots[i] != 0)
            live.tokens[live.n++] = Int64GetDatum(state->slots[i]);
    LWLockRelease(state->lock);
    return live;
}

void OnOwnerExit(OwnerExitHandler handler)
{
    exit_handler = handler;
}

}  // namespace claimqueue

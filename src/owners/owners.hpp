// Claims that die with their session (dequeue(..., release_on_disconnect)):
// a session that makes such a claim draws an owner token and writes it into
// the claimed row (claimqueue.jobs.owner_session). The token is listed in
// shared memory, in the session's PGPROC slot, for as long as the session
// lives; the reaper returns running jobs whose token is no longer listed.
// README.md beside this file says why that is safe. Exists only when the
// library is in shared_preload_libraries.
#pragma once

#include "pg/pg.hpp"

namespace claimqueue {

// Adds the owners' region; from _PG_init while preloading.
void RequestOwnerState();

// True when the region exists (the library was preloaded).
bool OwnersAvailable();

// This session's owner token: drawn and listed at the first call, unlisted
// when the session exits. Raises 55000 when the library was not preloaded.
int64 MyOwnerToken();

// The listed tokens as the reaper compares rows with them, read together
// under the region's lock: every token drawn so far is <= newest, and a
// token <= newest that is not in tokens[0..n) belongs to a session that has
// exited (or to a server run before a restart). palloc'd.
struct LiveOwners {
    int64 newest;
    int n;
    Datum *tokens;  // int8 Datums
};
LiveOwners ListLiveOwners();

// Called in an exiting session that had listed a token, after its open
// transaction has been aborted (so its row locks are gone): claimqueue.cpp
// wakes the database's reaper with it. From _PG_init only.
using OwnerExitHandler = void (*)(Oid database);
void OnOwnerExit(OwnerExitHandler handler);

}  // namespace claimqueue

// Taking and releasing namespaced advisory locks: the two-int4 advisory lock
// (namespace id, key id) of this database, the very lock pg_advisory_lock(int4,
// int4) takes, plus a per-backend count of the session holds taken through
// claimqueue, so that advisory_unlock_all(namespace) can release them.
#pragma once

#include "pg/pg.hpp"

#include "locks/namespaces.hpp"

namespace claimqueue {

// The LOCKTAG of pg_advisory_lock(namespace_id, key_id) in this database:
// field1 = database, field2 = namespace id, field3 = key id, field4 = 2 (the
// two-int4 key space; single-bigint locks use 1).
void SetNamespacedLockTag(LOCKTAG *tag, int32 namespace_id, int32 key_id);

// Takes the lock; with `wait` false, returns false instead of waiting.
// Session holds are counted for ReleaseAllSessionLocks.
bool AcquireNamespacedLock(NamespacedKey key, bool shared, bool session, bool wait);

// Releases one session hold, as pg_advisory_unlock: false (with PostgreSQL's
// WARNING) when this session holds none.
bool ReleaseNamespacedLock(NamespacedKey key, bool shared);

// Releases every session hold this backend took in the namespace through
// AcquireNamespacedLock and still holds; returns how many holds it released.
int ReleaseAllSessionLocks(int32 namespace_id);

}  // namespace claimqueue

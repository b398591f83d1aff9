// Advisory locks on queue names (see queue_locks.hpp).
#include "engine/queue_locks.hpp"

namespace claimqueue {

void LockQueueName(text *name, LOCKMODE mode)
{
    LOCKTAG tag;
    uint32 key = hash_bytes((const unsigned char *) VARDATA_ANY(name), VARSIZE_ANY_EXHDR(name));
    // Same layout as pg_advisory_xact_lock(int4, int4): field4 = 2.
    SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, (uint32) kInternalLockNamespace, key, 2);
    (void) LockAcquire(&tag, mode, false, false);
}

bool TryLockReaper()
{
    LOCKTAG tag;
    // Key 0 in the reserved namespace (field4 = 2: the two-int4 key space).
    SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, (uint32) kInternalLockNamespace, 0, 2);
    return LockAcquire(&tag, ExclusiveLock, true, true) != LOCKACQUIRE_NOT_AVAIL;
}

}  // namespace claimqueue

// Namespaced advisory locks (see advisory.hpp).
#include "locks/advisory.hpp"

#include "pg/compat.hpp"

extern "C" {
#include "utils/hsearch.h"
#include "utils/memutils.h"
}

namespace claimqueue {
namespace {

// Hash key of the session-hold counts: plain int32s, no padding to hash.
struct HeldLock {
    int32 namespace_id;
    int32 key_id;
    int32 shared;
};

struct HeldCount {
    HeldLock lock;  // must come first (dynahash)
    int64 holds;
};

// Backend-local, never freed: outlives transactions as session locks do.
HTAB *session_holds = nullptr;

HTAB *SessionHolds()
{
    if (session_holds == nullptr) {
        HASHCTL ctl;
        memset(&ctl, 0, sizeof(ctl));
        ctl.keysize = sizeof(HeldLock);
        ctl.entrysize = sizeof(HeldCount);
        ctl.hcxt = TopMemoryContext;
        session_holds = hash_create("claimqueue session advisory locks", 16, &ctl,
                                    HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
    }
    return session_holds;
}

HeldLock HeldKey(NamespacedKey key, bool shared)
{
    HeldLock h;
    h.namespace_id = key.namespace_id;
    h.key_id = key.key_id;
    h.shared = shared ? 1 : 0;
    return h;
}

LOCKMODE ModeOf(bool shared)
{
    return shared ? ShareLock : ExclusiveLock;
}

}  // namespace

void SetNamespacedLockTag(LOCKTAG *tag, int32 namespace_id, int32 key_id)
{
    // As SET_LOCKTAG_INT32 in PostgreSQL's lockfuncs.c.
    SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, (uint32) namespace_id, (uint32) key_id, 2);
}

bool AcquireNamespacedLock(NamespacedKey key, bool shared, bool session, bool wait)
{
    LOCKTAG tag;
    SetNamespacedLockTag(&tag, key.namespace_id, key.key_id);
    if (LockAcquire(&tag, ModeOf(shared), session, !wait) == LOCKACQUIRE_NOT_AVAIL)
        return false;
    if (session) {
        HeldLock h = HeldKey(key, shared);
        bool found;
        HeldCount *entry = (HeldCount *) hash_search(SessionHolds(), &h, HASH_ENTER, &found);
        entry->holds = found ? entry->holds + 1 : 1;
    }
    return true;
}

bool ReleaseNamespacedLock(NamespacedKey key, bool shared)
{
    LOCKTAG tag;
    SetNamespacedLockTag(&tag, key.namespace_id, key.key_id);
    bool released = LockRelease(&tag, ModeOf(shared), true);
    if (released) {
        HeldLock h = HeldKey(key, shared);
        HeldCount *entry = (HeldCount *) hash_search(SessionHolds(), &h, HASH_FIND, nullptr);
        if (entry != nullptr && --entry->holds <= 0)
            hash_search(SessionHolds(), &h, HASH_REMOVE, nullptr);
    }
    return released;
}

int ReleaseAllSessionLocks(int32 namespace_id)
{
    int released = 0;
    HASH_SEQ_STATUS scan;
    hash_seq_init(&scan, SessionHolds());
    HeldCount *entry;
    while ((entry = (HeldCount *) hash_seq_search(&scan)) != nullptr) {
        if (entry->lock.namespace_id != namespace_id)
            continue;
        LOCKTAG tag;
        SetNamespacedLockTag(&tag, entry->lock.namespace_id, entry->lock.key_id);
        LOCKMODE mode = ModeOf(entry->lock.shared != 0);
        // A count goes stale when pg_advisory_unlock_all() or DISCARD released
        // the locks behind our back: stop at the first hold no longer there.
        for (int64 i = 0; i < entry->holds && HoldsLockInMode(&tag, mode); i++) {
            if (!LockRelease(&tag, mode, true))
                break;
            released++;
        }
        // Removing the entry just returned is allowed during a dynahash scan.
        hash_search(SessionHolds(), &entry->lock, HASH_REMOVE, nullptr);
    }
    return released;
}

}  // namespace claimqueue

// claimqueue's own advisory locks (see queue_locks.hpp).
#include "engine/queue_locks.hpp"

extern "C" {
#include "utils/inval.h"
}

#include "engine/queue_cache.hpp"
#include "pg/statement.hpp"
#include "locks/advisory.hpp"

namespace claimqueue {
namespace {

Statement kQueueIdByName = {
    "SELECT queue_id FROM claimqueue.queues WHERE name = $1", 1, {TEXTOID}, nullptr};

// The queue's id as of now (latest snapshot, also under REPEATABLE READ), or 0.
int32 CurrentQueueId(text *name)
{
    Datum args[1] = {PointerGetDatum(name)};
    if (ExecuteLatest(&kQueueIdByName, args, nullptr, 1) == 0)
        return 0;
    return DatumGetInt32(ResultValue(0, 1));
}

// The administration lock of queue `id`, for the transaction.
void LockQueueId(int32 id, LOCKMODE mode)
{
    LOCKTAG tag;
    SetNamespacedLockTag(&tag, kInternalLockNamespace, id);
    (void) LockAcquire(&tag, mode, false, false);
}

}  // namespace

int32 LockQueueName(text *name, LOCKMODE mode)
{
    // The queue cache's id, locked: a drop or re-creation of the queue that
    // committed before the lock was granted has sent its invalidation by then
    // (before its locks went), and taking it in drops the cached name. The
    // name still cached is current, and no statement is needed.
    int32 cached = CachedQueueId(name);
    if (cached > 0) {
        LockQueueId(cached, mode);
        AcceptInvalidationMessages();
        if (CachedQueueId(name) == cached)
            return cached;
    }
    ConnectSpi();
    // Lock the id the name has, then check that it still has it: a drop that
    // committed while we waited leaves the name unknown (done: the caller
    // reports it) or, re-created, with a new id (lock that one too). Each
    // round locks a new id, so this ends. The first id is the queue cache's,
    // if it has one: checked like any other, it saves a lookup.
    int32 locked = 0;
    int32 id = CachedQueueId(name);
    if (id <= 0)
        id = CurrentQueueId(name);
    while (id > 0 && id != locked) {
        LockQueueId(id, mode);
        locked = id;
        id = CurrentQueueId(name);
    }
    RememberQueueId(name, id);  // (nothing when the queue is gone: id 0)
    FinishSpi();
    return id;
}

bool TryLockReaper()
{
    LOCKTAG tag;
    SetNamespacedLockTag(&tag, kInternalLockNamespace, kReaperLockKey);
    return LockAcquire(&tag, ExclusiveLock, true, true) != LOCKACQUIRE_NOT_AVAIL;
}

}  // namespace claimqueue

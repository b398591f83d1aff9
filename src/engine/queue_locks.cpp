// claimqueue's own advisory locks (see queue_locks.hpp).
#include "engine/queue_locks.hpp"

#include "engine/statement.hpp"
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

}  // namespace

void LockQueueName(text *name, LOCKMODE mode)
{
    ConnectSpi();
    // Lock the id the name has now, then check that it still has it: a drop
    // that committed while we waited leaves the name unknown (done: the
    // caller reports it) or, re-created, with a new id (lock that one too).
    // Each round locks a new id, so this ends.
    int32 locked = 0;
    for (;;) {
        int32 id = CurrentQueueId(name);
        if (id <= 0 || id == locked)
            break;
        LOCKTAG tag;
        SetNamespacedLockTag(&tag, kInternalLockNamespace, id);
        (void) LockAcquire(&tag, mode, false, false);
        locked = id;
    }
    FinishSpi();
}

bool TryLockReaper()
{
    LOCKTAG tag;
    SetNamespacedLockTag(&tag, kInternalLockNamespace, kReaperLockKey);
    return LockAcquire(&tag, ExclusiveLock, true, true) != LOCKACQUIRE_NOT_AVAIL;
}

}  // namespace claimqueue

// claimqueue's own advisory locks (see queue_locks.hpp).
#include "engine/queue_locks.hpp"

#include "core/rules.hpp"
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

// The last queue name this backend locked and its id then. Only a guess: a
// stale id costs one extra lock on a dead id (ids are never reused) and a
// second lookup.
char remembered_name[rules::kMaxQueueNameBytes + 1];
int remembered_len = -1;
int32 remembered_id = 0;

int32 RememberedQueueId(text *name)
{
    int len = VARSIZE_ANY_EXHDR(name);
    if (len != remembered_len || memcmp(VARDATA_ANY(name), remembered_name, len) != 0)
        return 0;
    return remembered_id;
}

void RememberQueueId(text *name, int32 id)
{
    int len = VARSIZE_ANY_EXHDR(name);
    if (id <= 0 || len > rules::kMaxQueueNameBytes) {
        remembered_len = -1;
        return;
    }
    memcpy(remembered_name, VARDATA_ANY(name), len);
    remembered_len = len;
    remembered_id = id;
}

}  // namespace

void LockQueueName(text *name, LOCKMODE mode)
{
    ConnectSpi();
    // Lock the id the name has, then check that it still has it: a drop that
    // committed while we waited leaves the name unknown (done: the caller
    // reports it) or, re-created, with a new id (lock that one too). Each
    // round locks a new id, so this ends. The first id is the one this backend
    // saw last for the name, if any: checked like any other, it saves a lookup.
    int32 locked = 0;
    int32 id = RememberedQueueId(name);
    if (id <= 0)
        id = CurrentQueueId(name);
    while (id > 0 && id != locked) {
        LOCKTAG tag;
        SetNamespacedLockTag(&tag, kInternalLockNamespace, id);
        (void) LockAcquire(&tag, mode, false, false);
        locked = id;
        id = CurrentQueueId(name);
    }
    RememberQueueId(name, id);
    FinishSpi();
}

bool TryLockReaper()
{
    LOCKTAG tag;
    SetNamespacedLockTag(&tag, kInternalLockNamespace, kReaperLockKey);
    return LockAcquire(&tag, ExclusiveLock, true, true) != LOCKACQUIRE_NOT_AVAIL;
}

}  // namespace claimqueue

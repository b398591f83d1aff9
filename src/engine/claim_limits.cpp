// Concurrency limits at claim time (see claim_limits.hpp).
#include "engine/claim_limits.hpp"

extern "C" {
#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/lock.h"
}

#include "engine/job_rows.hpp"
#include "engine/queue_cache.hpp"

namespace claimqueue {
namespace {

// The advisory-lock key spaces (LOCKTAG field4) of the limit locks: apart
// from pg_advisory_lock's (1 and 2), so no user lock ever shares one.
// field2 is the queue id, field3 0 (the queue) or the key's hash: two keys
// with one hash share a lock, which only serializes their claims.
constexpr uint16 kQueueLimitLockSpace = 0x5143;  // 'QC'
constexpr uint16 kKeyLimitLockSpace = 0x5144;

void SetLimitLockTag(LOCKTAG *tag, int32 queue_id, uint32 key_hash, uint16 space)
{
    SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, (uint32) queue_id, key_hash, space);
}

// What this call knows of one key.
struct KeySlot {
    text *key;       // a copy
    uint32 hash;
    int left;        // jobs of the key this call may still claim
    bool locked;     // this call holds the key's lock
};

}  // namespace

struct LimitGate {
    int32 queue_id;
    int32 max_running;          // 0: none
    int32 max_running_per_key;  // 0: none
    int queue_left;             // with max_running: jobs this call may still claim
    bool queue_locked;
    int nkeys;
    int capacity;
    KeySlot *keys;
};

LimitGate *OpenLimitGate(JobRows *rows, const QueueFacts *facts)
{
    if (facts == nullptr || (facts->max_running <= 0 && facts->max_running_per_key <= 0) ||
        !JobRowsHaveKeys(rows))
        return nullptr;
    LimitGate *gate = (LimitGate *) palloc0(sizeof(LimitGate));
    gate->queue_id = facts->queue_id;
    gate->max_running = facts->max_running;
    gate->max_running_per_key = facts->max_running_per_key;
    if (gate->max_running > 0) {
        // Waited for: the holder's claim call is short, and this is the only
        // limit lock a claim waits for (it takes none before), so no cycle.
        LOCKTAG tag;
        SetLimitLockTag(&tag, gate->queue_id, 0, kQueueLimitLockSpace);
        (void) LockAcquire(&tag, ExclusiveLock, false, false);
        gate->queue_locked = true;
        gate->queue_left =
            gate->max_running - CountRunning(rows, gate->queue_id, nullptr, gate->max_running);
    }
    return gate;
}

bool GateFull(const LimitGate *gate)
{
    return gate->max_running > 0 && gate->queue_left <= 0;
}

bool AdmitToGate(LimitGate *gate, JobRows *rows, text *key, int *slot)
{
    *slot = -1;
    if (GateFull(gate))
        return false;
    if (key == nullptr || gate->max_running_per_key <= 0)
        return true;  // a job without a key counts against max_running only
    size_t len = VARSIZE_ANY_EXHDR(key);
    uint32 hash = hash_bytes((const unsigned char *) VARDATA_ANY(key), (int) len);
    for (int i = 0; i < gate->nkeys; i++) {
        KeySlot &k = gate->keys[i];
        if (k.hash == hash && VARSIZE_ANY_EXHDR(k.key) == len &&
            memcmp(VARDATA_ANY(k.key), VARDATA_ANY(key), len) == 0) {
            *slot = i;
            return k.left > 0;
        }
    }
    if (gate->nkeys == gate->capacity) {
        gate->capacity = gate->capacity == 0 ? 8 : gate->capacity * 2;
        gate->keys = gate->keys == nullptr
                         ? (KeySlot *) palloc(sizeof(KeySlot) * gate->capacity)
                         : (KeySlot *) repalloc(gate->keys, sizeof(KeySlot) * gate->capacity);
    }
    KeySlot &k = gate->keys[gate->nkeys];
    *slot = gate->nkeys++;
    k.key = (text *) palloc(VARHDRSZ + len);
    SET_VARSIZE(k.key, VARHDRSZ + len);
    memcpy(VARDATA(k.key), VARDATA_ANY(key), len);
    k.hash = hash;
    k.locked = false;
    k.left = 0;
    // Under the queue's lock every claim of the queue is serialized already.
    if (!gate->queue_locked) {
        LOCKTAG tag;
        SetLimitLockTag(&tag, gate->queue_id, hash, kKeyLimitLockSpace);
        LockAcquireResult got = LockAcquire(&tag, ExclusiveLock, false, true);
        if (got == LOCKACQUIRE_NOT_AVAIL)
            return false;  // another claim is counting this key: pass its jobs over
        // A second key with the same hash finds the lock held by this call:
        // one hold per call, released once.
        k.locked = got == LOCKACQUIRE_OK;
        if (!k.locked)
            LockRelease(&tag, ExclusiveLock, false);
    }
    k.left = gate->max_running_per_key -
             CountRunning(rows, gate->queue_id, k.key, gate->max_running_per_key);
    return k.left > 0;
}

void NoteGateClaim(LimitGate *gate, int slot)
{
    if (gate->max_running > 0)
        gate->queue_left--;
    if (slot >= 0)
        gate->keys[slot].left--;
}

void CloseLimitGate(LimitGate *gate)
{
    if (gate == nullptr)
        return;
    LOCKTAG tag;
    for (int i = 0; i < gate->nkeys; i++)
        if (gate->keys[i].locked) {
            SetLimitLockTag(&tag, gate->queue_id, gate->keys[i].hash, kKeyLimitLockSpace);
            LockRelease(&tag, ExclusiveLock, false);
        }
    if (gate->queue_locked) {
        SetLimitLockTag(&tag, gate->queue_id, 0, kQueueLimitLockSpace);
        LockRelease(&tag, ExclusiveLock, false);
    }
}

}  // namespace claimqueue

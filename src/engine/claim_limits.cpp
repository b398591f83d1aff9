// Concurrency limits at claim time (see claim_limits.hpp).
#include "engine/claim_limits.hpp"

extern "C" {
#include "access/xact.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/lock.h"
}

#include "engine/job_rows.hpp"
#include "engine/queue_cache.hpp"
#include "pg/shared_memory.hpp"

namespace claimqueue {
namespace {

// --- Upper bounds of the running jobs, kept between claims -------------------
//
// A count reads, besides the live entries of jobs_running_key_idx, those its
// finished jobs left there until they are marked dead, which an old snapshot
// prevents (docs/flow-control.md, "Limits and old snapshots"). So each count is kept here
// as an upper bound of the running jobs of its queue or key, to which every
// claim adds the jobs it takes; a claim counts again only when the bound has
// reached the limit. Completions and reaps do not lower it: it errs high, and
// that only brings the next count forward.
//
// One slot per (database, jobs table, queue, key), at a place fixed by
// hashing them; any slot may be taken over by another (its owner then counts
// again). A slot also names the queue's settings it was counted under (the
// queue row's xmin) and serves only claims that read those settings: a claim
// of a queue without limits adds to no bound, so one kept while a queue had
// limits must not serve after they were removed and set again. Claims whose
// cached settings straddle an alter_queue() share the place: each one's
// claims free a slot of the other settings (AddToBound), so neither trusts a
// bound that misses the other's jobs, and they count. A key longer than
// kBoundKeyBytes keeps no bound: its claims count each time, as without this
// table. A claim adds after it wrote its running versions, and bumps the
// place's generation; a count replaces the bound only if the generation is
// still the one read before counting, so a claim the count may have missed
// is never dropped; and only a count made before its transaction wrote
// anything replaces it (see RunningUpTo).
constexpr int kBoundSlots = 4096;
constexpr int kBoundKeyBytes = 64;

struct BoundSlot {
    Oid database;  // InvalidOid: free
    Oid jobs;      // claimqueue.jobs: a table created again inherits no bound
    int32 queue_id;
    TransactionId settings_xmin;
    bool per_key;
    uint8 key_len;
    char key[kBoundKeyBytes];  // per_key: the key's bytes
    int32 bound;
    uint32 generation;
};

struct BoundTable {
    LWLock *lock;
    BoundSlot slots[kBoundSlots];
};

BoundTable *bounds = nullptr;

const SharedRegion kBoundRegion = {"claimqueue running bounds", RegionSizeOf<BoundTable>,
                                InitRegionLock<BoundTable>, reinterpret_cast<void **>(&bounds)};

// What a bound is of: the queue's running jobs, or those of one key.
struct BoundOf {
    Oid jobs;
    int32 queue_id;
    TransactionId settings_xmin;
    const text *key;  // nullptr: the queue's
    uint32 key_hash;  // the key's (hash_bytes)
};

// Whether `of` may keep a bound here.
bool Boundable(const BoundOf &of)
{
    return bounds != nullptr && (of.key == nullptr || VARSIZE_ANY_EXHDR(of.key) <= kBoundKeyBytes);
}

BoundSlot *PlaceOf(const BoundOf &of)
{
    uint32 h = hash_combine(murmurhash32(MyDatabaseId), murmurhash32((uint32) of.queue_id));
    h = hash_combine(h, murmurhash32(of.key != nullptr ? of.key_hash : 0));
    h = hash_combine(h, murmurhash32(of.jobs ^ (of.key != nullptr ? 1u : 0u)));
    return &bounds->slots[h % kBoundSlots];
}

bool Holds(const BoundSlot &slot, const BoundOf &of)
{
    if (slot.database != MyDatabaseId || slot.jobs != of.jobs || slot.queue_id != of.queue_id ||
        slot.settings_xmin != of.settings_xmin || slot.per_key != (of.key != nullptr))
        return false;
    if (of.key == nullptr)
        return true;
    size_t len = VARSIZE_ANY_EXHDR(of.key);
    return slot.key_len == len && memcmp(slot.key, VARDATA_ANY(of.key), len) == 0;
}

// Makes `slot` the bound of `of` (Holds is then true), at `bound`.
void Assign(BoundSlot &slot, const BoundOf &of, int32 bound)
{
    slot.database = MyDatabaseId;
    slot.jobs = of.jobs;
    slot.queue_id = of.queue_id;
    slot.settings_xmin = of.settings_xmin;
    slot.per_key = of.key != nullptr;
    slot.key_len = 0;
    if (of.key != nullptr) {
        slot.key_len = (uint8) VARSIZE_ANY_EXHDR(of.key);
        memcpy(slot.key, VARDATA_ANY(of.key), slot.key_len);
    }
    slot.bound = bound;
}

// The running jobs of `of`: an upper bound while it is below `limit`, else a
// count up to `limit`. Called under the limit's lock.
int RunningUpTo(JobRows *rows, const BoundOf &of, int limit)
{
    bool boundable = Boundable(of);
    uint32 generation = 0;
    if (boundable) {
        LWLockAcquire(bounds->lock, LW_SHARED);
        const BoundSlot &slot = *PlaceOf(of);
        bool held = Holds(slot, of);
        int32 bound = slot.bound;
        generation = slot.generation;
        LWLockRelease(bounds->lock);
        if (held && bound < limit)
            return bound;
    }
    int running = CountRunning(rows, of.queue_id, const_cast<text *>(of.key), limit);
    // Only a transaction that has written nothing yet keeps its count. One
    // that finished or cancelled a job of `of` does not see that job's running
    // version, which the others still count until it commits: its count would
    // let another claim take the place before the finish commits, or for good
    // if it rolls back (test/isolation/specs/limit_bound_finish.spec).
    if (boundable && !TransactionIdIsValid(GetTopTransactionIdIfAny())) {
        LWLockAcquire(bounds->lock, LW_EXCLUSIVE);
        BoundSlot &slot = *PlaceOf(of);
        if (slot.generation == generation) {
            Assign(slot, of, running);
            slot.generation++;
        }
        LWLockRelease(bounds->lock);
    }
    return running;
}

// `claimed` jobs of `of` were claimed (their running versions written).
// Called with the table's lock held exclusively.
void AddToBound(const BoundOf &of, int claimed)
{
    if (claimed == 0 || !Boundable(of))
        return;
    BoundSlot &slot = *PlaceOf(of);
    if (Holds(slot, of))
        slot.bound += claimed;
    else
        slot.database = InvalidOid;  // a bound under other settings misses these claims
    slot.generation++;  // also when another holds the place: a count of `of` may be under way
}

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
    int claimed;     // jobs of the key this call claimed
    bool locked;     // this call holds the key's lock
};

}  // namespace

struct LimitGate {
    Oid jobs;
    int32 queue_id;
    TransactionId settings_xmin;
    int32 max_running;          // 0: none
    int32 max_running_per_key;  // 0: none
    int queue_left;             // with max_running: jobs this call may still claim
    int queue_claimed;          // jobs this call claimed
    bool queue_locked;
    int nkeys;
    int capacity;
    KeySlot *keys;
};

namespace {

BoundOf QueueBound(const LimitGate *gate)
{
    return {gate->jobs, gate->queue_id, gate->settings_xmin, nullptr, 0};
}

BoundOf KeyBound(const LimitGate *gate, const KeySlot &k)
{
    return {gate->jobs, gate->queue_id, gate->settings_xmin, k.key, k.hash};
}

}  // namespace

void RequestLimitState()
{
    AddSharedRegion(&kBoundRegion);
}

LimitGate *OpenLimitGate(JobRows *rows, const QueueFacts *facts)
{
    if (facts == nullptr || (facts->max_running <= 0 && facts->max_running_per_key <= 0) ||
        !JobRowsHaveKeys(rows))
        return nullptr;
    LimitGate *gate = (LimitGate *) palloc0(sizeof(LimitGate));
    gate->jobs = JobRowsRelid(rows);
    gate->queue_id = facts->queue_id;
    gate->settings_xmin = facts->settings_xmin;
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
            gate->max_running - RunningUpTo(rows, QueueBound(gate), gate->max_running);
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
    k.claimed = 0;
    // Also under the queue's lock: a claim whose cached settings predate an
    // alter_queue() that set max_running holds only the key's lock, and the
    // two must not count the key at once
    // (test/isolation/specs/limit_per_key_straddle.spec). Never waited for,
    // so no cycle with the queue's lock.
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
    k.left = gate->max_running_per_key -
             RunningUpTo(rows, KeyBound(gate, k), gate->max_running_per_key);
    return k.left > 0;
}

void NoteGateClaim(LimitGate *gate, int slot)
{
    if (gate->max_running > 0)
        gate->queue_left--;
    gate->queue_claimed++;
    if (slot >= 0) {
        gate->keys[slot].left--;
        gate->keys[slot].claimed++;
    }
}

void CloseLimitGate(LimitGate *gate)
{
    if (gate == nullptr)
        return;
    // The call's claims go into the bounds after all its running versions are
    // written and before its limit locks are released, in one hold of the
    // table's lock.
    if (gate->queue_claimed > 0 && bounds != nullptr) {
        LWLockAcquire(bounds->lock, LW_EXCLUSIVE);
        if (gate->max_running > 0)
            AddToBound(QueueBound(gate), gate->queue_claimed);
        for (int i = 0; i < gate->nkeys; i++)
            AddToBound(KeyBound(gate, gate->keys[i]), gate->keys[i].claimed);
        LWLockRelease(bounds->lock);
    }
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

// Fair claiming (see fair_claim.hpp).
#include "engine/fair_claim.hpp"

extern "C" {
#include "common/hashfn.h"
#include "miscadmin.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
}

#include "core/rules.hpp"
#include "cursors/cursors.hpp"
#include "engine/claim_limits.hpp"
#include "engine/job_rows.hpp"
#include "pg/shared_memory.hpp"

namespace claimqueue {
namespace {

// A place in the rotation: before every tenant, a key, or the jobs without one.
struct Turn {
    enum Kind : uint8 { kStart, kKey, kKeyless } kind;
    text *key;  // kKey
};

bool SameTurn(const Turn &a, const Turn &b)
{
    if (a.kind != b.kind)
        return false;
    if (a.kind != Turn::kKey)
        return true;
    size_t len = VARSIZE_ANY_EXHDR(a.key);
    return VARSIZE_ANY_EXHDR(b.key) == len &&
           memcmp(VARDATA_ANY(a.key), VARDATA_ANY(b.key), len) == 0;
}

// --- Where each queue's rotation stands ---------------------------------------

// One slot per queue, found by hashing (database, queue); a queue that finds
// its slot taken by another starts its rotation at the first tenant and takes
// the slot over: a collision costs fairness for a moment, never a job.
constexpr int kRotationSlots = 256;

struct RotationSlot {
    Oid database;
    int32 queue_id;
    uint8 kind;  // Turn::Kind
    uint16 length;
    char key[rules::kMaxDedupKeyBytes];  // a concurrency key is at most this long
};

struct RotationState {
    LWLock *lock;
    RotationSlot slots[kRotationSlots];
};

RotationState *shared = nullptr;
// Without the preload: this session's own slots.
RotationSlot *local_slots = nullptr;

Size RotationSize()
{
    return sizeof(RotationState);
}

void InitRotation(void *region, LWLock *lock)
{
    static_cast<RotationState *>(region)->lock = lock;
}

const SharedRegion kRotationRegion = {"claimqueue fair rotation", RotationSize, InitRotation,
                                      reinterpret_cast<void **>(&shared)};

RotationSlot *SlotOf(int32 queue_id)
{
    uint32 h = hash_combine(murmurhash32(MyDatabaseId), murmurhash32((uint32) queue_id));
    if (shared != nullptr)
        return &shared->slots[h % kRotationSlots];
    if (local_slots == nullptr)
        local_slots = (RotationSlot *) MemoryContextAllocZero(
            TopMemoryContext, sizeof(RotationSlot) * kRotationSlots);
    return &local_slots[h % kRotationSlots];
}

// The tenant served last in the queue (kStart: none yet), in this call's memory.
Turn ReadRotation(int32 queue_id)
{
    RotationSlot *slot = SlotOf(queue_id);
    RotationSlot copy;
    if (shared != nullptr)
        LWLockAcquire(shared->lock, LW_SHARED);
    copy.database = slot->database;
    copy.queue_id = slot->queue_id;
    copy.kind = slot->kind;
    copy.length = slot->length;
    if (copy.kind == Turn::kKey)
        memcpy(copy.key, slot->key, copy.length);
    if (shared != nullptr)
        LWLockRelease(shared->lock);
    Turn turn = {Turn::kStart, nullptr};
    if (copy.database != MyDatabaseId || copy.queue_id != queue_id)
        return turn;
    turn.kind = (Turn::Kind) copy.kind;
    if (turn.kind == Turn::kKey)
        turn.key = cstring_to_text_with_len(copy.key, copy.length);
    return turn;
}

void WriteRotation(int32 queue_id, const Turn &turn)
{
    RotationSlot *slot = SlotOf(queue_id);
    size_t length = turn.kind == Turn::kKey ? VARSIZE_ANY_EXHDR(turn.key) : 0;
    if (length > sizeof(slot->key))
        return;  // longer than any key enqueue accepts: keep the old place
    if (shared != nullptr)
        LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    slot->database = MyDatabaseId;
    slot->queue_id = queue_id;
    slot->kind = turn.kind;
    slot->length = (uint16) length;
    if (length > 0)
        memcpy(slot->key, VARDATA_ANY(turn.key), length);
    if (shared != nullptr)
        LWLockRelease(shared->lock);
}

// --- Per tenant: where its claimable jobs start (this session's memory) -------

// A tenant's floor: no claimable job of the tenant in the lane lies below it.
// Set as a lane cursor is moved (to the first claimable position the claim's
// snapshot showed, never past the bound of positions in flight), and trusted
// only while the lane's cursor has not moved down since (the reaper's sweep
// lowers a cursor that a restore has put past jobs, and a re-created
// extension starts its cursors at 0).
struct FloorKey {
    int32 queue_id;
    int16 priority;
    bool keyless;
    uint32 hash;  // of the key
};

struct FloorEntry {
    FloorKey id;  // the hash key: first
    text *key;    // the tenant's key (nullptr: keyless), in floor_context
    int64 floor;
    int64 lane_cursor;  // the lane's cursor when the floor was set
};

// Reset when it holds this many (floors only save reading entries).
constexpr long kMaxFloors = 8192;
HTAB *floors = nullptr;
MemoryContext floor_context = nullptr;

HTAB *Floors()
{
    if (floors != nullptr && hash_get_num_entries(floors) < kMaxFloors)
        return floors;
    if (floor_context == nullptr)
        floor_context = AllocSetContextCreate(TopMemoryContext, "claimqueue fair floors",
                                              ALLOCSET_DEFAULT_SIZES);
    else
        MemoryContextReset(floor_context);  // the table and its keys
    HASHCTL ctl = {};
    ctl.keysize = sizeof(FloorKey);
    ctl.entrysize = sizeof(FloorEntry);
    ctl.hcxt = floor_context;
    floors = hash_create("claimqueue fair floors", 256, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
    return floors;
}

FloorKey KeyOfFloor(int32 queue_id, int priority, const Turn &tenant)
{
    FloorKey k = {};
    k.queue_id = queue_id;
    k.priority = (int16) priority;
    k.keyless = tenant.kind == Turn::kKeyless;
    k.hash = k.keyless ? 0
                       : hash_bytes((const unsigned char *) VARDATA_ANY(tenant.key),
                                    (int) VARSIZE_ANY_EXHDR(tenant.key));
    return k;
}

// Where the tenant's claim starts: its floor when it holds, else the lane's cursor.
int64 TenantFrom(int32 queue_id, int priority, const Turn &tenant, int64 lane_cursor)
{
    FloorKey k = KeyOfFloor(queue_id, priority, tenant);
    auto *e = (FloorEntry *) hash_search(Floors(), &k, HASH_FIND, nullptr);
    if (e == nullptr || lane_cursor < e->lane_cursor ||
        (tenant.kind == Turn::kKey && !SameTurn({Turn::kKey, e->key}, tenant)))
        return lane_cursor;
    return Max(e->floor, lane_cursor);
}

void RaiseFloor(int32 queue_id, int priority, const Turn &tenant, int64 lane_cursor,
                int64 floor)
{
    FloorKey k = KeyOfFloor(queue_id, priority, tenant);
    bool found;
    auto *e = (FloorEntry *) hash_search(Floors(), &k, HASH_ENTER, &found);
    bool same = found && lane_cursor >= e->lane_cursor &&
                (tenant.kind != Turn::kKey || SameTurn({Turn::kKey, e->key}, tenant));
    if (same && e->floor >= floor)
        return;
    if (!same) {
        // A new tenant, or another with the same hash: this one's floor only.
        if (found && e->key != nullptr)
            pfree(e->key);
        e->key = nullptr;
        if (tenant.kind == Turn::kKey) {
            size_t size = VARSIZE_ANY(tenant.key);
            e->key = (text *) MemoryContextAlloc(floor_context, size);
            memcpy(e->key, tenant.key, size);
        }
    }
    e->floor = floor;
    e->lane_cursor = lane_cursor;
}

// --- The rotation ---------------------------------------------------------------

// The tenant after `turn` in lane (queue_id, priority): the next key in key
// order, then the jobs without a key, then the first key again.
Turn NextTenant(JobRows *rows, int32 queue_id, int priority, const Turn &turn)
{
    text *key = NextTenantKey(rows, queue_id, priority,
                              turn.kind == Turn::kKey ? turn.key : nullptr);
    if (key != nullptr)
        return {Turn::kKey, key};
    return {Turn::kKeyless, nullptr};
}

// One lane's rotation: one job per tenant per visit, from the tenant after
// *last, until `limit` jobs, a full gate, or a whole turn that claimed nothing.
// *last becomes the tenant served last.
int RotateLane(JobRows *rows, LaneWalk *walk, int32 queue_id, int priority, int64 lane_cursor,
               int limit, const ClaimWrite &write, LimitGate *gate, Turn *last,
               Tuplestorestate *out, TupleDesc out_desc)
{
    bool floors_usable = WalkHasCursors(walk);
    int claimed = 0;
    Turn at = *last;
    Turn idle_since = {Turn::kStart, nullptr};  // the first tenant of a run that claimed nothing
    while (claimed < limit && !(gate != nullptr && GateFull(gate))) {
        CHECK_FOR_INTERRUPTS();
        Turn tenant = NextTenant(rows, queue_id, priority, at);
        if (idle_since.kind != Turn::kStart && SameTurn(tenant, idle_since))
            break;  // every tenant visited since the last claim: nothing more here
        int64 from = floors_usable ? TenantFrom(queue_id, priority, tenant, lane_cursor)
                                   : lane_cursor;
        int64 first_seen;
        int n = ClaimTenant(rows, queue_id, priority, tenant.key, from, 1, write, gate,
                            &first_seen, out, out_desc);
        if (floors_usable)
            RaiseFloor(queue_id, priority, tenant, lane_cursor,
                       first_seen >= 0 ? Min(first_seen, walk->bound) : walk->bound);
        at = tenant;
        if (n > 0) {
            claimed += n;
            *last = tenant;
            idle_since = {Turn::kStart, nullptr};
        } else if (idle_since.kind == Turn::kStart) {
            idle_since = tenant;
        }
    }
    return claimed;
}

}  // namespace

void RequestFairState()
{
    AddSharedRegion(&kRotationRegion);
}

uint64 ClaimFairly(JobRows *rows, LaneWalk *walk, int32 queue_id, int batch,
                   const ClaimWrite &write, LimitGate *gate, Tuplestorestate *out,
                   TupleDesc out_desc)
{
    Turn last = ReadRotation(queue_id);
    Turn read = last;
    uint64 claimed = 0;
    int priority = kNoLane;
    int64 from = 0;
    for (;;) {
        if (claimed >= (uint64) batch || (gate != nullptr && GateFull(gate)))
            break;
        if (WalkHasCursors(walk)) {
            if (!NextLane(walk, &priority, &from))
                break;
            // The lane cursor moves as for any claim: to the first claimable
            // job of the lane, whatever its tenant.
            int64 first = FirstClaimable(rows, queue_id, priority, from);
            LaneSeen(walk, priority, first);
            if (first < 0)
                continue;  // nothing claimable in this lane
            from = Max(from, Min(first, walk->bound));  // where the cursor is now
        } else {
            // Without cursors: the lanes that have entries, highest first.
            priority = NextReadyPriority(rows, queue_id, priority);
            if (priority == kNoLane)
                break;
            from = 0;
        }
        claimed += RotateLane(rows, walk, queue_id, priority, from, batch - (int) claimed, write,
                              gate, &last, out, out_desc);
    }
    if (!SameTurn(last, read))
        WriteRotation(queue_id, last);
    return claimed;
}

}  // namespace claimqueue

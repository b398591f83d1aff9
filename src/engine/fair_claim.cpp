// Fair claiming (see fair_claim.hpp).
#include "engine/fair_claim.hpp"

extern "C" {
#include "common/hashfn.h"
#include "miscadmin.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
}

#include "cursors/cursors.hpp"
#include "engine/claim_limits.hpp"
#include "engine/job_rows.hpp"
#include "pg/shared_memory.hpp"

namespace claimqueue {
namespace {

// A place in the rotation: before every tenant, a key (by its hash), or the
// jobs without one.
struct Turn {
    enum Kind : uint8 { kStart, kKey, kKeyless } kind;
    int64 key_hash;  // kKey
};

bool SameTurn(const Turn &a, const Turn &b)
{
    return a.kind == b.kind && (a.kind != Turn::kKey || a.key_hash == b.key_hash);
}

// --- Where each queue's rotation stands ---------------------------------------

// One slot per queue, found by hashing (database, queue) and probing the next
// few slots (a slot is never freed: a dropped queue's stays taken). A queue
// that finds none of them its own or free keeps its place in this session's
// slots instead: its sessions then rotate each on its own, still fairly.
constexpr int kRotationSlots = 1024;
constexpr int kProbes = 8;

struct RotationSlot {
    Oid database;  // InvalidOid: free
    int32 queue_id;
    uint8 kind;    // Turn::Kind
    int64 key_hash;
};

struct RotationState {
    LWLock *lock;
    RotationSlot slots[kRotationSlots];
};

RotationState *shared = nullptr;
RotationSlot *local_slots = nullptr;  // this session's

const SharedRegion kRotationRegion = {"claimqueue fair rotation", RegionSizeOf<RotationState>,
                                InitRegionLock<RotationState>, reinterpret_cast<void **>(&shared)};

RotationSlot *LocalSlots()
{
    if (local_slots == nullptr)
        local_slots = (RotationSlot *) MemoryContextAllocZero(
            TopMemoryContext, sizeof(RotationSlot) * kRotationSlots);
    return local_slots;
}

bool Owns(const RotationSlot &slot, int32 queue_id)
{
    return slot.database == MyDatabaseId && slot.queue_id == queue_id;
}

// The queue's slot among `slots`, or (with `claim`) a free one within its
// probes; nullptr when neither.
RotationSlot *FindSlot(RotationSlot *slots, int32 queue_id, bool claim)
{
    uint32 home = hash_combine(murmurhash32(MyDatabaseId), murmurhash32((uint32) queue_id));
    for (int i = 0; i < kProbes; i++) {
        RotationSlot *slot = &slots[(home + i) % kRotationSlots];
        if (Owns(*slot, queue_id))
            return slot;
        if (slot->database == InvalidOid)
            return claim ? slot : nullptr;
    }
    return nullptr;
}

// The tenant the queue's last claim served (kStart: none yet).
Turn ReadRotation(int32 queue_id)
{
    RotationSlot copy = {};
    bool found = false;
    if (shared != nullptr) {
        LWLockAcquire(shared->lock, LW_SHARED);
        RotationSlot *slot = FindSlot(shared->slots, queue_id, false);
        if (slot != nullptr) {
            copy = *slot;
            found = true;
        }
        LWLockRelease(shared->lock);
    }
    if (!found) {
        RotationSlot *slot = FindSlot(LocalSlots(), queue_id, false);
        if (slot != nullptr) {
            copy = *slot;
            found = true;
        }
    }
    if (!found)
        return {Turn::kStart, 0};
    return {(Turn::Kind) copy.kind, copy.key_hash};
}

void WriteRotation(int32 queue_id, const Turn &turn)
{
    RotationSlot *slot = nullptr;
    if (shared != nullptr) {
        LWLockAcquire(shared->lock, LW_EXCLUSIVE);
        slot = FindSlot(shared->slots, queue_id, true);
        if (slot == nullptr)
            LWLockRelease(shared->lock);
    }
    bool local = slot == nullptr;
    if (local) {
        slot = FindSlot(LocalSlots(), queue_id, true);
        if (slot == nullptr)  // this session's probes all taken: the home slot
            slot = &LocalSlots()[hash_combine(murmurhash32(MyDatabaseId),
                                              murmurhash32((uint32) queue_id)) %
                                 kRotationSlots];
    }
    slot->database = MyDatabaseId;
    slot->queue_id = queue_id;
    slot->kind = turn.kind;
    slot->key_hash = turn.key_hash;
    if (!local)
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
    int64 key_hash;
};

struct FloorEntry {
    FloorKey id;  // the hash key: first
    int64 floor;
    int64 lane_cursor;  // the lane's cursor when the floor was set
};

// Dropped when it holds this many (floors only save reading entries).
constexpr long kMaxFloors = 8192;
HTAB *floors = nullptr;

HTAB *Floors()
{
    if (floors != nullptr && hash_get_num_entries(floors) < kMaxFloors)
        return floors;
    if (floors != nullptr)
        hash_destroy(floors);
    HASHCTL ctl = {};
    ctl.keysize = sizeof(FloorKey);
    ctl.entrysize = sizeof(FloorEntry);
    ctl.hcxt = TopMemoryContext;
    floors = hash_create("claimqueue fair floors", 256, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
    return floors;
}

FloorKey KeyOfFloor(int32 queue_id, int priority, const Turn &tenant)
{
    FloorKey k;
    memset(&k, 0, sizeof(k));  // padding too: the key is hashed as bytes
    k.queue_id = queue_id;
    k.priority = (int16) priority;
    k.keyless = tenant.kind == Turn::kKeyless;
    k.key_hash = k.keyless ? 0 : tenant.key_hash;
    return k;
}

// Where the tenant's claim starts: its floor when it holds, else the lane's cursor.
int64 TenantFrom(int32 queue_id, int priority, const Turn &tenant, int64 lane_cursor)
{
    FloorKey k = KeyOfFloor(queue_id, priority, tenant);
    auto *e = (FloorEntry *) hash_search(Floors(), &k, HASH_FIND, nullptr);
    if (e == nullptr || lane_cursor < e->lane_cursor)
        return lane_cursor;
    return Max(e->floor, lane_cursor);
}

void RaiseFloor(int32 queue_id, int priority, const Turn &tenant, int64 lane_cursor,
                int64 floor)
{
    FloorKey k = KeyOfFloor(queue_id, priority, tenant);
    bool found;
    auto *e = (FloorEntry *) hash_search(Floors(), &k, HASH_ENTER, &found);
    if (found && lane_cursor >= e->lane_cursor && e->floor >= floor)
        return;
    e->floor = floor;
    e->lane_cursor = lane_cursor;
}

// --- The rotation ---------------------------------------------------------------

// The tenant after `turn` in lane (queue_id, priority): the next key in the
// index's order, then the jobs without a key, then the first key again.
Turn NextTurn(JobRows *rows, int32 queue_id, int priority, const Turn &turn)
{
    Turn next = {Turn::kKey, 0};
    if (NextTenant(rows, queue_id, priority, turn.kind == Turn::kKey ? &turn.key_hash : nullptr,
                   &next.key_hash))
        return next;
    return {Turn::kKeyless, 0};
}

// The rotation's order: the keys by hash, then the jobs without a key; the
// place before every tenant first. NextTurn moves forward in it, wrapping
// around from the last tenant to the first.
bool Before(const Turn &a, const Turn &b)
{
    if (a.kind != b.kind)
        return a.kind == Turn::kStart || (a.kind == Turn::kKey && b.kind == Turn::kKeyless);
    return a.kind == Turn::kKey && a.key_hash < b.key_hash;
}

// One lane's rotation: one job per tenant per visit, from the tenant after
// *last, until `limit` jobs, a full gate, or a whole turn that claimed
// nothing. *last becomes the tenant served last.
//
// A whole turn ends at the first tenant at or past the one where the run of
// visits that claimed nothing began, once the rotation has wrapped around
// since: not at that tenant itself, which may be gone by then (its entries
// removed by VACUUM), nor at a count of tenants, which may come and go.
int RotateLane(JobRows *rows, LaneWalk *walk, int32 queue_id, int priority, int64 lane_cursor,
               int limit, const ClaimWrite &write, LimitGate *gate, Turn *last,
               Tuplestorestate *out, TupleDesc out_desc)
{
    bool floors_usable = WalkHasCursors(walk);
    int claimed = 0;
    Turn at = *last;
    Turn idle_since = {Turn::kStart, 0};  // the first tenant of a run that claimed nothing
    bool wrapped = false;                 // the rotation wrapped around since idle_since
    while (claimed < limit && !(gate != nullptr && GateFull(gate))) {
        CHECK_FOR_INTERRUPTS();
        Turn tenant = NextTurn(rows, queue_id, priority, at);
        if (idle_since.kind != Turn::kStart) {
            wrapped = wrapped || !Before(at, tenant);
            if (wrapped && !Before(tenant, idle_since))
                break;  // every tenant visited since the last claim: nothing more here
        }
        int64 from = floors_usable ? TenantFrom(queue_id, priority, tenant, lane_cursor)
                                   : lane_cursor;
        int64 first_seen;
        int n = ClaimTenant(rows, queue_id, priority,
                            tenant.kind == Turn::kKey ? &tenant.key_hash : nullptr, from, 1,
                            write, gate, &first_seen, out, out_desc);
        if (floors_usable)
            RaiseFloor(queue_id, priority, tenant, lane_cursor, SeenBound(walk, first_seen));
        at = tenant;
        if (n > 0) {
            claimed += n;
            *last = tenant;
            idle_since = {Turn::kStart, 0};
        } else if (idle_since.kind == Turn::kStart) {
            idle_since = tenant;
            wrapped = false;
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
    // The lane cursor is moved by a probe of the lane (its first claimable
    // job, any tenant) on one fair claim in kProbeEvery of this session, and
    // after a lane gave nothing; in between it lags, which only makes a new
    // tenant's first scan start lower. A probe is as dear as a tenant's scan.
    constexpr uint32 kProbeEvery = 8;
    static uint32 probe_clock = 0;
    Turn last = ReadRotation(queue_id);
    Turn read = last;
    uint64 claimed = 0;
    int priority = kNoLane;
    int64 from = 0;
    for (;;) {
        if (claimed >= (uint64) batch || (gate != nullptr && GateFull(gate)))
            break;
        bool probed = false;
        if (WalkHasCursors(walk)) {
            if (!NextLane(walk, &priority, &from))
                break;
            if (probe_clock++ % kProbeEvery == 0) {
                int64 first = FirstClaimable(rows, queue_id, priority, from);
                LaneSeen(walk, priority, first);
                if (first < 0)
                    continue;  // nothing claimable in this lane
                from = Max(from, SeenBound(walk, first));  // where the cursor is now
                probed = true;
            }
        } else {
            // Without cursors: the lanes that have entries, highest first.
            priority = NextReadyPriority(rows, queue_id, priority);
            if (priority == kNoLane)
                break;
            from = 0;
        }
        int n = RotateLane(rows, walk, queue_id, priority, from, batch - (int) claimed, write,
                           gate, &last, out, out_desc);
        if (n == 0 && !probed && WalkHasCursors(walk))
            LaneSeen(walk, priority, FirstClaimable(rows, queue_id, priority, from));
        claimed += n;
    }
    if (!SameTurn(last, read))
        WriteRotation(queue_id, last);
    return claimed;
}

}  // namespace claimqueue

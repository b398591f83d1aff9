// Claim cursors in shared memory (see claim_cursors.hpp; the invariants are in
// src/engine/README.md, "Claim cursors").
#include "shmem/claim_cursors.hpp"

extern "C" {
#include "access/twophase.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
}

#include "shmem/shared_state.hpp"

namespace claimqueue {

int claim_cursor_queues = 1024;

struct Lane {
    pg_atomic_uint64 cursor;        // no claimable job of the lane is below it
    pg_atomic_uint64 max_position;  // highest position drawn into the lane (0: none)
};

struct QueueCursors {
    Oid database;
    int32 queue_id;
    pg_atomic_uint32 loaded;          // lanes of older jobs loaded (LoadLane)
    pg_atomic_uint64 next_scheduled;  // earliest run_at waiting, as an ordered key
    Lane lanes[kLanes];
};

namespace {

constexpr uint64 kNoPosition = PG_UINT64_MAX;

struct CursorState {
    LWLock *lock;                        // guards adding queues
    pg_atomic_uint64 counter;            // the next position
    pg_atomic_uint64 prepared_floor;     // lowest position of a prepared transaction
    pg_atomic_uint64 prepared_generation;
    int nslots;                          // one per PGPROC
    int capacity;
    pg_atomic_uint32 nqueues;            // entries of queues[] in use
    // Per PGPROC, two arrays of nslots: the lowest position drawn by its open
    // transaction, then the (time) key of its first claim in it.
    pg_atomic_uint64 slots[FLEXIBLE_ARRAY_MEMBER];
};

CursorState *state = nullptr;

int SlotCount()
{
    return MaxBackends + NUM_AUXILIARY_PROCS + max_prepared_xacts;
}

Size QueuesOffset(int nslots)
{
    return MAXALIGN(add_size(offsetof(CursorState, slots),
                             mul_size(sizeof(pg_atomic_uint64), (Size) nslots * 2)));
}

pg_atomic_uint64 *LeaseSlots()
{
    return &state->slots[state->nslots];
}

QueueCursors *Queues()
{
    return (QueueCursors *) ((char *) state + QueuesOffset(state->nslots));
}

Size CursorStateSize()
{
    return add_size(QueuesOffset(SlotCount()),
                    mul_size(sizeof(QueueCursors), (Size) claim_cursor_queues));
}

void InitCursorState(void *region, LWLock *lock)
{
    CursorState *s = (CursorState *) region;
    s->lock = lock;
    // Positions continue above the previous server's: they start at the
    // clock (microseconds), which no earlier run's counter can have reached.
    pg_atomic_init_u64(&s->counter, (uint64) Max(GetCurrentTimestamp(), 1));
    // Transactions prepared before a restart may still commit: until the
    // reaper has seen that none is prepared, cursors stay at the start.
    pg_atomic_init_u64(&s->prepared_floor, max_prepared_xacts > 0 ? 0 : kNoPosition);
    pg_atomic_init_u64(&s->prepared_generation, 0);
    s->nslots = SlotCount();
    s->capacity = claim_cursor_queues;
    pg_atomic_init_u32(&s->nqueues, 0);
    for (int i = 0; i < s->nslots * 2; i++)
        pg_atomic_init_u64(&s->slots[i], kNoPosition);  // (the greatest time key too)
}

const SharedRegion kCursorRegion = {"claimqueue cursors", CursorStateSize, InitCursorState,
                                    (void **) &state};

// Timestamps as unsigned keys that sort like the signed values.
uint64 TimeKey(TimestampTz t)
{
    return ((uint64) t) ^ (UINT64CONST(1) << 63);
}

TimestampTz KeyTime(uint64 key)
{
    return (TimestampTz) (key ^ (UINT64CONST(1) << 63));
}

void AtomicMax(pg_atomic_uint64 *target, uint64 value)
{
    uint64 old = pg_atomic_read_u64(target);
    while (old < value && !pg_atomic_compare_exchange_u64(target, &old, value)) {
    }
}

bool AtomicMin(pg_atomic_uint64 *target, uint64 value)
{
    uint64 old = pg_atomic_read_u64(target);
    while (old > value) {
        if (pg_atomic_compare_exchange_u64(target, &old, value))
            return true;
    }
    return false;
}

Lane *LaneOf(QueueCursors *q, int priority)
{
    Assert(priority >= kMinPriority && priority <= kMaxPriority);
    return &q->lanes[priority - kMinPriority];
}

// --- This backend's transaction ------------------------------------------------

struct ScheduledNote {
    QueueCursors *queue;
    TimestampTz run_at;
};

bool holds_slot = false;          // this transaction drew a position
bool holds_lease_slot = false;    // this transaction claimed
List *scheduled_notes = NIL;      // of ScheduledNote *, in TopTransactionContext
bool callbacks_registered = false;
HTAB *local_queues = nullptr;     // queue_id -> QueueCursors * (nullptr: none to be had)

struct LocalEntry {
    int32 queue_id;
    QueueCursors *queue;  // nullptr: the table was full (entries are never freed)
};

pg_atomic_uint64 *MySlot()
{
    return &state->slots[MyProc->pgprocno];
}

void ReleaseSlot()
{
    if (holds_slot)
        pg_atomic_write_u64(MySlot(), kNoPosition);
    holds_slot = false;
    if (holds_lease_slot)
        pg_atomic_write_u64(&LeaseSlots()[MyProc->pgprocno], kNoPosition);
    holds_lease_slot = false;
}

// At commit the jobs are visible to every later snapshot (this runs after
// ProcArrayEndTransaction), so the slot can go; so can it at abort, the jobs
// being gone. A prepared transaction commits later, elsewhere: its lowest
// position becomes the floor that the reaper lifts once nothing is prepared.
void AtTransactionEnd(XactEvent event, void *)
{
    switch (event) {
    case XACT_EVENT_COMMIT:
    case XACT_EVENT_PARALLEL_COMMIT: {
        ListCell *cell;
        foreach (cell, scheduled_notes) {
            const ScheduledNote *note = (const ScheduledNote *) lfirst(cell);
            AtomicMin(&note->queue->next_scheduled, TimeKey(note->run_at));
        }
        scheduled_notes = NIL;
        ReleaseSlot();
        break;
    }
    case XACT_EVENT_PREPARE:
        if (holds_slot) {
            LWLockAcquire(state->lock, LW_EXCLUSIVE);
            AtomicMin(&state->prepared_floor, pg_atomic_read_u64(MySlot()));
            pg_atomic_fetch_add_u64(&state->prepared_generation, 1);
            LWLockRelease(state->lock);
        }
        scheduled_notes = NIL;  // the reaper promotes them once due
        ReleaseSlot();
        break;
    case XACT_EVENT_ABORT:
    case XACT_EVENT_PARALLEL_ABORT:
        scheduled_notes = NIL;
        ReleaseSlot();
        break;
    default:
        break;
    }
}

// A backend that exits in the middle of a transaction must not leave its slot
// holding every cursor back for the next process that gets its PGPROC.
void ReleaseSlotAtExit(int, Datum)
{
    ReleaseSlot();
}

void RegisterCallbacks()
{
    if (callbacks_registered)
        return;
    RegisterXactCallback(AtTransactionEnd, nullptr);
    before_shmem_exit(ReleaseSlotAtExit, 0);
    callbacks_registered = true;
}

QueueCursors *FindShared(int32 queue_id, uint32 n)
{
    QueueCursors *queues = Queues();
    for (uint32 i = 0; i < n; i++)
        if (queues[i].queue_id == queue_id && queues[i].database == MyDatabaseId)
            return &queues[i];
    return nullptr;
}

QueueCursors *FindOrAddShared(int32 queue_id)
{
    uint32 n = pg_atomic_read_u32(&state->nqueues);
    pg_read_barrier();
    QueueCursors *q = FindShared(queue_id, n);
    if (q != nullptr)
        return q;
    LWLockAcquire(state->lock, LW_EXCLUSIVE);
    n = pg_atomic_read_u32(&state->nqueues);
    q = FindShared(queue_id, n);
    if (q == nullptr && n < (uint32) state->capacity) {
        q = &Queues()[n];
        q->database = MyDatabaseId;
        q->queue_id = queue_id;
        pg_atomic_init_u32(&q->loaded, 0);
        pg_atomic_init_u64(&q->next_scheduled, TimeKey(DT_NOBEGIN));  // look once
        for (int i = 0; i < kLanes; i++) {
            pg_atomic_init_u64(&q->lanes[i].cursor, 0);
            pg_atomic_init_u64(&q->lanes[i].max_position, 0);
        }
        pg_write_barrier();
        pg_atomic_write_u32(&state->nqueues, n + 1);
    }
    LWLockRelease(state->lock);
    return q;
}

}  // namespace

void DefineCursorSettings()
{
    // A PGC_POSTMASTER setting can only be defined while preloading; without
    // preloading there are no cursors anyway.
    if (!process_shared_preload_libraries_in_progress)
        return;
    DefineCustomIntVariable(
        "claimqueue.claim_cursor_queues",
        "Queues that can have claim cursors (shared memory, fixed at server start).",
        "A claim cursor lets a claim start past the jobs already claimed, so claims stay fast "
        "while an old snapshot keeps their dead index entries. Queues used beyond this many "
        "since the server started work without one. 0 turns claim cursors off.",
        &claim_cursor_queues, 1024, 0, 65536, PGC_POSTMASTER, 0, nullptr, nullptr, nullptr);
}

void RequestCursorState()
{
    AddSharedRegion(&kCursorRegion);
}

int64 DrawPosition(int32 queue_id, int priority)
{
    if (state == nullptr)  // not preloaded: positions order jobs, nothing relies on more
        return GetCurrentTimestamp();
    RegisterCallbacks();
    if (!holds_slot) {
        // Published before the draw: a claim that reads the counter after the
        // draw sees a higher counter, one that reads it before sees this slot.
        pg_atomic_write_u64(MySlot(), pg_atomic_read_u64(&state->counter));
        holds_slot = true;
    }
    uint64 position = pg_atomic_fetch_add_u64(&state->counter, 1);  // a full barrier
    QueueCursors *q = CursorsFor(queue_id);
    // (A priority out of range fails the table's CHECK before any claim.)
    if (q != nullptr && priority >= kMinPriority && priority <= kMaxPriority)
        AtomicMax(&LaneOf(q, priority)->max_position, position);
    return (int64) position;
}

void NoteScheduled(int32 queue_id, TimestampTz run_at)
{
    QueueCursors *q = CursorsFor(queue_id);
    if (q == nullptr)
        return;
    // Now, for this transaction's own claims, and again at commit: a promoter
    // that reset the mark meanwhile could not see the uncommitted job.
    AtomicMin(&q->next_scheduled, TimeKey(run_at));
    RegisterCallbacks();
    MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
    ScheduledNote *note = (ScheduledNote *) palloc(sizeof(ScheduledNote));
    note->queue = q;
    note->run_at = run_at;
    scheduled_notes = lappend(scheduled_notes, note);
    MemoryContextSwitchTo(old);
}

QueueCursors *CursorsFor(int32 queue_id)
{
    if (state == nullptr || state->capacity == 0)
        return nullptr;
    if (local_queues == nullptr) {
        HASHCTL ctl;
        ctl.keysize = sizeof(int32);
        ctl.entrysize = sizeof(LocalEntry);
        ctl.hcxt = TopMemoryContext;
        local_queues = hash_create("claimqueue cursors", 64, &ctl,
                                   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
    }
    bool found;
    LocalEntry *entry = (LocalEntry *) hash_search(local_queues, &queue_id, HASH_ENTER, &found);
    if (!found)
        entry->queue = FindOrAddShared(queue_id);
    return entry->queue;
}

bool NeedsLoading(QueueCursors *q)
{
    return pg_atomic_read_u32(&q->loaded) == 0;
}

void LoadLane(QueueCursors *q, int priority, int64 max_position)
{
    AtomicMax(&LaneOf(q, priority)->max_position, (uint64) max_position);
}

void MarkLoaded(QueueCursors *q)
{
    pg_write_barrier();
    pg_atomic_write_u32(&q->loaded, 1);
}

bool LaneMayHaveJobs(QueueCursors *q, int priority)
{
    Lane *lane = LaneOf(q, priority);
    uint64 max = pg_atomic_read_u64(&lane->max_position);
    return max != 0 && max >= pg_atomic_read_u64(&lane->cursor);
}

int64 LaneCursor(QueueCursors *q, int priority)
{
    return (int64) pg_atomic_read_u64(&LaneOf(q, priority)->cursor);
}

int64 PositionBound()
{
    uint64 bound = pg_atomic_read_u64(&state->counter);
    pg_memory_barrier();
    for (int i = 0; i < state->nslots; i++)
        bound = Min(bound, pg_atomic_read_u64(&state->slots[i]));
    bound = Min(bound, pg_atomic_read_u64(&state->prepared_floor));
    return (int64) bound;
}

void AdvanceLane(QueueCursors *q, int priority, int64 position)
{
    AtomicMax(&LaneOf(q, priority)->cursor, (uint64) position);
}

bool LowerLane(QueueCursors *q, int priority, int64 position)
{
    return AtomicMin(&LaneOf(q, priority)->cursor, (uint64) position);
}

bool PromotionDue(QueueCursors *q, TimestampTz now)
{
    return KeyTime(pg_atomic_read_u64(&q->next_scheduled)) <= now;
}

// A job scheduled by a transaction that commits after this reset lowers the
// mark itself (at commit, when it is visible); one that committed before is
// seen by the promoter's statement, whose snapshot comes after the reset.
void BeginPromotion(QueueCursors *q)
{
    pg_atomic_write_u64(&q->next_scheduled, TimeKey(DT_NOEND));
    pg_memory_barrier();
}

void NotePromoted(QueueCursors *q, TimestampTz next_run_at)
{
    AtomicMin(&q->next_scheduled, TimeKey(next_run_at));
}

void NoteClaimStarting()
{
    if (state == nullptr || holds_lease_slot)
        return;
    RegisterCallbacks();
    pg_atomic_write_u64(&LeaseSlots()[MyProc->pgprocno], TimeKey(GetCurrentTimestamp()));
    holds_lease_slot = true;
    pg_memory_barrier();  // published before the claim reads the clock for its leases
}

TimestampTz LeaseBound()
{
    // The clock first: a claim that publishes after the slots are read below
    // reads the clock later still, so its leases end after this.
    uint64 bound = TimeKey(GetCurrentTimestamp());
    if (state == nullptr)
        return KeyTime(bound);
    pg_memory_barrier();
    for (int i = 0; i < state->nslots; i++)
        bound = Min(bound, pg_atomic_read_u64(&LeaseSlots()[i]));
    return KeyTime(bound);
}

uint64 PreparedFloorGeneration()
{
    return state ? pg_atomic_read_u64(&state->prepared_generation) : 0;
}

void LiftPreparedFloor(uint64 generation_seen)
{
    if (state == nullptr)
        return;
    LWLockAcquire(state->lock, LW_EXCLUSIVE);
    if (pg_atomic_read_u64(&state->prepared_generation) == generation_seen)
        pg_atomic_write_u64(&state->prepared_floor, kNoPosition);
    LWLockRelease(state->lock);
}

LaneView *ListLanes(int *n)
{
    *n = 0;
    if (state == nullptr)
        return nullptr;
    uint32 nqueues = pg_atomic_read_u32(&state->nqueues);
    pg_read_barrier();
    LaneView *out = (LaneView *) palloc(sizeof(LaneView) * (nqueues * kLanes + 1));
    for (uint32 i = 0; i < nqueues; i++) {
        QueueCursors *q = &Queues()[i];
        if (q->database != MyDatabaseId)
            continue;
        for (int p = kMaxPriority; p >= kMinPriority; p--) {
            Lane *lane = LaneOf(q, p);
            uint64 max = pg_atomic_read_u64(&lane->max_position);
            if (max == 0)
                continue;
            out[*n] = {q->queue_id, p, (int64) pg_atomic_read_u64(&lane->cursor), (int64) max};
            (*n)++;
        }
    }
    return out;
}

}  // namespace claimqueue

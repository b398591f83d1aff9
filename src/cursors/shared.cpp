// The claim cursors' shared state (see shared.hpp; the invariants are in
// README.md beside this file).
#include "cursors/shared.hpp"

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

#include "core/shared_min.hpp"
#include "pg/compat.hpp"
#include "pg/settings.hpp"
#include "pg/shared_memory.hpp"

namespace claimqueue {

struct Lane {
    pg_atomic_uint64 cursor;        // no claimable job of the lane is below it
    pg_atomic_uint64 max_position;  // highest position drawn into the lane (0: none)
};

// One queue's cursors. An entry is held by one (database, queue) from the
// time it is taken until it is freed (the queue, its extension or its
// database dropped); then, once no backend has it pinned, it may be taken by
// another queue. `generation` changes at every free, so a backend's cached
// pointer to an entry that was freed is recognised as stale.
struct QueueCursors {
    Oid database;                     // identity, written under the lock
    int32 queue_id;
    bool in_use;
    pg_atomic_uint32 pins;            // backends writing to it right now
    pg_atomic_uint64 generation;
    pg_atomic_uint32 loaded;          // lanes of older jobs loaded (LoadLane)
    pg_atomic_uint64 next_scheduled;  // earliest run_at waiting, as an ordered key
    Lane lanes[kLanes];
};

namespace {

constexpr uint64 kNoPosition = PG_UINT64_MAX;

struct CursorState {
    LWLock *lock;                         // guards taking and freeing entries
    pg_atomic_uint64 counter;             // the next position
    pg_atomic_uint64 prepared_floor;      // lowest position of a prepared transaction
    pg_atomic_uint64 prepared_lease_floor;  // earliest claim (time key) of one
    pg_atomic_uint64 prepared_generation;
    pg_atomic_uint64 frees;               // entries freed since the start
    pg_atomic_uint64 refusals;            // lookups that found the table full
    pg_atomic_uint32 full_logged;         // the LOG line for a full table was written
    int nslots;                           // one per PGPROC
    int capacity;
    pg_atomic_uint32 nqueues;             // entries of queues[] ever taken (high-water mark)
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

// Timestamps as unsigned keys that sort like the signed values.
uint64 TimeKey(TimestampTz t)
{
    return ((uint64) t) ^ (UINT64CONST(1) << 63);
}

TimestampTz KeyTime(uint64 key)
{
    return (TimestampTz) (key ^ (UINT64CONST(1) << 63));
}

void InitCursorState(void *region, LWLock *lock)
{
    CursorState *s = (CursorState *) region;
    s->lock = lock;
    // Positions continue above the previous server's: they start at the
    // clock (microseconds), which no earlier run's counter can have reached.
    pg_atomic_init_u64(&s->counter, (uint64) Max(GetCurrentTimestamp(), 1));
    // Transactions prepared before a restart may still commit: until the
    // reaper has seen that none is prepared, cursors stay at the start and
    // the lease scan starts at the earliest lease.
    bool may_have_prepared = max_prepared_xacts > 0;
    pg_atomic_init_u64(&s->prepared_floor, may_have_prepared ? 0 : kNoPosition);
    pg_atomic_init_u64(&s->prepared_lease_floor,
                       may_have_prepared ? TimeKey(DT_NOBEGIN) : kNoPosition);
    pg_atomic_init_u64(&s->prepared_generation, 0);
    pg_atomic_init_u64(&s->frees, 0);
    pg_atomic_init_u64(&s->refusals, 0);
    pg_atomic_init_u32(&s->full_logged, 0);
    s->nslots = SlotCount();
    s->capacity = claim_cursor_queues;
    pg_atomic_init_u32(&s->nqueues, 0);
    for (int i = 0; i < s->nslots * 2; i++)
        pg_atomic_init_u64(&s->slots[i], kNoPosition);  // (the greatest time key too)
}

const SharedRegion kCursorRegion = {"claimqueue cursors", CursorStateSize, InitCursorState,
                                    (void **) &state};

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

// The lowest of `start` and n shared slots, each read once (core/shared_min.hpp
// says why once).
uint64 LowestSlot(uint64 start, pg_atomic_uint64 *slots, int n)
{
    return LowestOfOnce(start, n, [slots](int i) { return pg_atomic_read_u64(&slots[i]); });
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

// What this transaction frees when it commits.
struct FreeNote {
    Oid database;
    int32 queue_id;  // 0: every queue of the database
};

bool holds_slot = false;          // this transaction drew a position
bool holds_lease_slot = false;    // this transaction claimed
List *scheduled_notes = NIL;      // of ScheduledNote *, in TopTransactionContext
List *free_notes = NIL;           // of FreeNote *, in TopTransactionContext
bool exit_callback_registered = false;

// Entries this backend has pinned (PinCursors); all are unpinned at the end
// of the transaction, so an error between pin and unpin leaks nothing.
constexpr int kMaxPins = 4;
QueueCursors *pinned[kMaxPins];
int npinned = 0;

// queue_id -> the entry last found for it, with its generation then. A
// queue that found the table full is looked up again once an entry is freed.
HTAB *local_queues = nullptr;

struct LocalEntry {
    int32 queue_id;
    QueueCursors *queue;  // nullptr: the table was full
    uint64 generation;    // of *queue, or state->frees when queue is nullptr
};

pg_atomic_uint64 *MySlot()
{
    return &state->slots[MyProcIndex()];
}

void ReleaseSlot()
{
    if (holds_slot)
        pg_atomic_write_u64(MySlot(), kNoPosition);
    holds_slot = false;
    if (holds_lease_slot)
        pg_atomic_write_u64(&LeaseSlots()[MyProcIndex()], kNoPosition);
    holds_lease_slot = false;
}

void UnpinAll()
{
    for (int i = 0; i < npinned; i++)
        pg_atomic_fetch_sub_u32(&pinned[i]->pins, 1);
    npinned = 0;
}

// Frees the entries named, under the lock. Pinned entries are freed too: the
// pins only keep them from being taken by another queue until released.
void FreeEntries(List *notes)
{
    LWLockAcquire(state->lock, LW_EXCLUSIVE);
    uint32 n = pg_atomic_read_u32(&state->nqueues);
    QueueCursors *queues = Queues();
    bool freed = false;
    ListCell *cell;
    foreach (cell, notes) {
        const FreeNote *note = (const FreeNote *) lfirst(cell);
        for (uint32 i = 0; i < n; i++) {
            QueueCursors *q = &queues[i];
            if (!q->in_use || q->database != note->database ||
                (note->queue_id != 0 && q->queue_id != note->queue_id))
                continue;
            q->in_use = false;
            pg_atomic_fetch_add_u64(&q->generation, 1);  // a full barrier
            freed = true;
        }
    }
    if (freed) {
        pg_atomic_fetch_add_u64(&state->frees, 1);
        pg_atomic_write_u32(&state->full_logged, 0);
    }
    LWLockRelease(state->lock);
}

}  // namespace

// At commit the jobs are visible to every later snapshot (this runs after
// ProcArrayEndTransaction), so the slot can go; so can it at abort, the jobs
// being gone. A prepared transaction commits later, elsewhere: its lowest
// position and its first claim become floors that the reaper lifts once
// nothing is prepared.
void CursorsAtTransactionEnd(XactEvent event)
{
    if (state == nullptr)
        return;
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
        UnpinAll();
        if (free_notes != NIL)
            FreeEntries(free_notes);
        free_notes = NIL;
        break;
    }
    case XACT_EVENT_PREPARE:
        if (holds_slot || holds_lease_slot) {
            LWLockAcquire(state->lock, LW_EXCLUSIVE);
            if (holds_slot)
                AtomicMin(&state->prepared_floor, pg_atomic_read_u64(MySlot()));
            if (holds_lease_slot)
                AtomicMin(&state->prepared_lease_floor,
                          pg_atomic_read_u64(&LeaseSlots()[MyProcIndex()]));
            pg_atomic_fetch_add_u64(&state->prepared_generation, 1);
            LWLockRelease(state->lock);
        }
        scheduled_notes = NIL;  // the reaper promotes them once due
        free_notes = NIL;       // (a prepared drop frees nothing: the sweep's loads stay right)
        ReleaseSlot();
        UnpinAll();
        break;
    case XACT_EVENT_ABORT:
    case XACT_EVENT_PARALLEL_ABORT:
        scheduled_notes = NIL;
        free_notes = NIL;
        ReleaseSlot();
        UnpinAll();
        break;
    default:
        break;
    }
}

namespace {

// A backend that exits in the middle of a transaction must not leave its slot
// holding every cursor back for the next process that gets its PGPROC.
void ReleaseSlotAtExit(int, Datum)
{
    ReleaseSlot();
    UnpinAll();
}

// Exit callbacks belong to the process: registered in each backend that
// touches the slots (a registration in the postmaster is not inherited).
void RegisterCallbacks()
{
    if (exit_callback_registered)
        return;
    before_shmem_exit(ReleaseSlotAtExit, 0);
    exit_callback_registered = true;
}

void InitEntry(QueueCursors *q, int32 queue_id)
{
    q->database = MyDatabaseId;
    q->queue_id = queue_id;
    pg_atomic_write_u32(&q->loaded, 0);
    pg_atomic_write_u64(&q->next_scheduled, TimeKey(DT_NOBEGIN));  // look once
    for (int i = 0; i < kLanes; i++) {
        pg_atomic_write_u64(&q->lanes[i].cursor, 0);
        pg_atomic_write_u64(&q->lanes[i].max_position, 0);
    }
    pg_write_barrier();
    q->in_use = true;
}

// The entry of (this database, queue_id), taking a free one if it has none
// and `take`; nullptr when the table is full (or it has none and !take).
// *generation is the entry's generation.
QueueCursors *FindOrTakeShared(int32 queue_id, bool take, uint64 *generation)
{
    LWLockAcquire(state->lock, LW_EXCLUSIVE);
    uint32 n = pg_atomic_read_u32(&state->nqueues);
    QueueCursors *queues = Queues();
    QueueCursors *found = nullptr;
    QueueCursors *reusable = nullptr;
    for (uint32 i = 0; i < n && found == nullptr; i++) {
        QueueCursors *q = &queues[i];
        if (q->in_use && q->database == MyDatabaseId && q->queue_id == queue_id)
            found = q;
        else if (!q->in_use && reusable == nullptr && pg_atomic_read_u32(&q->pins) == 0)
            reusable = q;  // freed, and nobody still writes to it
    }
    if (found == nullptr && !take) {
        // nothing: the caller only works on entries that exist
    } else if (found == nullptr && reusable != nullptr) {
        found = reusable;
        InitEntry(found, queue_id);
    } else if (found == nullptr && n < (uint32) state->capacity) {
        found = &queues[n];
        pg_atomic_init_u32(&found->pins, 0);
        pg_atomic_init_u64(&found->generation, 1);
        pg_atomic_init_u32(&found->loaded, 0);
        pg_atomic_init_u64(&found->next_scheduled, 0);
        for (int i = 0; i < kLanes; i++) {
            pg_atomic_init_u64(&found->lanes[i].cursor, 0);
            pg_atomic_init_u64(&found->lanes[i].max_position, 0);
        }
        InitEntry(found, queue_id);
        pg_atomic_write_u32(&state->nqueues, n + 1);
    }
    if (found != nullptr)
        *generation = pg_atomic_read_u64(&found->generation);
    LWLockRelease(state->lock);
    return found;
}

// Says once (until an entry is freed) that a queue has to claim without a
// cursor, and counts every such lookup for claim_cursor_usage.
void NoteTableFull(int32 queue_id)
{
    pg_atomic_fetch_add_u64(&state->refusals, 1);
    if (pg_atomic_exchange_u32(&state->full_logged, 1) == 0)
        ereport(LOG,
                (errmsg("claimqueue: the table of claim cursors is full (%d queues); queue %d "
                        "claims without a cursor", state->capacity, queue_id),
                 errdetail("Claims of queues without a cursor scan each lane from its start, so "
                           "a session holding an old snapshot slows them."),
                 errhint("Raise claimqueue.claim_cursor_queues and restart the server; "
                         "claim_cursor_usage shows how many entries are in use.")));
}

LocalEntry *LocalEntryFor(int32 queue_id)
{
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
    if (!found) {
        entry->queue = nullptr;
        entry->generation = PG_UINT64_MAX;  // never a value of state->frees: look it up
    }
    return entry;
}

// The entry of queue_id as far as this backend knows, looked up again when
// the one it knew was freed (or when the table was full and has room now).
// Without `take`, a queue that has no entry yet gets none (the sweep looks
// only at cursors that exist).
QueueCursors *CurrentEntry(int32 queue_id, LocalEntry **local, bool take = true)
{
    LocalEntry *entry = LocalEntryFor(queue_id);
    *local = entry;
    bool stale = entry->queue != nullptr
                     ? pg_atomic_read_u64(&entry->queue->generation) != entry->generation
                     : pg_atomic_read_u64(&state->frees) != entry->generation || !take;
    if (stale) {
        uint64 frees = pg_atomic_read_u64(&state->frees);
        entry->queue = FindOrTakeShared(queue_id, take, &entry->generation);
        if (entry->queue == nullptr) {
            // Remembered as "none" until an entry is freed; a lookup that
            // would not take one leaves nothing to remember.
            entry->generation = take ? frees : PG_UINT64_MAX;
            if (take)
                NoteTableFull(queue_id);
        }
    }
    return entry->queue;
}

bool CursorsEnabled()
{
    return state != nullptr && state->capacity > 0;
}

}  // namespace

void RequestCursorState()
{
    AddSharedRegion(&kCursorRegion);
}

// DROP EXTENSION claimqueue and DROP DATABASE free the entries of the
// database's queues when they commit, so a queue of a re-created extension
// (whose ids start at 1 again) never inherits an old cursor.
void CursorsAtDatabaseDrop(Oid database)
{
    if (CursorsEnabled())
        FreeDatabaseCursorsAtCommit(database);
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
    // An entry freed meanwhile gets a max_position it does not need: harmless,
    // max_position only tells claims where jobs may be.
    LocalEntry *local;
    QueueCursors *q = CursorsEnabled() ? CurrentEntry(queue_id, &local) : nullptr;
    // (A priority out of range fails the table's CHECK before any claim.)
    if (q != nullptr && priority >= kMinPriority && priority <= kMaxPriority)
        AtomicMax(&LaneOf(q, priority)->max_position, position);
    return (int64) position;
}

int64 ReadyPosition(int32 queue_id, int priority, TimestampTz run_at, TimestampTz now)
{
    if (run_at > now) {
        NoteScheduled(queue_id, run_at);
        return -1;
    }
    return DrawPosition(queue_id, priority);
}

void NoteScheduled(int32 queue_id, TimestampTz run_at)
{
    if (!CursorsEnabled())
        return;
    LocalEntry *local;
    QueueCursors *q = CurrentEntry(queue_id, &local);
    if (q == nullptr)
        return;
    // Now, for this transaction's own claims, and again at commit: a promoter
    // that reset the mark meanwhile could not see the uncommitted job. (Lowering
    // the mark of an entry freed meanwhile only costs its next owner one look.)
    AtomicMin(&q->next_scheduled, TimeKey(run_at));
    RegisterCallbacks();
    MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
    ScheduledNote *note = (ScheduledNote *) palloc(sizeof(ScheduledNote));
    note->queue = q;
    note->run_at = run_at;
    scheduled_notes = lappend(scheduled_notes, note);
    MemoryContextSwitchTo(old);
}

QueueCursors *PinCursors(int32 queue_id, bool take)
{
    if (!CursorsEnabled())
        return nullptr;
    RegisterCallbacks();
    if (npinned == kMaxPins)
        elog(ERROR, "claimqueue: too many claim cursor entries pinned at once");
    for (int attempt = 0; attempt < 3; attempt++) {
        LocalEntry *local;
        QueueCursors *q = CurrentEntry(queue_id, &local, take);
        if (q == nullptr)
            return nullptr;
        // Pin, then check the generation: an entry freed before the pin has a
        // new generation by now; one freed after it cannot be taken by another
        // queue until the pin is released (FindOrTakeShared skips pinned ones).
        pg_atomic_fetch_add_u32(&q->pins, 1);  // a full barrier
        if (pg_atomic_read_u64(&q->generation) == local->generation) {
            pinned[npinned++] = q;
            return q;
        }
        pg_atomic_fetch_sub_u32(&q->pins, 1);
    }
    return nullptr;  // freed again and again under us: claim without a cursor this time
}

void UnpinCursors(QueueCursors *q)
{
    for (int i = npinned - 1; i >= 0; i--) {
        if (pinned[i] != q)
            continue;
        pg_atomic_fetch_sub_u32(&q->pins, 1);
        pinned[i] = pinned[--npinned];
        return;
    }
    elog(ERROR, "claimqueue: unpinning a claim cursor entry that is not pinned");
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
    bound = LowestSlot(bound, state->slots, state->nslots);
    bound = LowestSlot(bound, &state->prepared_floor, 1);
    return (int64) bound;
}

int64 PositionCounter()
{
    return state ? (int64) pg_atomic_read_u64(&state->counter) : 0;
}

void AdvanceLane(QueueCursors *q, int priority, int64 position)
{
    // Read after the caller computed `position` from a bound or a probe, so a
    // valid position is always below it.
    uint64 counter = pg_atomic_read_u64(&state->counter);
    if (position < 0 || (uint64) position > counter) {
        ereport(LOG, (errmsg("claimqueue: refused to move the claim cursor of queue %d, "
                             "priority %d to %lld (positions end at %llu)",
                             q->queue_id, priority, (long long) position,
                             (unsigned long long) counter)));
        return;
    }
    AtomicMax(&LaneOf(q, priority)->cursor, (uint64) position);
}

bool LowerLane(QueueCursors *q, int priority, int64 position)
{
    if (position < 0)
        return false;
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

static void NoteFreeAtCommit(Oid database, int32 queue_id)
{
    if (!CursorsEnabled())
        return;
    RegisterCallbacks();
    MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
    FreeNote *note = (FreeNote *) palloc(sizeof(FreeNote));
    note->database = database;
    note->queue_id = queue_id;
    free_notes = lappend(free_notes, note);
    MemoryContextSwitchTo(old);
}

void FreeQueueCursorsAtCommit(int32 queue_id)
{
    NoteFreeAtCommit(MyDatabaseId, queue_id);
}

void FreeDatabaseCursorsAtCommit(Oid database)
{
    NoteFreeAtCommit(database, 0);
}

void NoteClaimStarting()
{
    if (state == nullptr || holds_lease_slot)
        return;
    RegisterCallbacks();
    // The earlier of the real clock and claimqueue's (which a test may have
    // moved back), so no lease this claim computes is earlier.
    TimestampTz real = GetCurrentTimestamp();
    pg_atomic_write_u64(&LeaseSlots()[MyProcIndex()],
                        TimeKey(Min(real, real + (TimestampTz) debug_clock_offset_seconds * USECS_PER_SEC)));
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
    bound = LowestSlot(bound, LeaseSlots(), state->nslots);
    bound = LowestSlot(bound, &state->prepared_lease_floor, 1);
    return KeyTime(bound);
}

bool PreparedFloorsHeld()
{
    return state != nullptr && (pg_atomic_read_u64(&state->prepared_floor) != kNoPosition ||
                                pg_atomic_read_u64(&state->prepared_lease_floor) != kNoPosition);
}

uint64 PreparedFloorGeneration()
{
    return state ? pg_atomic_read_u64(&state->prepared_generation) : 0;
}

void LiftPreparedFloors(uint64 generation_seen)
{
    if (state == nullptr)
        return;
    LWLockAcquire(state->lock, LW_EXCLUSIVE);
    if (pg_atomic_read_u64(&state->prepared_generation) == generation_seen) {
        pg_atomic_write_u64(&state->prepared_floor, kNoPosition);
        pg_atomic_write_u64(&state->prepared_lease_floor, kNoPosition);
    }
    LWLockRelease(state->lock);
}

LaneView *ListLanes(int *n)
{
    *n = 0;
    if (state == nullptr)
        return nullptr;
    LWLockAcquire(state->lock, LW_SHARED);  // entries keep their identity meanwhile
    uint32 nqueues = pg_atomic_read_u32(&state->nqueues);
    LaneView *out = (LaneView *) palloc(sizeof(LaneView) * (nqueues * kLanes + 1));
    for (uint32 i = 0; i < nqueues; i++) {
        QueueCursors *q = &Queues()[i];
        if (!q->in_use || q->database != MyDatabaseId)
            continue;
        bool loaded = pg_atomic_read_u32(&q->loaded) != 0;
        for (int p = kMaxPriority; p >= kMinPriority; p--) {
            Lane *lane = LaneOf(q, p);
            uint64 max = pg_atomic_read_u64(&lane->max_position);
            uint64 cursor = pg_atomic_read_u64(&lane->cursor);
            if (max == 0 && cursor == 0)
                continue;
            out[*n] = {q->queue_id, p, (int64) cursor, (int64) max, loaded};
            (*n)++;
        }
    }
    LWLockRelease(state->lock);
    return out;
}

int32 *ListLoadedQueues(int *n)
{
    *n = 0;
    if (state == nullptr)
        return nullptr;
    LWLockAcquire(state->lock, LW_SHARED);
    uint32 nqueues = pg_atomic_read_u32(&state->nqueues);
    int32 *out = (int32 *) palloc(sizeof(int32) * (nqueues + 1));
    for (uint32 i = 0; i < nqueues; i++) {
        QueueCursors *q = &Queues()[i];
        if (q->in_use && q->database == MyDatabaseId && pg_atomic_read_u32(&q->loaded) != 0)
            out[(*n)++] = q->queue_id;
    }
    LWLockRelease(state->lock);
    return out;
}

bool GetCursorTableUsage(CursorTableUsage *usage)
{
    if (state == nullptr)
        return false;
    LWLockAcquire(state->lock, LW_SHARED);
    uint32 nqueues = pg_atomic_read_u32(&state->nqueues);
    usage->capacity = state->capacity;
    usage->in_use = 0;
    usage->this_database = 0;
    for (uint32 i = 0; i < nqueues; i++) {
        QueueCursors *q = &Queues()[i];
        if (!q->in_use)
            continue;
        usage->in_use++;
        if (q->database == MyDatabaseId)
            usage->this_database++;
    }
    usage->refusals = (int64) pg_atomic_read_u64(&state->refusals);
    LWLockRelease(state->lock);
    return true;
}

}  // namespace claimqueue

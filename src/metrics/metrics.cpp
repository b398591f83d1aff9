// Queue metrics in shared memory (see metrics.hpp; README.md beside this file).
#include "metrics/metrics.hpp"

extern "C" {
#include "access/twophase.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/lwlock.h"
#include "storage/spin.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
}

#include "pg/clock.hpp"
#include "pg/settings.hpp"
#include "pg/shared_memory.hpp"
#include "pg/statement.hpp"
#include "pg/subtransactions.hpp"

namespace claimqueue {
namespace {

enum Total { kEnqueued, kClaimed, kCompleted, kFailed, kReaped, kRetried, kCancelled };

// One queue's metrics. Taken and freed under the region's lock; its numbers
// change under its spinlock. A freed slot is taken again only once no
// committer is between its pre-commit and its commit on it.
struct MetricsSlot {
    Oid database;
    int32 queue_id;
    bool in_use;
    slock_t mutex;
    uint64 generation;           // changes at every free (a backend's cached pointer is stale)
    int in_commit;               // transactions between pre-commit and commit on this queue
    bool frozen;                 // a recount is reading: new committers wait at pre-commit
    int64 totals[kJobTotals];
    int64 ready;
    int64 running;
    TimestampTz counters_since;
    TimestampTz gauges_since;    // 0: never counted
    int64 done_id_bound;         // no done job of the queue has a greater id, once counted
};

struct MetricsState {
    LWLock *lock;
    int capacity;
    int used;                    // slots[] ever taken (high-water mark), under the lock
    pg_atomic_uint64 refusals;
    pg_atomic_uint32 full_logged;
    MetricsSlot slots[FLEXIBLE_ARRAY_MEMBER];
};

MetricsState *state = nullptr;

Size MetricsStateSize()
{
    return add_size(offsetof(MetricsState, slots),
                    mul_size(sizeof(MetricsSlot), (Size) metrics_queues));
}

void InitMetricsState(void *region, LWLock *lock)
{
    MetricsState *s = (MetricsState *) region;
    s->lock = lock;
    s->capacity = metrics_queues;
    s->used = 0;
    pg_atomic_init_u64(&s->refusals, 0);
    pg_atomic_init_u32(&s->full_logged, 0);
    for (int i = 0; i < s->capacity; i++)
        SpinLockInit(&s->slots[i].mutex);
}

const SharedRegion kMetricsRegion = {"claimqueue metrics", MetricsStateSize, InitMetricsState,
                                     (void **) &state};

bool Enabled()
{
    return state != nullptr && state->capacity > 0;
}

// --- This backend's transaction -------------------------------------------------

// The sums of one queue's transitions at one (sub)transaction level.
struct Delta {
    int32 queue_id;
    int level;
    int64 totals[kJobTotals];
    int64 ready;
    int64 running;
    int64 done_id_max;  // the greatest id this transaction moved to done; 0: none
};

// A queue this transaction entered at pre-commit: applied at commit.
struct Entered {
    MetricsSlot *slot;
    uint64 generation;
    bool in;  // counted in slot->in_commit
    Delta sum;
};

List *deltas = NIL;    // of Delta *, in TopTransactionContext
List *entered = NIL;   // of Entered *, in TopTransactionContext
List *free_notes = NIL;  // of FreeNote *, in TopTransactionContext

struct FreeNote {
    Oid database;
    int32 queue_id;  // 0: every queue of the database
};

// queue_id -> the slot last found for it in this database, with its generation.
struct LocalSlot {
    int32 queue_id;
    MetricsSlot *slot;
    uint64 generation;
};
HTAB *local_slots = nullptr;

Delta *DeltaFor(int32 queue_id)
{
    int level = GetCurrentTransactionNestLevel();
    ListCell *cell;
    foreach (cell, deltas) {
        Delta *d = (Delta *) lfirst(cell);
        if (d->queue_id == queue_id && d->level == level)
            return d;
    }
    MemoryContext caller = MemoryContextSwitchTo(TopTransactionContext);
    Delta *d = (Delta *) palloc0(sizeof(Delta));
    d->queue_id = queue_id;
    d->level = level;
    deltas = lappend(deltas, d);
    MemoryContextSwitchTo(caller);
    return d;
}

bool Holds(MetricsSlot *slot, int32 queue_id)
{
    return slot->in_use && slot->database == MyDatabaseId && slot->queue_id == queue_id;
}

// Says once (until a slot is freed) that a queue goes uncounted.
void NoteTableFull(int32 queue_id)
{
    pg_atomic_fetch_add_u64(&state->refusals, 1);
    if (pg_atomic_exchange_u32(&state->full_logged, 1) == 0)
        ereport(LOG,
                (errmsg("claimqueue: the table of queue metrics is full (%d queues); queue %d "
                        "is not counted", state->capacity, queue_id),
                 errdetail("queue_metrics shows NULL for queues without a slot."),
                 errhint("Raise claimqueue.metrics_queues and restart the server.")));
}

// The slot of (this database, queue_id), taking a free one when it has none
// and `take`; nullptr when the table is full. *generation set.
MetricsSlot *FindOrTake(int32 queue_id, bool take, uint64 *generation)
{
    LWLockAcquire(state->lock, take ? LW_EXCLUSIVE : LW_SHARED);
    MetricsSlot *found = nullptr;
    MetricsSlot *reusable = nullptr;
    for (int i = 0; i < state->used && found == nullptr; i++) {
        MetricsSlot *s = &state->slots[i];
        SpinLockAcquire(&s->mutex);
        if (Holds(s, queue_id))
            found = s;
        else if (!s->in_use && s->in_commit == 0 && !s->frozen && reusable == nullptr)
            reusable = s;
        SpinLockRelease(&s->mutex);
    }
    if (found == nullptr && take) {
        if (reusable == nullptr && state->used < state->capacity)
            reusable = &state->slots[state->used++];
        if (reusable != nullptr) {
            found = reusable;
            SpinLockAcquire(&found->mutex);
            found->database = MyDatabaseId;
            found->queue_id = queue_id;
            found->in_use = true;
            found->generation++;
            found->in_commit = 0;
            found->frozen = false;
            memset(found->totals, 0, sizeof(found->totals));
            found->ready = found->running = 0;
            found->counters_since = GetCurrentTimestamp();
            found->gauges_since = 0;
            found->done_id_bound = 0;
            SpinLockRelease(&found->mutex);
        }
    }
    if (found != nullptr) {
        SpinLockAcquire(&found->mutex);
        *generation = found->generation;
        SpinLockRelease(&found->mutex);
    }
    LWLockRelease(state->lock);
    if (found == nullptr && take)
        NoteTableFull(queue_id);
    return found;
}

// The slot of queue_id as this backend knows it, looked up again when the one
// it knew was freed. nullptr: none (the table was full, or !take and none).
MetricsSlot *SlotOf(int32 queue_id, bool take, uint64 *generation)
{
    if (local_slots == nullptr) {
        HASHCTL ctl;
        ctl.keysize = sizeof(int32);
        ctl.entrysize = sizeof(LocalSlot);
        ctl.hcxt = TopMemoryContext;
        local_slots = hash_create("claimqueue metrics", 64, &ctl,
                                  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
    }
    bool found;
    LocalSlot *local = (LocalSlot *) hash_search(local_slots, &queue_id, HASH_ENTER, &found);
    if (found && local->slot != nullptr) {
        SpinLockAcquire(&local->slot->mutex);
        bool current = local->slot->generation == local->generation && Holds(local->slot, queue_id);
        SpinLockRelease(&local->slot->mutex);
        if (current) {
            *generation = local->generation;
            return local->slot;
        }
    }
    local->slot = FindOrTake(queue_id, take, &local->generation);
    *generation = local->generation;
    return local->slot;
}

void AddInto(Delta *to, const Delta *from)
{
    for (int i = 0; i < kJobTotals; i++)
        to->totals[i] += from->totals[i];
    to->ready += from->ready;
    to->running += from->running;
    to->done_id_max = Max(to->done_id_max, from->done_id_max);
}

// Adds the sum to the slot; the caller holds its mutex.
void ApplyLocked(MetricsSlot *slot, const Delta *sum)
{
    for (int i = 0; i < kJobTotals; i++)
        slot->totals[i] += sum->totals[i];
    slot->ready += sum->ready;
    slot->running += sum->running;
    slot->done_id_bound = Max(slot->done_id_bound, sum->done_id_max);
}

// Every level's deltas summed per queue, in TopTransactionContext.
List *SumsPerQueue()
{
    MemoryContext caller = MemoryContextSwitchTo(TopTransactionContext);
    List *sums = NIL;
    ListCell *cell;
    foreach (cell, deltas) {
        const Delta *d = (const Delta *) lfirst(cell);
        Delta *sum = nullptr;
        ListCell *s;
        foreach (s, sums) {
            if (((Delta *) lfirst(s))->queue_id == d->queue_id)
                sum = (Delta *) lfirst(s);
        }
        if (sum == nullptr) {
            sum = (Delta *) palloc0(sizeof(Delta));
            sum->queue_id = d->queue_id;
            sums = lappend(sums, sum);
        }
        AddInto(sum, d);
    }
    MemoryContextSwitchTo(caller);
    return sums;
}

// Pre-commit: each queue's slot is entered (in_commit), waiting while a
// recount of it reads, so that a recount's snapshot either shows this
// transaction's changes (it waited for our commit) or not (we wait for it).
void EnterSlots()
{
    List *sums = SumsPerQueue();
    ListCell *cell;
    foreach (cell, sums) {
        Delta *sum = (Delta *) lfirst(cell);
        uint64 generation;
        MetricsSlot *slot = SlotOf(sum->queue_id, true, &generation);
        if (slot == nullptr)
            continue;  // not counted (the table is full)
        Entered *e = (Entered *) MemoryContextAlloc(TopTransactionContext, sizeof(Entered));
        e->slot = slot;
        e->generation = generation;
        e->in = false;
        e->sum = *sum;
        MemoryContext caller = MemoryContextSwitchTo(TopTransactionContext);
        entered = lappend(entered, e);
        MemoryContextSwitchTo(caller);
        for (;;) {
            SpinLockAcquire(&slot->mutex);
            // The bound rises before the commit makes the jobs done visible:
            // a reader never sees a done job above it (an abort leaves it high).
            if (slot->generation == generation)
                slot->done_id_bound = Max(slot->done_id_bound, sum->done_id_max);
            if (!slot->frozen) {
                slot->in_commit++;
                e->in = true;
                SpinLockRelease(&slot->mutex);
                break;
            }
            SpinLockRelease(&slot->mutex);
            pg_usleep(1000L);  // a recount takes its snapshot and counts
            CHECK_FOR_INTERRUPTS();
        }
    }
}

void LeaveSlots(bool apply)
{
    ListCell *cell;
    foreach (cell, entered) {
        Entered *e = (Entered *) lfirst(cell);
        if (!e->in)
            continue;
        SpinLockAcquire(&e->slot->mutex);
        if (apply && e->slot->generation == e->generation)
            ApplyLocked(e->slot, &e->sum);
        e->slot->in_commit--;
        SpinLockRelease(&e->slot->mutex);
    }
    entered = NIL;
}

// PREPARE TRANSACTION: applied now (the commit comes later, from another
// session, and calls nothing of ours).
void ApplyPrepared()
{
    List *sums = SumsPerQueue();
    ListCell *cell;
    foreach (cell, sums) {
        Delta *sum = (Delta *) lfirst(cell);
        uint64 generation;
        MetricsSlot *slot = SlotOf(sum->queue_id, true, &generation);
        if (slot == nullptr)
            continue;
        SpinLockAcquire(&slot->mutex);
        if (slot->generation == generation)
            ApplyLocked(slot, sum);
        SpinLockRelease(&slot->mutex);
    }
}

void FreeSlots(List *notes)
{
    LWLockAcquire(state->lock, LW_EXCLUSIVE);
    bool freed = false;
    ListCell *cell;
    foreach (cell, notes) {
        const FreeNote *note = (const FreeNote *) lfirst(cell);
        for (int i = 0; i < state->used; i++) {
            MetricsSlot *s = &state->slots[i];
            SpinLockAcquire(&s->mutex);
            if (s->in_use && s->database == note->database &&
                (note->queue_id == 0 || s->queue_id == note->queue_id)) {
                s->in_use = false;
                s->generation++;
                freed = true;
            }
            SpinLockRelease(&s->mutex);
        }
    }
    if (freed)
        pg_atomic_write_u32(&state->full_logged, 0);
    LWLockRelease(state->lock);
}

void NoteFreeAtCommit(Oid database, int32 queue_id)
{
    if (!Enabled())
        return;
    FreeNote *note = (FreeNote *) MemoryContextAlloc(TopTransactionContext, sizeof(FreeNote));
    note->database = database;
    note->queue_id = queue_id;
    MemoryContext caller = MemoryContextSwitchTo(TopTransactionContext);
    free_notes = lappend(free_notes, note);
    MemoryContextSwitchTo(caller);
}

}  // namespace

void RequestMetricsState()
{
    AddSharedRegion(&kMetricsRegion);
}

// DROP EXTENSION claimqueue and DROP DATABASE free the database's slots when
// they commit: a re-created extension's queue ids start at 1 again.
void MetricsAtDatabaseDrop(Oid database)
{
    if (Enabled())
        NoteFreeAtCommit(database, 0);
}

namespace {

// What `n` jobs making `transition` add to a transaction's deltas.
void AddTransition(Delta *d, Transition transition, int64 n)
{
    switch (transition) {
    case Transition::kEnqueue:
        d->totals[kEnqueued] += n;
        d->ready += n;
        break;
    case Transition::kClaim:
        d->totals[kClaimed] += n;
        d->ready -= n;
        d->running += n;
        break;
    case Transition::kComplete:
        d->totals[kCompleted] += n;
        d->running -= n;
        break;
    case Transition::kFailRetry:
        d->totals[kRetried] += n;
        d->running -= n;
        d->ready += n;
        break;
    case Transition::kSnooze:
        d->running -= n;
        d->ready += n;
        break;
    case Transition::kFailDead:
        d->totals[kFailed] += n;
        d->running -= n;
        break;
    case Transition::kReapRetry:
        d->totals[kReaped] += n;
        d->totals[kRetried] += n;
        d->running -= n;
        d->ready += n;
        break;
    case Transition::kReapDead:
        d->totals[kReaped] += n;
        d->totals[kFailed] += n;
        d->running -= n;
        break;
    case Transition::kRetry:
        d->totals[kRetried] += n;
        d->ready += n;
        break;
    case Transition::kCancelReady:
        d->totals[kCancelled] += n;
        d->ready -= n;
        break;
    case Transition::kCancelRunning:
        d->totals[kCancelled] += n;
        d->running -= n;
        break;
    }
}

}  // namespace

void CountTransition(int32 queue_id, Transition transition, int64 n)
{
    if (!Enabled() || n == 0)
        return;
    AddTransition(DeltaFor(queue_id), transition, n);
}

void CountCompletion(int32 queue_id, int64 job_id)
{
    if (!Enabled())
        return;
    Delta *d = DeltaFor(queue_id);
    AddTransition(d, Transition::kComplete, 1);
    d->done_id_max = Max(d->done_id_max, job_id);
}

void MetricsAtTransactionEnd(XactEvent event)
{
    if (!Enabled())
        return;
    switch (event) {
    case XACT_EVENT_PRE_COMMIT:
        if (deltas != NIL)
            EnterSlots();
        break;
    case XACT_EVENT_COMMIT:
        LeaveSlots(true);
        if (free_notes != NIL)
            FreeSlots(free_notes);
        deltas = NIL;
        free_notes = NIL;
        break;
    case XACT_EVENT_PREPARE:
        if (deltas != NIL)
            ApplyPrepared();
        deltas = NIL;
        entered = NIL;
        free_notes = NIL;  // a prepared drop frees nothing: its slot shows the dropped queue's last counts
        break;
    case XACT_EVENT_ABORT:
        LeaveSlots(false);
        deltas = NIL;
        free_notes = NIL;
        break;
    default:
        break;
    }
}

void MetricsAtSubtransactionEnd(SubXactEvent event)
{
    if (deltas != NIL)
        deltas = EntriesAfterSubtransaction<Delta>(deltas, event);
}

void FreeQueueMetricsAtCommit(int32 queue_id)
{
    NoteFreeAtCommit(MyDatabaseId, queue_id);
}

namespace {

// Index-only counts: the ready jobs from jobs_ready_idx and jobs_scheduled_idx,
// the running ones from jobs_running_idx (every running job has a lease); and
// the greatest job id (one entry of jobs_pkey), the first bound of the ids of
// the queue's done jobs: every job done before the count is at most it.
Statement kCountLive = {
    "SELECT (SELECT count(*) FROM claimqueue.jobs"
    "        WHERE queue_id = $1 AND state = 'ready' AND pos IS NOT NULL)"
    "     + (SELECT count(*) FROM claimqueue.jobs"
    "        WHERE queue_id = $1 AND state = 'ready' AND pos IS NULL),"
    "       (SELECT count(*) FROM claimqueue.jobs"
    "        WHERE state = 'running' AND lease_expires_at IS NOT NULL AND queue_id = $1)"
    "     + (SELECT count(*) FROM claimqueue.jobs"
    "        WHERE state = 'running' AND lease_expires_at IS NULL AND queue_id = $1),"
    "       (SELECT coalesce(max(id), 0) FROM claimqueue.jobs)",
    1, {INT4OID}, nullptr};

Statement kQueueIds = {"SELECT queue_id FROM claimqueue.queues ORDER BY queue_id", 0, {},
                       nullptr};

Statement kPreparedHere = {
    "SELECT count(*) FROM pg_catalog.pg_prepared_xacts"
    " WHERE database = pg_catalog.current_database()",
    0, {}, nullptr};

void Unfreeze(MetricsSlot *slot)
{
    SpinLockAcquire(&slot->mutex);
    slot->frozen = false;
    SpinLockRelease(&slot->mutex);
}

}  // namespace

bool RecountQueueMetrics(int32 queue_id, QueueJobsWhere where)
{
    if (!Enabled())
        return false;
    if (deltas != NIL)
        ereport(ERROR,
                (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                 errmsg("cannot recount queue metrics in a transaction that changed jobs"),
                 errhint("Recount in a transaction of its own.")));
    // The count's table lock first, before any committer waits on us: one
    // that holds a lock conflicting with it (a TRUNCATE, a LOCK TABLE) is
    // waited for here, never while it waits for the freeze to end.
    Oid jobs = get_relname_relid("jobs", get_namespace_oid("claimqueue", false));
    if (!OidIsValid(jobs))
        elog(ERROR, "claimqueue: relation claimqueue.jobs does not exist");
    const char *route = nullptr;
    bool here = true;
    if (where != nullptr) {
        Oid holder = jobs;
        here = where(queue_id, &holder, &route);
        if (here && holder != jobs)
            LockRelationOid(holder, AccessShareLock);
    }
    LockRelationOid(jobs, AccessShareLock);
    uint64 generation;
    MetricsSlot *slot = SlotOf(queue_id, true, &generation);
    if (slot == nullptr)
        return false;
    SpinLockAcquire(&slot->mutex);
    bool busy = slot->frozen || slot->generation != generation;
    if (!busy)
        slot->frozen = true;
    SpinLockRelease(&slot->mutex);
    if (busy)
        return false;
    int64 ready = 0, running = 0, newest_id = 0;
    PG_TRY();
    {
        // Every committer already past pre-commit finishes; new ones wait.
        for (;;) {
            SpinLockAcquire(&slot->mutex);
            int in_commit = slot->in_commit;
            SpinLockRelease(&slot->mutex);
            if (in_commit == 0)
                break;
            pg_usleep(1000L);
            CHECK_FOR_INTERRUPTS();
        }
        // The count's snapshot shows every transaction that changed the
        // queue's slot so far, and none that will.
        if (here) {
            ConnectSpi();
            const char *previous = route != nullptr ? RouteJobsTo(route) : nullptr;
            char *restore = previous != nullptr ? pstrdup(previous) : nullptr;
            Datum args[1] = {Int32GetDatum(queue_id)};
            Execute(&kCountLive, args, nullptr, 1);
            ready = DatumGetInt64(ResultValue(0, 1));
            running = DatumGetInt64(ResultValue(0, 2));
            newest_id = DatumGetInt64(ResultValue(0, 3));
            if (route != nullptr)
                (void) RouteJobsTo(restore);
            FinishSpi();
        }
    }
    PG_CATCH();
    {
        Unfreeze(slot);
        PG_RE_THROW();
    }
    PG_END_TRY();
    SpinLockAcquire(&slot->mutex);
    if (slot->generation == generation) {
        // Every job done before the count (those of a previous server run,
        // rows written by hand) has an id of at most newest_id; completions
        // since the slot was taken are in the bound already (pre-commit).
        slot->done_id_bound = Max(slot->done_id_bound, newest_id);
        slot->ready = ready;
        slot->running = running;
        slot->gauges_since = GetCurrentTimestamp();
    }
    slot->frozen = false;
    SpinLockRelease(&slot->mutex);
    return true;
}

int64 RecountQueues(bool uncounted_only, QueueJobsWhere where)
{
    if (!Enabled())
        return 0;
    ConnectSpi();
    if (max_prepared_xacts > 0) {
        Execute(&kPreparedHere, nullptr, nullptr, 1);
        if (DatumGetInt64(ResultValue(0, 1)) > 0) {
            FinishSpi();
            return 0;  // next pass
        }
    }
    uint64 n = Execute(&kQueueIds, nullptr, nullptr);
    int32 *ids = (int32 *) palloc(sizeof(int32) * (n + 1));
    for (uint64 i = 0; i < n; i++)
        ids[i] = DatumGetInt32(ResultValue(i, 1));
    int64 recounted = 0;
    for (uint64 i = 0; i < n; i++) {
        uint64 generation;
        MetricsSlot *slot = SlotOf(ids[i], true, &generation);
        if (slot == nullptr)
            continue;
        SpinLockAcquire(&slot->mutex);
        bool counted = slot->gauges_since != 0;
        SpinLockRelease(&slot->mutex);
        if ((!counted || !uncounted_only) && RecountQueueMetrics(ids[i], where))
            recounted++;
    }
    FinishSpi();
    return recounted;
}

bool ReadQueueMetrics(int32 queue_id, QueueMetrics *out)
{
    if (!Enabled())
        return false;
    uint64 generation;
    MetricsSlot *slot = SlotOf(queue_id, false, &generation);
    if (slot == nullptr)
        return false;
    SpinLockAcquire(&slot->mutex);
    bool current = slot->generation == generation && Holds(slot, queue_id);
    if (current) {
        memcpy(out->totals, slot->totals, sizeof(out->totals));
        out->ready = slot->ready;
        out->running = slot->running;
        out->counters_since = slot->counters_since;
        out->gauges_since = slot->gauges_since;
        out->done_id_bound = slot->done_id_bound;
    }
    SpinLockRelease(&slot->mutex);
    return current;
}

}  // namespace claimqueue

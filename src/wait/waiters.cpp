// The waiter registry (see waiters.hpp and README.md).
#include "wait/waiters.hpp"

#include "pg/settings.hpp"
#include "pg/shared_memory.hpp"

extern "C" {
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
}

#include "pg/errors.h"

namespace claimqueue {

namespace {

struct Waiter {
    pid_t pid;                // 0: the slot is free
    Oid database;
    bool awaits_jobs;         // await_jobs(): waits for `jobs`, not for a queue
    char queue[NAMEDATALEN];  // queue names are at most 63 bytes
    Latch *latch;
    bool woken;               // woken to look and has not looked since
    bool counted;             // ... for a job a commit announced (else: more may be ready)
    TimestampTz deadline;     // its wait ends then (claimqueue's clock)
    TimestampTz timer_at;     // 0, or: wakes then for the queue's earliest due job
    TimestampTz since;        // when it registered (real time)
    int64 wakeups;            // latch sets by wakers (jobs, timers, hand-overs)
    JobFilter jobs;           // await_jobs(): the jobs whose finishing wakes it
};

struct WaiterState {
    LWLock *lock;                 // guards the slots
    pg_atomic_uint32 registered;  // waiters in all slots: commits skip the lock at 0
    pg_atomic_uint32 awaiting;    // ... of them in await_jobs(): finishing commits skip it at 0
    int nslots;
    Waiter slots[FLEXIBLE_ARRAY_MEMBER];
};

WaiterState *state = nullptr;
int my_slot = -1;
bool exit_callback_registered = false;

Size StateSize()
{
    return add_size(offsetof(WaiterState, slots), mul_size(sizeof(Waiter), (Size) max_waiters));
}

void InitState(void *region, LWLock *lock)
{
    WaiterState *w = (WaiterState *) region;
    w->lock = lock;
    pg_atomic_init_u32(&w->registered, 0);
    pg_atomic_init_u32(&w->awaiting, 0);
    w->nslots = max_waiters;
}

const SharedRegion kWaiterRegion = {"claimqueue_waiters", StateSize, InitState,
                                    (void **) &state};

bool SameQueue(const Waiter *w, Oid database, const char *queue)
{
    return w->pid != 0 && !w->awaits_jobs && w->database == database &&
           strcmp(w->queue, queue) == 0;
}

bool SharesAJob(const JobFilter *a, const JobFilter *b)
{
    for (int i = 0; i < kJobFilterBits / 64; i++)
        if ((a->words[i] & b->words[i]) != 0)
            return true;
    return false;
}

// Wakes one waiter of the queue that has no wake-up pending; the caller holds
// the lock. `unless_pending`: do nothing if some waiter already has one.
// `counted`: the wake-up stands for one announced job.
void WakeOneLocked(Oid database, const char *queue, int except, bool unless_pending,
                   bool counted)
{
    Waiter *chosen = nullptr;
    for (int i = 0; i < state->nslots; i++) {
        Waiter *w = &state->slots[i];
        if (i == except || !SameQueue(w, database, queue))
            continue;
        if (w->woken) {
            if (unless_pending)
                return;
        } else if (chosen == nullptr) {
            chosen = w;
        }
    }
    if (chosen != nullptr) {
        chosen->woken = true;
        chosen->counted = counted;
        chosen->wakeups++;
        SetLatch(chosen->latch);
    }
}

void DeregisterAtExit(int, Datum)
{
    DeregisterWaiter(false);
}

}  // namespace

void RequestWaiterState()
{
    AddSharedRegion(&kWaiterRegion);
}

bool WaitersAvailable()
{
    return state != nullptr;
}

namespace {

// Takes a free slot for this backend (my_slot; stays -1 when none is free)
// and returns the number of slots. `jobs` nullptr: a waiter of `queue`.
int TakeSlot(const char *queue, const JobFilter *jobs, TimestampTz deadline)
{
    Assert(state != nullptr && my_slot < 0);
    if (!exit_callback_registered) {
        before_shmem_exit(DeregisterAtExit, 0);
        exit_callback_registered = true;
    }
    LWLockAcquire(state->lock, LW_EXCLUSIVE);
    for (int i = 0; i < state->nslots; i++) {
        Waiter *w = &state->slots[i];
        if (w->pid != 0)
            continue;
        w->pid = MyProcPid;
        w->database = MyDatabaseId;
        w->awaits_jobs = jobs != nullptr;
        strlcpy(w->queue, queue, sizeof(w->queue));
        if (jobs != nullptr)
            w->jobs = *jobs;
        w->latch = MyLatch;
        w->woken = false;
        w->counted = false;
        w->deadline = deadline;
        w->timer_at = 0;
        w->since = GetCurrentTimestamp();
        w->wakeups = 0;
        my_slot = i;
        break;
    }
    int nslots = state->nslots;
    LWLockRelease(state->lock);
    return nslots;
}

// Full barrier: a commit that reads the count after this sees our slot.
void Registered(bool awaits_jobs)
{
    pg_atomic_fetch_add_u32(awaits_jobs ? &state->awaiting : &state->registered, 1);
}

}  // namespace

void RegisterWaiter(const char *queue, TimestampTz deadline)
{
    int nslots = TakeSlot(queue, nullptr, deadline);
    if (nslots == 0)
        ereport(ERROR,
                (errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
                 errmsg("cannot wait on queue \"%s\": claimqueue.max_waiters is 0", queue),
                 errhint("Set claimqueue.max_waiters above 0 and restart the server, or call "
                         "dequeue_wait() with wait => '0' and poll.")));
    if (my_slot < 0)
        ereport(ERROR,
                (errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
                 errmsg("cannot wait on queue \"%s\": all %d waiter slots are taken", queue,
                        nslots),
                 errdetail("claimqueue.max_waiters workers can wait at once in the whole "
                           "cluster."),
                 errhint("Raise claimqueue.max_waiters and restart the server, or call "
                         "dequeue_wait() with wait => '0' and poll.")));
    Registered(false);
}

void RegisterJobWaiter(const JobFilter *jobs, TimestampTz deadline)
{
    int nslots = TakeSlot("", jobs, deadline);
    if (nslots == 0)
        ereport(ERROR,
                (errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
                 errmsg("await_jobs() cannot wait: claimqueue.max_waiters is 0"),
                 errhint("Set claimqueue.max_waiters above 0 and restart the server, or call "
                         "await_jobs() with timeout => '0' and poll.")));
    if (my_slot < 0)
        ereport(ERROR,
                (errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
                 errmsg("await_jobs() cannot wait: all %d waiter slots are taken", nslots),
                 errdetail("claimqueue.max_waiters sessions can wait at once in the whole "
                           "cluster, in dequeue_wait() and await_jobs() together."),
                 errhint("Raise claimqueue.max_waiters and restart the server, or call "
                         "await_jobs() with timeout => '0' and poll.")));
    Registered(true);
}

void AddToJobFilter(JobFilter *filter, int64 id)
{
    // Fibonacci hashing: consecutive ids land on bits far apart.
    uint64 bit = ((uint64) id * UINT64CONST(0x9E3779B97F4A7C15)) >> (64 - 12);
    static_assert(kJobFilterBits == 1 << 12, "the hash keeps 12 bits");
    filter->words[bit / 64] |= UINT64CONST(1) << (bit % 64);
}

void JobWaiterLooks(const JobFilter *all)
{
    LWLockAcquire(state->lock, LW_EXCLUSIVE);
    Waiter *me = &state->slots[my_slot];
    me->jobs = *all;
    me->woken = false;
    LWLockRelease(state->lock);
}

void JobWaiterWatches(const JobFilter *unfinished)
{
    LWLockAcquire(state->lock, LW_EXCLUSIVE);
    state->slots[my_slot].jobs = *unfinished;
    LWLockRelease(state->lock);
}

void WakeJobWaiters(Oid database, const JobFilter *finished)
{
    if (state == nullptr)
        return;
    pg_memory_barrier();  // pairs with the fetch_add in Registered
    if (pg_atomic_read_u32(&state->awaiting) == 0)
        return;
    LWLockAcquire(state->lock, LW_EXCLUSIVE);
    for (int i = 0; i < state->nslots; i++) {
        Waiter *w = &state->slots[i];
        if (w->pid != 0 && w->awaits_jobs && w->database == database && !w->woken &&
            SharesAJob(&w->jobs, finished)) {
            w->woken = true;
            w->wakeups++;
            SetLatch(w->latch);
        }
    }
    LWLockRelease(state->lock);
}

bool WaiterLooks()
{
    LWLockAcquire(state->lock, LW_EXCLUSIVE);
    bool counted = state->slots[my_slot].woken && state->slots[my_slot].counted;
    state->slots[my_slot].woken = false;
    state->slots[my_slot].counted = false;
    LWLockRelease(state->lock);
    return counted;
}

TimestampTz WaiterSleepUntil(TimestampTz next_due)
{
    LWLockAcquire(state->lock, LW_EXCLUSIVE);
    Waiter *me = &state->slots[my_slot];
    me->timer_at = 0;
    TimestampTz until = me->deadline;
    if (next_due != 0 && next_due < me->deadline) {
        bool taken = false;
        for (int i = 0; i < state->nslots && !taken; i++) {
            const Waiter *w = &state->slots[i];
            taken = i != my_slot && SameQueue(w, me->database, me->queue) && w->timer_at != 0 &&
                    w->timer_at <= next_due;
        }
        if (!taken) {
            me->timer_at = next_due;
            until = next_due;
        }
    }
    LWLockRelease(state->lock);
    return until;
}

void DeregisterWaiter(bool uncounted_full_batch)
{
    if (state == nullptr || my_slot < 0)
        return;
    LWLockAcquire(state->lock, LW_EXCLUSIVE);
    Waiter *me = &state->slots[my_slot];
    // A wake-up for jobs is this waiter's alone: nothing to pass on.
    bool unused_wakeup = !me->awaits_jobs && (me->woken || me->timer_at != 0);
    bool unused_count = me->woken && me->counted;
    bool awaited_jobs = me->awaits_jobs;
    uncounted_full_batch = uncounted_full_batch && !awaited_jobs;
    Oid database = me->database;
    char queue[NAMEDATALEN];
    strlcpy(queue, me->queue, sizeof(queue));
    me->pid = 0;
    me->awaits_jobs = false;
    me->latch = nullptr;
    me->woken = false;
    me->timer_at = 0;
    if (unused_wakeup || uncounted_full_batch)
        WakeOneLocked(database, queue, my_slot, !unused_wakeup, unused_count);
    my_slot = -1;
    LWLockRelease(state->lock);
    pg_atomic_fetch_sub_u32(awaited_jobs ? &state->awaiting : &state->registered, 1);
}

void WakeWaiters(Oid database, const char *queue, int64 n, TimestampTz due, TimestampTz now)
{
    if (state == nullptr || n <= 0)
        return;
    pg_memory_barrier();  // pairs with the fetch_add in Registered
    if (pg_atomic_read_u32(&state->registered) == 0)
        return;
    LWLockAcquire(state->lock, LW_EXCLUSIVE);
    if (due <= now) {
        for (int i = 0; i < state->nslots && n > 0; i++) {
            Waiter *w = &state->slots[i];
            if (SameQueue(w, database, queue) && !w->woken) {
                w->woken = true;
                w->counted = true;
                w->wakeups++;
                SetLatch(w->latch);
                n--;
            }
        }
    } else {
        // One timer per queue, held by the waiter that wakes first: keep it if
        // it is due no later than this job, else move it to a waiter that is
        // still waiting then (the current holder first).
        Waiter *chosen = nullptr;
        bool covered = false;
        for (int i = 0; i < state->nslots && !covered; i++) {
            Waiter *w = &state->slots[i];
            if (!SameQueue(w, database, queue))
                continue;
            if (w->timer_at != 0 && w->timer_at <= due)
                covered = true;
            else if (w->deadline > due && (chosen == nullptr || w->timer_at != 0))
                chosen = w;
        }
        if (!covered && chosen != nullptr) {
            chosen->timer_at = due;
            chosen->wakeups++;
            SetLatch(chosen->latch);
        }
    }
    LWLockRelease(state->lock);
}

void ListWaiters(Tuplestorestate *out, TupleDesc desc)
{
    if (state == nullptr)
        return;
    LWLockAcquire(state->lock, LW_SHARED);
    int n = 0;
    Waiter *copy = (Waiter *) palloc(sizeof(Waiter) * Max(state->nslots, 1));
    for (int i = 0; i < state->nslots; i++)
        if (state->slots[i].pid != 0 && state->slots[i].database == MyDatabaseId)
            copy[n++] = state->slots[i];
    LWLockRelease(state->lock);
    for (int i = 0; i < n; i++) {
        Datum values[6] = {Int32GetDatum(copy[i].pid), CStringGetTextDatum(copy[i].queue),
                           TimestampTzGetDatum(copy[i].since),
                           TimestampTzGetDatum(copy[i].deadline),
                           TimestampTzGetDatum(copy[i].timer_at), Int64GetDatum(copy[i].wakeups)};
        bool nulls[6] = {false, copy[i].awaits_jobs, false, false, copy[i].timer_at == 0, false};
        tuplestore_putvalues(out, desc, values, nulls);
    }
}

}  // namespace claimqueue

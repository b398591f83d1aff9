// Waiting dequeue: the registry of sleeping workers in shared memory and the
// rules that decide whom a newly ready job wakes (README.md beside this file).
// Exists only when the library is in shared_preload_libraries.
#pragma once

#include "pg/pg.hpp"

namespace claimqueue {

// Installs the shared-memory hooks of the registry; from _PG_init while preloading.
void RequestWaiterState();

// True when the registry exists (the library was preloaded).
bool WaitersAvailable();

// Registers this backend as a waiter of `queue` in this database until
// `deadline` (claimqueue's clock). Raises 53400 when all claimqueue.max_waiters
// slots are taken. A backend is at most one waiter.
void RegisterWaiter(const char *queue, TimestampTz deadline);

// Called before each claim attempt: the waiter is about to look, so a wake-up
// it got has been used; it may be woken again from now on. True when it had
// been woken for a counted job (an enqueue or reaper commit) since it last looked.
bool WaiterLooks();

// After a claim attempt found nothing: records that the queue's next ready job
// is due at `next_due` (0: none known) and returns when this waiter should wake
// at the latest. One waiter per queue keeps the timer of the earliest due job;
// the others sleep until their deadline or a wake-up.
TimestampTz WaiterSleepUntil(TimestampTz next_due);

// Leaves the registry. A waiter that got a wake-up it did not use, or that held
// the queue's timer, passes the wake-up on to another waiter of the queue; so
// does one that claimed a full batch without a counted wake-up (more jobs may
// be ready that no commit announced) unless another waiter has one pending.
// Safe to call when not registered.
void DeregisterWaiter(bool uncounted_full_batch);

// The waiters of this database, for claimqueue.waiters(): one row each
// (pid, queue, since, deadline, timer_at, wakeups) appended to `out`.
void ListWaiters(Tuplestorestate *out, TupleDesc desc);

// Wakes waiters of `queue` in this database for `n` jobs that became ready
// (due at `due`, claimqueue's clock): due now, up to n waiters not already
// woken; due later, one waiter takes the timer unless one with an earlier or
// equal timer exists. Never raises (runs in a commit callback).
void WakeWaiters(Oid database, const char *queue, int64 n, TimestampTz due, TimestampTz now);

}  // namespace claimqueue

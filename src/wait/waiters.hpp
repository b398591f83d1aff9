// Waiting dequeue: the registry of sleeping workers in shared memory and the
// rules that decide whom a newly ready job wakes (README.md beside this file).
// Exists only when the library is in shared_preload_libraries.
#pragma once

#include "pg/pg.hpp"

namespace claimqueue {

// A set of job ids as a fixed bitmap of their hashes: what an await_jobs()
// waiter waits for, and what a transaction finished. Two filters that share
// a bit may share no job: a waiter then wakes for nothing, looks, and sleeps
// again; a job in both always shares its bit, so no wake-up is missed.
constexpr int kJobFilterBits = 4096;
struct JobFilter {
    uint64 words[kJobFilterBits / 64];
};
void AddToJobFilter(JobFilter *filter, int64 id);

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

// --- await_jobs(): waiting for jobs to finish, in the same slots ---------------

// Registers this backend as waiting in this database until `deadline` for the
// jobs in `jobs` (their finishing commits wake it). Raises 53400 as
// RegisterWaiter does.
void RegisterJobWaiter(const JobFilter *jobs, TimestampTz deadline);

// Before each look: from now on a finishing commit of any job in `all` (every
// job awaited) wakes it, and any wake-up it got is used.
void JobWaiterLooks(const JobFilter *all);

// After a look that found jobs unfinished: only the commits that finish one
// of `unfinished` wake it from now on (the jobs seen finished need none).
void JobWaiterWatches(const JobFilter *unfinished);

// At commit: wakes every waiter of this database that awaits a job in
// `finished`. Never raises (runs in a commit callback).
void WakeJobWaiters(Oid database, const JobFilter *finished);

// The waiters of this database, for claimqueue.waiters(): one row each
// (pid, queue, since, deadline, timer_at, wakeups) appended to `out`; queue
// is NULL for a waiter in await_jobs().
void ListWaiters(Tuplestorestate *out, TupleDesc desc);

// Wakes waiters of `queue` in this database for `n` jobs that became ready
// (due at `due`, claimqueue's clock): due now, up to n waiters not already
// woken; due later, one waiter takes the timer unless one with an earlier or
// equal timer exists. Never raises (runs in a commit callback).
void WakeWaiters(Oid database, const char *queue, int64 n, TimestampTz due, TimestampTz now);

}  // namespace claimqueue

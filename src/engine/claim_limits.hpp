// Concurrency limits at claim time (0.5.0): a queue's max_running (jobs
// running at once in the queue) and max_running_per_key (per concurrency
// key). A claim of a limited queue opens a gate, asks it about each job
// before locking the job, tells it of each job claimed, and closes it.
//
// Exactness: the running jobs are counted under a lock (the queue's for
// max_running, the key's for max_running_per_key, also under the queue's, so
// claims that read settings from either side of an alter_queue() exclude
// each other on a key) with a dirty snapshot, which shows the running
// versions of claims still in progress as well as committed ones. A claimer
// writes its running versions before it releases the lock, so the next
// holder counts them whether or not they have committed; completions and
// reaps only lower the count, and one in progress still counts. So no commit
// order can leave more jobs running than the limit. The locks are held only
// for the claim call, not to the end of the transaction. A count is kept in
// shared memory as an upper bound that each claim adds to after writing its
// jobs and that nothing lowers, so a claim counts only when that bound has
// reached the limit; only a transaction that has written nothing keeps its
// count, since one that finished a job does not see that job, which the
// others still count until it commits (claim_limits.cpp).
#pragma once

#include "pg/pg.hpp"

namespace claimqueue {

struct JobRows;
struct LimitGate;
struct QueueFacts;

// Adds the bounds of the running jobs kept between claims to shared memory;
// from _PG_init while preloading (without it every limited claim counts).
void RequestLimitState();

// The gate of a claim of queue `facts->queue_id`, or nullptr when the queue has
// no limit (a claim then pays nothing more) or the tables predate 0.5.0.
// With max_running, waits for the queue's limit lock and reads the bound of
// its running jobs (counting them when it has reached the limit).
LimitGate *OpenLimitGate(JobRows *rows, const QueueFacts *facts);

// True when no job of the queue may be claimed by this call any more.
bool GateFull(const LimitGate *gate);

// Whether a job with concurrency key `key` (nullptr: none) may be claimed now;
// *slot is what NoteGateClaim needs. The first job of a key takes the key's
// lock without waiting (a key another claim holds is passed over for this
// call) and reads the bound of the key's running jobs, as OpenLimitGate.
bool AdmitToGate(LimitGate *gate, JobRows *rows, text *key, int *slot);

// A job admitted with `slot` was claimed.
void NoteGateClaim(LimitGate *gate, int slot);

// Releases the gate's locks (the claim's running versions are written).
void CloseLimitGate(LimitGate *gate);

}  // namespace claimqueue

// Commit-time notices of jobs that became ready: enqueue, the lease pass,
// fail() with a retry and retry() record them during the transaction; once it
// commits, the queue's waiters are woken (and, with claimqueue.notify, NOTIFY
// cq_<queue> is sent). Nothing happens on rollback, and a rolled-back
// subtransaction takes its notices along.
//
// Likewise for jobs that finished (done, failed, cancelled): once the
// transaction commits, the sessions in await_jobs() that wait for them wake.
#pragma once

#include "pg/pg.hpp"

namespace claimqueue {

// `n` jobs of `queue` became ready, the earliest due at `due` (claimqueue's clock).
void NoteJobsReady(const char *queue, int64 n, TimestampTz due);

// Job `id` finished (complete, fail or the lease pass to failed, cancel). Costs
// one bit in a per-transaction filter (waiters.hpp, JobFilter); a job finished
// in a subtransaction that rolls back keeps its bit: the waiter it wakes looks,
// sees the job unfinished, and sleeps again.
void NoteJobFinished(int64 id);

// Unfinished jobs were deleted (drop_queue with force): at commit every
// await_jobs() waiter of this database wakes and looks.
void NoteUnfinishedJobsGone();

// At the end of every (sub)transaction (the session module calls them): a
// commit wakes the waiters (and sends the NOTIFYs just before it); an abort
// drops the notices, a subtransaction's abort only its own.
void ReadyNoticesAtTransactionEnd(XactEvent event);
void ReadyNoticesAtSubtransactionEnd(SubXactEvent event);

// The LISTEN channel of a queue: cq_<queue>, shortened with a hash when that
// would not fit in an identifier. Writes into `out` (NAMEDATALEN bytes).
void QueueChannel(const char *queue, char *out);

}  // namespace claimqueue

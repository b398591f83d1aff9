// Commit-time notices of jobs that became ready: enqueue, the lease pass,
// fail() with a retry and retry() record them during the transaction; once it
// commits, the queue's waiters are woken (and, with claimqueue.notify, NOTIFY
// cq_<queue> is sent). Nothing happens on rollback, and a rolled-back
// subtransaction takes its notices along.
#pragma once

#include "pg/pg.hpp"

namespace claimqueue {

// `n` jobs of `queue` became ready, the earliest due at `due` (claimqueue's clock).
void NoteJobsReady(const char *queue, int64 n, TimestampTz due);

// At the end of every (sub)transaction (the session module calls them): a
// commit wakes the waiters (and sends the NOTIFYs just before it); an abort
// drops the notices, a subtransaction's abort only its own.
void ReadyNoticesAtTransactionEnd(XactEvent event);
void ReadyNoticesAtSubtransactionEnd(SubXactEvent event);

// The LISTEN channel of a queue: cq_<queue>, shortened with a hash when that
// would not fit in an identifier. Writes into `out` (NAMEDATALEN bytes).
void QueueChannel(const char *queue, char *out);

}  // namespace claimqueue

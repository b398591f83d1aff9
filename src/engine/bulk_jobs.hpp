// Dead letters in bulk: retry_jobs() and cancel_jobs(). Each reads its
// candidates through one cursor (one scan, with the snapshot of the call's
// start: jobs that fail or are enqueued meanwhile are left out) that locks
// them as they are fetched, SKIP LOCKED, and changes them in statements of at
// most kBulkBatch jobs, all in the caller's transaction.
#pragma once

#include "pg/pg.hpp"

namespace claimqueue {

constexpr int kBulkBatch = 1000;

// Puts the queue's jobs in `states` (a text[] of 'failed' and 'cancelled')
// that finished before *finished_before (nullptr: whenever) back to ready, at
// most `max_jobs` of them (0: all), as retry() does one job, but with a fresh
// budget of attempts: max_attempts becomes attempt + the queue's
// max_attempts (`attempt`, the fencing token, never goes down). A job whose
// dedup_key a live job holds is left as it is (a NOTICE counts them), and of
// several with one key only the first is retried. Raises QC001 for an unknown
// queue. The queue's waiters wake at commit. Returns how many were retried.
int64 RetryJobs(text *queue, Datum states, const TimestampTz *finished_before, int64 max_jobs);

// Cancels the queue's jobs in `states` (a text[] of 'ready' and 'running')
// created before *created_before (nullptr: whenever), at most `max_jobs` (0:
// all), as cancel() does one job: a cancelled running job's worker gets
// QC003 from complete(), fail() and heartbeat(). Returns how many.
int64 CancelJobs(text *queue, Datum states, const TimestampTz *created_before, int64 max_jobs);

}  // namespace claimqueue

// The claim engine: the job state machine behind dequeue, complete, fail,
// heartbeat, retry, cancel and reap. Every transition out of `running` names
// the attempt it belongs to (the fencing token) and changes nothing when the
// job is no longer running under it.
#pragma once

#include "pg/pg.hpp"

namespace claimqueue {

// Claims up to `batch` ready jobs of `queue`, each locked with SKIP LOCKED
// semantics and marked running (job_rows.hpp: no SPI, no planner); appends
// one row per job to `out` (columns as dequeue() returns them, `out_desc`).
// `lease` may be NULL (queue default). With `release_on_disconnect` each job
// also carries this session's owner token (owners/owners.hpp), so the reaper
// returns it once the session has ended; raises 55000 without the preload or
// on a database whose jobs table lacks owner_session (not yet updated).
uint64 ClaimJobs(text *queue, text *worker, int32 batch, Interval *lease,
                 bool release_on_disconnect, Tuplestorestate *out, TupleDesc out_desc);

// When the next ready job of `queue` is due (its earliest run_at), in *due;
// false when the queue has no ready job or is paused. Raises QC001 for an
// unknown queue.
bool NextDue(text *queue, TimestampTz *due);

// Marks job `id` done under `attempt`, storing `result` (jsonb; nullptr:
// none) in the same row update. Waiters for the job wake at commit.
void CompleteJob(int64 id, int32 attempt, struct varlena *result);

// One job's completion and the next claim in one call (and one SPI
// connection): completes job *id under `attempt` exactly as CompleteJob does,
// raising (QC003 when stale) before anything is claimed, then claims as
// ClaimJobs does. `id` NULL: nothing to complete, only the claim.
uint64 CompleteAndClaimJobs(const int64 *id, int32 attempt, struct varlena *result,
                            text *queue, text *worker, int32 batch, Interval *lease,
                            bool release_on_disconnect, Tuplestorestate *out,
                            TupleDesc out_desc);

// Completes every (ids[i], attempts[i]) in one statement, all or nothing: if
// any job is not running under its attempt, raises as CompleteJob would for
// the first such job and the statement changes nothing. Ids are distinct.
// `results`: nullptr, or n results (an element nullptr: none).
void CompleteJobs(int n, const int64 *ids, const int32 *attempts,
                  struct varlena *const *results);

// Returns "ready" (retried after a backoff or `retry_in`) or "failed" (the
// attempts are used up, or `retryable` is false). The attempt's error and
// `detail` (a jsonb object; nullptr: none) are appended to the job's error
// history (jobs.errors) when the table has it.
const char *FailJob(int64 id, int32 attempt, text *error, Interval *retry_in, bool retryable,
                    Jsonb *detail);

// A running job back to ready at now + `delay` without spending an attempt:
// its max_attempts grows by one, so the attempt counter (the fencing token)
// still only goes up. Raises as FailJob does when `attempt` no longer holds
// it. Returns the new run_at.
TimestampTz SnoozeJob(int64 id, int32 attempt, Interval *delay);

TimestampTz HeartbeatJob(int64 id, int32 attempt, Interval *extend);

void RetryJob(int64 id, Datum run_at, bool run_at_null);

void CancelJob(int64 id);

// When a job whose attempt `attempts_made` failed (or whose lease expired)
// runs again: capped exponential backoff with equal jitter from `now`.
// `base` and `cap` are interval Datums (the queue's backoff settings).
TimestampTz AfterBackoff(TimestampTz now, int attempts_made, Datum base, Datum cap);

// Raises QC005 unless the transaction runs at READ COMMITTED.
void RequireReadCommitted(const char *function);

// Raises QC002 for job `id`: what every call says of a job that does not
// exist (and of one in a queue the caller may not see, api/access.hpp).
[[noreturn]] void ReportJobNotFound(int64 id);

}  // namespace claimqueue

// The claim engine (see claim.hpp).
#include "engine/claim.hpp"

extern "C" {
#include "common/pg_prng.h"
#include "utils/datetime.h"
#include "utils/inval.h"
#include "utils/json.h"
}

#include "core/rules.hpp"
#include "pg/clock.hpp"
#include "engine/claim_limits.hpp"
#include "engine/fair_claim.hpp"
#include "engine/job_rows.hpp"
#include "engine/queue_cache.hpp"
#include "engine/queues.hpp"
#include "metrics/metrics.hpp"
#include "pg/statement.hpp"
#include "pg/errors.h"
#include "cursors/cursors.hpp"
#include "owners/owners.hpp"
#include "wait/ready_notices.hpp"

namespace claimqueue {
namespace {

Statement kJobState = {
    "SELECT state, attempt FROM claimqueue.jobs WHERE id = $1", 1, {INT8OID}, nullptr};

// A revived job must not take a dedup_key that a live job holds.
Statement kRetry = {
    "UPDATE claimqueue.jobs j SET state = 'ready', run_at = $2, finished_at = NULL,"
    " lease_expires_at = NULL, max_attempts = greatest(j.max_attempts, j.attempt + 1),"
    " pos = claimqueue.ready_position(j.queue_id, j.priority, $2, $3)"
    " WHERE j.id = $1 AND j.state IN ('failed', 'cancelled')"
    " AND NOT EXISTS (SELECT 1 FROM claimqueue.jobs o WHERE o.queue_id = j.queue_id"
    "                 AND o.dedup_key = j.dedup_key AND o.state IN ('ready', 'running'))"
    " RETURNING (SELECT q.name FROM claimqueue.queues q WHERE q.queue_id = j.queue_id), j.queue_id",
    3, {INT8OID, TIMESTAMPTZOID, TIMESTAMPTZOID}, nullptr};

Statement kLiveTwin = {
    "SELECT o.id, o.dedup_key FROM claimqueue.jobs j JOIN claimqueue.jobs o"
    " ON o.queue_id = j.queue_id AND o.dedup_key = j.dedup_key"
    " WHERE j.id = $1 AND o.state IN ('ready', 'running')",
    1, {INT8OID}, nullptr};

// The state a cancel changes, locked as its UPDATE would lock it.
Statement kLockForCancel = {
    "SELECT state, queue_id FROM claimqueue.jobs WHERE id = $1 FOR NO KEY UPDATE", 1, {INT8OID},
    nullptr};

// A cancelled claim no longer has an owner; the variant without owner_session
// serves a database whose schema predates it (before 0.5.0).
#define CQ_CANCEL(OWNER)                                                              \
    "UPDATE claimqueue.jobs SET state = 'cancelled', finished_at = $2,"                \
    " lease_expires_at = NULL" OWNER " WHERE id = $1 AND state IN ('ready', 'running')"
Statement kCancel = {CQ_CANCEL(""), 2, {INT8OID, TIMESTAMPTZOID}, nullptr};
Statement kCancelOwned = {CQ_CANCEL(", owner_session = NULL"), 2, {INT8OID, TIMESTAMPTZOID},
                          nullptr};

// The job's current state; its attempt goes to *attempt when given. Raises
// QC002 when no job has that id.
char *JobState(int64 id, int32 *attempt = nullptr)
{
    Datum args[1] = {Int64GetDatum(id)};
    if (Execute(&kJobState, args, nullptr, 1) == 0)
        ReportJobNotFound(id);
    if (attempt)
        *attempt = DatumGetInt32(ResultValue(0, 2));
    return TextDatumGetCString(ResultValue(0, 1));
}

[[noreturn]] void ReportClaimedAfterSnapshot(int64 id, int32 attempt, const char *action)
{
    ereport(ERROR,
            (errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
             errmsg("could not %s job %lld: it was claimed after this transaction's snapshot",
                    action, (long long) id),
             errhint("Retry the transaction; attempt %d still holds the job.", attempt)));
}

// Called when a fenced change found the job not running under `attempt`:
// says why, with the right code. On one server it connects to SPI itself (a
// cold path); under Citus it reads the job from the shard `rows` has open,
// where a statement would ask every shard of the cluster.
[[noreturn]] void ReportNotHeld(JobRows *rows, int64 id, int32 attempt, const char *action)
{
    int32 current;
    char *state;
    if (JobsDistributed()) {
        if (!ReadLatestJobState(rows, id, &state, &current))
            ReportJobNotFound(id);
        // The latest state is the one a READ COMMITTED caller would be told.
        if (IsolationUsesXactSnapshot() && current == attempt && strcmp(state, "running") == 0)
            ReportClaimedAfterSnapshot(id, attempt, action);
    } else {
        ConnectSpi();
        Datum args[1] = {Int64GetDatum(id)};
        // Under REPEATABLE READ or SERIALIZABLE the snapshot may predate the
        // claim: if the job is running under this attempt by now, the claim
        // is valid and only this transaction is too old to act on it.
        if (IsolationUsesXactSnapshot() && ExecuteLatest(&kJobState, args, nullptr, 1) == 1 &&
            DatumGetInt32(ResultValue(0, 2)) == attempt &&
            strcmp(TextDatumGetCString(ResultValue(0, 1)), "running") == 0)
            ReportClaimedAfterSnapshot(id, attempt, action);
        state = JobState(id, &current);
    }
    ereport(ERROR,
            (errcode(ERRCODE_CQ_STALE_CLAIM),
             errmsg("cannot %s job %lld: attempt %d no longer holds it", action, (long long) id,
                    attempt),
             errdetail("The job is %s and its latest attempt is %d.", state, current),
             attempt > current
                 ? errhint("Attempt %d was never issued; pass the attempt that dequeue() "
                           "returned with the job.", attempt)
                 : errhint("The lease of attempt %d expired and the job was reclaimed, or it "
                           "was finished or cancelled. Discard this attempt's work and roll "
                           "back.", attempt)));
    pg_unreachable();
}

// For retry and cancel: the job is missing or in a state the action does not
// take (`allowed` names the two it takes), or, in one it takes, a BEFORE
// UPDATE row trigger skipped the update.
[[noreturn]] void ReportWrongState(int64 id, const char *action, const char *allowed)
{
    char *state = JobState(id);
    if (strstr(allowed, state) != nullptr)
        ereport(ERROR,
                (errcode(ERRCODE_TRIGGERED_ACTION_EXCEPTION),
                 errmsg("could not %s job %lld: a BEFORE UPDATE trigger on claimqueue.jobs "
                        "skipped the update",
                        action, (long long) id),
                 errdetail("A row trigger returned NULL, so job %lld is still %s and nothing "
                           "was written.",
                           (long long) id, state),
                 errhint("Have the trigger return NEW (or OLD) for this update.")));
    ereport(ERROR, (errcode(ERRCODE_CQ_JOB_STATE_CONFLICT),
                    errmsg("cannot %s job %lld: it is %s", action, (long long) id, state),
                    errhint("%s applies to %s jobs.", action, allowed)));
    pg_unreachable();
}

}  // namespace

void ReportJobNotFound(int64 id)
{
    ereport(ERROR,
            (errcode(ERRCODE_CQ_JOB_NOT_FOUND), errmsg("job %lld does not exist", (long long) id)));
    pg_unreachable();
}

TimestampTz AfterBackoff(TimestampTz now, int attempts_made, Datum base, Datum cap)
{
    int64 delay = rules::BackoffUsec(attempts_made, IntervalUsec(DatumGetIntervalP(base)),
                                     IntervalUsec(DatumGetIntervalP(cap)),
                                     pg_prng_double(&pg_global_prng_state));
    return now + delay;
}

void RequireReadCommitted(const char *function)
{
    if (IsolationUsesXactSnapshot())
        ereport(ERROR,
                (errcode(ERRCODE_CQ_ISOLATION_NOT_SUPPORTED),
                 errmsg("%s cannot run under %s isolation", function,
                        IsolationIsSerializable() ? "SERIALIZABLE" : "REPEATABLE READ"),
                 errdetail("A claim must see jobs committed after the transaction began and skip "
                           "rows locked by others; a transaction snapshot does neither."),
                 errhint("Run %s in a READ COMMITTED transaction.", function)));
}

namespace {

// The lease a claim gives: `lease`, or the queue's.
int64 LeaseUsec(int32 queue_id, Interval *lease)
{
    if (lease != nullptr)
        return IntervalUsec(lease);
    const QueueFacts *facts = QueueFactsById(queue_id);
    if (facts == nullptr)
        ereport(ERROR, (errcode(ERRCODE_CQ_QUEUE_NOT_FOUND),
                        errmsg("queue %d does not exist", queue_id)));
    return IntervalUsec(&facts->lease);
}

// The claim by queue id, in the caller's JobRows: one index scan per lane the
// cursors' walk yields, highest priority first, each from the lane's cursor
// (without cursors, one scan over the queue's ready jobs). Rows go straight
// into the caller's store, in claim order.
uint64 ClaimFromQueue(JobRows *rows, int32 queue_id, text *worker, int32 batch,
                      Interval *lease, int64 owner, TimestampTz now, Tuplestorestate *out,
                      TupleDesc out_desc)
{
    // A paused queue is claimed from by nobody: the flag is in the cached
    // settings, so this costs no lookup.
    const QueueFacts *facts = QueueFactsById(queue_id);
    if (facts != nullptr && facts->paused)
        return 0;
    LaneWalk walk;
    BeginLaneWalk(&walk, queue_id, now);
    // Concurrency limits: nullptr (nothing more to do) unless the queue has one.
    LimitGate *gate = OpenLimitGate(rows, facts);
    NewJobRowsSnapshot(rows);  // after the walk's bound (and any promotion)
    ClaimWrite write = {worker, now, LeaseUsec(queue_id, lease), owner};
    uint64 claimed = 0;
    int64 first_seen;
    if (facts != nullptr && facts->fair && JobRowsHaveFairIndex(rows)) {
        claimed = ClaimFairly(rows, &walk, queue_id, batch, write, gate, out, out_desc);
    } else if (!WalkHasCursors(&walk)) {
        claimed = ClaimFromIndex(rows, queue_id, kNoLane, 0, batch, write, gate, &first_seen,
                                 out, out_desc);
    } else {
        int priority;
        int64 from;
        while (claimed < (uint64) batch && !(gate && GateFull(gate)) &&
               NextLane(&walk, &priority, &from)) {
            claimed += ClaimFromIndex(rows, queue_id, priority, from, batch - (int) claimed,
                                      write, gate, &first_seen, out, out_desc);
            LaneSeen(&walk, priority, first_seen);
        }
    }
    EndLaneWalk(&walk);
    CloseLimitGate(gate);  // the running versions are written: the next claim counts them
    CountTransition(queue_id, Transition::kClaim, (int64) claimed);
    return claimed;
}

// `*rows` open for queue_id's jobs: kept when they hold them, else closed
// and opened again (under Citus the queue's shard may be another).
void RowsFor(JobRows **rows, int32 queue_id)
{
    if (*rows != nullptr && JobRowsHoldQueue(*rows, queue_id))
        return;
    if (*rows != nullptr)
        CloseJobRows(*rows);
    *rows = nullptr;
    *rows = OpenJobRows(queue_id);
}

int64 ClaimOwner(JobRows *rows, bool release_on_disconnect);

// The claim by queue name, with the id from the queue cache when it has one,
// so a claim needs no lookup. A claim that finds nothing under a cached id
// looks the name up again (it raises QC001 if the queue is gone): a queue
// dropped and re-created under the same name has a new id. `*rows` (nullptr:
// none open yet) is opened for the queue's table.
uint64 ClaimInto(JobRows **rows, text *queue, text *worker, int32 batch, Interval *lease,
                 bool release_on_disconnect, TimestampTz now, Tuplestorestate *out,
                 TupleDesc out_desc)
{
    int32 cached = CachedQueueId(queue);
    int32 queue_id = cached != 0 ? cached : LookUpQueueId(queue);
    RowsFor(rows, queue_id);
    int64 owner = ClaimOwner(*rows, release_on_disconnect);
    uint64 n = ClaimFromQueue(*rows, queue_id, worker, batch, lease, owner, now, out, out_desc);
    if (n == 0 && cached != 0) {
        int32 current = LookUpQueueId(queue);
        if (current != queue_id) {
            RowsFor(rows, current);
            n = ClaimFromQueue(*rows, current, worker, batch, lease, owner, now, out, out_desc);
        }
    }
    return n;
}

// The owner a claim writes: this session's token with release_on_disconnect,
// else 0 (none). Checked before anything is claimed.
int64 ClaimOwner(JobRows *rows, bool release_on_disconnect)
{
    if (!release_on_disconnect)
        return 0;
    if (!JobRowsHaveOwners(rows))
        ereport(ERROR,
                (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                 errmsg("release_on_disconnect needs claimqueue.jobs.owner_session, which this "
                        "database lacks"),
                 errhint("Run ALTER EXTENSION claimqueue UPDATE in this database.")));
    return MyOwnerToken();
}

// complete(): the job locked and marked done, with its result, in the
// caller's JobRows; its waiters wake at commit.
void CompleteInto(JobRows *rows, int64 id, int32 attempt, struct varlena *result,
                  TimestampTz now)
{
    JobRow job;
    JobUpdate done = {};
    done.state = "done";
    done.set_finished_at = true;
    done.finished_at = now;
    done.set_lease = true;
    done.lease_expires_at = DT_NOBEGIN;
    done.result = result;
    done.action = "complete";
    if (!FindRunningJob(rows, id, attempt, &job) || !UpdateRunningJob(rows, attempt, done))
        ReportNotHeld(rows, id, attempt, "complete");
    CountCompletion(job.queue_id, id);
    NoteJobFinished(id);
}

// The queue's facts, or QC001 naming its id (a job whose queue went away).
const QueueFacts *FactsOf(int32 queue_id)
{
    const QueueFacts *facts = QueueFactsById(queue_id);
    if (facts == nullptr)
        ereport(ERROR, (errcode(ERRCODE_CQ_QUEUE_NOT_FOUND),
                        errmsg("queue %d does not exist", queue_id)));
    return facts;
}

// Before a claim: the queue changes (a pause above all) that committed since
// this transaction last took its invalidations in, so that a claim that
// starts after pause_queue() has committed claims nothing, also in a
// transaction that began before. Cheap when there is nothing new (an unlocked
// flag test); the session's cache is dropped when there is.
void TakeInQueueChanges()
{
    AcceptInvalidationMessages();
}

}  // namespace

uint64 ClaimJobs(text *queue, text *worker, int32 batch, Interval *lease,
                 bool release_on_disconnect, Tuplestorestate *out, TupleDesc out_desc)
{
    TakeInQueueChanges();
    NoteClaimStarting();  // before the clock is read for the leases
    TimestampTz now = ClockNow();
    JobRows *rows = nullptr;
    uint64 n = ClaimInto(&rows, queue, worker, batch, lease, release_on_disconnect, now, out,
                         out_desc);
    CloseJobRows(rows);
    return n;
}

uint64 CompleteAndClaimJobs(const int64 *id, int32 attempt, struct varlena *result,
                            text *queue, text *worker, int32 batch, Interval *lease,
                            bool release_on_disconnect, Tuplestorestate *out,
                            TupleDesc out_desc)
{
    TakeInQueueChanges();
    NoteClaimStarting();  // before the clock is read for the leases
    TimestampTz now = ClockNow();
    JobRows *rows = nullptr;
    if (id != nullptr) {
        rows = OpenJobRowsOfJob(*id);
        (void) ClaimOwner(rows, release_on_disconnect);  // before the completion, too
        CompleteInto(rows, *id, attempt, result, now);  // raises before anything is claimed
    }
    uint64 n = ClaimInto(&rows, queue, worker, batch, lease, release_on_disconnect, now, out,
                         out_desc);
    CloseJobRows(rows);
    return n;
}

bool NextDue(text *queue, TimestampTz *due)
{
    ConnectSpi();
    // Read from the queue's row, not the cache: a waiter woken by
    // resume_queue()'s commit may not have its invalidation yet.
    bool paused;
    int32 queue_id = QueueIdOf(queue, &paused);
    // Under Citus its statements read the queue's local shard (the route
    // OpenJobRows sets), as a claim's do.
    JobRows *routed = !paused && JobsDistributed() ? OpenJobRows(queue_id) : nullptr;
    // A paused queue has nothing due: its waiters sleep until it is resumed.
    bool found = !paused && NextDueAt(queue_id, due);
    if (routed != nullptr)
        CloseJobRows(routed);
    FinishSpi();
    return found;
}

void CompleteJob(int64 id, int32 attempt, struct varlena *result)
{
    TimestampTz now = ClockNow();
    JobRows *rows = OpenJobRowsOfJob(id);
    CompleteInto(rows, id, attempt, result, now);
    CloseJobRows(rows);
}

void CompleteJobs(int n, const int64 *ids, const int32 *attempts,
                  struct varlena *const *results)
{
    // In the order given; the first job not held raises, and the error undoes
    // the others.
    TimestampTz now = ClockNow();
    if (JobsDistributed()) {
        // Under Citus each job's shard is found by its id (job_rows.hpp).
        for (int i = 0; i < n; i++) {
            JobRows *rows = OpenJobRowsOfJob(ids[i]);
            CompleteInto(rows, ids[i], attempts[i], results ? results[i] : nullptr, now);
            CloseJobRows(rows);
        }
        return;
    }
    JobRows *rows = OpenJobRows(0);
    for (int i = 0; i < n; i++)
        CompleteInto(rows, ids[i], attempts[i], results ? results[i] : nullptr, now);
    CloseJobRows(rows);
}

namespace {

// The error history's entry for a failed attempt, as a one-element array:
// [{"attempt": n, "at": timestamp, "error": text|null, "detail": object|null}].
Jsonb *ErrorEntry(int32 attempt, TimestampTz at, text *error, Jsonb *detail)
{
    StringInfoData buf;
    initStringInfo(&buf);
    char when[MAXDATELEN + 1];
    JsonEncodeDateTime(when, TimestampTzGetDatum(at), TIMESTAMPTZOID, nullptr);
    appendStringInfo(&buf, "[{\"attempt\": %d, \"at\": \"%s\", \"error\": ", attempt, when);
    if (error != nullptr)
        escape_json(&buf, text_to_cstring(error));
    else
        appendStringInfoString(&buf, "null");
    appendStringInfoString(&buf, ", \"detail\": ");
    if (detail != nullptr)
        appendStringInfoString(&buf, JsonbToCString(nullptr, &detail->root, VARSIZE(detail)));
    else
        appendStringInfoString(&buf, "null");
    appendStringInfoString(&buf, "}]");
    return DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data)));
}

}  // namespace

const char *FailJob(int64 id, int32 attempt, text *error, Interval *retry_in, bool retryable,
                    Jsonb *detail)
{
    JobRows *rows = OpenJobRowsOfJob(id);
    JobRow job;
    if (!FindRunningJob(rows, id, attempt, &job))
        ReportNotHeld(rows, id, attempt, "fail");
    TimestampTz now = ClockNow();
    bool dead = !retryable || attempt >= job.max_attempts;
    JobUpdate update = {};
    update.action = "fail";
    update.set_last_error = true;
    update.last_error = error;
    update.error_entry = ErrorEntry(attempt, now, error, detail);
    update.set_lease = true;
    update.lease_expires_at = DT_NOBEGIN;
    update.set_finished_at = true;
    update.set_pos = true;
    if (dead) {
        update.state = "failed";
        update.finished_at = now;
        update.pos = -1;
    } else {
        const QueueFacts *facts = FactsOf(job.queue_id);
        TimestampTz next_run =
            retry_in ? now + IntervalUsec(retry_in)
                     : AfterBackoff(now, attempt, IntervalPGetDatum(&facts->backoff_base),
                                    IntervalPGetDatum(&facts->backoff_cap));
        update.state = "ready";
        update.finished_at = DT_NOBEGIN;
        update.set_run_at = true;
        update.run_at = next_run;
        update.pos = ReadyPosition(job.queue_id, job.priority, next_run, now);
        // Its queue's waiters wake at commit.
        NoteJobsReady(facts->name, 1, next_run);
    }
    if (!UpdateRunningJob(rows, attempt, update))
        ReportNotHeld(rows, id, attempt, "fail");
    CountTransition(job.queue_id, dead ? Transition::kFailDead : Transition::kFailRetry);
    if (dead)
        NoteJobFinished(id);
    CloseJobRows(rows);
    return dead ? "failed" : "ready";
}

TimestampTz SnoozeJob(int64 id, int32 attempt, Interval *delay)
{
    JobRows *rows = OpenJobRowsOfJob(id);
    JobRow job;
    if (!FindRunningJob(rows, id, attempt, &job))
        ReportNotHeld(rows, id, attempt, "snooze");
    TimestampTz now = ClockNow();
    TimestampTz next_run = now + IntervalUsec(delay);
    const QueueFacts *facts = FactsOf(job.queue_id);
    JobUpdate update = {};
    update.action = "snooze";
    update.state = "ready";
    update.set_lease = true;
    update.lease_expires_at = DT_NOBEGIN;
    update.set_run_at = true;
    update.run_at = next_run;
    update.set_pos = true;
    update.pos = ReadyPosition(job.queue_id, job.priority, next_run, now);
    // The next claim takes attempt + 1, as after a failure, but this one
    // spent nothing of the budget: the fencing token never goes back.
    update.add_max_attempts = 1;
    NoteJobsReady(facts->name, 1, next_run);
    if (!UpdateRunningJob(rows, attempt, update))
        ReportNotHeld(rows, id, attempt, "snooze");
    CountTransition(job.queue_id, Transition::kSnooze);
    CloseJobRows(rows);
    return next_run;
}

TimestampTz HeartbeatJob(int64 id, int32 attempt, Interval *extend)
{
    JobRows *rows = OpenJobRowsOfJob(id);
    JobRow job;
    if (!FindRunningJob(rows, id, attempt, &job))
        ReportNotHeld(rows, id, attempt, "heartbeat");
    TimestampTz expires = ClockNow() + LeaseUsec(job.queue_id, extend);
    JobUpdate update = {};
    update.action = "heartbeat";
    update.set_lease = true;
    update.lease_expires_at = expires;
    if (!UpdateRunningJob(rows, attempt, update))
        ReportNotHeld(rows, id, attempt, "heartbeat");
    CloseJobRows(rows);
    return expires;
}

void RetryJob(int64 id, Datum run_at, bool run_at_null)
{
    ConnectSpi();
    TimestampTz now = ClockNow();
    Datum args[3] = {Int64GetDatum(id), run_at_null ? TimestampTzGetDatum(now) : run_at,
                     TimestampTzGetDatum(now)};
    if (Execute(&kRetry, args, nullptr) != 1) {
        if (Execute(&kLiveTwin, args, nullptr, 1) == 1)
            ereport(ERROR,
                    (errcode(ERRCODE_CQ_JOB_STATE_CONFLICT),
                     errmsg("cannot retry job %lld: job %lld holds its dedup_key \"%s\"",
                            (long long) id, (long long) DatumGetInt64(ResultValue(0, 1)),
                            TextDatumGetCString(ResultValue(0, 2))),
                     errhint("Retry it once job %lld has finished, or cancel that job.",
                             (long long) DatumGetInt64(ResultValue(0, 1)))));
        ReportWrongState(id, "retry", "failed and cancelled");
    }
    NoteJobsReady(TextDatumGetCString(ResultValue(0, 1)), 1, DatumGetTimestampTz(args[1]));
    CountTransition(DatumGetInt32(ResultValue(0, 2)), Transition::kRetry);
    FinishSpi();
}

void CancelJob(int64 id)
{
    ConnectSpi();
    Datum args[2] = {Int64GetDatum(id), TimestampTzGetDatum(ClockNow())};
    bool was_running = false;
    int32 queue_id = 0;
    if (Execute(&kLockForCancel, args, nullptr, 1) == 1) {
        was_running = strcmp(TextDatumGetCString(ResultValue(0, 1)), "running") == 0;
        queue_id = DatumGetInt32(ResultValue(0, 2));
    }
    if (Execute(JobsHaveOwnerColumn() ? &kCancelOwned : &kCancel, args, nullptr) != 1)
        ReportWrongState(id, "cancel", "ready and running");
    CountTransition(queue_id, was_running ? Transition::kCancelRunning : Transition::kCancelReady);
    NoteJobFinished(id);
    FinishSpi();
}

}  // namespace claimqueue

// Dead letters in bulk (see bulk_jobs.hpp).
#include "engine/bulk_jobs.hpp"

#include "engine/job_rows.hpp"
#include "engine/queues.hpp"
#include "pg/clock.hpp"
#include "metrics/metrics.hpp"
#include "pg/statement.hpp"
#include "wait/ready_notices.hpp"

namespace claimqueue {
namespace {

// The candidates, locked as the cursor reaches them. Planned for the call's
// values (custom_plan): with the states known, the planner takes
// jobs_dead_letters_idx (queue_id, state, finished_at).
Statement kRetryCandidates = {
    "SELECT id FROM claimqueue.jobs"
    " WHERE queue_id = $1 AND state = ANY ($2::text[])"
    "   AND ($3::timestamptz IS NULL OR finished_at < $3)"
    " FOR UPDATE SKIP LOCKED",
    3, {INT4OID, TEXTARRAYOID, TIMESTAMPTZOID}, nullptr, true};

// One batch, as retry() does one job, with the queue's max_attempts as the new
// budget. A revived job must not take a dedup_key a live job holds (one
// retried in an earlier batch included), and of several in this batch with
// one key only the lowest id is revived.
Statement kRetryBatch = {
    "WITH batch AS (SELECT id, dedup_key FROM claimqueue.jobs WHERE id = ANY ($1)),"
    " chosen AS (SELECT id FROM batch WHERE dedup_key IS NULL"
    "            UNION ALL"
    "            SELECT min(id) FROM batch WHERE dedup_key IS NOT NULL GROUP BY dedup_key)"
    " UPDATE claimqueue.jobs j SET state = 'ready', run_at = $2, finished_at = NULL,"
    "   lease_expires_at = NULL, max_attempts = j.attempt + q.max_attempts,"
    "   pos = claimqueue.ready_position(j.queue_id, j.priority, $2, $2)"
    " FROM claimqueue.queues q"
    " WHERE j.id IN (SELECT id FROM chosen) AND q.queue_id = j.queue_id"
    "   AND j.state IN ('failed', 'cancelled')"
    "   AND NOT EXISTS (SELECT 1 FROM claimqueue.jobs o WHERE o.queue_id = j.queue_id"
    "                   AND o.dedup_key = j.dedup_key AND o.state IN ('ready', 'running'))",
    2, {INT8ARRAYOID, TIMESTAMPTZOID}, nullptr};

Statement kCancelCandidates = {
    "SELECT id FROM claimqueue.jobs"
    " WHERE queue_id = $1 AND state = ANY ($2::text[])"
    "   AND ($3::timestamptz IS NULL OR created_at < $3)"
    " FOR UPDATE SKIP LOCKED",
    3, {INT4OID, TEXTARRAYOID, TIMESTAMPTZOID}, nullptr, true};

// As cancel() does one job: a running job's attempt no longer holds it. The
// ready and the running jobs of a batch are cancelled by one statement each,
// so that queue_metrics counts each kind (the cursor holds their rows).
Statement kCancelReadyBatch = {
    "UPDATE claimqueue.jobs SET state = 'cancelled', finished_at = $2, lease_expires_at = NULL"
    " WHERE id = ANY ($1) AND state = 'ready' RETURNING id",
    2, {INT8ARRAYOID, TIMESTAMPTZOID}, nullptr};
// A cancelled claim no longer has an owner (owner_session: since 0.5.0).
Statement kCancelRunningBatch = {
    "UPDATE claimqueue.jobs SET state = 'cancelled', finished_at = $2, lease_expires_at = NULL"
    " WHERE id = ANY ($1) AND state = 'running' RETURNING id",
    2, {INT8ARRAYOID, TIMESTAMPTZOID}, nullptr};
Statement kCancelOwnedRunningBatch = {
    "UPDATE claimqueue.jobs SET state = 'cancelled', finished_at = $2, lease_expires_at = NULL,"
    " owner_session = NULL WHERE id = ANY ($1) AND state = 'running' RETURNING id",
    2, {INT8ARRAYOID, TIMESTAMPTZOID}, nullptr};

// Fetches the cursor's next (up to) `n` ids, locking their rows, into a
// bigint[] (*ids); returns how many.
int FetchIds(Portal cursor, int n, Datum *ids)
{
    SPI_cursor_fetch(cursor, true, n);
    int got = (int) SPI_processed;
    if (got > 0) {
        Datum *values = (Datum *) palloc(sizeof(Datum) * got);
        for (int i = 0; i < got; i++)
            values[i] = ResultValue(i, 1);
        *ids = PointerGetDatum(Int8Array(values, got));
    }
    SPI_freetuptable(SPI_tuptable);
    return got;
}

// The cursor over the candidates, then each of the `nchanges` statements
// `changes` on each batch until the cursor is done or `max_jobs` (0: no limit)
// have changed; returns how many changed, adds to changed_by[c] how many
// changes[c] changed, and sets *fetched to how many were fetched (and locked).
// With `finishes`, the changes return the ids of the jobs they finished, and
// their await_jobs() waiters wake at commit.
int64 ChangeInBatches(Statement *candidates, int32 queue_id, Datum states,
                      const TimestampTz *before, int64 max_jobs, Statement *const *changes,
                      int nchanges, int64 *changed_by, TimestampTz now, int64 *fetched,
                      bool finishes = false)
{
    Datum find[3] = {Int32GetDatum(queue_id), states,
                     before ? TimestampTzGetDatum(*before) : (Datum) 0};
    Portal cursor = OpenCursor(candidates, find, before ? nullptr : "  n");
    int64 changed = 0;
    *fetched = 0;
    for (;;) {
        int want = kBulkBatch;
        if (max_jobs > 0)
            want = (int) Min((int64) want, max_jobs - changed);
        Datum ids = 0;
        int got = want > 0 ? FetchIds(cursor, want, &ids) : 0;
        if (got == 0)
            break;
        *fetched += got;
        Datum args[2] = {ids, TimestampTzGetDatum(now)};
        for (int c = 0; c < nchanges; c++) {
            int64 n = (int64) Execute(changes[c], args, nullptr);
            if (finishes)
                for (int64 i = 0; i < n; i++)
                    NoteJobFinished(DatumGetInt64(ResultValue((uint64) i, 1)));
            changed_by[c] += n;
            changed += n;
        }
        if (got < want)
            break;
    }
    SPI_cursor_close(cursor);
    return changed;
}

}  // namespace

int64 RetryJobs(text *queue, Datum states, const TimestampTz *finished_before, int64 max_jobs)
{
    ConnectSpi();
    int32 queue_id = QueueIdOf(queue);
    TimestampTz now = ClockNow();
    int64 fetched;
    Statement *const change[1] = {&kRetryBatch};
    int64 retried = 0;
    ChangeInBatches(&kRetryCandidates, queue_id, states, finished_before, max_jobs, change, 1,
                    &retried, now, &fetched);
    if (retried > 0) {  // the queue's waiters wake at commit
        NoteJobsReady(text_to_cstring(queue), retried, now);
        CountTransition(queue_id, Transition::kRetry, retried);
    }
    FinishSpi();
    if (fetched > retried)
        ereport(NOTICE,
                (errmsg_plural("retry_jobs() left %lld job of queue \"%s\" as it is: its "
                               "dedup_key is held by a live job",
                               "retry_jobs() left %lld jobs of queue \"%s\" as they are: "
                               "their dedup_keys are held by live jobs",
                               (unsigned long) (fetched - retried),
                               (long long) (fetched - retried), text_to_cstring(queue)),
                 errhint("Retry them once the live jobs have finished, or cancel those.")));
    return retried;
}

int64 CancelJobs(text *queue, Datum states, const TimestampTz *created_before, int64 max_jobs)
{
    ConnectSpi();
    int32 queue_id = QueueIdOf(queue);
    int64 fetched;
    Statement *const changes[2] = {
        &kCancelReadyBatch,
        JobsHaveOwnerColumn() ? &kCancelOwnedRunningBatch : &kCancelRunningBatch};
    int64 by_state[2] = {0, 0};
    int64 cancelled = ChangeInBatches(&kCancelCandidates, queue_id, states, created_before,
                                      max_jobs, changes, 2, by_state, ClockNow(), &fetched,
                                      true);
    CountTransition(queue_id, Transition::kCancelReady, by_state[0]);
    CountTransition(queue_id, Transition::kCancelRunning, by_state[1]);
    FinishSpi();
    return cancelled;
}

}  // namespace claimqueue

// Enqueue (see enqueue.hpp). The queue name is locked in SHARE mode first, so
// drop_queue (EXCLUSIVE) can never leave a job behind in a dropped queue.
#include "engine/enqueue.hpp"

extern "C" {
#include "access/table.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "utils/array.h"
#include "utils/rel.h"
}

#include <algorithm>

#include "pg/clock.hpp"
#include "cursors/cursors.hpp"
#include "engine/job_rows.hpp"
#include "engine/queue_cache.hpp"
#include "engine/queue_locks.hpp"
#include "engine/queues.hpp"
#include "metrics/metrics.hpp"
#include "pg/statement.hpp"
#include "pg/errors.h"
#include "wait/ready_notices.hpp"

namespace claimqueue {

namespace {

// A job due now takes its claim position at once (ready_position); one that
// waits for run_at gets it when due (claim.cpp, kPromote).
// A job with a concurrency key names the column (0.5.0); one without does
// not, so the statements run on a database still at 0.4.0 too.
#define CQ_INSERT_JOB(KEY_COLUMN, KEY_VALUE)                                             \
    "INSERT INTO claimqueue.jobs (queue_id, payload, run_at, priority, max_attempts, "   \
    "created_at, dedup_key, pos" KEY_COLUMN ") "                                         \
    "SELECT q.queue_id, $2, coalesce($3, $6), $4, coalesce($5, q.max_attempts), $6, $7, " \
    "claimqueue.ready_position(q.queue_id, $4, coalesce($3, $6), $6)" KEY_VALUE " "      \
    "FROM claimqueue.queues q WHERE q.name = $1"
#define CQ_ON_DEDUP_CONFLICT                                                             \
    " ON CONFLICT (queue_id, dedup_key) WHERE dedup_key IS NOT NULL AND state IN ('ready', 'running')" \
    " DO NOTHING"
#define CQ_INSERT_ARGS TEXTOID, JSONBOID, TIMESTAMPTZOID, INT4OID, INT4OID, TIMESTAMPTZOID, TEXTOID

Statement kInsert = {CQ_INSERT_JOB("", "") " RETURNING id, queue_id", 7, {CQ_INSERT_ARGS},
                     nullptr};
Statement kInsertDedup = {CQ_INSERT_JOB("", "") CQ_ON_DEDUP_CONFLICT " RETURNING id, queue_id", 7,
                          {CQ_INSERT_ARGS}, nullptr};
Statement kInsertKeyed = {CQ_INSERT_JOB(", concurrency_key", ", $8") " RETURNING id, queue_id",
                          8, {CQ_INSERT_ARGS, TEXTOID}, nullptr};
Statement kInsertDedupKeyed = {
    CQ_INSERT_JOB(", concurrency_key", ", $8") CQ_ON_DEDUP_CONFLICT " RETURNING id, queue_id", 8,
    {CQ_INSERT_ARGS, TEXTOID}, nullptr};

Statement kFindDedup = {
    "SELECT j.id FROM claimqueue.jobs j JOIN claimqueue.queues q ON q.queue_id = j.queue_id"
    " WHERE q.name = $1 AND j.dedup_key = $2 AND j.state IN ('ready', 'running')",
    2, {TEXTOID, TEXTOID}, nullptr};

#define CQ_INSERT_BATCH(KEY_COLUMN, KEY_VALUE)                                             \
    "INSERT INTO claimqueue.jobs (queue_id, payload, run_at, priority, max_attempts, created_at," \
    " pos" KEY_COLUMN ")"                                                                  \
    " SELECT q.queue_id, p.payload, coalesce($3, $6), $4, coalesce($5, q.max_attempts), $6,"  \
    " claimqueue.ready_position(q.queue_id, $4, coalesce($3, $6), $6)" KEY_VALUE             \
    " FROM claimqueue.queues q, unnest($2::jsonb[]) WITH ORDINALITY AS p(payload, ord)"      \
    " WHERE q.name = $1 ORDER BY p.ord RETURNING id, queue_id"
#define CQ_BATCH_ARGS TEXTOID, JSONBARRAYOID, TIMESTAMPTZOID, INT4OID, INT4OID, TIMESTAMPTZOID

Statement kInsertBatch = {CQ_INSERT_BATCH("", ""), 6, {CQ_BATCH_ARGS}, nullptr};
Statement kInsertBatchKeyed = {CQ_INSERT_BATCH(", concurrency_key", ", $7"), 7,
                               {CQ_BATCH_ARGS, TEXTOID}, nullptr};

// Races on one dedup key resolve in a round or two; this only bounds a
// pathological loop (the live job finishing between our two statements).
constexpr int kDedupRounds = 10;

// An INSERT into an existing queue that wrote no row: a BEFORE INSERT row
// trigger on claimqueue.jobs returned NULL (the queue's lock keeps it from
// being dropped meanwhile).
[[noreturn]] void ReportSkippedInsert(text *queue, int64 skipped)
{
    ereport(ERROR,
            (errcode(ERRCODE_TRIGGERED_ACTION_EXCEPTION),
             errmsg("could not enqueue into queue \"%s\": a BEFORE INSERT trigger on "
                    "claimqueue.jobs skipped the insert",
                    text_to_cstring(queue)),
             errdetail("A row trigger returned NULL for %lld of the jobs, so no job was "
                       "enqueued.",
                       (long long) skipped),
             errhint("Have the trigger return NEW for claimqueue's inserts.")));
}

// Whether claimqueue.jobs has a BEFORE INSERT row trigger (one could skip an insert).
bool HasBeforeInsertTrigger()
{
    Relation rel = table_open(JobsRelid(), AccessShareLock);
    bool has = rel->trigdesc != nullptr && rel->trigdesc->trig_insert_before_row;
    table_close(rel, AccessShareLock);
    return has;
}

// The columns of a job in queue `queue_id` enqueued at `now` with the options
// `job` gives (run_at, priority, max_attempts, concurrency key), the queue's
// max_attempts where it names none; no payload, dedup key or position yet.
// False when the queue is gone.
bool RowOf(int32 queue_id, const NewJob &job, TimestampTz now, NewJobRow *row)
{
    const QueueFacts *facts = QueueFactsById(queue_id);
    if (facts == nullptr)
        return false;
    *row = NewJobRow{};
    row->queue_id = queue_id;
    // A copy: opening the rows takes in invalidations, which may drop the cache.
    row->queue_name = JobsDistributed() ? pstrdup(facts->name) : nullptr;
    row->run_at = job.run_at_null ? now : DatumGetTimestampTz(job.run_at);
    row->priority = (int16) job.priority;
    row->max_attempts =
        job.max_attempts_null ? facts->max_attempts : DatumGetInt32(job.max_attempts);
    row->created_at = now;
    row->concurrency_key = job.concurrency_key;
    return true;
}

// Whether the single-row path can write the job: JobRowsInsertDirectly, and
// the concurrency key column when the job has a key.
bool Writable(JobRows *rows, const NewJob &job, bool dedup)
{
    return JobRowsInsertDirectly(rows, dedup) &&
           (job.concurrency_key == nullptr || JobRowsHaveKeys(rows));
}

// The job written by the executor's single-row path (job_rows.hpp) with no
// statement: the queue's id comes from the queue cache, the claim position
// from ReadyPosition, the id from the column's default, as the INSERT above
// would draw them; a dedup key is arbitrated by jobs_dedup_idx as its ON
// CONFLICT clause would. False when the table has triggers or generated
// columns: the caller runs the INSERT, so that they fire as for any
// statement (statement-level triggers included). Else *inserted says whether
// the job was written or a live job with its dedup key found, *id either's.
bool InsertDirectly(int32 queue_id, const NewJob &job, text *dedup_key, TimestampTz now,
                    int64 *id, bool *inserted)
{
    NewJobRow row;
    if (!RowOf(queue_id, job, now, &row))
        return false;  // gone meanwhile: the INSERT reports it
    row.payload = job.payload;
    row.dedup_key = dedup_key;
    JobRows *rows = OpenJobRows(queue_id);
    bool direct = Writable(rows, job, dedup_key != nullptr);
    if (direct) {
        row.pos = ReadyPosition(queue_id, row.priority, row.run_at, now);
        *inserted = InsertJob(rows, row, id);
    }
    CloseJobRows(rows);
    return direct;
}

// Under Citus the INSERT below cannot run: Citus cannot plan it on the
// distributed table (nor route it to a shard by queue_id). An unknown queue
// gets QC001 here, as the INSERT would report it on one server.
void RequireQueueWhereDistributed(text *queue, int32 queue_id)
{
    if (queue_id == 0 && JobsDistributed())
        ReportUnknownQueue(queue);
}

}  // namespace

int64 EnqueueJob(text *queue, const NewJob &job, text *dedup_key)
{
    int32 queue_id = LockQueueName(queue, ShareLock);
    RequireQueueWhereDistributed(queue, queue_id);
    // A transaction snapshot needs the INSERT's view of the queue
    // (RequireQueueCurrent, and SERIALIZABLE's predicate lock on the queue's
    // row), and its ON CONFLICT's check against that snapshot: it runs the
    // statement.
    if (queue_id > 0 && !IsolationUsesXactSnapshot()) {
        TimestampTz now = ClockNow();
        int64 id;
        bool inserted;
        if (InsertDirectly(queue_id, job, dedup_key, now, &id, &inserted)) {
            if (inserted) {
                CountTransition(queue_id, Transition::kEnqueue);
                NoteJobsReady(text_to_cstring(queue), 1,
                              job.run_at_null ? now : DatumGetTimestampTz(job.run_at));
            }
            return id;
        }
    }
    ConnectSpi();
    RequireQueueCurrent(queue);
    TimestampTz now = ClockNow();
    Datum args[8] = {PointerGetDatum(queue), job.payload, job.run_at, Int32GetDatum(job.priority),
                     job.max_attempts, TimestampTzGetDatum(now),
                     PointerGetDatum(dedup_key), PointerGetDatum(job.concurrency_key)};
    char nulls[9] = "        ";
    bool keyed = job.concurrency_key != nullptr;
    nulls[2] = job.run_at_null ? 'n' : ' ';
    nulls[4] = job.max_attempts_null ? 'n' : ' ';
    nulls[6] = dedup_key == nullptr ? 'n' : ' ';

    int64 id = 0;
    bool inserted = false;
    if (dedup_key == nullptr) {
        if (Execute(keyed ? &kInsertKeyed : &kInsert, args, nulls) != 1) {
            RequireQueueExists(queue);
            ReportSkippedInsert(queue, 1);
        }
        id = DatumGetInt64(ResultValue(0, 1));
        CountTransition(DatumGetInt32(ResultValue(0, 2)), Transition::kEnqueue);
        inserted = true;
    } else {
        Datum find_args[2] = {PointerGetDatum(queue), PointerGetDatum(dedup_key)};
        bool found = false;
        int empty_rounds = 0;  // neither inserted nor found, in a row
        for (int round = 0; round < kDedupRounds && !found; round++) {
            if (Execute(keyed ? &kInsertDedupKeyed : &kInsertDedup, args, nulls) == 1) {
                id = DatumGetInt64(ResultValue(0, 1));
                CountTransition(DatumGetInt32(ResultValue(0, 2)), Transition::kEnqueue);
                found = inserted = true;
            } else if (Execute(&kFindDedup, find_args, nullptr, 1) == 1) {
                id = DatumGetInt64(ResultValue(0, 1));
                found = true;
            } else {
                RequireQueueExists(queue);
                // No conflict to find twice running: the INSERT itself wrote
                // nothing, which on a table with a BEFORE INSERT row trigger
                // is that trigger (a key finishing between the two statements
                // twice in a row would be a race lost twice).
                if (++empty_rounds >= 2 && HasBeforeInsertTrigger())
                    ReportSkippedInsert(queue, 1);
                continue;
            }
            empty_rounds = 0;
        }
        if (!found)
            ereport(ERROR, (errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
                            errmsg("could not enqueue with dedup_key \"%s\": the key kept changing hands",
                                   text_to_cstring(dedup_key)),
                            errhint("Retry the transaction.")));
    }
    FinishSpi();
    if (inserted)  // waiters wake when this transaction commits
        NoteJobsReady(text_to_cstring(queue), 1,
                      job.run_at_null ? now : DatumGetTimestampTz(job.run_at));
    return id;
}

namespace {

// enqueue_batch()'s jobs on the single-row path, one InsertJob each in payload
// order (so their ids ascend in that order, as the INSERT's do). False when
// the table has triggers or generated columns (the caller runs the INSERT).
bool InsertBatchDirectly(int32 queue_id, ArrayType *payloads, const NewJob &common,
                         TimestampTz now, int64 **ids, int *count)
{
    NewJobRow row;
    if (!RowOf(queue_id, common, now, &row))
        return false;
    JobRows *rows = OpenJobRows(queue_id);
    bool direct = Writable(rows, common, false);
    if (direct) {
        Datum *elements;
        bool *nulls;
        int n;
        deconstruct_array(payloads, JSONBOID, -1, false, TYPALIGN_INT, &elements, &nulls, &n);
        int64 *out = (int64 *) palloc(sizeof(int64) * (n + 1));
        for (int i = 0; i < n; i++) {
            row.payload = elements[i];  // the caller refused NULL elements
            row.pos = ReadyPosition(queue_id, row.priority, row.run_at, now);
            (void) InsertJob(rows, row, &out[i]);
        }
        *ids = out;
        *count = n;
    }
    CloseJobRows(rows);
    return direct;
}

}  // namespace

int EnqueueBatch(text *queue, Datum payloads, const NewJob &common, int64 **ids)
{
    int32 queue_id = LockQueueName(queue, ShareLock);
    RequireQueueWhereDistributed(queue, queue_id);
    if (queue_id > 0 && !IsolationUsesXactSnapshot()) {
        TimestampTz now = ClockNow();
        int n;
        if (InsertBatchDirectly(queue_id, DatumGetArrayTypeP(payloads), common, now, ids, &n)) {
            if (n > 0)
                CountTransition(queue_id, Transition::kEnqueue, (int64) n);
            NoteJobsReady(text_to_cstring(queue), (int64) n,
                          common.run_at_null ? now : DatumGetTimestampTz(common.run_at));
            return n;
        }
    }
    ConnectSpi();
    RequireQueueCurrent(queue);
    TimestampTz now = ClockNow();
    Datum args[7] = {PointerGetDatum(queue), payloads, common.run_at,
                     Int32GetDatum(common.priority), common.max_attempts,
                     TimestampTzGetDatum(now), PointerGetDatum(common.concurrency_key)};
    char nulls[8] = "       ";
    nulls[2] = common.run_at_null ? 'n' : ' ';
    nulls[4] = common.max_attempts_null ? 'n' : ' ';
    uint64 n = Execute(common.concurrency_key ? &kInsertBatchKeyed : &kInsertBatch, args, nulls);
    if (n == 0)
        RequireQueueExists(queue);  // an empty array is fine for an existing queue
    ArrayType *array = DatumGetArrayTypeP(payloads);
    int64 given = ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
    if ((int64) n < given)
        ReportSkippedInsert(queue, given - (int64) n);
    // ids come from one sequence in insertion order, which is payload order.
    int64 *out = (int64 *) SPI_palloc(sizeof(int64) * (n + 1));  // outlives SPI_finish
    for (uint64 i = 0; i < n; i++)
        out[i] = DatumGetInt64(ResultValue(i, 1));
    std::sort(out, out + n);
    if (n > 0)
        CountTransition(DatumGetInt32(ResultValue(0, 2)), Transition::kEnqueue, (int64) n);
    FinishSpi();
    NoteJobsReady(text_to_cstring(queue), (int64) n,
                  common.run_at_null ? now : DatumGetTimestampTz(common.run_at));
    *ids = out;
    return (int) n;
}

}  // namespace claimqueue

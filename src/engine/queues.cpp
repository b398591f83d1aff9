// Queue administration (see queues.hpp).
#include "engine/queues.hpp"

#include "core/rules.hpp"
#include "pg/clock.hpp"
#include "engine/job_rows.hpp"
#include "engine/queue_cache.hpp"
#include "engine/queue_locks.hpp"
#include "pg/statement.hpp"
#include "pg/errors.h"
#include "cursors/cursors.hpp"
#include "pg/settings.hpp"
#include "wait/ready_notices.hpp"
#include "metrics/metrics.hpp"

namespace claimqueue {
namespace {

Statement kInsertQueue = {
    "INSERT INTO claimqueue.queues (name, lease, max_attempts, backoff_base, backoff_cap,"
    " retention, failed_retention)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (name) DO NOTHING RETURNING queue_id",
    7, {TEXTOID, INTERVALOID, INT4OID, INTERVALOID, INTERVALOID, INTERVALOID, INTERVALOID},
    nullptr};

Statement kLockQueue = {
    "SELECT lease, max_attempts, backoff_base, backoff_cap, retention, failed_retention"
    " FROM claimqueue.queues WHERE name = $1 FOR UPDATE",
    1, {TEXTOID}, nullptr};

Statement kUpdateQueue = {
    "UPDATE claimqueue.queues SET lease = $2, max_attempts = $3, backoff_base = $4,"
    " backoff_cap = $5, retention = $6, failed_retention = $7 WHERE name = $1",
    7, {TEXTOID, INTERVALOID, INT4OID, INTERVALOID, INTERVALOID, INTERVALOID, INTERVALOID},
    nullptr};

// A limit given as 0 is NULL (none); a setting not given ($2, $4, $6 false)
// stays as it is.
Statement kSetLimits = {
    "UPDATE claimqueue.queues SET"
    " max_running = CASE WHEN $2 THEN nullif($3, 0) ELSE max_running END,"
    " max_running_per_key = CASE WHEN $4 THEN nullif($5, 0) ELSE max_running_per_key END,"
    " fair = CASE WHEN $6 THEN $7 ELSE fair END"
    " WHERE name = $1",
    7, {TEXTOID, BOOLOID, INT4OID, BOOLOID, INT4OID, BOOLOID, BOOLOID}, nullptr};

// Only a change of state writes the row (and invalidates every session's
// cache). A concurrent pause or resume of the same queue waits for this one's
// row lock, then finds the state it wanted and changes nothing.
Statement kSetPaused = {
    "UPDATE claimqueue.queues SET paused = $2 WHERE name = $1 AND paused <> $2"
    " RETURNING queue_id",
    2, {TEXTOID, BOOLOID}, nullptr};

// At resume: how many due jobs wait (up to $2; one waiter wakes per job), and
// the earliest run_at of those waiting for theirs (the queue's timer).
Statement kReadyAtResume = {
    "SELECT (SELECT count(*) FROM (SELECT 1 FROM claimqueue.jobs"
    "         WHERE queue_id = $1 AND state = 'ready' AND pos IS NOT NULL LIMIT $2) due),"
    "       (SELECT min(run_at) FROM claimqueue.jobs"
    "         WHERE queue_id = $1 AND state = 'ready' AND pos IS NULL)",
    2, {INT4OID, INT8OID}, nullptr};

Statement kQueueState = {
    "SELECT queue_id, paused FROM claimqueue.queues WHERE name = $1", 1, {TEXTOID}, nullptr};

Statement kQueueForDrop = {
    "SELECT q.queue_id, (SELECT count(*) FROM claimqueue.jobs j"
    "   WHERE j.queue_id = q.queue_id AND j.state IN ('ready', 'running'))"
    " FROM claimqueue.queues q WHERE q.name = $1 FOR UPDATE OF q",
    1, {TEXTOID}, nullptr};

// Counts what it deleted by state: a job made ready by a retry() that committed
// while drop_queue waited is seen here (the DELETE reads the latest row
// version), even though the first count missed it.
Statement kDeleteJobs = {
    "WITH gone AS (DELETE FROM claimqueue.jobs WHERE queue_id = $1 RETURNING state)"
    " SELECT count(*), count(*) FILTER (WHERE state IN ('ready', 'running')) FROM gone",
    1, {INT4OID}, nullptr};

// First, so that a reaper enqueueing a schedule's job (which holds the
// schedule's row) has committed before the jobs are counted and deleted.
Statement kDeleteSchedules = {
    "DELETE FROM claimqueue.schedules WHERE queue_id = $1", 1, {INT4OID}, nullptr};

Statement kDeleteQueue = {
    "DELETE FROM claimqueue.queues WHERE queue_id = $1", 1, {INT4OID}, nullptr};

Statement kQueueExists = {
    "SELECT queue_id FROM claimqueue.queues WHERE name = $1", 1, {TEXTOID}, nullptr};

// The same under Citus (claimqueue.jobs distributed by its column queue):
// statements that Citus can plan on the coordinator, each planned for the
// call's values (custom_plan), the jobs' ones on the queue's shard alone.
Statement kQueueForDropCitus = {
    "SELECT q.queue_id FROM claimqueue.queues q WHERE q.name = $1 FOR UPDATE OF q",
    1, {TEXTOID}, nullptr, true};

Statement kUnfinishedCitus = {
    "SELECT count(*) FROM claimqueue.jobs"
    " WHERE queue = $2 AND queue_id = $1 AND state IN ('ready', 'running')",
    2, {INT4OID, TEXTOID}, nullptr, true};

Statement kDeleteJobsCitus = {
    "WITH gone AS (DELETE FROM claimqueue.jobs WHERE queue = $2 AND queue_id = $1 RETURNING state)"
    " SELECT count(*), count(*) FILTER (WHERE state IN ('ready', 'running')) FROM gone",
    2, {INT4OID, TEXTOID}, nullptr, true};

Statement kDeleteSchedulesCitus = {
    "DELETE FROM claimqueue.schedules WHERE queue_id = $1", 1, {INT4OID}, nullptr, true};

Statement kDeleteQueueCitus = {
    "DELETE FROM claimqueue.queues WHERE queue_id = $1", 1, {INT4OID}, nullptr, true};

void RefuseUnfinished(text *name, int64 unfinished)
{
    if (unfinished > 0)
        ereport(ERROR, (errcode(ERRCODE_OBJECT_IN_USE),
                        errmsg("queue \"%s\" has %lld ready or running jobs", text_to_cstring(name),
                               (long long) unfinished),
                        errhint("Drain or cancel them first, or pass force => true to delete "
                                "them with the queue.")));
}

}  // namespace

void ReportUnknownQueue(text *name)
{
    ereport(ERROR, (errcode(ERRCODE_CQ_QUEUE_NOT_FOUND),
                    errmsg("queue \"%s\" does not exist", text_to_cstring(name)),
                    errhint("Create it with create_queue('%s'); queue_settings lists the queues.",
                            text_to_cstring(name))));
    pg_unreachable();
}

void RequireQueueExists(text *name)
{
    Datum args[1] = {PointerGetDatum(name)};
    if (Execute(&kQueueExists, args, nullptr, 1) == 0)
        ReportUnknownQueue(name);
}

int32 QueueIdOf(text *name)
{
    Datum args[1] = {PointerGetDatum(name)};
    if (Execute(&kQueueExists, args, nullptr, 1) == 0)
        ReportUnknownQueue(name);
    int32 queue_id = DatumGetInt32(ResultValue(0, 1));
    RememberQueueId(name, queue_id);
    return queue_id;
}

int32 QueueIdOf(text *name, bool *paused)
{
    Datum args[1] = {PointerGetDatum(name)};
    if (Execute(&kQueueState, args, nullptr, 1) == 0)
        ReportUnknownQueue(name);
    int32 queue_id = DatumGetInt32(ResultValue(0, 1));
    *paused = DatumGetBool(ResultValue(0, 2));
    RememberQueueId(name, queue_id);
    return queue_id;
}

int32 LookUpQueueId(text *name)
{
    ConnectSpi();
    int32 queue_id = QueueIdOf(name);
    FinishSpi();
    return queue_id;
}

void RequireQueueCurrent(text *name)
{
    if (!IsolationUsesXactSnapshot())
        return;
    Datum args[1] = {PointerGetDatum(name)};
    if (ExecuteLatest(&kQueueExists, args, nullptr, 1) == 0)
        ReportUnknownQueue(name);
    int32 latest = DatumGetInt32(ResultValue(0, 1));
    if (Execute(&kQueueExists, args, nullptr, 1) == 0 || DatumGetInt32(ResultValue(0, 1)) != latest)
        ereport(ERROR, (errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
                        errmsg("queue \"%s\" was re-created after this transaction began",
                               text_to_cstring(name)),
                        errhint("Retry the transaction.")));
}

bool CreateQueue(text *name, const QueueSettings &s, bool if_not_exists)
{
    Datum args[7] = {PointerGetDatum(name), s.lease, s.max_attempts, s.backoff_base,
                     s.backoff_cap, s.retention, s.failed_retention};
    const char *nulls = s.failed_retention == 0 ? "      n" : nullptr;
    ConnectSpi();
    // Checked first so that the insert never reaches merge_default_queue's
    // restore path (an INSERT of an existing 'default').
    Datum key[1] = {PointerGetDatum(name)};
    bool created = Execute(&kQueueExists, key, nullptr, 1) == 0 &&
                   Execute(&kInsertQueue, args, nulls) == 1;
    FinishSpi();
    if (!created && !if_not_exists)
        ereport(ERROR, (errcode(ERRCODE_DUPLICATE_OBJECT),
                        errmsg("queue \"%s\" already exists", text_to_cstring(name)),
                        errhint("Use alter_queue() to change its settings, or pass "
                                "if_not_exists => true.")));
    return created;
}

void AlterQueue(text *name, const QueueSettings &s, const bool given[kQueueSettings])
{
    ConnectSpi();
    Datum key[1] = {PointerGetDatum(name)};
    if (Execute(&kLockQueue, key, nullptr) == 0)
        ReportUnknownQueue(name);
    const Datum requested[kQueueSettings] = {s.lease,       s.max_attempts, s.backoff_base,
                                             s.backoff_cap, s.retention,    s.failed_retention};
    Datum args[kQueueSettings + 1];
    char nulls[kQueueSettings + 2];
    args[0] = PointerGetDatum(name);
    nulls[0] = ' ';
    for (int i = 0; i < kQueueSettings; i++) {
        bool isnull = false;
        args[i + 1] = given[i] ? requested[i] : ResultValue(0, i + 1, &isnull);
        nulls[i + 1] = isnull ? 'n' : ' ';  // only failed_retention may be NULL
    }
    nulls[kQueueSettings + 1] = '\0';
    CheckBackoffDatums(args[3], args[4]);
    Execute(&kUpdateQueue, args, nulls);
    FinishSpi();
}

void SetQueueLimits(text *name, const QueueLimits &limits)
{
    if (!limits.max_running_given && !limits.max_running_per_key_given && !limits.fair_given)
        return;
    ConnectSpi();
    Datum args[7] = {PointerGetDatum(name), BoolGetDatum(limits.max_running_given),
                     Int32GetDatum(limits.max_running),
                     BoolGetDatum(limits.max_running_per_key_given),
                     Int32GetDatum(limits.max_running_per_key),
                     BoolGetDatum(limits.fair_given), BoolGetDatum(limits.fair)};
    if (Execute(&kSetLimits, args, nullptr) == 0)
        ReportUnknownQueue(name);
    FinishSpi();
}

bool SetQueuePaused(text *name, bool paused)
{
    ConnectSpi();
    Datum args[2] = {PointerGetDatum(name), BoolGetDatum(paused)};
    bool changed = Execute(&kSetPaused, args, nullptr) == 1;
    if (!changed)
        RequireQueueExists(name);
    if (changed && !paused) {
        // The ready jobs are announced as an enqueue announces its own: their
        // waiters wake once this commits (the jobs of a paused queue woke
        // nobody for good: its waiters found nothing and slept on).
        Datum queue_id = ResultValue(0, 1);
        Datum count[2] = {queue_id, Int64GetDatum(Max(max_waiters, 1))};
        Execute(&kReadyAtResume, count, nullptr);
        bool no_scheduled;
        int64 due_now = DatumGetInt64(ResultValue(0, 1));
        Datum earliest = ResultValue(0, 2, &no_scheduled);
        char *queue = text_to_cstring(name);
        TimestampTz now = ClockNow();
        if (due_now > 0)
            NoteJobsReady(queue, due_now, now);
        if (!no_scheduled)
            NoteJobsReady(queue, 1, DatumGetTimestampTz(earliest));
    }
    FinishSpi();
    return changed;
}

int64 DropQueue(text *name, bool force)
{
    LockQueueName(name, ExclusiveLock);  // waits for in-flight enqueues
    bool citus = JobsDistributed();
    ConnectSpi();
    Datum key[1] = {PointerGetDatum(name)};
    if (Execute(citus ? &kQueueForDropCitus : &kQueueForDrop, key, nullptr) == 0)
        ReportUnknownQueue(name);
    Datum queue_id = ResultValue(0, 1);
    Datum id_name[2] = {queue_id, PointerGetDatum(name)};
    // Checked before deleting (cheap refusal) and again on what was deleted.
    if (!force) {
        if (citus)
            Execute(&kUnfinishedCitus, id_name, nullptr);
        RefuseUnfinished(name, DatumGetInt64(ResultValue(0, citus ? 1 : 2)));
    }
    Datum id_arg[1] = {queue_id};
    Execute(citus ? &kDeleteSchedulesCitus : &kDeleteSchedules, id_arg, nullptr);
    if (citus)
        Execute(&kDeleteJobsCitus, id_name, nullptr);
    else
        Execute(&kDeleteJobs, id_arg, nullptr);
    int64 deleted = DatumGetInt64(ResultValue(0, 1));
    if (!force)
        RefuseUnfinished(name, DatumGetInt64(ResultValue(0, 2)));
    else if (DatumGetInt64(ResultValue(0, 2)) > 0)
        NoteUnfinishedJobsGone();  // their await_jobs() waiters wake at commit
    Execute(citus ? &kDeleteQueueCitus : &kDeleteQueue, id_arg, nullptr);
    FinishSpi();
    FreeQueueCursorsAtCommit(DatumGetInt32(queue_id));
    FreeQueueMetricsAtCommit(DatumGetInt32(queue_id));
    return deleted;
}

}  // namespace claimqueue

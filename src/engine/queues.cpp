// Queue administration (see queues.hpp).
#include "engine/queues.hpp"

#include "core/rules.hpp"
#include "pg/clock.hpp"
#include "engine/queue_cache.hpp"
#include "engine/queue_locks.hpp"
#include "pg/statement.hpp"
#include "pg/errors.h"
#include "cursors/cursors.hpp"
#include "wait/ready_notices.hpp"

namespace claimqueue {
namespace {

Statement kInsertQueue = {
    "INSERT INTO claimqueue.queues (name, lease, max_attempts, backoff_base, backoff_cap, retention)"
    " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (name) DO NOTHING RETURNING queue_id",
    6, {TEXTOID, INTERVALOID, INT4OID, INTERVALOID, INTERVALOID, INTERVALOID}, nullptr};

Statement kLockQueue = {
    "SELECT lease, max_attempts, backoff_base, backoff_cap, retention"
    " FROM claimqueue.queues WHERE name = $1 FOR UPDATE",
    1, {TEXTOID}, nullptr};

Statement kUpdateQueue = {
    "UPDATE claimqueue.queues SET lease = $2, max_attempts = $3, backoff_base = $4,"
    " backoff_cap = $5, retention = $6 WHERE name = $1",
    6, {TEXTOID, INTERVALOID, INT4OID, INTERVALOID, INTERVALOID, INTERVALOID}, nullptr};

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

Statement kDeleteQueue = {
    "DELETE FROM claimqueue.queues WHERE queue_id = $1", 1, {INT4OID}, nullptr};

Statement kQueueExists = {
    "SELECT queue_id FROM claimqueue.queues WHERE name = $1", 1, {TEXTOID}, nullptr};

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
    Datum args[6] = {PointerGetDatum(name), s.lease, s.max_attempts,
                     s.backoff_base, s.backoff_cap, s.retention};
    ConnectSpi();
    // Checked first so that the insert never reaches merge_default_queue's
    // restore path (an INSERT of an existing 'default').
    Datum key[1] = {PointerGetDatum(name)};
    bool created = Execute(&kQueueExists, key, nullptr, 1) == 0 &&
                   Execute(&kInsertQueue, args, nullptr) == 1;
    FinishSpi();
    if (!created && !if_not_exists)
        ereport(ERROR, (errcode(ERRCODE_DUPLICATE_OBJECT),
                        errmsg("queue \"%s\" already exists", text_to_cstring(name)),
                        errhint("Use alter_queue() to change its settings, or pass "
                                "if_not_exists => true.")));
    return created;
}

void AlterQueue(text *name, const QueueSettings &s, const bool given[5])
{
    ConnectSpi();
    Datum key[1] = {PointerGetDatum(name)};
    if (Execute(&kLockQueue, key, nullptr) == 0)
        ReportUnknownQueue(name);
    const Datum requested[5] = {s.lease, s.max_attempts, s.backoff_base, s.backoff_cap,
                                s.retention};
    Datum args[6];
    args[0] = PointerGetDatum(name);
    for (int i = 0; i < 5; i++)
        args[i + 1] = given[i] ? requested[i] : ResultValue(0, i + 1);
    CheckBackoffDatums(args[3], args[4]);
    Execute(&kUpdateQueue, args, nullptr);
    FinishSpi();
}

int64 DropQueue(text *name, bool force)
{
    LockQueueName(name, ExclusiveLock);  // waits for in-flight enqueues
    ConnectSpi();
    Datum key[1] = {PointerGetDatum(name)};
    if (Execute(&kQueueForDrop, key, nullptr) == 0)
        ReportUnknownQueue(name);
    Datum queue_id = ResultValue(0, 1);
    // Checked before deleting (cheap refusal) and again on what was deleted.
    if (!force)
        RefuseUnfinished(name, DatumGetInt64(ResultValue(0, 2)));
    Datum id_arg[1] = {queue_id};
    Execute(&kDeleteJobs, id_arg, nullptr);
    int64 deleted = DatumGetInt64(ResultValue(0, 1));
    if (!force)
        RefuseUnfinished(name, DatumGetInt64(ResultValue(0, 2)));
    else if (DatumGetInt64(ResultValue(0, 2)) > 0)
        NoteUnfinishedJobsGone();  // their await_jobs() waiters wake at commit
    Execute(&kDeleteQueue, id_arg, nullptr);
    FinishSpi();
    FreeQueueCursorsAtCommit(DatumGetInt32(queue_id));
    return deleted;
}

}  // namespace claimqueue

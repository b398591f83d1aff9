// Reaping and retention (see maintenance.hpp).
#include "engine/maintenance.hpp"

#include "engine/claim.hpp"
#include "pg/clock.hpp"
#include "engine/queues.hpp"
#include "metrics/metrics.hpp"
#include "pg/statement.hpp"
#include "cursors/cursors.hpp"
#include "engine/job_rows.hpp"
#include "engine/job_shards.hpp"
#include "owners/owners.hpp"
#include "wait/ready_notices.hpp"

extern "C" {
#include "access/table.h"
#include "catalog/namespace.h"
#include "storage/bufmgr.h"
#include "storage/itemptr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
}

namespace claimqueue {
namespace {

// Up to $3 expired leases ($2: of that queue only), oldest expiry first, so a
// pass that stops at $3 reaps in lease order: the first $3 of each queue, from
// one range of jobs_running_idx (queue_id, lease_expires_at) each, then the
// first $3 of those. (The rows of a queue's first $3 that are not taken stay
// locked until this batch commits, and come in a later one.)
Statement kLockExpired = {
    "SELECT j.id, j.attempt, j.max_attempts, q.backoff_base, q.backoff_cap, q.name, j.queue_id"
    " FROM claimqueue.queues q CROSS JOIN LATERAL ("
    "   SELECT j.id, j.attempt, j.max_attempts, j.queue_id, j.lease_expires_at"
    "   FROM claimqueue.jobs j"
    "   WHERE j.queue_id = q.queue_id AND j.state = 'running'"
    "     AND j.lease_expires_at < $1 AND j.lease_expires_at >= $4"
    "   ORDER BY j.lease_expires_at LIMIT $3 FOR UPDATE SKIP LOCKED) j"
    " WHERE $2::text IS NULL OR q.name = $2"
    " ORDER BY j.lease_expires_at LIMIT $3",
    4, {TIMESTAMPTZOID, TEXTOID, INT4OID, TIMESTAMPTZOID}, nullptr};

// The earliest lease at or after $1 that this snapshot shows running (locked
// by someone or not): each queue's first entry of jobs_running_idx from $1.
Statement kEarliestLease = {
    "SELECT min(l.lease) FROM claimqueue.queues q CROSS JOIN LATERAL ("
    "   SELECT min(j.lease_expires_at) AS lease FROM claimqueue.jobs j"
    "   WHERE j.queue_id = q.queue_id AND j.state = 'running'"
    "     AND j.lease_expires_at >= $1) l",
    1, {TIMESTAMPTZOID}, nullptr};

// Running jobs back to ready (u.run_at) or to failed, each with its attempt's
// error: $5 says why ("lease expired", "session ended"). The owner_session
// variant, for databases that have the column (0.5.0), clears the claim's owner.
#define CQ_RETURN_RUNNING(OWNER)                                                                 \
    "UPDATE claimqueue.jobs j SET state = u.state, run_at = coalesce(u.run_at, j.run_at),"      \
    " finished_at = CASE WHEN u.state = 'failed' THEN $4 END, lease_expires_at = NULL," OWNER   \
    " pos = CASE WHEN u.state = 'ready'"                                                        \
    "            THEN claimqueue.ready_position(j.queue_id, j.priority, u.run_at, $4) END,"     \
    " last_error = $5 || ' (worker ' || coalesce(j.worker, '?') || ', attempt '"                \
    "              || j.attempt::text || ')'"                                                   \
    " FROM unnest($1::bigint[], $2::text[], $3::timestamptz[]) AS u(id, state, run_at)"         \
    " WHERE j.id = u.id"

Statement kReturnRunning = {
    CQ_RETURN_RUNNING(""), 5,
    {INT8ARRAYOID, TEXTARRAYOID, TIMESTAMPTZARRAYOID, TIMESTAMPTZOID, TEXTOID}, nullptr};
Statement kReturnOwnedRunning = {
    CQ_RETURN_RUNNING(" owner_session = NULL,"), 5,
    {INT8ARRAYOID, TEXTARRAYOID, TIMESTAMPTZARRAYOID, TIMESTAMPTZOID, TEXTOID}, nullptr};

// Running jobs claimed with release_on_disconnect whose session has ended:
// owner tokens up to $1 (drawn before the live list $2 was read) that $2 does
// not list. Found through jobs_owned_idx; columns as kLockExpired's.
Statement kLockDisconnected = {
    "SELECT j.id, j.attempt, j.max_attempts, q.backoff_base, q.backoff_cap, q.name, j.queue_id"
    " FROM claimqueue.jobs j JOIN claimqueue.queues q ON q.queue_id = j.queue_id"
    " WHERE j.state = 'running' AND j.owner_session IS NOT NULL"
    "   AND j.owner_session <= $1 AND j.owner_session <> ALL ($2::bigint[])"
    "   AND ($3::text IS NULL OR q.name = $3)"
    " LIMIT $4 FOR UPDATE OF j SKIP LOCKED",
    4, {INT8OID, INT8ARRAYOID, TEXTOID, INT4OID}, nullptr};

// Retention, one queue at a time: first each queue's cutoffs (its retention
// as a fixed duration, the epoch rule of clock.hpp), for cancelled jobs and
// for failed ones (failed_retention, or retention when NULL)...
Statement kPurgeCutoffs = {
    "SELECT queue_id, $1 - pg_catalog.make_interval("
    "                      secs => pg_catalog.date_part('epoch', retention)),"
    "       $1 - pg_catalog.make_interval("
    "                      secs => pg_catalog.date_part('epoch', coalesce(failed_retention, retention)))"
    " FROM claimqueue.queues WHERE ($2::text IS NULL OR name = $2) ORDER BY queue_id",
    2, {TIMESTAMPTZOID, TEXTOID}, nullptr};

// ...then its failed or cancelled jobs (the states $4) before the cutoff.
// Planned for each call's values (custom_plan): with the cutoff and the states
// known, the planner sees how few rows qualify and takes jobs_dead_letters_idx
// (queue_id, state, finished_at), one range per state, so the failed jobs kept
// longer are not walked by the purge of the cancelled ones; a generic plan
// cannot, and scans the table. No ORDER BY, so a large backlog is found by a
// scan that stops at the limit.
Statement kPurgeQueue = {
    "WITH doomed AS ("
    "   SELECT id FROM claimqueue.jobs"
    "   WHERE queue_id = $1 AND state = ANY ($4::text[]) AND finished_at < $2"
    "   LIMIT $3 FOR UPDATE SKIP LOCKED)"
    " DELETE FROM claimqueue.jobs j WHERE j.id = ANY (ARRAY(SELECT id FROM doomed))"
    "   AND j.state = ANY ($4::text[])",
    4, {INT4OID, TIMESTAMPTZOID, INT4OID, TEXTARRAYOID}, nullptr, true};

// Done jobs past their queue's retention in the table's blocks [$1, $2), read
// by a TID range scan: no index lists done jobs, so that a completion writes
// one index entry, the primary key's (tables.sql). $3 and $4 are the queues
// and their cutoffs (kPurgeCutoffs's), passed in rather than joined from
// claimqueue.queues: under Citus that is a reference table, which Citus does
// not let a DELETE of a shard join.
Statement kPurgeDoneRange = {
    "WITH doomed AS ("
    "   SELECT j.id FROM claimqueue.jobs j"
    "   JOIN unnest($3::integer[], $4::timestamptz[]) AS c(queue_id, cutoff)"
    "     ON c.queue_id = j.queue_id"
    "   WHERE j.ctid >= $1 AND j.ctid < $2 AND j.state = 'done' AND j.finished_at < c.cutoff"
    "   LIMIT $5 FOR UPDATE OF j SKIP LOCKED)"
    " DELETE FROM claimqueue.jobs j WHERE j.id = ANY (ARRAY(SELECT id FROM doomed))"
    "   AND j.state = 'done'",
    5, {TIDOID, TIDOID, INT4ARRAYOID, TIMESTAMPTZARRAYOID, INT4OID}, nullptr};

// The earliest done job of each queue left in the blocks [$1, $2)
// (DoneSweep's bound).
Statement kEarliestDoneInRange = {
    "SELECT queue_id, pg_catalog.min(finished_at) FROM claimqueue.jobs"
    " WHERE ctid >= $1 AND ctid < $2 AND state = 'done' GROUP BY queue_id",
    2, {TIDOID, TIDOID}, nullptr};

// How many blocks the table `relid` (InvalidOid: claimqueue.jobs) has now.
BlockNumber JobsBlocks(Oid relid)
{
    Relation rel = table_open(OidIsValid(relid) ? relid : JobsRelid(), AccessShareLock);
    BlockNumber n = RelationGetNumberOfBlocks(rel);
    table_close(rel, AccessShareLock);
    return n;
}

// The one timestamp `stmt` returns; `none` when it returns no row or NULL.
TimestampTz EarliestTime(Statement *stmt, Datum *args, TimestampTz none)
{
    bool isnull = true;
    Datum value = 0;
    if (Execute(stmt, args, nullptr, 1) == 1)
        value = ResultValue(0, 1, &isnull);
    return isnull ? none : DatumGetTimestampTz(value);
}

Datum BlockStart(BlockNumber block)
{
    ItemPointer tid = (ItemPointer) palloc(sizeof(ItemPointerData));
    ItemPointerSet(tid, block, 0);  // offset 0 sorts before every tuple of the block
    return PointerGetDatum(tid);
}

// DoneSweep's tables: a queue's id and the earliest finished_at noted for it.
struct QueueEarliest {
    int32 queue_id;
    TimestampTz earliest;
};

HTAB *NewQueueTimes(DoneSweep *sweep)
{
    if (sweep->context == nullptr)
        sweep->context =
            AllocSetContextCreate(TopMemoryContext, "claimqueue done sweep", ALLOCSET_SMALL_SIZES);
    HASHCTL ctl;
    memset(&ctl, 0, sizeof(ctl));
    ctl.keysize = sizeof(int32);
    ctl.entrysize = sizeof(QueueEarliest);
    ctl.hcxt = sweep->context;
    return hash_create("claimqueue done sweep", 64, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

void DropQueueTimes(HTAB **times)
{
    if (*times != nullptr)
        hash_destroy(*times);
    *times = nullptr;
}

// Notes, for each queue, the earliest done job left in the blocks of `range`
// (this statement sees the deletions made before it in the transaction).
void NoteEarliestDone(DoneSweep *sweep, Datum *range)
{
    uint64 n = Execute(&kEarliestDoneInRange, range, nullptr);
    if (n == 0)
        return;
    if (sweep->kept == nullptr)
        sweep->kept = NewQueueTimes(sweep);
    for (uint64 i = 0; i < n; i++) {
        bool isnull;
        int32 queue_id = DatumGetInt32(ResultValue(i, 1, &isnull));
        Datum earliest = ResultValue(i, 2, &isnull);
        if (isnull)
            continue;  // done jobs without finished_at: retention never purges them
        bool found;
        auto *entry = (QueueEarliest *) hash_search(sweep->kept, &queue_id, HASH_ENTER, &found);
        if (!found || DatumGetTimestampTz(earliest) < entry->earliest)
            entry->earliest = DatumGetTimestampTz(earliest);
    }
}

// Whether the bound shows that no done job of any queue is past its retention:
// each queue's cutoff is before the time its bound gives.
bool NoDoneJobDue(const DoneSweep *sweep, uint64 nqueues, const Datum *ids,
                  const Datum *cutoffs, TimestampTz now)
{
    if (sweep->no_done_before == DT_NOBEGIN || now - sweep->bound_learned >= kDoneBoundUsec)
        return false;
    for (uint64 i = 0; i < nqueues; i++) {
        TimestampTz cutoff = DatumGetTimestampTz(cutoffs[i]);
        if (cutoff >= sweep->no_done_before)
            return false;
        if (sweep->bound == nullptr)
            continue;
        int32 queue_id = DatumGetInt32(ids[i]);
        auto *entry = (const QueueEarliest *) hash_search(sweep->bound, &queue_id, HASH_FIND, nullptr);
        if (entry != nullptr && cutoff >= entry->earliest)
            return false;
    }
    return true;
}

// The text[] of the first `n` of `states`.
Datum StateArray(const char *const *states, int n)
{
    Datum values[3];
    for (int i = 0; i < n; i++)
        values[i] = CStringGetTextDatum(states[i]);
    return PointerGetDatum(construct_array(values, n, TEXTOID, -1, false, TYPALIGN_INT));
}

const char *const kCancelledStates[1] = {"cancelled"};
const char *const kFailedStates[1] = {"failed"};

constexpr int kSqlFunctionBatch = 1000;

// Returns the n running jobs the last statement locked (columns as
// kLockExpired's) to ready after their queue's backoff, or to failed when
// their attempts are used up, with `why` as the attempt's error.
void ReturnLocked(uint64 n, TimestampTz now, const char *why)
{
    if (n == 0)
        return;
    Datum *ids = (Datum *) palloc(sizeof(Datum) * n);
    Datum *states = (Datum *) palloc(sizeof(Datum) * n);
    Datum *run_ats = (Datum *) palloc(sizeof(Datum) * n);
    bool *run_at_nulls = (bool *) palloc(sizeof(bool) * n);
    for (uint64 i = 0; i < n; i++) {
        int32 attempt = DatumGetInt32(ResultValue(i, 2));
        bool dead = attempt >= DatumGetInt32(ResultValue(i, 3));
        ids[i] = ResultValue(i, 1);
        states[i] = CStringGetTextDatum(dead ? "failed" : "ready");
        run_at_nulls[i] = dead;
        run_ats[i] = dead ? 0
                          : TimestampTzGetDatum(AfterBackoff(now, attempt, ResultValue(i, 4),
                                                             ResultValue(i, 5)));
        CountTransition(DatumGetInt32(ResultValue(i, 7)),
                        dead ? Transition::kReapDead : Transition::kReapRetry);
        if (!dead)  // its queue's waiters wake once this batch commits
            NoteJobsReady(TextDatumGetCString(ResultValue(i, 6)), 1,
                          DatumGetTimestampTz(run_ats[i]));
        else  // and so do the job's own (await_jobs)
            NoteJobFinished(DatumGetInt64(ids[i]));
    }
    int dims[1] = {(int) n};
    int lbs[1] = {1};
    Datum update[5] = {
        PointerGetDatum(Int8Array(ids, (int) n)),
        PointerGetDatum(construct_array(states, (int) n, TEXTOID, -1, false, TYPALIGN_INT)),
        PointerGetDatum(construct_md_array(run_ats, run_at_nulls, 1, dims, lbs, TIMESTAMPTZOID,
                                           8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)),
        TimestampTzGetDatum(now), CStringGetTextDatum(why)};
    Execute(JobsHaveOwnerColumn() ? &kReturnOwnedRunning : &kReturnRunning, update, nullptr);
}

}  // namespace

int64 ReapExpiredBatch(text *queue, int limit)
{
    return ReapExpiredFrom(queue, limit, nullptr);
}

int64 ReapExpiredFrom(text *queue, int limit, LeaseScan *scan)
{
    ConnectSpi();
    TimestampTz bound = scan ? LeaseBound() : DT_NOBEGIN;  // before any snapshot here
    TimestampTz now = ClockNow();
    Datum find[4] = {TimestampTzGetDatum(now), PointerGetDatum(queue), Int32GetDatum(limit),
                     TimestampTzGetDatum(scan ? scan->from : DT_NOBEGIN)};
    uint64 n = Execute(&kLockExpired, find, queue ? nullptr : " n  ");
    ReturnLocked(n, now, "lease expired");
    if (scan != nullptr) {
        scan->next_from = scan->from;  // a full batch: the next one starts here again
        if (n < (uint64) limit) {
            Datum probe[1] = {TimestampTzGetDatum(scan->from)};
            scan->next_from = Min(bound, EarliestTime(&kEarliestLease, probe, DT_NOEND));
            scan->next_from = Max(scan->next_from, scan->from);
        }
    }
    FinishSpi();
    return (int64) n;
}

int64 ReapDisconnectedBatch(text *queue, int limit)
{
    // Without the preload no session lists a token (and none could claim
    // with release_on_disconnect); a database not yet updated has no owners.
    if (!OwnersAvailable() || !JobsHaveOwnerColumn())
        return 0;
    ConnectSpi();
    TimestampTz now = ClockNow();
    // Read before the statement's snapshot is taken: a row that snapshot
    // shows was claimed by a session that had listed its token by then.
    LiveOwners live = ListLiveOwners();
    Datum find[4] = {Int64GetDatum(live.newest), PointerGetDatum(Int8Array(live.tokens, live.n)),
                     PointerGetDatum(queue), Int32GetDatum(limit)};
    uint64 n = Execute(&kLockDisconnected, find, queue ? nullptr : "  n ");
    ReturnLocked(n, now, "session ended");
    FinishSpi();
    return (int64) n;
}

namespace {

// The done jobs past retention in the sweep's range, up to `want` (SPI
// connected). A range read to the end (the batch not filled) is behind the
// sweep; after the table's last block it starts again at the first.
int64 PurgeDoneRange(Datum queue_ids, Datum cutoffs, int want, TimestampTz now,
                     DoneSweep *sweep)
{
    BlockNumber blocks = JobsBlocks(sweep->relid);
    if (sweep->next >= blocks)
        sweep->next = 0;  // the table got shorter (VACUUM, TRUNCATE, a rewrite)
    if (sweep->next == 0 && sweep->began == DT_NOBEGIN)
        sweep->began = now;
    BlockNumber end = blocks - sweep->next > kDoneSweepBlocks ? sweep->next + kDoneSweepBlocks
                                                              : blocks;
    uint64 n = 0;
    if (end > sweep->next) {
        Datum range[5] = {BlockStart(sweep->next), BlockStart(end), queue_ids, cutoffs,
                          Int32GetDatum(want)};
        n = Execute(&kPurgeDoneRange, range, nullptr);
    }
    if ((int64) n >= want)
        return (int64) n;  // more may be left in this range: the next call reads it again
    if (sweep->bounded && end > sweep->next) {
        Datum range[2] = {BlockStart(sweep->next), BlockStart(end)};
        NoteEarliestDone(sweep, range);
    }
    if (end < blocks) {
        sweep->next = end;
        return (int64) n;
    }
    sweep->next = 0;
    sweep->wrapped = true;
    if (sweep->bounded && sweep->began != DT_NOBEGIN) {
        DropQueueTimes(&sweep->bound);
        sweep->bound = sweep->kept;
        sweep->kept = nullptr;
        sweep->no_done_before = sweep->began;
        sweep->bound_learned = now;
    }
    DropQueueTimes(&sweep->kept);
    sweep->began = DT_NOBEGIN;
    return (int64) n;
}

}  // namespace

int64 PurgeFinishedFrom(text *queue, int limit, DoneSweep *sweep)
{
    ConnectSpi();
    TimestampTz now = ClockNow();
    Datum args[2] = {TimestampTzGetDatum(now), PointerGetDatum(queue)};
    uint64 nqueues = Execute(&kPurgeCutoffs, args, queue ? nullptr : " n");
    // SPI_tuptable belongs to the last statement: keep the cutoffs apart.
    Datum *ids = (Datum *) palloc(sizeof(Datum) * (nqueues + 1));
    Datum *cutoffs = (Datum *) palloc(sizeof(Datum) * (nqueues + 1));
    Datum *failed_cutoffs = (Datum *) palloc(sizeof(Datum) * (nqueues + 1));
    for (uint64 i = 0; i < nqueues; i++) {
        ids[i] = ResultValue(i, 1);
        cutoffs[i] = ResultValue(i, 2);
        failed_cutoffs[i] = ResultValue(i, 3);
    }
    Datum cancelled_states = StateArray(kCancelledStates, 1);
    Datum failed_states = StateArray(kFailedStates, 1);
    int64 total = 0;
    for (uint64 i = 0; i < nqueues && total < limit; i++) {
        Datum purge[4] = {ids[i], cutoffs[i], Int32GetDatum(limit - (int) total),
                          cancelled_states};
        total += (int64) Execute(&kPurgeQueue, purge, nullptr);
        if (total >= limit)
            break;
        Datum failed[4] = {ids[i], failed_cutoffs[i], Int32GetDatum(limit - (int) total),
                           failed_states};
        total += (int64) Execute(&kPurgeQueue, failed, nullptr);
    }
    bool nothing_due = NoDoneJobDue(sweep, nqueues, ids, cutoffs, now);
    if (nqueues == 0)
        sweep->wrapped = true;  // no queue, so no done job to look for
    else if (total < limit && !nothing_due)
        total += PurgeDoneRange(
            PointerGetDatum(construct_array(ids, (int) nqueues, INT4OID, 4, true, TYPALIGN_INT)),
            PointerGetDatum(construct_array(cutoffs, (int) nqueues, TIMESTAMPTZOID, 8,
                                            FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)),
            (int) (limit - total), now, sweep);
    FinishSpi();
    return total;
}

void RestartDoneSweep(DoneSweep *sweep)
{
    bool bounded = sweep->bounded;
    Oid relid = sweep->relid;
    if (sweep->context != nullptr)
        MemoryContextDelete(sweep->context);  // the tables with it
    *sweep = DoneSweep();
    sweep->bounded = bounded;
    sweep->relid = relid;
}

namespace {

// Runs `next_batch` in the caller's transaction until it says there is no
// more (it returns how many jobs it did and sets *more); a LOG line names what
// was done.
template <typename Batch>
int64 RunAllBatches(text *queue, const char *done, Batch next_batch)
{
    ConnectSpi();  // the batches nest their own SPI connections inside this one
    if (queue)
        RequireQueueExists(queue);
    int64 total = 0;
    for (bool more = true; more;)
        total += next_batch(&more);
    FinishSpi();
    if (total > 0)
        ereport(LOG, (errmsg("claimqueue: %s %lld jobs", done, (long long) total)));
    return total;
}

// Batches of `batch` until one comes back short.
int64 RunUntilShort(int64 (*batch)(text *, int), text *queue, const char *done)
{
    return RunAllBatches(queue, done, [batch, queue](bool *more) {
        int64 n = batch(queue, kSqlFunctionBatch);
        *more = n >= kSqlFunctionBatch;
        return n;
    });
}

}  // namespace

int64 ReapExpired(text *queue)
{
    return OnEachJobsTarget([queue](const JobsTarget &) {
        return RunUntilShort(ReapDisconnectedBatch, queue,
                             "released the ended sessions' claims on") +
               RunUntilShort(ReapExpiredBatch, queue, "returned the expired leases of");
    });
}

int64 PurgeFinished(text *queue)
{
    // Every range of the table once, from its first block: the sweep wraps
    // only in a batch that found the last range's done jobs all purged, and
    // the failed and cancelled ones too (they come first in each batch).
    return OnEachJobsTarget([queue](const JobsTarget &target) {
        DoneSweep sweep;
        sweep.relid = target.relid;
        return RunAllBatches(queue, "purged past their retention", [queue, &sweep](bool *more) {
            int64 n = PurgeFinishedFrom(queue, kSqlFunctionBatch, &sweep);
            *more = !sweep.wrapped;
            return n;
        });
    });
}

bool QueueJobsHere(int32 queue_id, Oid *relid, const char **route)
{
    Oid jobs = JobsRelid();
    *relid = jobs;
    *route = nullptr;
    if (!DistributedByCitus(jobs))
        return true;
    JobsShard shard = LocalJobsShard(jobs, queue_id);
    char *name = OidIsValid(shard.relid) ? get_rel_name(shard.relid) : nullptr;
    if (name == nullptr)
        return false;
    *relid = shard.relid;
    *route = quote_qualified_identifier(get_namespace_name(get_rel_namespace(shard.relid)), name);
    return true;
}

Statement kQueueIds = {"SELECT queue_id FROM claimqueue.queues", 0, {}, nullptr};

ArrayType *QueueIdsOn(const JobsTarget &target)
{
    if (target.route == nullptr)
        return nullptr;
    ConnectSpi();
    uint64 n = Execute(&kQueueIds, nullptr, nullptr);
    Datum *ids = (Datum *) palloc(sizeof(Datum) * (n + 1));
    for (uint64 i = 0; i < n; i++)
        ids[i] = ResultValue(i, 1);
    FinishSpi();
    Oid jobs = JobsRelid();
    int found = 0;
    for (uint64 i = 0; i < n; i++)
        if (LocalJobsShard(jobs, DatumGetInt32(ids[i])).shardid == target.shardid)
            ids[found++] = ids[i];
    return construct_array(ids, found, INT4OID, 4, true, TYPALIGN_INT);
}

}  // namespace claimqueue

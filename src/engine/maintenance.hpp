// Reaping and retention: the passes the reaper worker runs in every database
// (src/worker) and that reap() and purge() run by hand.
#pragma once

#include "engine/job_rows.hpp"
#include "engine/job_shards.hpp"
#include "pg/pg.hpp"
#include "pg/statement.hpp"

namespace claimqueue {

// Returns up to `limit` running jobs whose lease has expired to ready (after
// the queue's backoff) or, when their attempts are used up, to failed, with
// "lease expired" as that attempt's error. Skips rows other sessions hold
// (SKIP LOCKED): it never waits for a worker, and a concurrent complete() and
// this pass serialize on the row, so exactly one of them wins. `queue` may be
// NULL (every queue). Returns how many jobs it returned; the waiters of the
// queues that got ready jobs wake when the transaction commits.
int64 ReapExpiredBatch(text *queue, int limit);

// The reaper's pass over expired leases starts at a mark instead of the
// earliest lease, so it does not step over the index entries of every job
// finished since an old snapshot was taken (which nothing can remove while it
// lasts). `from` is the mark; *next_from is where the next pass may start,
// once this batch has committed: the earliest lease this batch's snapshot
// still shows running, and never past a claim still in flight (LeaseBound).
struct LeaseScan {
    TimestampTz from;
    TimestampTz next_from;
};
int64 ReapExpiredFrom(text *queue, int limit, LeaseScan *scan);

// Returns up to `limit` running jobs claimed with release_on_disconnect whose
// session has ended (owners/owners.hpp) as ReapExpiredBatch returns expired
// ones, with "session ended" as the attempt's error, whatever their lease
// says. Nothing without the preload or the owner_session column.
int64 ReapDisconnectedBatch(text *queue, int limit);

// Deletes up to `limit` done, failed and cancelled jobs that finished longer
// ago than their queue's retention (failed ones: its failed_retention, when
// set), skipping rows other sessions hold. Failed and cancelled jobs are found
// through their index, all in one call; done jobs have none (a completion
// writes one index entry, the primary key's), so each call reads one range of
// kDoneSweepBlocks blocks of the table, where *sweep says, and moves *sweep on
// past it once the range has nothing left to purge: the next range, or back
// to the first block after the last one (wrapped is then set).
//
// A sweep with `bounded` set (the reaper's) also learns, from each whole
// sweep, for each queue a time no done job of it finished before: the earliest
// finished_at of the queue's done jobs it left in the table, or the time the
// sweep began if that is earlier (a job finished during the sweep, in a range
// read already, finished after it began; so did every job of a queue it found
// none of). While each queue's cutoff (now minus its retention, read again on
// every call) is before its time, nothing can be past its retention and a call
// reads no range, so a history younger than its retention costs a pass
// nothing, and a queue keeping old jobs for long does not make the sweep run
// for a queue whose short retention nothing has reached. The bound is trusted
// for kDoneBoundUsec after the sweep that learned it, since a done row written
// with an earlier finished_at (a restore into a live database, a job finished
// by a transaction that committed after the sweep read its range) would be
// missed while it lasts.
struct DoneSweep {
    BlockNumber next = 0;
    bool wrapped = false;
    bool bounded = false;
    TimestampTz began = DT_NOBEGIN;    // when the sweep under way read its first range
    HTAB *kept = nullptr;              // queue id -> the earliest done job it left so far
    TimestampTz no_done_before = DT_NOBEGIN;  // when the sweep of the bound began; DT_NOBEGIN: none yet
    HTAB *bound = nullptr;             // queue id -> the earliest done job that sweep left
    TimestampTz bound_learned = 0;
    MemoryContext context = nullptr;   // the two tables' (under TopMemoryContext)
    Oid relid = InvalidOid;            // the table swept: a Citus shard, or claimqueue.jobs
};
constexpr int64 kDoneBoundUsec = 60 * 60 * USECS_PER_SEC;
constexpr BlockNumber kDoneSweepBlocks = 1024;  // 8 MB of table a reaper pass
int64 PurgeFinishedFrom(text *queue, int limit, DoneSweep *sweep);
// Starts *sweep again from the first block and forgets its bound (after a
// failed pass, whose rolled-back deletions the sweep's notes do not show).
void RestartDoneSweep(DoneSweep *sweep);

// The SQL functions reap() (ended sessions' claims, then expired leases) and
// purge(): batches until nothing is left (purge: every range of the table
// once), all in the caller's transaction (a function cannot commit between batches; the
// worker commits after each one).
int64 ReapExpired(text *queue);
int64 PurgeFinished(text *queue);

// Runs `run` on each table the passes read on this node (JobsTargets): the
// jobs table on one server; under Citus each local shard in turn, with the
// statements routed to it, and nothing on a node that holds none. Returns the
// sum of what `run` returns.
template <typename Run>
int64 OnEachJobsTarget(Run run)
{
    JobsTarget *targets;
    int n = JobsTargets(JobsRelid(), &targets);
    int64 total = 0;
    for (int i = 0; i < n; i++) {
        const char *previous = RouteJobsTo(targets[i].route);
        char *restore = previous != nullptr ? pstrdup(previous) : nullptr;
        total += run(targets[i]);
        (void) RouteJobsTo(restore);
    }
    return total;
}

// The queues whose jobs are on `target`, a Citus shard here (their ids, for
// RunDueSchedulesBatch); nullptr for the table itself, which holds every queue.
ArrayType *QueueIdsOn(const JobsTarget &target);

// Where queue_id's jobs are on this node, for a recount (metrics'
// QueueJobsWhere): claimqueue.jobs on one server; under Citus the local shard
// that holds them, with its route, or false when it is on another node.
bool QueueJobsHere(int32 queue_id, Oid *relid, const char **route);

}  // namespace claimqueue

// The claim engine's hot path: claimqueue.jobs read, locked and updated one
// row at a time through PostgreSQL's executor, with no SPI and no planner, the
// way logical replication's apply worker changes rows (index scan, tuple lock,
// ExecSimpleRelationUpdate). An update goes through the executor's own checks:
// CHECK constraints, every index whose predicate holds, row triggers, WAL.
//
// A JobRows is opened at the start of a call and closed at its end. Its
// executor state is built once per backend and kept (the index predicates and
// CHECK expressions compiled once), and thrown away when the table or one of
// its indexes changes (a relcache invalidation), after an error that
// interrupted its use, or when it is in use already (a trigger on the table
// calling the API: that call builds its own for the duration).
#pragma once

#include "pg/pg.hpp"

namespace claimqueue {

struct JobRows;

// claimqueue.jobs's oid, looked up once per backend and again after the
// table is dropped or replaced; 42P01 when the table is not there.
Oid JobsRelid();

// Opens claimqueue.jobs (ROW EXCLUSIVE). Its indexes are opened (ROW
// EXCLUSIVE) as the call needs them: when it scans one, and before a write,
// each index the new version gets an entry in; an UPDATE would lock all of
// them. When a write may run added code (a trigger, a user's function in an
// index or a constraint) all are opened here, as the executor opens them.
//
// Under Citus (claimqueue.distribute()) the rows are those of the local shard
// holding queue_id's jobs, its indexes matched by name plus "_<shard id>";
// a queue whose shard is on another node raises QC007 (0A000 on the
// coordinator, which holds no shard: a call Citus did not delegate). On one
// server queue_id is not looked at.
JobRows *OpenJobRows(int32 queue_id);
// The same for the calls that name a job only: under Citus, the local shard
// whose primary key has an entry for `id` (each of this node's shards is
// asked, by its key's first column); QC007 when none has.
JobRows *OpenJobRowsOfJob(int64 id);
// Whether `rows` hold queue_id's jobs: always on one server; under Citus,
// whether queue_id's shard is the one open.
bool JobRowsHoldQueue(JobRows *rows, int32 queue_id);
// Whether Citus distributes claimqueue.jobs.
bool JobsDistributed();
// Takes a new statement's snapshot for what follows, as SPI would for each
// statement (READ COMMITTED: taken now, after the changes made so far;
// REPEATABLE READ and SERIALIZABLE: the transaction's). A claim takes it after
// the cursors' bound; LockRunningJob takes one if none was taken yet.
void NewJobRowsSnapshot(JobRows *rows);
// Closes them, fires the AFTER triggers the changes queued, and makes the
// changes visible to the transaction's later commands.
void CloseJobRows(JobRows *rows);

// A job's columns, as read from its row.
struct JobRow {
    int64 id;
    int32 queue_id;
    const char *state;  // palloc'd
    int priority;
    int32 attempt;
    int32 max_attempts;
    TimestampTz run_at;
    TimestampTz created_at;
    Datum payload;      // jsonb, detoasted if it was stored out of line
    bool has_dedup_key;
    int64 pos;          // -1 when NULL
};

// --- Claiming -----------------------------------------------------------------

// What a claim writes into each job it takes.
struct ClaimWrite {
    text *worker;
    TimestampTz now;
    int64 lease_usec;
    int64 owner;  // owner_session (release_on_disconnect); 0: NULL
};

// Whether claimqueue.jobs has the columns of claims that die with their
// session (owner_session, 0.5.0): a database not yet updated has not.
bool JobRowsHaveOwners(JobRows *rows);
bool JobsHaveOwnerColumn();

// Claims up to `limit` jobs of the queue, in ready-index order (priority
// descending, then position) from position `from` of lane `priority`, or from
// the start of the queue's ready jobs when `priority` is kNoLane: each visible
// ready job is locked with SKIP LOCKED semantics (TM_WouldBlock: another
// session holds it), checked again on the version locked, and marked running.
// Appends one dequeue() row per job to `out`. *first_seen is the position of
// the first job the snapshot showed claimable, locked or not (-1 if none): the
// claim cursors' probe.
// `gate` (nullptr: the queue has no concurrency limit) admits each job
// before it is locked, by its concurrency key (claim_limits.hpp).
constexpr int kNoLane = INT32_MIN;
struct LimitGate;
int ClaimFromIndex(JobRows *rows, int32 queue_id, int priority, int64 from, int limit,
                   const ClaimWrite &write, LimitGate *gate, int64 *first_seen,
                   Tuplestorestate *out, TupleDesc out_desc);

// The position of the first job at or past `from` in lane (queue_id,
// priority) that the snapshot shows claimable, locked or not; -1 if none.
// Claims nothing: a fair claim's probe for the lane cursor.
int64 FirstClaimable(JobRows *rows, int32 queue_id, int priority, int64 from);

// Fair claiming (0.5.0): a lane's jobs by tenant. A tenant is a concurrency
// key, known by its 64-bit hash (jobs_fair_idx holds the ready jobs that have
// a key, by hash, then position, in each lane), or the lane's jobs without a
// key (read from jobs_ready_idx). ClaimTenant claims as ClaimFromIndex does,
// from the tenant's jobs only: key_hash nullptr claims jobs without a key.
// *first_seen is the tenant's own probe.
int ClaimTenant(JobRows *rows, int32 queue_id, int priority, const int64 *key_hash, int64 from,
                int limit, const ClaimWrite &write, LimitGate *gate, int64 *first_seen,
                Tuplestorestate *out, TupleDesc out_desc);
// The hash jobs_fair_idx orders a concurrency key by: hashtextextended(key, 0).
int64 TenantKeyHash(text *key);
// Whether the table has jobs_fair_idx (0.5.0).
bool JobRowsHaveFairIndex(JobRows *rows);
// The first key hash after *after (nullptr: the first of all) that lane
// (queue_id, priority) has an entry of in jobs_fair_idx, into *key_hash;
// false when none. Reads one index entry and no row, so a key whose entries
// are all of claimed jobs (an old snapshot keeps them) is returned too: its
// claim finds nothing.
bool NextTenant(JobRows *rows, int32 queue_id, int priority, const int64 *after,
                int64 *key_hash);
// The highest priority below `below` (kNoLane: any) that the queue has an
// entry of in jobs_ready_idx, or kNoLane; as NextTenant, from the index.
int NextReadyPriority(JobRows *rows, int32 queue_id, int below);

// The running jobs of the queue, or of its concurrency key `key` (nullptr: all
// of the queue's), counted up to `stop_at`: committed ones and those of
// transactions still in progress: a key's from jobs_running_key_idx, the
// queue's from jobs_running_idx (0.5.0).
int CountRunning(JobRows *rows, int32 queue_id, text *key, int stop_at);
// Whether the table has the concurrency key column and its index (0.5.0).
bool JobRowsHaveKeys(JobRows *rows);
// The oid of the claimqueue.jobs that `rows` has open.
Oid JobRowsRelid(JobRows *rows);

// --- Enqueuing ------------------------------------------------------------------

// A new job's columns, as enqueue() gives them. The others take their
// defaults (id from the sequence, state 'ready', attempt 0), as an INSERT's.
struct NewJobRow {
    int32 queue_id;
    Datum payload;       // jsonb
    TimestampTz run_at;
    int16 priority;
    int32 max_attempts;
    TimestampTz created_at;
    int64 pos;           // -1: NULL (a job waiting for its run_at)
    text *concurrency_key;  // nullptr: the column's default (none)
    text *dedup_key;        // nullptr: none
    const char *queue_name; // written only where the table has the column queue (Citus)
};

// Whether InsertJob can write the row: the table has no triggers and no
// stored generated columns, so nothing an INSERT statement would run is
// skipped, and (for a job with a dedup key) it has jobs_dedup_idx.
// Otherwise the caller runs an INSERT.
bool JobRowsInsertDirectly(JobRows *rows, bool dedup);
// Inserts the job as INSERT would: column defaults, NOT NULL and CHECK
// constraints, an entry in every index whose predicate the row satisfies
// (the unique ones checked), WAL; true, with its id in *id.
// A job with a dedup key is inserted as INSERT ... ON CONFLICT DO NOTHING
// with jobs_dedup_idx as the arbiter inserts it (a speculative insertion):
// when a ready or running job of its queue has the key, after waiting for a
// transaction that is inserting or changing that job, nothing is written
// and false is returned, with that job's id in *id. READ COMMITTED only.
bool InsertJob(JobRows *rows, const NewJobRow &job, int64 *id);

// --- Finishing a running job ---------------------------------------------------

// Finds job `id` as this statement's snapshot shows it (the primary key);
// true when it is running under `attempt` (read into *job). Locks nothing.
bool FindRunningJob(JobRows *rows, int64 id, int32 attempt, JobRow *job);

// Until called again with nullptr (or the transaction ends), FindRunningJob
// raises QC002 for a job that is not in the queue named `queue` (the _in
// calls: complete_in(queue, id, attempt) and the others).
void ExpectJobsOfQueue(const char *queue);

// The job's state and attempt as the latest snapshot shows them, read by the
// primary key of the table `rows` has open (an error's report, without SQL);
// false when it has no job `id`.
bool ReadLatestJobState(JobRows *rows, int64 id, char **state, int32 *attempt);

// The new version of the job: `state` and the columns given. A NULL-able
// timestamp is written as NULL when it is DT_NOBEGIN.
struct JobUpdate {
    const char *state;               // nullptr: unchanged
    bool set_finished_at;
    TimestampTz finished_at;
    bool set_lease;
    TimestampTz lease_expires_at;
    bool set_run_at;
    TimestampTz run_at;
    bool set_last_error;
    text *last_error;                // nullptr: NULL
    bool set_pos;
    int64 pos;                       // -1: NULL
    struct varlena *result;          // jsonb; nullptr: unchanged (a running job has none)
    int32 add_max_attempts;          // added to the job's max_attempts (snooze: 1)
    Jsonb *error_entry;              // a one-element array appended to jobs.errors (0.5.0)
    const char *action;              // "complete", "fail", ...: names the call in an error
};

// Writes the new version of the job FindRunningJob found, as
// UPDATE ... WHERE id = $1 AND attempt = $2 AND state = 'running' would: it
// waits for a session that holds the row; under READ COMMITTED a version
// changed meanwhile is locked in its latest form and checked again (still
// running under `attempt`: updated); under REPEATABLE READ or SERIALIZABLE it
// is a serialization failure (40001). False when the job is no longer running
// under `attempt` (the caller says why). A BEFORE UPDATE row trigger that
// skips the update (returns NULL) raises 09000: the job is still running,
// and a call that returned as if it had finished it would lie.
bool UpdateRunningJob(JobRows *rows, int32 attempt, const JobUpdate &update);

// The session module calls these: a change of the table or of one of its
// indexes drops the kept executor state; so does a (sub)transaction abort
// that interrupted its use.
void JobRowsAtRelationChange(Oid relid);
void JobRowsAtTransactionEnd(XactEvent event);
void JobRowsAtSubtransactionEnd(SubXactEvent event);

}  // namespace claimqueue

// claimqueue.jobs one row at a time through the executor (see job_rows.hpp).
#include "engine/job_rows.hpp"

extern "C" {
#include "access/detoast.h"
#include "access/genam.h"
#include "access/stratnum.h"
#include "access/transam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/itup.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_namespace.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "postmaster/postmaster.h"
#include "rewrite/rewriteHandler.h"
#include "storage/lmgr.h"
#include "storage/bufmgr.h"
#include "storage/smgr.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/memutils.h"
#include "utils/relcache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
}

#include "core/rules.hpp"
#include "engine/claim_limits.hpp"
#include "engine/job_shards.hpp"
#include "engine/queue_cache.hpp"
#include "pg/errors.h"
#include "pg/compat.hpp"
#include "pg/search_path.hpp"
#include "pg/statement.hpp"

namespace claimqueue {
namespace {

enum Column {
    kId, kQueueId, kState, kPriority, kAttempt, kMaxAttempts, kRunAt, kCreatedAt, kStartedAt,
    kFinishedAt, kLeaseExpiresAt, kWorker, kDedupKey, kLastError, kPayload, kPos, kResult,
    kOwnerSession, kConcurrencyKey, kErrors, kQueue, kColumns
};
// Columns added after 0.4.0: a database not yet updated lacks them, and the
// feature they carry is off there (attnum InvalidAttrNumber). queue, the
// queue's name, exists only once distribute() made it Citus's distribution
// column: on one server it is absent and never looked at.
constexpr int kFirstOptionalColumn = kOwnerSession;
// Distinct combinations of set columns a writer remembers: a claim's and one
// per kind of JobUpdate; a few more are built again when needed.
constexpr int kColumnSetCache = 8;
const char *const kColumnNames[kColumns] = {
    "id", "queue_id", "state", "priority", "attempt", "max_attempts", "run_at", "created_at",
    "started_at", "finished_at", "lease_expires_at", "worker", "dedup_key", "last_error",
    "payload", "pos", "result", "owner_session", "concurrency_key", "errors", "queue"};

// The executor state for updates of claimqueue.jobs, with the index
// predicates and CHECK expressions compiled as the executor compiles them on
// first use. Everything lives in `context`.
struct Writer {
    MemoryContext context;
    Oid relid;
    int64 shardid;    // a shard of the distributed table (Citus): its id; else 0
    AttrNumber attnum[kColumns];
    int nindexes;
    Oid *index_oids;
    int pkey_index;   // positions in index_oids / ri_IndexRelationDescs
    // jobs_pkey when its key is the id (with queue_id under Citus), which no
    // update changes: its entries are made without the uniqueness check
    // (UpdateTupleAndIndexes).
    int same_key_index;
    int ready_index;
    int running_index;      // jobs_running_idx led by queue_id (0.5.0), -1 when not
    int running_key_index;  // jobs_running_key_idx (0.5.0), -1 when absent
    int fair_index;         // jobs_fair_idx (0.5.0), -1 when absent
    int dedup_index;        // jobs_dedup_idx, -1 when absent
    List *dedup_arbiter;    // its oid, once its uniqueness operators are looked up
    EState *estate;
    ResultRelInfo *rri;
    TupleTableSlot *scan_slot;  // a version as an index scan returned it
    TupleTableSlot *lock_slot;  // the version locked
    TupleTableSlot *new_slot;   // the version written
    TupleTableSlot *count_slot; // a running version a limited claim counts
    bool plain;                 // no row triggers, no generated columns: update directly
    bool runs_added_code;       // a write may run code someone added to the table
    bool in_use;
    // The columns the version being written sets (bit per Column), and the
    // updated-column sets published for them (see PublishUpdatedColumns).
    uint32 set_columns;
    uint32 published_columns;
    Bitmapset *column_sets[kColumnSetCache];
    uint32 column_set_masks[kColumnSetCache];
    int ncolumn_sets;
    // An insert's column defaults, compiled on the first insert: one per
    // attribute, nullptr where the column has none (NULL) or is dropped.
    ExprState **defaults;
};

// The backend's writer, kept between calls while the table has no triggers
// (a trigger function's cached state would outlive the call's memory).
Writer *kept = nullptr;
bool kept_valid = false;
Oid jobs_relid = InvalidOid;  // as last looked up; forgotten when it changes
bool jobs_distributed = false;  // whether Citus distributes it, as of that look-up
Oid last_job_shard = InvalidOid;  // the shard OpenJobRowsOfJob found a job in last

void Discard(Writer *w)
{
    if (w != nullptr)
        MemoryContextDelete(w->context);
}

}  // namespace

// The queue the job being finished must be in (ExpectJobsOfQueue), or nullptr.
static const char *expected_queue = nullptr;

// QC002 unless job `id`, of queue_id, is in the expected queue (by name: the
// cached id of a name may lag a drop and re-create).
static void RequireExpectedQueue(int64 id, int32 queue_id)
{
    const QueueFacts *facts = QueueFactsById(queue_id);
    if (facts != nullptr && strcmp(facts->name, expected_queue) == 0)
        return;
    ereport(ERROR, (errcode(ERRCODE_CQ_JOB_NOT_FOUND),
                    errmsg("job %lld is not in queue \"%s\"", (long long) id, expected_queue),
                    errhint("Name the queue the job was claimed from.")));
}

Oid JobsRelid()
{
    if (!OidIsValid(jobs_relid)) {
        jobs_relid = get_relname_relid("jobs", get_namespace_oid("claimqueue", false));
        jobs_distributed = OidIsValid(jobs_relid) && DistributedByCitus(jobs_relid);
    }
    if (!OidIsValid(jobs_relid))
        ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
                        errmsg("relation \"claimqueue.jobs\" does not exist")));
    return jobs_relid;
}

namespace {

// Builds a writer for `rel` (open), with its indexes open. In `parent`'s care.
bool IsAddedFunction(Oid function, void *)
{
    return function >= FirstNormalObjectId;
}

// Whether an expression tree calls a function that is not built in.
bool CallsAddedFunction(Node *node, void *context)
{
    if (node == nullptr)
        return false;
    if (check_functions_in_node(node, IsAddedFunction, context))
        return true;
    return WalkExpression(node, CallsAddedFunction, context);
}

// Whether writing a row may call a function that is not built in: one named
// by a CHECK constraint, an index's expression or predicate, or an index whose
// access method or operator families someone added (their support functions).
// claimqueue's own table has none; a trigger is checked by the caller.
bool RunsAddedCode(Relation rel, ResultRelInfo *rri)
{
    TupleConstr *constr = rel->rd_att->constr;
    for (int i = 0; constr != nullptr && i < constr->num_check; i++)
        if (CallsAddedFunction((Node *) stringToNode(constr->check[i].ccbin), nullptr))
            return true;
    for (int i = 0; i < rri->ri_NumIndices; i++) {
        Relation index = rri->ri_IndexRelationDescs[i];
        if (index->rd_rel->relam >= FirstNormalObjectId || index->rd_index->indisexclusion)
            return true;
        for (int k = 0; k < IndexRelationGetNumberOfKeyAttributes(index); k++)
            if (index->rd_opfamily[k] >= FirstNormalObjectId)
                return true;
        if (CallsAddedFunction((Node *) RelationGetIndexExpressions(index), nullptr) ||
            CallsAddedFunction((Node *) RelationGetIndexPredicate(index), nullptr))
            return true;
    }
    return false;
}

// Whether `index` is claimqueue.jobs's index `name`: on a shard of the
// distributed table (shardid > 0), Citus names it with "_<shard id>" appended.
bool IsIndex(Relation index, const char *name, int64 shardid)
{
    const char *actual = RelationGetRelationName(index);
    if (shardid == 0)
        return strcmp(actual, name) == 0;
    size_t len = strlen(name);
    char suffix[32];
    snprintf(suffix, sizeof(suffix), "_" INT64_FORMAT, shardid);
    return strncmp(actual, name, len) == 0 && strcmp(actual + len, suffix) == 0;
}

Writer *Build(Relation rel, int64 shardid, MemoryContext parent)
{
    MemoryContext context =
        AllocSetContextCreate(parent, "claimqueue jobs writer", ALLOCSET_DEFAULT_SIZES);
    MemoryContext caller = MemoryContextSwitchTo(context);
    Writer *w = (Writer *) palloc0(sizeof(Writer));
    w->context = context;
    w->relid = RelationGetRelid(rel);
    w->shardid = shardid;
    for (int c = 0; c < kColumns; c++) {
        w->attnum[c] = get_attnum(w->relid, kColumnNames[c]);
        if (w->attnum[c] == InvalidAttrNumber && c < kFirstOptionalColumn)
            elog(ERROR, "claimqueue: claimqueue.jobs has no column \"%s\"", kColumnNames[c]);
    }
    w->estate = CreateExecutorState();
    MemoryContextSwitchTo(w->estate->es_query_cxt);
    RangeTblEntry *rte = makeNode(RangeTblEntry);
    rte->rtekind = RTE_RELATION;
    rte->relid = w->relid;
    rte->relkind = rel->rd_rel->relkind;
    rte->rellockmode = RowExclusiveLock;
    InitSingleRangeTable(w->estate, rte);
    w->rri = makeNode(ResultRelInfo);
    InitResultRelInfo(w->rri, rel, 1, nullptr, 0);
    w->estate->es_opened_result_relations = list_make1(w->rri);
    ExecOpenIndices(w->rri, false);
    w->nindexes = w->rri->ri_NumIndices;
    w->index_oids = (Oid *) palloc(sizeof(Oid) * (w->nindexes + 1));
    w->pkey_index = w->ready_index = w->running_index = w->running_key_index = w->fair_index =
        w->dedup_index = -1;
    for (int i = 0; i < w->nindexes; i++) {
        Relation index = w->rri->ri_IndexRelationDescs[i];
        w->index_oids[i] = RelationGetRelid(index);
        if (IsIndex(index, "jobs_pkey", shardid))
            w->pkey_index = i;
        else if (IsIndex(index, "jobs_ready_idx", shardid))
            w->ready_index = i;
        else if (IsIndex(index, "jobs_running_idx", shardid) &&
                 index->rd_index->indnkeyatts >= 1 &&
                 index->rd_index->indkey.values[0] == w->attnum[kQueueId])
            w->running_index = i;  // before 0.5.0 it was by lease_expires_at alone
        else if (IsIndex(index, "jobs_running_key_idx", shardid))
            w->running_key_index = i;
        else if (IsIndex(index, "jobs_fair_idx", shardid))
            w->fair_index = i;
        else if (IsIndex(index, "jobs_dedup_idx", shardid) &&
                 index->rd_index->indisunique)
            w->dedup_index = i;
    }
    if (w->pkey_index < 0 || w->ready_index < 0)
        elog(ERROR, "claimqueue: claimqueue.jobs lacks jobs_pkey or jobs_ready_idx");
    Relation pkey = w->rri->ri_IndexRelationDescs[w->pkey_index];
    // The key is the id, or (id, queue) on a table distributed by Citus
    // (distribute(); (id, queue_id) before 0.5.0's routing): no update
    // changes either column.
    bool same_key = w->rri->ri_IndexRelationInfo[w->pkey_index]->ii_Expressions == NIL &&
                    w->rri->ri_IndexRelationInfo[w->pkey_index]->ii_Predicate == NIL &&
                    pkey->rd_index->indnatts >= 1 && pkey->rd_index->indnatts <= 2 &&
                    pkey->rd_index->indkey.values[0] == w->attnum[kId];
    if (pkey->rd_index->indnatts == 2)
        same_key = same_key && (pkey->rd_index->indkey.values[1] == w->attnum[kQueueId] ||
                                pkey->rd_index->indkey.values[1] == w->attnum[kQueue]);
    w->same_key_index = same_key ? w->pkey_index : -1;
    // Slots over a copy of the descriptor: a slot pins a reference-counted
    // descriptor (the relcache's) with the current resource owner, which a
    // slot kept across transactions must not do. The copy keeps the
    // constraints, whose missing-attribute values are the defaults of columns
    // added since a row was written: slot_getallattrs() reads them from the
    // slot's descriptor, and without them a new version of such a row would
    // carry NULL (sql/added_columns.sql).
    TupleDesc desc = CreateTupleDescCopyConstr(RelationGetDescr(rel));
    w->scan_slot = ExecInitExtraTupleSlot(w->estate, desc, table_slot_callbacks(rel));
    w->lock_slot = ExecInitExtraTupleSlot(w->estate, desc, table_slot_callbacks(rel));
    w->new_slot = ExecInitExtraTupleSlot(w->estate, desc, &TTSOpsVirtual);
    w->count_slot = ExecInitExtraTupleSlot(w->estate, desc, table_slot_callbacks(rel));
    w->plain = w->rri->ri_TrigDesc == nullptr &&
               !(rel->rd_att->constr && rel->rd_att->constr->has_generated_stored);
    w->runs_added_code = !w->plain || RunsAddedCode(rel, w->rri);
    MemoryContextSwitchTo(caller);
    return w;
}

// The writer's index i, opened (and locked) for this call on first use. A
// call opens only the indexes it scans and those its writes put entries in:
// an UPDATE would lock all nine, and each lock taken and released cost about
// as much as an index step (src/engine/README.md, "The hot path").
Relation IndexOf(Writer *w, int i)
{
    Relation &index = w->rri->ri_IndexRelationDescs[i];
    if (index == nullptr)
        index = index_open(w->index_oids[i], RowExclusiveLock);
    return index;
}

// Opens every index for this call, as the executor's ExecOpenIndices does.
void OpenIndexes(Writer *w)
{
    for (int i = 0; i < w->nindexes; i++)
        (void) IndexOf(w, i);
}

// Before a write of `version` over `previous`: opens each index the version
// gets an entry in, that is every index without a predicate and each partial
// index whose predicate it satisfies, evaluated as ExecInsertIndexTuples
// evaluates it (the same compiled predicate, kept in the index's IndexInfo).
// The executor skips an index left closed; one whose predicate the version
// fails would take no entry anyway. Writers that may run added code opened
// all at the start of the call, so no added function runs twice, and keep
// the executor's hints. An insert has no `previous` (nullptr) and no hint.
void OpenIndexesToWrite(Writer *w, TupleTableSlot *previous, TupleTableSlot *version)
{
    if (w->runs_added_code)
        return;  // all open, and the executor's hints as they are
    ExprContext *econtext = GetPerTupleExprContext(w->estate);
    for (int i = 0; i < w->nindexes; i++) {
        IndexInfo *info = w->rri->ri_IndexRelationInfo[i];
        if (info->ii_Predicate == NIL) {
            (void) IndexOf(w, i);
            continue;
        }
        if (info->ii_PredicateState == nullptr)
            info->ii_PredicateState = ExecPrepareQual(info->ii_Predicate, w->estate);
        econtext->ecxt_scantuple = version;
        if (!ExecQual(info->ii_PredicateState, econtext))
            continue;
        (void) IndexOf(w, i);
        if (previous == nullptr)
            continue;
        // The "logically unchanged" hint: the executor works it out from the
        // columns set alone, so a version entering a partial index looks
        // like a duplicate of its predecessor, and a full leaf page runs a
        // bottom-up deletion pass over entries that are no versions of it.
        econtext->ecxt_scantuple = previous;
        bool entered = !ExecQual(info->ii_PredicateState, econtext);
        info->ii_CheckedUnchanged = entered;
        if (entered)
            info->ii_IndexUnchanged = false;
    }
}

void CloseIndexes(Writer *w)
{
    for (int i = 0; i < w->nindexes; i++) {
        if (w->rri->ri_IndexRelationDescs[i] != nullptr)
            index_close(w->rri->ri_IndexRelationDescs[i], NoLock);
        w->rri->ri_IndexRelationDescs[i] = nullptr;
    }
}

bool RelevantRelation(const Writer *w, Oid relid)
{
    if (relid == w->relid)
        return true;
    for (int i = 0; i < w->nindexes; i++)
        if (w->index_oids[i] == relid)
            return true;
    return false;
}

}  // namespace

struct JobRows {
    Writer *writer;
    bool kept;          // the backend's writer (else built for this call)
    Relation rel;
    Snapshot snapshot;
    EPQState epq;
    bool have_found;    // scan_slot holds the job FindRunningJob found
    int search_path_level;  // PinSearchPath's, while the writes may run added code
    bool routed;            // statements were routed to the shard (RouteJobsTo)
    char *previous_route;   // the route before, restored at close
};

// Relation changes (the session module calls it): the kept writer goes when
// the table or one of its indexes changes, or on a reset of every relation.
void JobRowsAtRelationChange(Oid relid)
{
    JobShardsAtRelationChange(relid, jobs_relid);
    if (!OidIsValid(relid) || relid == jobs_relid)
        jobs_relid = InvalidOid;
    if (kept != nullptr && (!OidIsValid(relid) || RelevantRelation(kept, relid)))
        kept_valid = false;
}

// A (sub)transaction that aborted while the kept writer was in use left its
// slots pointing at buffers and relations that the abort released.
static void InterruptedUse()
{
    if (kept != nullptr && kept->in_use)
        kept_valid = false;
}

void JobRowsAtTransactionEnd(XactEvent event)
{
    // A call that an error interrupted left its shard's route set.
    if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT ||
        event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT) {
        (void) RouteJobsTo(nullptr);
        expected_queue = nullptr;  // a call that an error interrupted left it
    }
    if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
        InterruptedUse();
}

void JobRowsAtSubtransactionEnd(SubXactEvent event)
{
    if (event == SUBXACT_EVENT_ABORT_SUB) {
        (void) RouteJobsTo(nullptr);
        expected_queue = nullptr;
    }
    if (event == SUBXACT_EVENT_ABORT_SUB)
        InterruptedUse();
}

namespace {

[[noreturn]] void ReportDistributed()
{
    ereport(ERROR,
            (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
             errmsg("claimqueue.jobs is distributed by Citus: jobs cannot be enqueued, "
                    "claimed or finished through this node's table"),
             errdetail("After claimqueue.distribute() the jobs live in the shards on the "
                       "workers, and Citus did not send this call to one."),
             errhint("Citus sends SELECT f(...) and SELECT * FROM f(...) of the calls that "
                     "name a queue to its worker; for a job, name its queue: complete_in(), "
                     "fail_in(), heartbeat_in(), snooze_in(), complete_batch_in() "
                     "(\"Scaling out with Citus\" in the documentation).")));
}

// A call on a node that does not hold the queue's shard. On the coordinator
// (group 0, which holds no shard) it is a call Citus did not delegate.
[[noreturn]] void ReportQueueElsewhere(int32 queue_id, int64 shardid)
{
    if (LocalGroupId() == 0 || shardid == 0)
        ReportDistributed();
    const QueueFacts *facts = QueueFactsById(queue_id);
    char id[32];
    snprintf(id, sizeof(id), "%d", queue_id);
    ereport(ERROR,
            (errcode(ERRCODE_CQ_QUEUE_ELSEWHERE),
             errmsg("queue \"%s\" is not on this node (Citus group %d, port %d)",
                    facts != nullptr ? facts->name : id, LocalGroupId(), PostPortNumber),
             errdetail("Its jobs are in shard " INT64_FORMAT " of claimqueue.jobs, which has no "
                       "placement on this node.",
                       shardid),
             errhint("Call it through the coordinator, or on the node that holds shard "
                     INT64_FORMAT " (pg_dist_shard_placement names it).",
                     shardid)));
}

// The table the calls of queue_id write: claimqueue.jobs, or under Citus the
// local shard holding the queue's jobs; opened ROW EXCLUSIVE, with the
// distributed table itself when it is one. *shardid: 0, or the shard's id.
Relation OpenTableOf(int32 queue_id, int64 *shardid)
{
    Relation rel = table_open(JobsRelid(), RowExclusiveLock);  // takes in invalidations
    JobsRelid();  // again, should those have reset it
    *shardid = 0;
    if (!jobs_distributed)
        return rel;
    Oid shell = RelationGetRelid(rel);
    table_close(rel, NoLock);  // the lock is kept to the end of the transaction
    for (;;) {
        JobsShard shard = LocalJobsShard(shell, queue_id);
        if (!OidIsValid(shard.relid))
            ReportQueueElsewhere(queue_id, shard.shardid);
        rel = table_open(shard.relid, RowExclusiveLock);
        // Opening it took in invalidations: a move that committed meanwhile
        // placed the shard elsewhere (its old relation is dropped later).
        if (LocalJobsShard(shell, queue_id).relid == shard.relid) {
            *shardid = shard.shardid;
            return rel;
        }
        table_close(rel, NoLock);
    }
}

JobRows *OpenRows(Relation rel, int64 shardid);

}  // namespace

bool JobsDistributed()
{
    JobsRelid();
    return jobs_distributed;
}

JobRows *OpenJobRows(int32 queue_id)
{
    int64 shardid;
    Relation rel = OpenTableOf(queue_id, &shardid);
    return OpenRows(rel, shardid);
}

bool JobRowsHoldQueue(JobRows *rows, int32 queue_id)
{
    if (!jobs_distributed)
        return true;
    return LocalJobsShard(JobsRelid(), queue_id).relid == RelationGetRelid(rows->rel);
}

JobRows *OpenJobRowsOfJob(int64 id)
{
    if (!JobsDistributed())
        return OpenJobRows(0);
    // The job's shard is found by its id alone: each shard of this node is
    // asked by the primary key (id, queue_id), its first column, for any
    // version of the job. Ids are unique across the cluster.
    Relation shell = table_open(JobsRelid(), RowExclusiveLock);
    Oid shell_relid = RelationGetRelid(shell);
    table_close(shell, NoLock);
    JobsShard *shards;
    int n = LocalJobsShards(shell_relid, &shards);
    // The shard of the last job found is asked first: a worker's session
    // mostly finishes jobs of the queue it claims from.
    int first = 0;
    for (int i = 0; i < n; i++)
        if (shards[i].relid == last_job_shard)
            first = i;
    for (int k = 0; k < n; k++) {
        int i = (first + k) % n;
        Relation rel = table_open(shards[i].relid, RowExclusiveLock);
        List *indexes = RelationGetIndexList(rel);  // fills rd_pkindex
        list_free(indexes);
        bool found = false;
        if (OidIsValid(rel->rd_pkindex)) {
            Relation index = index_open(rel->rd_pkindex, RowExclusiveLock);
            ScanKeyData key;
            ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(id));
            IndexScanDesc scan = BeginIndexScan(rel, index, SnapshotAny, 1);
            index_rescan(scan, &key, 1, nullptr, 0);
            found = index_getnext_tid(scan, ForwardScanDirection) != nullptr;
            index_endscan(scan);
            index_close(index, NoLock);
        }
        if (found) {
            int64 shardid = shards[i].shardid;
            last_job_shard = shards[i].relid;
            pfree(shards);
            return OpenRows(rel, shardid);
        }
        table_close(rel, NoLock);
    }
    pfree(shards);
    if (LocalGroupId() == 0)
        ReportDistributed();
    ereport(ERROR,
            (errcode(ERRCODE_CQ_QUEUE_ELSEWHERE),
             errmsg("job %lld is not on this node (Citus group %d, port %d)", (long long) id,
                    LocalGroupId(), PostPortNumber),
             errdetail("None of this node's %d shards of claimqueue.jobs holds it: it is on "
                       "another node, or does not exist.",
                       n),
             errhint("Call it through the coordinator, or on the node that holds the job's "
                     "queue.")));
}

namespace {

JobRows *OpenRows(Relation rel, int64 shardid)
{
    JobRows *rows = (JobRows *) palloc0(sizeof(JobRows));
    rows->rel = rel;
    if (kept != nullptr && (!kept_valid || kept->relid != RelationGetRelid(rel))) {
        Writer *old = kept;
        kept = nullptr;
        Discard(old);
    }
    bool may_keep = rel->trigdesc == nullptr;
    if (may_keep && kept != nullptr && !kept->in_use) {
        rows->writer = kept;
        rows->kept = true;
        if (kept->runs_added_code)
            OpenIndexes(kept);
    } else if (may_keep && kept == nullptr) {
        kept = Build(rel, shardid, CacheMemoryContext);
        kept_valid = true;
        rows->writer = kept;
        rows->kept = true;
    } else {
        rows->writer = Build(rel, shardid, CurrentMemoryContext);
    }
    Writer *w = rows->writer;
    w->in_use = true;
    // Added code (a trigger, say) runs with the owner's rights during this
    // call: under the pinned search_path, as the API's SET clause used to.
    if (w->runs_added_code)
        rows->search_path_level = PinSearchPath();
    w->rri->ri_RelationDesc = rel;
    w->estate->es_relations[0] = rel;
    // A publication that publishes updates needs a replica identity (the
    // primary key), as for any UPDATE.
    CheckCmdReplicaIdentity(rel, CMD_UPDATE);
    AfterTriggerBeginQuery();
    InitEmptyEvalPlanQual(&rows->epq, w->estate);
    if (shardid != 0) {
        // The call's statements on claimqueue.jobs (the claim cursors' walk and
        // promotion) read this shard, as its single-row path does.
        const char *previous = RouteJobsTo(
            quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
                                       RelationGetRelationName(rel)));
        rows->routed = true;
        rows->previous_route = previous != nullptr ? pstrdup(previous) : nullptr;
    }
    return rows;
}

}  // namespace

bool JobRowsHaveOwners(JobRows *rows)
{
    return rows->writer->attnum[kOwnerSession] != InvalidAttrNumber;
}

bool JobsHaveOwnerColumn()
{
    return get_attnum(JobsRelid(), kColumnNames[kOwnerSession]) != InvalidAttrNumber;
}

void NewJobRowsSnapshot(JobRows *rows)
{
    // A new statement's snapshot (READ COMMITTED: taken now), after the
    // command counter moved past this transaction's earlier changes.
    if (rows->snapshot != nullptr)
        PopActiveSnapshot();
    CommandCounterIncrement();
    PushActiveSnapshot(GetTransactionSnapshot());
    rows->snapshot = GetActiveSnapshot();
    rows->writer->estate->es_snapshot = rows->snapshot;
    rows->writer->estate->es_output_cid = GetCurrentCommandId(true);
}

void CloseJobRows(JobRows *rows)
{
    Writer *w = rows->writer;
    EvalPlanQualEnd(&rows->epq);
    AfterTriggerEndQuery(w->estate);
    ExecClearTuple(w->scan_slot);
    ExecClearTuple(w->lock_slot);
    ExecClearTuple(w->new_slot);
    ExecClearTuple(w->count_slot);
    ResetPerTupleExprContext(w->estate);
    CloseIndexes(w);
    w->estate->es_relations[0] = nullptr;
    w->estate->es_snapshot = InvalidSnapshot;
    table_close(rows->rel, NoLock);
    if (rows->snapshot != nullptr)
        PopActiveSnapshot();
    CommandCounterIncrement();
    w->in_use = false;
    if (!rows->kept) {
        // Trigger slots pin the relation's descriptor: release them, as the
        // executor's end of a statement does.
        ExecResetTupleTable(w->estate->es_tupleTable, false);
        FreeExecutorState(w->estate);
        Discard(w);
    }
    UnpinSearchPath(rows->search_path_level);
    if (rows->routed)
        (void) RouteJobsTo(rows->previous_route);
    pfree(rows);
}

namespace {

Datum Value(const Writer *w, TupleTableSlot *slot, Column c, bool *isnull)
{
    return slot_getattr(slot, w->attnum[c], isnull);
}

Datum Required(const Writer *w, TupleTableSlot *slot, Column c)
{
    bool isnull;
    Datum d = Value(w, slot, c, &isnull);
    if (isnull)
        elog(ERROR, "claimqueue: claimqueue.jobs.%s is NULL", kColumnNames[c]);
    return d;
}

bool StateIs(const Writer *w, TupleTableSlot *slot, const char *state)
{
    text *t = DatumGetTextPP(Required(w, slot, kState));
    size_t len = strlen(state);
    return VARSIZE_ANY_EXHDR(t) == len && memcmp(VARDATA_ANY(t), state, len) == 0;
}

int64 Position(const Writer *w, TupleTableSlot *slot)
{
    bool isnull;
    Datum d = Value(w, slot, kPos, &isnull);
    return isnull ? -1 : DatumGetInt64(d);
}

// A payload that the row stores out of line is read now: the caller's result
// outlives the buffers and the row (as PL/pgSQL's RETURN QUERY detoasts).
Datum OwnPayload(Datum payload)
{
    struct varlena *v = (struct varlena *) DatumGetPointer(payload);
    if (VARATT_IS_EXTERNAL(v))
        return PointerGetDatum(detoast_external_attr(v));
    return payload;
}

void ReadJob(const Writer *w, TupleTableSlot *slot, JobRow *job)
{
    bool isnull;
    job->id = DatumGetInt64(Required(w, slot, kId));
    job->queue_id = DatumGetInt32(Required(w, slot, kQueueId));
    job->state = TextDatumGetCString(Required(w, slot, kState));
    job->priority = DatumGetInt16(Required(w, slot, kPriority));
    job->attempt = DatumGetInt32(Required(w, slot, kAttempt));
    job->max_attempts = DatumGetInt32(Required(w, slot, kMaxAttempts));
    job->run_at = DatumGetTimestampTz(Required(w, slot, kRunAt));
    job->created_at = DatumGetTimestampTz(Required(w, slot, kCreatedAt));
    job->payload = Required(w, slot, kPayload);
    (void) Value(w, slot, kDedupKey, &isnull);
    job->has_dedup_key = !isnull;
    job->pos = Position(w, slot);
}

// new_slot := the values of `from` (a version of the row), to be changed
// column by column.
void StartNewVersion(Writer *w, TupleTableSlot *from)
{
    TupleTableSlot *to = w->new_slot;
    slot_getallattrs(from);
    ExecClearTuple(to);
    int natts = to->tts_tupleDescriptor->natts;
    memcpy(to->tts_values, from->tts_values, sizeof(Datum) * natts);
    memcpy(to->tts_isnull, from->tts_isnull, sizeof(bool) * natts);
    w->set_columns = 0;
}

void Set(Writer *w, Column c, Datum value, bool isnull = false)
{
    if (w->attnum[c] == InvalidAttrNumber)
        return;  // an optional column this database lacks
    w->set_columns |= 1u << c;
    int i = w->attnum[c] - 1;
    w->new_slot->tts_values[i] = value;
    w->new_slot->tts_isnull[i] = isnull;
}

void SetTime(Writer *w, Column c, TimestampTz t)
{
    Set(w, c, TimestampTzGetDatum(t), t == DT_NOBEGIN);
}

// Makes the columns this version sets the statement's updated columns, as an
// UPDATE's SET list does. The executor reads them for the "logically
// unchanged" hint of each index insertion (left empty, every index looked
// unchanged, and each full leaf page of jobs_running_idx and the finished
// jobs' index of the time went through a bottom-up deletion pass that could delete
// nothing: 10 % of a batch claim's CPU) and for UPDATE OF column triggers.
void PublishUpdatedColumns(Writer *w)
{
    uint32 mask = w->set_columns;
    if (mask == w->published_columns)
        return;
    Bitmapset *columns = nullptr;
    for (int i = 0; i < w->ncolumn_sets && columns == nullptr; i++)
        if (w->column_set_masks[i] == mask)
            columns = w->column_sets[i];
    if (columns == nullptr) {
        MemoryContext caller = MemoryContextSwitchTo(w->context);
        for (int c = 0; c < kColumns; c++)
            if (mask & (1u << c))
                columns = bms_add_member(columns,
                                         w->attnum[c] - FirstLowInvalidHeapAttributeNumber);
        MemoryContextSwitchTo(caller);
        int slot = w->ncolumn_sets < kColumnSetCache ? w->ncolumn_sets++ : kColumnSetCache - 1;
        bms_free(w->column_sets[slot]);  // a full cache reuses its last slot
        w->column_sets[slot] = columns;
        w->column_set_masks[slot] = mask;
    }
    SetUpdatedColumns(w->estate, columns);
    // Each index caches its hint on first use: have it worked out again.
    for (int i = 0; i < w->nindexes; i++)
        if (w->rri->ri_IndexRelationInfo[i] != nullptr)
            w->rri->ri_IndexRelationInfo[i]->ii_CheckedUnchanged = false;
    w->published_columns = mask;
}

// Readies new_slot to be written over `previous`: the columns it sets made the
// statement's updated columns, and the indexes it enters opened.
void PrepareNewVersion(Writer *w, TupleTableSlot *previous)
{
    ExecStoreVirtualTuple(w->new_slot);
    PublishUpdatedColumns(w);
    OpenIndexesToWrite(w, previous, w->new_slot);
}

// Writes new_slot over `previous` on a table with no added code to run
// (w->plain): constraints, heap and indexes as an UPDATE's. Returns the heap's
// verdict; on anything but TM_Ok nothing was written. Without `wait`, a row
// another transaction holds is TM_BeingModified instead of waited for.
TM_Result WritePlainVersion(Writer *w, TupleTableSlot *previous, bool wait = true)
{
    PrepareNewVersion(w, previous);
    if (w->rri->ri_RelationDesc->rd_att->constr)
        ExecConstraints(w->rri, w->new_slot, w->estate);
    TM_FailureData failure;
    TM_Result result = UpdateTupleAndIndexes(w->rri, w->estate, &previous->tts_tid, w->new_slot,
                                             &failure, wait, w->same_key_index);
    ResetPerTupleExprContext(w->estate);
    return result;
}

// Writes new_slot as the new version of the row lock_slot holds (locked by
// this transaction): constraints, indexes, row triggers and WAL as an UPDATE's.
// False when a BEFORE UPDATE row trigger returned NULL: nothing was written,
// as an UPDATE then updates no row.
bool WriteLockedVersion(JobRows *rows)
{
    Writer *w = rows->writer;
    if (w->plain) {
        TM_Result result = WritePlainVersion(w, w->lock_slot);
        if (result != TM_Ok)
            elog(ERROR, "claimqueue: job row locked by this transaction could not be updated (%d)",
                 (int) result);
        return true;
    }
    PrepareNewVersion(w, w->lock_slot);
    // ExecSimpleRelationUpdate returns nothing: the heap's update gives the
    // slot the new version's TID, which a skipped update leaves invalid.
    ItemPointerSetInvalid(&w->new_slot->tts_tid);
    ExecSimpleRelationUpdate(w->rri, w->estate, &rows->epq, w->lock_slot, w->new_slot);
    ResetPerTupleExprContext(w->estate);
    return ItemPointerIsValid(&w->new_slot->tts_tid);
}

// --- Where this session's claims wrote their jobs --------------------------
// A job is usually finished by the session that claimed it. The TID of the
// running version its claim wrote, kept here per job, lets FindRunningJob
// fetch that version directly instead of descending the primary key and
// visiting the job's earlier versions on the way. A hint only: it is taken
// when this statement's snapshot sees the version at that TID and the version
// is that job's. A snapshot sees at most one version of a row, so it is the
// version the primary key would have found; in every other case the key
// decides. Kept only for tables with no row triggers (a trigger may replace
// or skip the version written).
struct ClaimedVersion {
    int64 id;
    int32 attempt;
    ItemPointerData tid;  // invalid: an empty slot
};
constexpr int kClaimedVersions = 2048;  // a power of two; a job's slot is id & (n - 1)
ClaimedVersion claimed_versions[kClaimedVersions];
// The table file the TIDs point into: a rewrite (TRUNCATE, VACUUM FULL,
// CLUSTER) gives the table a new one, where no kept TID means anything.
Oid claimed_relid = InvalidOid;
Oid claimed_filenode = InvalidOid;

bool ClaimedInThisFile(Relation rel)
{
    return claimed_relid == RelationGetRelid(rel) &&
           claimed_filenode == rel->rd_rel->relfilenode;
}

// After a claim wrote new_slot on a table without triggers.
void NoteClaimedVersion(JobRows *rows)
{
    Writer *w = rows->writer;
    if (!ClaimedInThisFile(rows->rel)) {
        memset(claimed_versions, 0, sizeof(claimed_versions));
        claimed_relid = RelationGetRelid(rows->rel);
        claimed_filenode = rows->rel->rd_rel->relfilenode;
    }
    int64 id = DatumGetInt64(w->new_slot->tts_values[w->attnum[kId] - 1]);
    ClaimedVersion &c = claimed_versions[id & (kClaimedVersions - 1)];
    c.id = id;
    c.attempt = DatumGetInt32(w->new_slot->tts_values[w->attnum[kAttempt] - 1]);
    c.tid = w->new_slot->tts_tid;
}

// Whether `block` is inside the table's main fork. Asking the file system for
// the size is a system call (lseek), once per completion and per job of a
// complete_batch (5 % of an 8-client batch's samples in perf); the storage
// manager keeps the size it last learned, which is never above the real one
// while this call holds its lock on the table: other sessions' extensions only
// leave it low, and a truncation (VACUUM's, which needs a lock that conflicts
// with ours) resets it in every backend, ours at the lock's acquisition.
bool BlockInTable(Relation rel, BlockNumber block)
{
    BlockNumber known = RelationGetSmgr(rel)->smgr_cached_nblocks[MAIN_FORKNUM];
    if (known != InvalidBlockNumber && block < known)
        return true;
    return block < RelationGetNumberOfBlocks(rel);
}

// Fetches into scan_slot the version that this session's claim of job `id`
// under `attempt` wrote, when this statement's snapshot sees it; false when
// there is none (then the primary key is asked).
bool FetchClaimedVersion(JobRows *rows, int64 id, int32 attempt)
{
    const ClaimedVersion &c = claimed_versions[id & (kClaimedVersions - 1)];
    if (!ItemPointerIsValid(&c.tid) || c.id != id || c.attempt != attempt ||
        !ClaimedInThisFile(rows->rel))
        return false;
    // VACUUM may have cut the table short since (the version died, its page emptied).
    if (!BlockInTable(rows->rel, ItemPointerGetBlockNumber(&c.tid)))
        return false;
    Writer *w = rows->writer;
    ItemPointerData tid = c.tid;
    if (!table_tuple_fetch_row_version(rows->rel, &tid, rows->snapshot, w->scan_slot))
        return false;
    bool isnull;
    return DatumGetInt64(Value(w, w->scan_slot, kId, &isnull)) == id;
}

void PutClaimed(Writer *w, Tuplestorestate *out, TupleDesc out_desc, int64 lease_expires_at)
{
    TupleTableSlot *s = w->new_slot;
    Datum values[7] = {
        s->tts_values[w->attnum[kId] - 1],
        OwnPayload(s->tts_values[w->attnum[kPayload] - 1]),
        s->tts_values[w->attnum[kAttempt] - 1],
        s->tts_values[w->attnum[kMaxAttempts] - 1],
        Int32GetDatum(DatumGetInt16(s->tts_values[w->attnum[kPriority] - 1])),
        TimestampTzGetDatum(lease_expires_at),
        s->tts_values[w->attnum[kCreatedAt] - 1]};
    bool nulls[7] = {false, false, false, false, false, false, false};
    tuplestore_putvalues(out, out_desc, values, nulls);
}

}  // namespace

namespace {

// A lane is read in windows of positions: [from, from + w), then
// [from + w, from + 9 w), then the rest, w = LaneWindow(limit). A B-tree scan
// reads every matching entry of its first leaf page before it returns one
// (each checked against every key), and a lane's entries run to the end of
// the page: an upper bound ends that read after a few entries. The first
// window holds the jobs a claim takes and the few rows other claims in flight
// hold; a claim that meets more (many sessions claiming at once) reads the
// second, eight times wider, and only then the rest, so a miss costs one more
// descent, not a read of the whole page. The windows are contiguous: the claim
// sees exactly the entries one scan from `from` would.
int64 LaneWindow(int limit)
{
    return 8 + 2 * (int64) limit;
}

// The first position of each of a lane's reads (LaneWindow).
constexpr int kLaneReads = 3;
constexpr int64 kLaneReadStart[kLaneReads] = {0, 1, 9};  // in windows past `from`

}  // namespace

namespace {

// Which entries a claim scan reads: a lane (or the whole queue) of
// jobs_ready_idx, or one tenant of a lane (a fair queue's claim): the jobs of
// one concurrency key in jobs_fair_idx, or the lane's jobs without a key.
struct ClaimScan {
    int32 queue_id;
    int priority;      // kNoLane: the whole queue
    int64 from;
    enum { kLane, kKey, kKeyless } tenant;
    int64 key_hash;    // kKey: the tenant, TenantKeyHash of its keys
    bool probe_only;   // find *first_seen, claim nothing
};

// The version's concurrency key, or nullptr.
text *KeyOf(const Writer *w, TupleTableSlot *slot)
{
    if (w->attnum[kConcurrencyKey] == InvalidAttrNumber)
        return nullptr;
    bool isnull;
    Datum key = Value(w, slot, kConcurrencyKey, &isnull);
    return isnull ? nullptr : DatumGetTextPP(key);
}

// Whether a version belongs to the scan's tenant.
bool InTenant(const Writer *w, TupleTableSlot *slot, const ClaimScan &scan)
{
    switch (scan.tenant) {
    case ClaimScan::kKey: {
        text *key = KeyOf(w, slot);
        return key != nullptr && TenantKeyHash(key) == scan.key_hash;
    }
    case ClaimScan::kKeyless:
        return KeyOf(w, slot) == nullptr;
    default:
        return true;
    }
}

// The running version of a claimed job, over the version StartNewVersion copied.
void SetClaimed(Writer *w, const ClaimWrite &write, Datum worker, TimestampTz lease_expires_at)
{
    Set(w, kState, CStringGetTextDatum("running"));
    Set(w, kAttempt,
        Int32GetDatum(DatumGetInt32(w->new_slot->tts_values[w->attnum[kAttempt] - 1]) + 1));
    Set(w, kWorker, worker);
    // NULL for a claim that lives until its lease, in the same version.
    Set(w, kOwnerSession, Int64GetDatum(write.owner), write.owner == 0);
    SetTime(w, kStartedAt, write.now);
    SetTime(w, kLeaseExpiresAt, lease_expires_at);
}

// Whether the version a scan returned has no xmax: no transaction has locked,
// updated or deleted it. Read without the buffer's content lock, so only a
// guess (the heap decides under the lock); it spares a write that would be
// refused the work of building the new version.
bool NobodyHolds(TupleTableSlot *slot)
{
    HeapTupleHeader header = ExecFetchSlotHeapTuple(slot, false, nullptr)->t_data;
    return (header->t_infomask & HEAP_XMAX_INVALID) != 0 ||
           !TransactionIdIsValid(HeapTupleHeaderGetRawXmax(header));
}

// Whether a version's xmax is a transaction that the snapshot shows as not
// yet committed (running when it was taken, or begun since), and not this
// one: another session's claim, change or lock of the row, in flight as far
// as this claim can tell. FOR UPDATE SKIP LOCKED would skip it unless that
// transaction ended between the snapshot and the lock; had it ended by
// committing, the row is no longer ready, and had it rolled back, the job
// stays at or past the position the claim reports as first seen, so the lane
// cursor does not pass it and a later claim takes it. A multixact is left to
// the lock path.
bool HeldInSnapshot(TupleTableSlot *slot, Snapshot snapshot)
{
    HeapTupleHeader header = ExecFetchSlotHeapTuple(slot, false, nullptr)->t_data;
    if (header->t_infomask & (HEAP_XMAX_INVALID | HEAP_XMAX_IS_MULTI))
        return false;
    TransactionId xmax = HeapTupleHeaderGetRawXmax(header);
    return TransactionIdIsNormal(xmax) && !TransactionIdIsCurrentTransactionId(xmax) &&
           XidInMVCCSnapshot(xmax, snapshot);
}

int Claim(JobRows *rows, const ClaimScan &scan, int limit, const ClaimWrite &write,
          LimitGate *gate, int64 *first_seen, Tuplestorestate *out, TupleDesc out_desc)
{
    Writer *w = rows->writer;
    bool by_key = scan.tenant == ClaimScan::kKey;
    Relation index = IndexOf(w, by_key ? w->fair_index : w->ready_index);
    bool lane = scan.priority != kNoLane;
    int64 from = scan.from;
    *first_seen = -1;
    int claimed = 0;
    Datum worker = PointerGetDatum(write.worker);
    TimestampTz lease_expires_at = write.now + write.lease_usec;
    // The position column of the index: after the key in jobs_fair_idx.
    AttrNumber pos_column = by_key ? 4 : 3;
    // Lanes take kLaneReads passes (windows, then the rest); the whole queue one.
    int64 window = LaneWindow(limit);
    constexpr int last = kLaneReads - 1;
    bool windowed = lane && from < PG_INT64_MAX - kLaneReadStart[last] * window;
    bool held_back = false;  // the tenant's key is held back by its limit
    for (int pass = windowed ? 0 : last;
         pass <= last && claimed < limit && !(gate != nullptr && GateFull(gate)) &&
         !(scan.probe_only && *first_seen >= 0) && !held_back;
         pass++) {
        ScanKeyData keys[5];
        int nkeys = 1;
        ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_INT4EQ, Int32GetDatum(scan.queue_id));
        if (lane) {
            ScanKeyInit(&keys[nkeys++], 2, BTEqualStrategyNumber, F_INT2EQ,
                        Int16GetDatum(scan.priority));
            if (by_key)
                ScanKeyInit(&keys[nkeys++], 3, BTEqualStrategyNumber, F_INT8EQ,
                            Int64GetDatum(scan.key_hash));
            ScanKeyInit(&keys[nkeys++], pos_column, BTGreaterEqualStrategyNumber, F_INT8GE,
                        Int64GetDatum(windowed ? from + kLaneReadStart[pass] * window : from));
            if (pass < last)
                ScanKeyInit(&keys[nkeys++], pos_column, BTLessStrategyNumber, F_INT8LT,
                            Int64GetDatum(from + kLaneReadStart[pass + 1] * window));
        }
        IndexScanDesc iscan = BeginIndexScan(rows->rel, index, rows->snapshot, nkeys);
        index_rescan(iscan, keys, nkeys, nullptr, 0);
        while (claimed < limit &&
               index_getnext_slot(iscan, ForwardScanDirection, w->scan_slot)) {
            // The version this snapshot shows (the index's predicate held when
            // the entry was made; a later version of the row has entries of its own).
            int64 pos = Position(w, w->scan_slot);
            if (pos < 0 || !StateIs(w, w->scan_slot, "ready") ||
                !InTenant(w, w->scan_slot, scan))
                continue;
            if (*first_seen < 0)
                *first_seen = pos;
            if (scan.probe_only)
                break;
            // Under a concurrency limit: a job whose key (or queue) is full, or
            // whose key another claim is counting, is passed over, not waited for.
            int gate_slot = -1;
            if (gate != nullptr) {
                if (GateFull(gate))
                    break;
                if (!AdmitToGate(gate, rows, KeyOf(w, w->scan_slot), &gate_slot)) {
                    // A tenant's jobs share its key: when one is held back,
                    // all are (a fair claim moves on to the next tenant).
                    if (scan.tenant == ClaimScan::kKey) {
                        held_back = true;
                        break;
                    }
                    continue;
                }
            }
            // The version the snapshot showed is written as it is when it is
            // still the row's latest and no transaction holds it: it passed
            // every check above, and the common claim writes no lock record.
            // Anything else (its xmax set, or the write refused) takes the
            // lock path below.
            if (w->plain && NobodyHolds(w->scan_slot)) {
                StartNewVersion(w, w->scan_slot);
                SetClaimed(w, write, worker, lease_expires_at);
                if (WritePlainVersion(w, w->scan_slot, false) == TM_Ok) {
                    NoteClaimedVersion(rows);
                    PutClaimed(w, out, out_desc, lease_expires_at);
                    if (gate != nullptr)
                        NoteGateClaim(gate, gate_slot);
                    claimed++;
                    continue;
                }
            }
            // Held by a transaction in flight: skipped without asking the
            // lock manager (a claim racing others meets several such rows
            // for each job it takes).
            if (HeldInSnapshot(w->scan_slot, rows->snapshot))
                continue;
            // FOR UPDATE SKIP LOCKED: a row another transaction holds is skipped;
            // one that changed since the snapshot is locked in its latest version
            // and checked again, as the executor's EvalPlanQual would.
            TM_FailureData failure;
            TM_Result result = table_tuple_lock(
                rows->rel, &w->scan_slot->tts_tid, rows->snapshot, w->lock_slot,
                GetCurrentCommandId(false), LockTupleExclusive, LockWaitSkip,
                TUPLE_LOCK_FLAG_FIND_LAST_VERSION, &failure);
            if (result == TM_Invisible)
                elog(ERROR, "claimqueue: attempted to lock an invisible job row");
            if (result != TM_Ok)
                continue;  // held by another session, deleted, or changed by this command
            bool isnull;
            int64 locked_pos = Position(w, w->lock_slot);
            if (locked_pos < 0 || !StateIs(w, w->lock_slot, "ready") ||
                DatumGetInt32(Value(w, w->lock_slot, kQueueId, &isnull)) != scan.queue_id ||
                (lane &&
                 (DatumGetInt16(Value(w, w->lock_slot, kPriority, &isnull)) != scan.priority ||
                  locked_pos < from)) ||
                !InTenant(w, w->lock_slot, scan))
                continue;
            StartNewVersion(w, w->lock_slot);
            SetClaimed(w, write, worker, lease_expires_at);
            // A row trigger that skipped the update left the job ready: not
            // claimed (the row stays locked by this transaction, so no other
            // claim takes it meanwhile), and the claim goes on to the next.
            if (!WriteLockedVersion(rows))
                continue;
            if (w->plain)
                NoteClaimedVersion(rows);
            PutClaimed(w, out, out_desc, lease_expires_at);
            if (gate != nullptr)
                NoteGateClaim(gate, gate_slot);
            claimed++;
        }
        index_endscan(iscan);
    }
    return claimed;
}

// The value of column `column` of the first entry of `index` that the keys
// match, read from the index entry alone (live, dead or in progress: no
// snapshot is asked, no heap tuple visited); false when none matches. A
// datum is copied.
bool FirstEntryValue(JobRows *rows, Relation index, ScanKeyData *keys, int nkeys,
                     AttrNumber column, Datum *value)
{
    IndexScanDesc iscan = BeginIndexScan(rows->rel, index, SnapshotAny, nkeys);
    iscan->xs_want_itup = true;
    // An entry marked dead still names its key: returned, not stepped over
    // (the entries of claimed jobs, which lead a tenant's range, would all be).
    iscan->ignore_killed_tuples = false;
    index_rescan(iscan, keys, nkeys, nullptr, 0);
    bool found = false;
    if (index_getnext_tid(iscan, ForwardScanDirection) != nullptr) {
        bool isnull;
        Datum d = index_getattr(iscan->xs_itup, column, iscan->xs_itupdesc, &isnull);
        if (!isnull) {
            Form_pg_attribute att = TupleDescAttr(iscan->xs_itupdesc, column - 1);
            *value = datumCopy(d, att->attbyval, att->attlen);
            found = true;
        }
    }
    index_endscan(iscan);
    return found;
}

}  // namespace

int ClaimFromIndex(JobRows *rows, int32 queue_id, int priority, int64 from, int limit,
                   const ClaimWrite &write, LimitGate *gate, int64 *first_seen,
                   Tuplestorestate *out, TupleDesc out_desc)
{
    ClaimScan scan = {queue_id, priority, from, ClaimScan::kLane, 0, false};
    return Claim(rows, scan, limit, write, gate, first_seen, out, out_desc);
}

int64 FirstClaimable(JobRows *rows, int32 queue_id, int priority, int64 from)
{
    ClaimScan scan = {queue_id, priority, from, ClaimScan::kLane, 0, true};
    ClaimWrite none = {};
    int64 first_seen;
    (void) Claim(rows, scan, 1, none, nullptr, &first_seen, nullptr, nullptr);
    return first_seen;
}

int ClaimTenant(JobRows *rows, int32 queue_id, int priority, const int64 *key_hash, int64 from,
                int limit, const ClaimWrite &write, LimitGate *gate, int64 *first_seen,
                Tuplestorestate *out, TupleDesc out_desc)
{
    ClaimScan scan = {queue_id, priority, from,
                      key_hash != nullptr ? ClaimScan::kKey : ClaimScan::kKeyless,
                      key_hash != nullptr ? *key_hash : 0, false};
    return Claim(rows, scan, limit, write, gate, first_seen, out, out_desc);
}

bool JobRowsHaveFairIndex(JobRows *rows)
{
    return rows->writer->fair_index >= 0;
}

int64 TenantKeyHash(text *key)
{
    // The index's expression: hashtextextended(concurrency_key, 0) under the
    // column's collation (the default one; a deterministic collation hashes
    // the bytes).
    return DatumGetInt64(DirectFunctionCall2Coll(hashtextextended, DEFAULT_COLLATION_OID,
                                                 PointerGetDatum(key), Int64GetDatum(0)));
}

bool NextTenant(JobRows *rows, int32 queue_id, int priority, const int64 *after,
                int64 *key_hash)
{
    Writer *w = rows->writer;
    Relation index = IndexOf(w, w->fair_index);
    ScanKeyData keys[3];
    int nkeys = 2;
    ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_INT4EQ, Int32GetDatum(queue_id));
    ScanKeyInit(&keys[1], 2, BTEqualStrategyNumber, F_INT2EQ, Int16GetDatum(priority));
    if (after != nullptr) {
        ScanKeyInit(&keys[2], 3, BTGreaterStrategyNumber, F_INT8GT, Int64GetDatum(*after));
        nkeys = 3;
    }
    Datum hash;
    if (!FirstEntryValue(rows, index, keys, nkeys, 3, &hash))
        return false;
    *key_hash = DatumGetInt64(hash);
    return true;
}

int NextReadyPriority(JobRows *rows, int32 queue_id, int below)
{
    Writer *w = rows->writer;
    Relation index = IndexOf(w, w->ready_index);
    ScanKeyData keys[2];
    int nkeys = 1;
    ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_INT4EQ, Int32GetDatum(queue_id));
    if (below != kNoLane) {
        ScanKeyInit(&keys[1], 2, BTLessStrategyNumber, F_INT2LT, Int16GetDatum(below));
        nkeys = 2;
    }
    Datum priority;
    if (!FirstEntryValue(rows, index, keys, nkeys, 2, &priority))
        return kNoLane;
    return DatumGetInt16(priority);
}

int CountRunning(JobRows *rows, int32 queue_id, text *key, int stop_at)
{
    Writer *w = rows->writer;
    // A key's jobs from jobs_running_key_idx, the queue's from jobs_running_idx
    // (the first holds keyed jobs only; both lead with queue_id).
    int which = key != nullptr ? w->running_key_index : w->running_index;
    if (which < 0)
        elog(ERROR, "claimqueue: claimqueue.jobs lacks %s led by queue_id",
             key != nullptr ? "jobs_running_key_idx" : "jobs_running_idx");
    Relation index = IndexOf(w, which);
    ScanKeyData keys[2];
    int nkeys = 1;
    ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_INT4EQ, Int32GetDatum(queue_id));
    if (key != nullptr) {
        ScanKeyInit(&keys[1], 2, BTEqualStrategyNumber, F_TEXTEQ, PointerGetDatum(key));
        keys[1].sk_collation = index->rd_indcollation[1];  // the index's order
        nkeys = 2;
    }
    // SnapshotDirty: committed claims, and claims of transactions still in
    // progress (their running version is in the index before their claim
    // call returns); a version whose completion or reap is in progress still
    // counts. Never fewer running jobs than any commit order could leave.
    SnapshotData dirty;
    InitDirtySnapshot(dirty);
    IndexScanDesc scan = BeginIndexScan(rows->rel, index, &dirty, nkeys);
    index_rescan(scan, keys, nkeys, nullptr, 0);
    int n = 0;
    while (n < stop_at && index_getnext_slot(scan, ForwardScanDirection, w->count_slot))
        if (StateIs(w, w->count_slot, "running"))
            n++;
    index_endscan(scan);
    ExecClearTuple(w->count_slot);
    return n;
}

bool JobRowsHaveKeys(JobRows *rows)
{
    return rows->writer->attnum[kConcurrencyKey] != InvalidAttrNumber &&
           rows->writer->running_key_index >= 0;
}

Oid JobRowsRelid(JobRows *rows)
{
    return RelationGetRelid(rows->rel);
}

bool FindRunningJob(JobRows *rows, int64 id, int32 attempt, JobRow *job)
{
    Writer *w = rows->writer;
    rows->have_found = false;
    if (rows->snapshot == nullptr)
        NewJobRowsSnapshot(rows);
    // SERIALIZABLE asks the primary key, whose scan takes the predicate
    // lock on the index page that a statement's would take.
    bool found = !IsolationIsSerializable() && FetchClaimedVersion(rows, id, attempt);
    if (!found) {
        Relation index = IndexOf(w, w->pkey_index);
        ScanKeyData key;
        ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(id));
        IndexScanDesc scan = BeginIndexScan(rows->rel, index, rows->snapshot, 1);
        index_rescan(scan, &key, 1, nullptr, 0);
        found = index_getnext_slot(scan, ForwardScanDirection, w->scan_slot);
        index_endscan(scan);
    }
    bool isnull;
    if (found && expected_queue != nullptr)
        RequireExpectedQueue(id, DatumGetInt32(Required(w, w->scan_slot, kQueueId)));
    if (!found || DatumGetInt32(Value(w, w->scan_slot, kAttempt, &isnull)) != attempt ||
        !StateIs(w, w->scan_slot, "running"))
        return false;
    ReadJob(w, w->scan_slot, job);
    rows->have_found = true;
    return true;
}

void ExpectJobsOfQueue(const char *queue)
{
    expected_queue = queue;
}

bool ReadLatestJobState(JobRows *rows, int64 id, char **state, int32 *attempt)
{
    Writer *w = rows->writer;
    Relation index = IndexOf(w, w->pkey_index);
    ScanKeyData key;
    ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(id));
    Snapshot latest = RegisterSnapshot(GetLatestSnapshot());
    IndexScanDesc scan = BeginIndexScan(rows->rel, index, latest, 1);
    index_rescan(scan, &key, 1, nullptr, 0);
    bool found = index_getnext_slot(scan, ForwardScanDirection, w->count_slot);
    if (found) {
        *state = TextDatumGetCString(Required(w, w->count_slot, kState));
        *attempt = DatumGetInt32(Required(w, w->count_slot, kAttempt));
    }
    index_endscan(scan);
    ExecClearTuple(w->count_slot);
    UnregisterSnapshot(latest);
    return found;
}

namespace {

// history || entry (a one-element array), keeping the latest
// rules::kMaxErrorHistory entries. A history that is not an array (written by
// hand) starts again.
Datum AppendToErrorHistory(Jsonb *history, Jsonb *entry)
{
    Datum added = JsonbPGetDatum(entry);
    if (history != nullptr && JB_ROOT_IS_ARRAY(history) && !JB_ROOT_IS_SCALAR(history))
        added = DirectFunctionCall2(jsonb_concat, JsonbPGetDatum(history), added);
    while (JB_ROOT_COUNT(DatumGetJsonbP(added)) > (uint32) rules::kMaxErrorHistory)
        added = DirectFunctionCall2(jsonb_delete_idx, added, Int32GetDatum(0));
    return added;
}

void ApplyUpdate(Writer *w, TupleTableSlot *from, const JobUpdate &update)
{
    StartNewVersion(w, from);
    if (update.state != nullptr) {
        // Every state a JobUpdate writes leaves running: the claim's owner goes.
        Set(w, kState, CStringGetTextDatum(update.state));
        Set(w, kOwnerSession, (Datum) 0, true);
    }
    if (update.set_finished_at)
        SetTime(w, kFinishedAt, update.finished_at);
    if (update.set_lease)
        SetTime(w, kLeaseExpiresAt, update.lease_expires_at);
    if (update.set_run_at)
        SetTime(w, kRunAt, update.run_at);
    if (update.set_last_error)
        Set(w, kLastError, PointerGetDatum(update.last_error), update.last_error == nullptr);
    if (update.set_pos)
        Set(w, kPos, Int64GetDatum(update.pos), update.pos < 0);
    if (update.result != nullptr)
        Set(w, kResult, PointerGetDatum(update.result));
    if (update.add_max_attempts != 0)
        Set(w, kMaxAttempts,
            Int32GetDatum(DatumGetInt32(Required(w, from, kMaxAttempts)) +
                          update.add_max_attempts));
    if (update.error_entry != nullptr && w->attnum[kErrors] != InvalidAttrNumber) {
        // Appended to the version locked, so a history written meanwhile is kept.
        bool isnull;
        Datum history = Value(w, from, kErrors, &isnull);
        Set(w, kErrors, AppendToErrorHistory(isnull ? nullptr : DatumGetJsonbP(history),
                                             update.error_entry));
    }
}

// The columns every insert sets (InsertJob); the concurrency key only when
// the job has one.
constexpr uint32 kInsertSets = (1u << kQueueId) | (1u << kPayload) | (1u << kRunAt) |
                               (1u << kPriority) | (1u << kMaxAttempts) | (1u << kCreatedAt) |
                               (1u << kDedupKey) | (1u << kPos);

// The defaults of the other columns, as an INSERT that does not name them
// takes them (build_column_default: the column's DEFAULT, an identity's
// sequence, a domain's default), compiled once per writer; nullptr where the
// default is NULL. A generated column has none: its "default" in the catalog
// is its expression, over the row's other columns, which an INSERT never
// evaluates as a default (a stored one keeps the writer off this path; a
// virtual one, 18, stores nothing).
void CompileDefaults(Writer *w, Relation rel)
{
    MemoryContext caller = MemoryContextSwitchTo(w->estate->es_query_cxt);
    TupleDesc desc = RelationGetDescr(rel);
    // A Citus shard has no defaults of its own (the id's sequence is the
    // distributed table's): they are the distributed table's, by column name.
    // It is locked already (OpenTableOf).
    Relation shell = w->shardid != 0 ? table_open(JobsRelid(), NoLock) : nullptr;
    w->defaults = (ExprState **) palloc0(sizeof(ExprState *) * (desc->natts + 1));
    for (int c = 0; c < kColumns; c++)
        if ((kInsertSets & (1u << c)) && w->attnum[c] == InvalidAttrNumber)
            elog(ERROR, "claimqueue: claimqueue.jobs has no column \"%s\"", kColumnNames[c]);
    for (int i = 0; i < desc->natts; i++) {
        bool set = false;
        for (int c = 0; c < kColumns; c++)
            set = set || ((kInsertSets & (1u << c)) && w->attnum[c] == i + 1);
        if (set || TupleDescAttr(desc, i)->attisdropped || TupleDescAttr(desc, i)->attgenerated)
            continue;
        Node *expr;
        if (shell != nullptr) {
            AttrNumber at = get_attnum(RelationGetRelid(shell),
                                       NameStr(TupleDescAttr(desc, i)->attname));
            expr = at == InvalidAttrNumber ? nullptr : build_column_default(shell, at);
        } else {
            expr = build_column_default(rel, i + 1);
        }
        if (expr != nullptr)
            w->defaults[i] = ExecPrepareExpr((Expr *) expr, w->estate);
    }
    if (shell != nullptr)
        table_close(shell, NoLock);
    MemoryContextSwitchTo(caller);
}

[[noreturn]] void ConcurrentChange(TM_Result result)
{
    ereport(ERROR, (errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
                    errmsg("could not serialize access due to concurrent %s",
                           result == TM_Deleted ? "delete" : "update")));
}

// Locks the latest version of the row whose version `version` holds, waiting
// for another session as UPDATE does (READ COMMITTED; a transaction snapshot
// raises 40001 if it changed). True, with the version in lock_slot, when it
// is still running under `attempt`.
bool LockLatestRunning(JobRows *rows, TupleTableSlot *version, int32 attempt)
{
    Writer *w = rows->writer;
    bool xact_snapshot = IsolationUsesXactSnapshot();
    TM_FailureData failure;
    TM_Result result = table_tuple_lock(
        rows->rel, &version->tts_tid, rows->snapshot, w->lock_slot, GetCurrentCommandId(false),
        LockTupleNoKeyExclusive, LockWaitBlock,
        xact_snapshot ? 0 : TUPLE_LOCK_FLAG_FIND_LAST_VERSION, &failure);
    switch (result) {
    case TM_Ok:
        break;
    case TM_Updated:
    case TM_Deleted:
        if (xact_snapshot)
            ConcurrentChange(result);
        return false;
    case TM_SelfModified:
        return false;  // changed by this very command (a trigger): not ours to finish
    default:
        elog(ERROR, "claimqueue: unexpected result %d locking a job", (int) result);
    }
    bool isnull;
    return DatumGetInt32(Value(w, w->lock_slot, kAttempt, &isnull)) == attempt &&
           StateIs(w, w->lock_slot, "running");
}

}  // namespace

bool UpdateRunningJob(JobRows *rows, int32 attempt, const JobUpdate &update)
{
    Writer *w = rows->writer;
    if (!rows->have_found)
        elog(ERROR, "claimqueue: no job found to update");
    rows->have_found = false;
    if (!w->plain) {
        // Row triggers see the version locked (GetTupleForTrigger): lock first.
        if (!LockLatestRunning(rows, w->scan_slot, attempt))
            return false;
        ApplyUpdate(w, w->lock_slot, update);
        if (!WriteLockedVersion(rows)) {
            bool isnull;
            int64 id = DatumGetInt64(Value(w, w->lock_slot, kId, &isnull));
            ereport(ERROR,
                    (errcode(ERRCODE_TRIGGERED_ACTION_EXCEPTION),
                     errmsg("could not %s job %lld: a BEFORE UPDATE trigger on claimqueue.jobs "
                            "skipped the update",
                            update.action, (long long) id),
                     errdetail("A row trigger returned NULL, so job %lld is still running "
                               "under attempt %d and nothing was written.",
                               (long long) id, attempt),
                     errhint("Have the trigger return NEW (or OLD) for this update.")));
        }
        return true;
    }
    // As UPDATE: write the version the snapshot showed, waiting for a session
    // that holds it; only if it changed meanwhile lock its latest version and
    // look again (EvalPlanQual), so the common case writes no lock record.
    TupleTableSlot *version = w->scan_slot;
    for (int round = 0; round < 2; round++) {
        ApplyUpdate(w, version, update);
        TM_Result result = WritePlainVersion(w, version);
        switch (result) {
        case TM_Ok:
            return true;
        case TM_Updated:
        case TM_Deleted:
            if (IsolationUsesXactSnapshot())
                ConcurrentChange(result);
            if (round > 0 || !LockLatestRunning(rows, version, attempt))
                return false;
            version = w->lock_slot;  // locked now: the next round's update succeeds
            break;
        case TM_SelfModified:
            return false;
        default:
            elog(ERROR, "claimqueue: unexpected result %d updating a job", (int) result);
        }
    }
    elog(ERROR, "claimqueue: a job row locked by this transaction changed");
}

bool JobRowsInsertDirectly(JobRows *rows, bool dedup)
{
    return rows->writer->plain && (!dedup || rows->writer->dedup_index >= 0);
}

namespace {

// jobs_dedup_idx as an ON CONFLICT arbiter: the operators its conflict check
// compares with (ExecOpenIndices does this for a speculative insertion).
void PrepareDedupArbiter(Writer *w)
{
    if (w->dedup_arbiter != NIL)
        return;
    MemoryContext caller = MemoryContextSwitchTo(w->context);
    BuildSpeculativeIndexInfo(IndexOf(w, w->dedup_index),
                              w->rri->ri_IndexRelationInfo[w->dedup_index]);
    w->dedup_arbiter = list_make1_oid(w->index_oids[w->dedup_index]);
    MemoryContextSwitchTo(caller);
}

// The id of the job whose version is at `tid` (a conflict the check found).
int64 IdAt(JobRows *rows, ItemPointer tid)
{
    Writer *w = rows->writer;
    ItemPointerData at = *tid;
    if (!table_tuple_fetch_row_version(rows->rel, &at, SnapshotAny, w->scan_slot))
        elog(ERROR, "claimqueue: the job with a conflicting dedup key could not be read");
    int64 id = DatumGetInt64(Required(w, w->scan_slot, kId));
    ExecClearTuple(w->scan_slot);
    return id;
}

// Writes `row`, or finds the live job with its dedup key, as INSERT ... ON
// CONFLICT DO NOTHING does: a check first (it waits for a transaction that
// is inserting or changing a job with the key, then reports a conflict with
// one that is live); then the row is inserted speculatively and its index
// entries made, and if a job with the key came in meanwhile the row is
// killed and the check runs again. True when the row was written.
bool InsertUnlessDuplicate(JobRows *rows, TupleTableSlot *row, int64 *existing)
{
    Writer *w = rows->writer;
    Relation rel = rows->rel;
    PrepareDedupArbiter(w);
    for (;;) {
        CHECK_FOR_INTERRUPTS();
        ItemPointerData conflict;
        if (!CheckArbiter(w->rri, row, w->estate, &conflict, w->dedup_arbiter)) {
            *existing = IdAt(rows, &conflict);
            return false;
        }
        uint32 token = SpeculativeInsertionLockAcquire(GetCurrentTransactionId());
        table_tuple_insert_speculative(rel, row, w->estate->es_output_cid, 0, nullptr, token);
        bool conflicted = InsertSpeculativeIndexEntries(w->rri, row, w->estate, w->dedup_arbiter);
        table_tuple_complete_speculative(rel, row, token, !conflicted);
        SpeculativeInsertionLockRelease(GetCurrentTransactionId());
        if (!conflicted)
            return true;
    }
}

}  // namespace

bool InsertJob(JobRows *rows, const NewJobRow &job, int64 *id)
{
    Writer *w = rows->writer;
    if (!JobRowsInsertDirectly(rows, job.dedup_key != nullptr))
        elog(ERROR, "claimqueue: InsertJob on a table with triggers or generated columns");
    if (rows->snapshot == nullptr)
        NewJobRowsSnapshot(rows);  // for code a constraint or an index may run
    if (w->defaults == nullptr)
        CompileDefaults(w, rows->rel);
    TupleTableSlot *row = w->new_slot;
    ExecClearTuple(row);
    w->set_columns = 0;
    // Defaults first, in column order, as an INSERT evaluates its target
    // list: the id's nextval() is drawn here.
    ExprContext *econtext = GetPerTupleExprContext(w->estate);
    int natts = row->tts_tupleDescriptor->natts;
    for (int i = 0; i < natts; i++) {
        row->tts_values[i] = (Datum) 0;
        row->tts_isnull[i] = true;
        if (w->defaults[i] != nullptr)
            row->tts_values[i] =
                ExecEvalExprSwitchContext(w->defaults[i], econtext, &row->tts_isnull[i]);
    }
    Set(w, kQueueId, Int32GetDatum(job.queue_id));
    Set(w, kPayload, job.payload);
    Set(w, kRunAt, TimestampTzGetDatum(job.run_at));
    Set(w, kPriority, Int16GetDatum(job.priority));
    Set(w, kMaxAttempts, Int32GetDatum(job.max_attempts));
    Set(w, kCreatedAt, TimestampTzGetDatum(job.created_at));
    Set(w, kDedupKey, PointerGetDatum(job.dedup_key), job.dedup_key == nullptr);
    Set(w, kPos, Int64GetDatum(job.pos), job.pos < 0);
    if (job.concurrency_key != nullptr)
        Set(w, kConcurrencyKey, PointerGetDatum(job.concurrency_key));
    if (w->attnum[kQueue] != InvalidAttrNumber)  // Citus's distribution column
        Set(w, kQueue, CStringGetTextDatum(job.queue_name));
    ExecStoreVirtualTuple(row);
    OpenIndexesToWrite(w, nullptr, row);
    Relation rel = rows->rel;
    if (rel->rd_att->constr)
        ExecConstraints(w->rri, row, w->estate);
    bool inserted = true;
    if (job.dedup_key == nullptr) {
        table_tuple_insert(rel, row, w->estate->es_output_cid, 0, nullptr);
        InsertIndexEntries(w->rri, row, w->estate);
    } else {
        inserted = InsertUnlessDuplicate(rows, row, id);
    }
    if (inserted)
        *id = DatumGetInt64(Required(w, row, kId));
    ResetPerTupleExprContext(w->estate);
    return inserted;
}

}  // namespace claimqueue

// Every difference between the PostgreSQL majors claimqueue supports (15, 16,
// 17, 18) lives here, behind PG_VERSION_NUM; the rest of src/ calls these.
#pragma once

#include "pg/pg.hpp"

extern "C" {
#include "access/genam.h"
#include "catalog/index.h"
#include "access/tableam.h"
#include "executor/executor.h"
#include "nodes/bitmapset.h"
#include "nodes/nodeFuncs.h"
#include "parser/parse_relation.h"
#include "storage/lock.h"
#include "storage/proc.h"
}

#if PG_VERSION_NUM < 150000
#error "claimqueue needs PostgreSQL 15 or later"
#endif

namespace claimqueue {

// This backend's index in ProcGlobal->allProcs, which sizes per-backend slots in
// shared memory (MaxBackends + NUM_AUXILIARY_PROCS + max_prepared_xacts).
// PGPROC.pgprocno became MyProcNumber / GetNumberFromPGProc() in 17.
inline int MyProcIndex()
{
#if PG_VERSION_NUM >= 170000
    return MyProcNumber;
#else
    return MyProc->pgprocno;
#endif
}

// expression_tree_walker over an expression with a typed walker. Up to 15 the
// walker argument is declared bool (*)(); from 16 it is tree_walker_callback,
// this very type.
using ExpressionWalker = bool (*)(Node *, void *);
inline bool WalkExpression(Node *node, ExpressionWalker walker, void *context)
{
#if PG_VERSION_NUM >= 160000
    return expression_tree_walker_impl(node, walker, context);
#else
    // Through void (*)(void), the type GCC takes as "any function".
    return expression_tree_walker(node, (bool (*)()) (void (*)()) walker, context);
#endif
}

// Whether this backend holds the lock in exactly this mode. 17 added the
// orstronger argument; false keeps the exact-mode meaning of 15 and 16.
inline bool HoldsLockInMode(const LOCKTAG *tag, LOCKMODE mode)
{
#if PG_VERSION_NUM >= 170000
    return LockHeldByMe(tag, mode, false);
#else
    return LockHeldByMe(tag, mode);
#endif
}

// The executor state of a statement on one table (range table entry 1), as
// logical replication's apply worker builds it. 16 moved permissions out of
// the range table entry into RTEPermissionInfo; 18 added the set of unpruned
// relations.
inline void InitSingleRangeTable(EState *estate, RangeTblEntry *rte)
{
#if PG_VERSION_NUM >= 180000
    List *perminfos = NIL;
    addRTEPermissionInfo(&perminfos, rte);
    ExecInitRangeTable(estate, list_make1(rte), perminfos, bms_make_singleton(1));
#elif PG_VERSION_NUM >= 160000
    List *perminfos = NIL;
    addRTEPermissionInfo(&perminfos, rte);
    ExecInitRangeTable(estate, list_make1(rte), perminfos);
#else
    ExecInitRangeTable(estate, list_make1(rte));
#endif
}

// The columns a statement built by InitSingleRangeTable updates (its SET
// list): 16 keeps them in the RTEPermissionInfo, 15 in the range table entry.
// `columns` is offset by FirstLowInvalidHeapAttributeNumber, as there.
inline void SetUpdatedColumns(EState *estate, Bitmapset *columns)
{
    RangeTblEntry *rte = exec_rt_fetch(1, estate);
#if PG_VERSION_NUM >= 160000
    getRTEPermissionInfo(estate->es_rteperminfos, rte)->updatedCols = columns;
#else
    rte->updatedCols = columns;
#endif
}

// An EvalPlanQual state with no plan (single-row updates): 16 added the list
// of result relations.
inline void InitEmptyEvalPlanQual(EPQState *epq, EState *estate)
{
#if PG_VERSION_NUM >= 160000
    EvalPlanQualInit(epq, estate, nullptr, NIL, -1, NIL);
#else
    EvalPlanQualInit(epq, estate, nullptr, NIL, -1);
#endif
}

// table_tuple_update (waiting for other sessions, as UPDATE does, unless
// `wait` is false: then a row another transaction holds is TM_BeingModified),
// then, when it succeeded, the index entries an UPDATE's new version gets
// (none for a HOT update). 16 made "which indexes" three-valued (summarizing
// ones alone). `same_key` (a position in rri's indexes, or -1) is a unique
// index whose key this update leaves as it was: its entry is made without
// the uniqueness check (UNIQUE_CHECK_NO, hinted as unchanged). The entries
// under that key are then versions of this one row, so the check, which
// visits each of them in the heap, could find no other; a HOT update skips
// it the same way, by making no entry at all. A row inserted with that key
// meanwhile is refused by its own check, which sees this row's versions.
inline TM_Result UpdateTupleAndIndexes(ResultRelInfo *rri, EState *estate, ItemPointer tid,
                                       TupleTableSlot *slot, TM_FailureData *failure,
                                       bool wait = true, int same_key = -1)
{
    LockTupleMode lockmode;
#if PG_VERSION_NUM >= 160000
    TU_UpdateIndexes update_indexes;
#else
    bool update_indexes;
#endif
    TM_Result result = table_tuple_update(rri->ri_RelationDesc, tid, slot, estate->es_output_cid,
                                          estate->es_snapshot, InvalidSnapshot, wait, failure,
                                          &lockmode, &update_indexes);
    if (result != TM_Ok || rri->ri_NumIndices == 0)
        return result;
#if PG_VERSION_NUM >= 160000
    if (update_indexes == TU_None)
        return result;
    bool all = update_indexes == TU_All;
#else
    if (!update_indexes)
        return result;
    bool all = true;
#endif
    // The executor passes over an index whose descriptor is not there.
    Relation key = nullptr;
    if (all && same_key >= 0) {
        key = rri->ri_IndexRelationDescs[same_key];
        rri->ri_IndexRelationDescs[same_key] = nullptr;
    }
#if PG_VERSION_NUM >= 160000
    list_free(ExecInsertIndexTuples(rri, slot, estate, true, false, nullptr, NIL, !all));
#else
    list_free(ExecInsertIndexTuples(rri, slot, estate, true, false, nullptr, NIL));
#endif
    if (key != nullptr) {
        rri->ri_IndexRelationDescs[same_key] = key;
        IndexInfo *info = rri->ri_IndexRelationInfo[same_key];
        GetPerTupleExprContext(estate)->ecxt_scantuple = slot;
        Datum values[INDEX_MAX_KEYS];
        bool isnull[INDEX_MAX_KEYS];
        FormIndexDatum(info, slot, estate, values, isnull);
        index_insert(key, values, isnull, &slot->tts_tid, rri->ri_RelationDesc, UNIQUE_CHECK_NO,
                     true, info);
    }
    return result;
}

// The index entries of a newly inserted row (an INSERT's, no ON CONFLICT):
// 16 added the summarizing-only flag.
inline void InsertIndexEntries(ResultRelInfo *rri, TupleTableSlot *slot, EState *estate)
{
#if PG_VERSION_NUM >= 160000
    list_free(ExecInsertIndexTuples(rri, slot, estate, false, false, nullptr, NIL, false));
#else
    list_free(ExecInsertIndexTuples(rri, slot, estate, false, false, nullptr, NIL));
#endif
}

// The pre-check of a speculative insertion (INSERT ... ON CONFLICT) against
// the arbiter indexes: false, with the conflicting version's TID, when a live
// row has the key (after waiting for a transaction changing one). 18 added
// the TID of a row to leave out (none here).
inline bool CheckArbiter(ResultRelInfo *rri, TupleTableSlot *slot, EState *estate,
                         ItemPointer conflict, List *arbiters)
{
#if PG_VERSION_NUM >= 180000
    ItemPointerData none;
    ItemPointerSetInvalid(&none);
    return ExecCheckIndexConstraints(rri, slot, estate, conflict, &none, arbiters);
#else
    return ExecCheckIndexConstraints(rri, slot, estate, conflict, arbiters);
#endif
}

// The index entries of a row inserted speculatively: true when an arbiter
// index found a conflicting entry meanwhile (the row is then to be killed).
inline bool InsertSpeculativeIndexEntries(ResultRelInfo *rri, TupleTableSlot *slot,
                                          EState *estate, List *arbiters)
{
    bool conflict = false;
#if PG_VERSION_NUM >= 160000
    list_free(ExecInsertIndexTuples(rri, slot, estate, false, true, &conflict, arbiters, false));
#else
    list_free(ExecInsertIndexTuples(rri, slot, estate, false, true, &conflict, arbiters));
#endif
    return conflict;
}

// An index scan with no ORDER BY operators: 18 added scan instrumentation.
inline IndexScanDesc BeginIndexScan(Relation heap, Relation index, Snapshot snapshot, int nkeys)
{
#if PG_VERSION_NUM >= 180000
    return index_beginscan(heap, index, snapshot, nullptr, nkeys, 0);
#else
    return index_beginscan(heap, index, snapshot, nkeys, 0);
#endif
}

}  // namespace claimqueue

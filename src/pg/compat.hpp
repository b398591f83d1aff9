// Every difference between the PostgreSQL majors claimqueue supports (15, 16,
// 17, 18) lives here, behind PG_VERSION_NUM; the rest of src/ calls these.
#pragma once

#include "pg/pg.hpp"

extern "C" {
#include "access/genam.h"
#include "executor/executor.h"
#include "nodes/bitmapset.h"
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

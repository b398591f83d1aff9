// The planner hook of citus_guard.hpp: a call of one of the functions that
// distribute() registers with Citus, made at the top of a query with a NULL
// constant or parameter for its queue, is refused with the error the function itself
// raises (22004), before Citus tries to hash the NULL. Everything else goes
// on to the next planner untouched; a query costs a look at its target list
// and its FROM functions, and a catalog look-up only for a call that has a
// NULL argument.
#include "pg/citus_guard.hpp"

extern "C" {
#include "access/htup_details.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/planner.h"
#include "tcop/utility.h"
#include "utils/builtins.h"
#include "utils/syscache.h"
}

namespace claimqueue {
namespace {

planner_hook_type previous_planner = nullptr;
ProcessUtility_hook_type previous_utility = nullptr;

// The C functions Citus delegates by their queue argument (api/citus.sql),
// and that argument's position.
struct DelegatedCall {
    const char *symbol;
    int queue_arg;
};
constexpr DelegatedCall kDelegated[] = {
    {"cq_enqueue", 0},      {"cq_enqueue_batch", 0},      {"cq_dequeue", 0},
    {"cq_complete_and_dequeue", 2}, {"cq_complete_in", 0}, {"cq_complete_batch_in", 0},
    {"cq_fail_in", 0},      {"cq_heartbeat_in", 0},       {"cq_snooze_in", 0},
    {"cq_dequeue_wait", 0},  // a procedure: CALL
};

// Whether the argument is NULL as Citus will see it: a NULL constant, or a
// parameter bound to NULL (Citus plans a call with parameters for their
// values, as constants).
bool IsNullArg(Node *node, ParamListInfo params)
{
    node = strip_implicit_coercions(node);
    if (node == nullptr)
        return false;
    if (IsA(node, Const))
        return ((Const *) node)->constisnull;
    if (!IsA(node, Param) || params == nullptr)
        return false;
    Param *param = (Param *) node;
    if (param->paramkind != PARAM_EXTERN || param->paramid < 1 ||
        param->paramid > params->numParams)
        return false;
    ParamExternData workspace;
    ParamExternData *value = params->paramFetch != nullptr
                                 ? params->paramFetch(params, param->paramid, false, &workspace)
                                 : &params->params[param->paramid - 1];
    return value != nullptr && value->isnull;
}

void CheckCall(Node *node, ParamListInfo params)
{
    if (node == nullptr || !IsA(node, FuncExpr))
        return;
    FuncExpr *call = (FuncExpr *) node;
    bool any_null = false;
    ListCell *lc;
    foreach (lc, call->args)
        any_null = any_null || IsNullArg((Node *) lfirst(lc), params);
    if (!any_null)
        return;
    HeapTuple proc = SearchSysCache1(PROCOID, ObjectIdGetDatum(call->funcid));
    if (!HeapTupleIsValid(proc))
        return;
    Form_pg_proc form = (Form_pg_proc) GETSTRUCT(proc);
    int queue_arg = -1;
    if (form->prolang == ClanguageId) {
        bool isnull;
        Datum src = SysCacheGetAttr(PROCOID, proc, Anum_pg_proc_prosrc, &isnull);
        char *symbol = isnull ? nullptr : TextDatumGetCString(src);
        for (const DelegatedCall &d : kDelegated)
            if (symbol != nullptr && strcmp(symbol, d.symbol) == 0)
                queue_arg = d.queue_arg;
    }
    ReleaseSysCache(proc);
    if (queue_arg >= 0 && queue_arg < list_length(call->args) &&
        IsNullArg((Node *) list_nth(call->args, queue_arg), params))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                        errmsg("queue name must not be NULL")));
}

PlannedStmt *GuardedPlanner(Query *query, const char *text, int options, ParamListInfo params)
{
    if (query->commandType == CMD_SELECT) {
        ListCell *lc;
        foreach (lc, query->targetList)
            CheckCall((Node *) ((TargetEntry *) lfirst(lc))->expr, params);
        foreach (lc, query->rtable) {
            RangeTblEntry *rte = (RangeTblEntry *) lfirst(lc);
            if (rte->rtekind != RTE_FUNCTION)
                continue;
            ListCell *f;
            foreach (f, rte->functions)
                CheckCall(((RangeTblFunction *) lfirst(f))->funcexpr, params);
        }
    }
    return previous_planner != nullptr ? previous_planner(query, text, options, params)
                                       : standard_planner(query, text, options, params);
}

// CALL of a procedure Citus delegates (dequeue_wait) goes through Citus's
// utility hook, which hashes the queue as its planner does.
void GuardedUtility(PlannedStmt *pstmt, const char *query, bool read_only_tree,
                    ProcessUtilityContext context, ParamListInfo params, QueryEnvironment *env,
                    DestReceiver *dest, QueryCompletion *qc)
{
    if (IsA(pstmt->utilityStmt, CallStmt))
        CheckCall((Node *) ((CallStmt *) pstmt->utilityStmt)->funcexpr, params);
    if (previous_utility != nullptr)
        previous_utility(pstmt, query, read_only_tree, context, params, env, dest, qc);
    else
        standard_ProcessUtility(pstmt, query, read_only_tree, context, params, env, dest, qc);
}

}  // namespace

void InstallCitusCallGuard()
{
    previous_planner = planner_hook;
    planner_hook = GuardedPlanner;
    previous_utility = ProcessUtility_hook;
    ProcessUtility_hook = GuardedUtility;
}

}  // namespace claimqueue

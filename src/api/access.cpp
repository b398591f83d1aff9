// Who may do what to which queue (see access.hpp).
#include "api/access.hpp"

extern "C" {
#include "access/htup_details.h"
#include "catalog/pg_proc.h"
#include "utils/acl.h"
#include "utils/syscache.h"
}

#include "engine/statement.hpp"

namespace claimqueue {
namespace {

const Caller *current_caller = nullptr;

// A grant to the role, to a role it inherits from, or to PUBLIC (grantee 0).
Statement kQueueGranted = {
    "SELECT EXISTS (SELECT 1 FROM claimqueue.queue_grants g"
    "               WHERE g.queue_id = q.queue_id AND g.privilege = $2"
    "                 AND CASE WHEN g.grantee::pg_catalog.oid = 0 THEN true"
    "                          WHEN NOT EXISTS (SELECT 1 FROM pg_catalog.pg_authid a"
    "                                           WHERE a.oid = g.grantee::pg_catalog.oid) THEN false"
    "                          ELSE pg_catalog.pg_has_role($3, g.grantee::pg_catalog.oid, 'USAGE') END)"
    " FROM claimqueue.queues q WHERE q.name = $1",
    3, {TEXTOID, TEXTOID, OIDOID}, nullptr};

Statement kJobQueue = {
    "SELECT q.name FROM claimqueue.jobs j JOIN claimqueue.queues q ON q.queue_id = j.queue_id"
    " WHERE j.id = $1",
    1, {INT8OID}, nullptr};

Statement kJobsQueues = {
    "SELECT DISTINCT q.name FROM claimqueue.jobs j JOIN claimqueue.queues q"
    " ON q.queue_id = j.queue_id WHERE j.id = ANY ($1) ORDER BY q.name",
    1, {INT8ARRAYOID}, nullptr};

Oid FunctionOwner(Oid function)
{
    HeapTuple tuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(function));
    if (!HeapTupleIsValid(tuple))
        elog(ERROR, "claimqueue: cache lookup failed for function %u", function);
    Oid owner = ((Form_pg_proc) GETSTRUCT(tuple))->proowner;
    ReleaseSysCache(tuple);
    return owner;
}

bool IsAdmin(Oid user, Oid owner)
{
    if (user == owner || superuser_arg(user))
        return true;
    Oid admin_role = get_role_oid("claimqueue_admin", true);
    return OidIsValid(admin_role) && has_privs_of_role(user, admin_role);
}

[[noreturn]] void ReportDenied(const char *queue, QueuePrivilege privilege, const char *action)
{
    const char *role = GetUserNameFromId(current_caller->user, false);
    ereport(ERROR,
            (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
             errmsg("permission denied for queue \"%s\"", queue),
             errdetail("%s needs the %s privilege on the queue; role \"%s\" does not have it.",
                       action, QueuePrivilegeName(privilege), role),
             errhint("A claimqueue administrator can run grant_queue('%s', '%s', '%s').", queue,
                     QueuePrivilegeName(privilege), role)));
    pg_unreachable();
}

}  // namespace

const char *QueuePrivilegeName(QueuePrivilege privilege)
{
    switch (privilege) {
    case QueuePrivilege::kProduce: return "produce";
    case QueuePrivilege::kConsume: return "consume";
    case QueuePrivilege::kManage: return "manage";
    }
    return "?";
}

void EnterAsOwner(FunctionCallInfo fcinfo, Caller *caller)
{
    GetUserIdAndSecContext(&caller->saved_user, &caller->saved_context);
    caller->user = caller->saved_user;
    Oid owner = FunctionOwner(fcinfo->flinfo->fn_oid);
    caller->admin = IsAdmin(caller->user, owner);
    SetUserIdAndSecContext(owner, caller->saved_context | SECURITY_LOCAL_USERID_CHANGE);
    current_caller = caller;
}

void LeaveAsOwner(const Caller *caller)
{
    SetUserIdAndSecContext(caller->saved_user, caller->saved_context);
    current_caller = nullptr;
}

const Caller *CurrentCaller()
{
    return current_caller;
}

void RequireQueuePrivilege(text *queue, QueuePrivilege privilege, const char *action)
{
    if (current_caller == nullptr)
        elog(ERROR, "claimqueue: privilege check outside a queue API function");
    if (current_caller->admin)
        return;
    Datum args[3] = {PointerGetDatum(queue), CStringGetTextDatum(QueuePrivilegeName(privilege)),
                     ObjectIdGetDatum(current_caller->user)};
    ConnectSpi();
    if (Execute(&kQueueGranted, args, nullptr, 1) == 1 && !DatumGetBool(ResultValue(0, 1)))
        ReportDenied(text_to_cstring(queue), privilege, action);
    FinishSpi();
}

void RequireJobPrivilege(int64 id, QueuePrivilege privilege, const char *action)
{
    if (current_caller == nullptr)
        elog(ERROR, "claimqueue: privilege check outside a queue API function");
    if (current_caller->admin)
        return;
    Datum args[1] = {Int64GetDatum(id)};
    ConnectSpi();
    if (Execute(&kJobQueue, args, nullptr, 1) == 1)
        RequireQueuePrivilege(DatumGetTextPCopy(ResultValue(0, 1)), privilege, action);
    FinishSpi();
}

void RequireJobsPrivilege(int n, const int64 *ids, QueuePrivilege privilege, const char *action)
{
    if (current_caller == nullptr)
        elog(ERROR, "claimqueue: privilege check outside a queue API function");
    if (current_caller->admin)
        return;
    Datum *values = (Datum *) palloc(sizeof(Datum) * n);
    for (int i = 0; i < n; i++)
        values[i] = Int64GetDatum(ids[i]);
    Datum args[1] = {PointerGetDatum(Int8Array(values, n))};
    ConnectSpi();
    uint64 nqueues = Execute(&kJobsQueues, args, nullptr);
    text **queues = (text **) palloc(sizeof(text *) * (nqueues + 1));
    for (uint64 i = 0; i < nqueues; i++)
        queues[i] = DatumGetTextPCopy(ResultValue(i, 1));
    for (uint64 i = 0; i < nqueues; i++)
        RequireQueuePrivilege(queues[i], privilege, action);
    FinishSpi();
}

void RequireAdmin(const char *action)
{
    if (current_caller == nullptr)
        elog(ERROR, "claimqueue: privilege check outside a queue API function");
    if (current_caller->admin)
        return;
    ereport(ERROR,
            (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
             errmsg("permission denied to %s", action),
             errdetail("Role \"%s\" is not a claimqueue administrator.",
                       GetUserNameFromId(current_caller->user, false)),
             errhint("Grant it claimqueue_admin, or ask a member of claimqueue_admin.")));
}

}  // namespace claimqueue

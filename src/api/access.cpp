// Who may do what to which queue (see access.hpp).
#include "api/access.hpp"

extern "C" {
#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_proc.h"
#include "commands/trigger.h"
#include "utils/acl.h"
#include "utils/inval.h"
#include "utils/syscache.h"
}

#include "engine/claim.hpp"
#include "engine/grants.hpp"
#include "engine/queue_cache.hpp"
#include "engine/schema_version.hpp"

namespace claimqueue {
namespace {

const Caller *current_caller = nullptr;

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

// Whether the running queue API function's caller is an administrator (no
// per-queue check needed).
bool CallerIsAdmin()
{
    if (current_caller == nullptr)
        elog(ERROR, "claimqueue: privilege check outside a queue API function");
    return current_caller->admin;
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
    caller->previous = current_caller;
    SetUserIdAndSecContext(owner, caller->saved_context | SECURITY_LOCAL_USERID_CHANGE);
    current_caller = caller;
    // An error here leaves nothing to undo: CQ_QUEUE_FUNCTION's PG_TRY starts
    // after EnterAsOwner, so reset now what an error would otherwise leave.
    PG_TRY();
    {
        RequireServedSchema();
    }
    PG_CATCH();
    {
        LeaveAsOwner(caller);
        PG_RE_THROW();
    }
    PG_END_TRY();
}

void LeaveAsOwner(const Caller *caller)
{
    SetUserIdAndSecContext(caller->saved_user, caller->saved_context);
    current_caller = caller->previous;
}

const Caller *CurrentCaller()
{
    return current_caller;
}

void RequireQueuePrivilege(text *queue, QueuePrivilege privilege, const char *action)
{
    if (CallerIsAdmin() || CachedGrant(current_caller->user, (int) privilege, queue))
        return;
    switch (QueueGranted(queue, QueuePrivilegeName(privilege), current_caller->user)) {
    case GrantLookup::kNoQueue:
        return;  // the action reports QC001
    case GrantLookup::kDenied:
        ReportDenied(text_to_cstring(queue), privilege, action);
    case GrantLookup::kGranted:
        RememberGrant(current_caller->user, (int) privilege, queue);
        return;
    }
}

bool CallerSeesQueue(text *queue)
{
    if (CallerIsAdmin())
        return true;
    for (QueuePrivilege p : {QueuePrivilege::kConsume, QueuePrivilege::kProduce,
                             QueuePrivilege::kManage}) {
        if (CachedGrant(current_caller->user, (int) p, queue))
            return true;
        switch (QueueGranted(queue, QueuePrivilegeName(p), current_caller->user)) {
        case GrantLookup::kNoQueue:
            return true;
        case GrantLookup::kDenied:
            break;
        case GrantLookup::kGranted:
            RememberGrant(current_caller->user, (int) p, queue);
            return true;
        }
    }
    return false;
}

void RequireJobPrivilege(int64 id, QueuePrivilege privilege, const char *action)
{
    if (RequireJobsPrivilege(1, &id, privilege, action) == 0)
        ReportJobNotFound(id);
}

int RequireJobsPrivilege(int n, const int64 *ids, QueuePrivilege privilege, const char *action)
{
    if (CallerIsAdmin())
        return n;
    text **queues;
    int *first;
    int nqueues = JobQueues(n, ids, &queues, &first);
    int hidden = n;
    for (int i = 0; i < nqueues; i++) {
        if (CachedGrant(current_caller->user, (int) privilege, queues[i]))
            continue;
        if (!CallerSeesQueue(queues[i])) {
            hidden = first[i] < hidden ? first[i] : hidden;
            continue;
        }
        RequireQueuePrivilege(queues[i], privilege, action);
    }
    return hidden;
}

void RequireAdmin(const char *action)
{
    if (CallerIsAdmin())
        return;
    ereport(ERROR,
            (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
             errmsg("permission denied to %s", action),
             errdetail("Role \"%s\" is not a claimqueue administrator.",
                       GetUserNameFromId(current_caller->user, false)),
             errhint("Grant it claimqueue_admin, or ask a member of claimqueue_admin.")));
}

}  // namespace claimqueue

namespace {

// A statement trigger's table changed: invalidate its relcache entry, which
// tells every session (this one at once, others at their next transaction) to
// drop what it cached from it (engine/queue_cache.hpp). On a Citus shard of
// the table (claimqueue.distribute(): the change arrives there, not on the
// table) the table `table` beside it is invalidated too, since the caches know
// the table alone.
Datum InvalidateTriggerTable(FunctionCallInfo fcinfo, const char *name, const char *table)
{
    if (!CALLED_AS_TRIGGER(fcinfo))
        ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
                        errmsg("%s() must be called as a trigger", name)));
    TriggerData *trigger = (TriggerData *) fcinfo->context;
    Relation rel = trigger->tg_relation;
    CacheInvalidateRelcacheByRelid(RelationGetRelid(rel));
    if (strcmp(RelationGetRelationName(rel), table) != 0) {
        Oid shell = get_relname_relid(table, RelationGetNamespace(rel));
        if (OidIsValid(shell))
            CacheInvalidateRelcacheByRelid(shell);
    }
    return PointerGetDatum(nullptr);
}

}  // namespace

// claimqueue.queue_grants_changed(): statement trigger on queue_grants. Every
// change (grant_queue, revoke_queue, a dropped queue's cascade, a restore, a
// superuser's own DML) makes every session forget the grants it remembered.
CQ_FUNCTION(cq_queue_grants_changed)
{
    return InvalidateTriggerTable(fcinfo, "queue_grants_changed", "queue_grants");
}

// claimqueue.queues_changed(): the same on claimqueue.queues (ids, leases and
// backoffs remembered).
CQ_FUNCTION(cq_table_changed)
{
    return InvalidateTriggerTable(fcinfo, "queues_changed", "queues");
}

// claimqueue.api_caller() -> regrole: the role that called the queue API
// function running now, NULL outside one (for triggers on claimqueue.jobs).
CQ_FUNCTION(cq_api_caller)
{
    const claimqueue::Caller *caller = claimqueue::CurrentCaller();
    if (caller == nullptr)
        PG_RETURN_NULL();
    PG_RETURN_OID(caller->user);
}

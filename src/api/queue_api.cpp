// SQL API, queue administration: create_queue, alter_queue, drop_queue,
// pause_queue, resume_queue.
#include "pg/firewall.hpp"

extern "C" {
#include "utils/acl.h"
}

#include "api/access.hpp"
#include "api/args.hpp"
#include "core/rules.hpp"
#include "engine/claim.hpp"
#include "pg/clock.hpp"
#include "engine/grants.hpp"
#include "engine/queues.hpp"

using namespace claimqueue;

namespace {

// The settings, in QueueSettings order and in argument order after the name.
const char *const kSettingNames[kQueueSettings] = {
    "lease", "max_attempts", "backoff_base", "backoff_cap", "retention", "failed_retention"};

// Checks one setting (argument n) if given; returns whether it was given.
bool CheckSetting(FunctionCallInfo fcinfo, int n, int field, Datum *out)
{
    if (PG_ARGISNULL(n))
        return false;
    if (field == 1) {
        rules::CheckMaxAttempts(PG_GETARG_INT32(n));
    } else {
        CheckIntervalArg(kSettingNames[field], PG_GETARG_INTERVAL_P(n), field == 0);
    }
    *out = PG_GETARG_DATUM(n);
    return true;
}

// The flow-control settings, arguments n (max_running), n + 1
// (max_running_per_key) and n + 2 (fair), when the SQL declares them (0.5.0):
// NULL is not given.
QueueLimits LimitArgs(FunctionCallInfo fcinfo, int n, bool zero_clears)
{
    QueueLimits limits = {};
    if (PG_NARGS() > n && !PG_ARGISNULL(n)) {
        limits.max_running = PG_GETARG_INT32(n);
        rules::CheckRunningLimit("max_running", limits.max_running, zero_clears);
        limits.max_running_given = true;
    }
    if (PG_NARGS() > n + 1 && !PG_ARGISNULL(n + 1)) {
        limits.max_running_per_key = PG_GETARG_INT32(n + 1);
        rules::CheckRunningLimit("max_running_per_key", limits.max_running_per_key, zero_clears);
        limits.max_running_per_key_given = true;
    }
    if (PG_NARGS() > n + 2 && !PG_ARGISNULL(n + 2)) {
        limits.fair = PG_GETARG_BOOL(n + 2);
        limits.fair_given = true;
    }
    return limits;
}

}  // namespace

// create_queue(name, lease, max_attempts, backoff_base, backoff_cap, retention, if_not_exists,
//              failed_retention, max_running, max_running_per_key, fair); failed_retention
//              NULL: as retention; a limit NULL: none
CQ_QUEUE_FUNCTION(cq_create_queue)
{
    text *name = QueueNameArg(fcinfo, 0);
    Datum values[kQueueSettings] = {0, 0, 0, 0, 0, 0};
    for (int i = 0; i < 5; i++) {
        RequireArg(fcinfo, i + 1, kSettingNames[i]);
        CheckSetting(fcinfo, i + 1, i, &values[i]);
    }
    CheckBackoffDatums(values[2], values[3]);
    RequireArg(fcinfo, 6, "if_not_exists");
    CheckSetting(fcinfo, 7, 5, &values[5]);  // optional: stays 0 when NULL
    if (PG_NARGS() > 10)
        RequireArg(fcinfo, 10, "fair");  // false or true: NULL is no choice (22004)
    QueueLimits limits = LimitArgs(fcinfo, 8, false);
    limits.fair_given = limits.fair_given && limits.fair;  // a new queue is not fair already
    RequireAdmin("create a queue");
    QueueSettings settings = {values[0], values[1], values[2], values[3], values[4], values[5]};
    bool created = CreateQueue(name, settings, PG_GETARG_BOOL(6));
    if (created)
        SetQueueLimits(name, limits);
    PG_RETURN_BOOL(created);
}

// alter_queue(name, lease, max_attempts, backoff_base, backoff_cap, retention, failed_retention,
//             max_running, max_running_per_key, fair); NULL = unchanged, a limit 0 = none
CQ_QUEUE_FUNCTION(cq_alter_queue)
{
    text *name = QueueNameArg(fcinfo, 0);
    Datum values[kQueueSettings] = {0, 0, 0, 0, 0, 0};
    bool given[kQueueSettings];
    for (int i = 0; i < kQueueSettings; i++)
        given[i] = CheckSetting(fcinfo, i + 1, i, &values[i]);
    QueueLimits limits = LimitArgs(fcinfo, 7, true);
    RequireQueuePrivilege(name, QueuePrivilege::kManage, "alter_queue()");
    QueueSettings settings = {values[0], values[1], values[2], values[3], values[4], values[5]};
    AlterQueue(name, settings, given);
    SetQueueLimits(name, limits);
    PG_RETURN_VOID();
}

// pause_queue(name) -> true if the queue was running (false: paused already)
CQ_QUEUE_FUNCTION(cq_pause_queue)
{
    text *name = QueueNameArg(fcinfo, 0);
    RequireQueuePrivilege(name, QueuePrivilege::kManage, "pause_queue()");
    PG_RETURN_BOOL(SetQueuePaused(name, true));
}

// resume_queue(name) -> true if the queue was paused (false: running already)
CQ_QUEUE_FUNCTION(cq_resume_queue)
{
    text *name = QueueNameArg(fcinfo, 0);
    RequireQueuePrivilege(name, QueuePrivilege::kManage, "resume_queue()");
    PG_RETURN_BOOL(SetQueuePaused(name, false));
}

// drop_queue(name, force) -> jobs deleted
CQ_QUEUE_FUNCTION(cq_drop_queue)
{
    text *name = QueueNameArg(fcinfo, 0);
    RequireArg(fcinfo, 1, "force");
    // A transaction snapshot would miss jobs enqueued after it began: they
    // would be neither counted nor deleted, and outlive their queue.
    RequireReadCommitted("drop_queue()");
    RequireQueuePrivilege(name, QueuePrivilege::kManage, "drop_queue()");
    PG_RETURN_INT64(DropQueue(name, PG_GETARG_BOOL(1)));
}

namespace {

// The privilege argument: produce, consume or manage.
const char *PrivilegeArg(FunctionCallInfo fcinfo, int n)
{
    text *arg = TextArg(fcinfo, n, "privilege");
    char *privilege = text_to_cstring(arg);
    for (QueuePrivilege p : {QueuePrivilege::kProduce, QueuePrivilege::kConsume,
                             QueuePrivilege::kManage})
        if (strcmp(privilege, QueuePrivilegeName(p)) == 0)
            return QueuePrivilegeName(p);
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("unknown queue privilege \"%s\"", privilege),
                    errhint("Queue privileges are produce, consume and manage.")));
    pg_unreachable();
}

// The role argument: a role name, or public (any case) for PUBLIC (0).
Oid RoleArg(FunctionCallInfo fcinfo, int n)
{
    char *role = text_to_cstring(TextArg(fcinfo, n, "role"));
    if (pg_strcasecmp(role, "public") == 0)
        return InvalidOid;
    return get_role_oid(role, false);  // 42704 names an unknown role
}

}  // namespace

// grant_queue(queue, privilege, role) / revoke_queue(...): the arguments checked,
// then `change` (GrantQueue or RevokeQueue) for a caller who manages the queue.
static Datum ChangeGrant(FunctionCallInfo fcinfo, bool (*change)(text *, const char *, Oid),
                  const char *function)
{
    text *queue = QueueNameArg(fcinfo, 0);
    const char *privilege = PrivilegeArg(fcinfo, 1);
    Oid role = RoleArg(fcinfo, 2);
    RequireQueuePrivilege(queue, QueuePrivilege::kManage, function);
    PG_RETURN_BOOL(change(queue, privilege, role));
}

// grant_queue(queue, privilege, role) -> true if the grant is new
CQ_QUEUE_FUNCTION(cq_grant_queue)
{
    return ChangeGrant(fcinfo, GrantQueue, "grant_queue()");
}

// revoke_queue(queue, privilege, role) -> true if the grant existed
CQ_QUEUE_FUNCTION(cq_revoke_queue)
{
    return ChangeGrant(fcinfo, RevokeQueue, "revoke_queue()");
}

// claimqueue.visible_queues(): the queues the caller holds any privilege on
// (all of them for an administrator); the views show only these.
CQ_QUEUE_FUNCTION(cq_visible_queues)
{
    Tuplestorestate *out = InitScalarSRF(fcinfo, INT4OID);
    ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
    VisibleQueues(CurrentCaller()->user, CurrentCaller()->admin, out, rsinfo->setDesc);
    return (Datum) 0;
}

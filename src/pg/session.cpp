// The backend's process-wide callbacks (see session.hpp).
#include "pg/session.hpp"

extern "C" {
#include "catalog/objectaccess.h"
#include "catalog/pg_database.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "utils/inval.h"
#include "utils/syscache.h"
}

namespace claimqueue {
namespace {

constexpr int kMaxHandlers = 8;

template <typename Handler>
struct Handlers {
    Handler list[kMaxHandlers];
    int n = 0;

    void Add(Handler handler, const char *what)
    {
        if (n == kMaxHandlers)
            elog(ERROR, "claimqueue: too many %s handlers", what);
        list[n++] = handler;
    }
};

Handlers<TransactionEndHandler> transaction_end;
Handlers<SubtransactionEndHandler> subtransaction_end;
Handlers<RelationChangeHandler> relation_change;
Handlers<RoleChangeHandler> role_change;
Handlers<DatabaseDropHandler> database_drop;
bool installed = false;
object_access_hook_type prev_object_access_hook = nullptr;

void AtTransactionEnd(XactEvent event, void *)
{
    for (int i = 0; i < transaction_end.n; i++)
        transaction_end.list[i](event);
}

void AtSubtransactionEnd(SubXactEvent event, SubTransactionId, SubTransactionId, void *)
{
    for (int i = 0; i < subtransaction_end.n; i++)
        subtransaction_end.list[i](event);
}

void AtRelcacheInvalidation(Datum, Oid relid)
{
    for (int i = 0; i < relation_change.n; i++)
        relation_change.list[i](relid);
}

void AtRoleInvalidation(Datum, int, uint32)
{
    for (int i = 0; i < role_change.n; i++)
        role_change.list[i]();
}

void AtObjectAccess(ObjectAccessType access, Oid class_id, Oid object_id, int sub_id, void *arg)
{
    if (prev_object_access_hook)
        prev_object_access_hook(access, class_id, object_id, sub_id, arg);
    if (access != OAT_DROP || database_drop.n == 0)
        return;
    Oid database = InvalidOid;
    if (class_id == DatabaseRelationId) {
        database = object_id;
    } else if (class_id == ExtensionRelationId) {
        char *name = get_extension_name(object_id);
        if (name != nullptr && strcmp(name, "claimqueue") == 0)
            database = MyDatabaseId;
    }
    if (!OidIsValid(database))
        return;
    for (int i = 0; i < database_drop.n; i++)
        database_drop.list[i](database);
}

}  // namespace

void OnTransactionEnd(TransactionEndHandler handler)
{
    transaction_end.Add(handler, "transaction-end");
}

void OnSubtransactionEnd(SubtransactionEndHandler handler)
{
    subtransaction_end.Add(handler, "subtransaction-end");
}

void OnRelationChange(RelationChangeHandler handler)
{
    relation_change.Add(handler, "relation-change");
}

void OnRoleChange(RoleChangeHandler handler)
{
    role_change.Add(handler, "role-change");
}

void OnDatabaseDrop(DatabaseDropHandler handler)
{
    database_drop.Add(handler, "database-drop");
}

void InstallSessionCallbacks()
{
    if (installed)
        return;
    RegisterXactCallback(AtTransactionEnd, nullptr);
    RegisterSubXactCallback(AtSubtransactionEnd, nullptr);
    CacheRegisterRelcacheCallback(AtRelcacheInvalidation, (Datum) 0);
    CacheRegisterSyscacheCallback(AUTHMEMROLEMEM, AtRoleInvalidation, (Datum) 0);
    CacheRegisterSyscacheCallback(AUTHOID, AtRoleInvalidation, (Datum) 0);
    prev_object_access_hook = object_access_hook;
    object_access_hook = AtObjectAccess;
    installed = true;
}

}  // namespace claimqueue

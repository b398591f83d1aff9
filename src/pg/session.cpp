// The backend's process-wide callbacks (see session.hpp).
#include "pg/session.hpp"

extern "C" {
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
bool installed = false;

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

void InstallSessionCallbacks()
{
    if (installed)
        return;
    RegisterXactCallback(AtTransactionEnd, nullptr);
    RegisterSubXactCallback(AtSubtransactionEnd, nullptr);
    CacheRegisterRelcacheCallback(AtRelcacheInvalidation, (Datum) 0);
    CacheRegisterSyscacheCallback(AUTHMEMROLEMEM, AtRoleInvalidation, (Datum) 0);
    CacheRegisterSyscacheCallback(AUTHOID, AtRoleInvalidation, (Datum) 0);
    installed = true;
}

}  // namespace claimqueue

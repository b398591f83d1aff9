// The backend's process-wide callbacks in one place: PostgreSQL's transaction
// and subtransaction callbacks, its cache-invalidation callbacks and the
// object-access hook (for drops) are registered once, from _PG_init, and call the handlers the modules gave
// (claimqueue.cpp wires them, so this layer names none of them). A module
// keeps its per-transaction and cached state; this says when to end or drop it.
#pragma once

#include "pg/pg.hpp"

namespace claimqueue {

using TransactionEndHandler = void (*)(XactEvent event);
using SubtransactionEndHandler = void (*)(SubXactEvent event);
using RelationChangeHandler = void (*)(Oid relid);  // InvalidOid: every relation
using RoleChangeHandler = void (*)();               // roles or memberships changed
// A DROP DATABASE of `database`, or a DROP EXTENSION claimqueue in this one
// (MyDatabaseId), is being executed: what the module keeps of that database
// is to go when the transaction commits.
using DatabaseDropHandler = void (*)(Oid database);

// From _PG_init only, before InstallSessionCallbacks. Handlers run in the
// order they were given.
void OnTransactionEnd(TransactionEndHandler handler);
void OnSubtransactionEnd(SubtransactionEndHandler handler);
void OnRelationChange(RelationChangeHandler handler);
void OnRoleChange(RoleChangeHandler handler);
void OnDatabaseDrop(DatabaseDropHandler handler);

// Registers PostgreSQL's callbacks once; from _PG_init (in the postmaster when
// preloaded: forked backends inherit them).
void InstallSessionCallbacks();

}  // namespace claimqueue

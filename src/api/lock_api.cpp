// SQL API, advisory-lock namespaces: lock_namespace, register_lock_key,
// lock_key_id, lock_key_hash and the advisory_* lock family for text keys and
// (suffix _int) integer keys. Arguments are checked before anything is looked
// up; lookups never register.
#include "pg/firewall.hpp"

#include "api/args.hpp"
#include "core/lock_keys.hpp"
#include "locks/advisory.hpp"
#include "locks/namespaces.hpp"

using namespace claimqueue;

namespace {

text *NamespaceArg(FunctionCallInfo fcinfo, int n)
{
    text *name = TextArg(fcinfo, n, "lock namespace");
    locks::CheckNamespaceName(View(name));
    return name;
}

text *KeyArg(FunctionCallInfo fcinfo, int n)
{
    text *key = TextArg(fcinfo, n, "lock key");
    locks::CheckLockKey(View(key));
    return key;
}

// What one function of the family does.
enum class Op { kLock, kTryLock, kUnlock };

struct LockCall {
    const char *fn;  // the SQL name, for the warning
    bool shared;
    bool session;
    Op op;
};

Datum Run(FunctionCallInfo fcinfo, const LockCall &call, NamespacedKey key)
{
    if (call.op == Op::kUnlock)
        PG_RETURN_BOOL(ReleaseNamespacedLock(key, call.shared));
    bool taken = AcquireNamespacedLock(key, call.shared, call.session, call.op == Op::kLock);
    // An autocommit statement is its own transaction: the lock is gone before
    // the next statement runs, which is rarely what the caller meant.
    if (taken && !call.session && !IsTransactionBlock())
        ereport(WARNING,
                (errmsg("%s() outside a transaction block holds its lock only until this "
                        "statement ends", call.fn),
                 errhint("Call it inside BEGIN ... COMMIT, or take a session lock with "
                         "advisory_lock() and release it with advisory_unlock().")));
    if (call.op == Op::kTryLock)
        PG_RETURN_BOOL(taken);
    PG_RETURN_VOID();
}

Datum TextKeyCall(FunctionCallInfo fcinfo, const LockCall &call)
{
    text *ns = NamespaceArg(fcinfo, 0);
    text *key = KeyArg(fcinfo, 1);
    bool for_session = call.session && call.op != Op::kUnlock;
    return Run(fcinfo, call, ResolveTextKey(ns, key, for_session));
}

Datum IntegerKeyCall(FunctionCallInfo fcinfo, const LockCall &call)
{
    text *ns = NamespaceArg(fcinfo, 0);
    RequireArg(fcinfo, 1, "lock key");
    int32 key = PG_GETARG_INT32(1);
    bool for_session = call.session && call.op != Op::kUnlock;
    return Run(fcinfo, call, ResolveIntegerKey(ns, key, for_session));
}

}  // namespace

// lock_namespace(name, key_mode = NULL) -> namespace id, registering it if new
CQ_FUNCTION(cq_lock_namespace)
{
    text *name = NamespaceArg(fcinfo, 0);
    text *mode = TextArg(fcinfo, 1, "key_mode", true);
    if (mode != nullptr)
        locks::ParseKeyMode(View(mode));
    PG_RETURN_INT32(RegisterNamespace(name, mode));
}

// register_lock_key(namespace, key) -> key id, registering it if new
CQ_FUNCTION(cq_register_lock_key)
{
    text *ns = NamespaceArg(fcinfo, 0);
    text *key = KeyArg(fcinfo, 1);
    PG_RETURN_INT32(RegisterLockKey(ns, key));
}

// lock_key_id(namespace, key) -> the int4 a text key locks; registers nothing
CQ_FUNCTION(cq_lock_key_id)
{
    text *ns = NamespaceArg(fcinfo, 0);
    text *key = KeyArg(fcinfo, 1);
    PG_RETURN_INT32(ResolveTextKey(ns, key, false).key_id);
}

// lock_key_hash(key) -> FNV-1a of the UTF-8 bytes as int4 (any text, even empty)
CQ_FUNCTION(cq_lock_key_hash)
{
    text *key = TextArg(fcinfo, 0, "lock key");
    PG_RETURN_INT32(HashTextKey(key));
}

// advisory_unlock_all(namespace) -> session holds released
CQ_FUNCTION(cq_advisory_unlock_all)
{
    text *ns = NamespaceArg(fcinfo, 0);
    PG_RETURN_INT32(ReleaseAllSessionLocks(LockableNamespaceId(ns)));
}

// The family: one text-key and one integer-key function per member, as
// PostgreSQL's pg_advisory_* functions.
#define CQ_LOCK_FAMILY(name, shared, session, op)                                \
    CQ_FUNCTION(cq_##name)                                                       \
    {                                                                            \
        return TextKeyCall(fcinfo, LockCall{#name, shared, session, op});        \
    }                                                                            \
    CQ_FUNCTION(cq_##name##_int)                                                 \
    {                                                                            \
        return IntegerKeyCall(fcinfo, LockCall{#name "_int", shared, session, op}); \
    }

CQ_LOCK_FAMILY(advisory_lock, false, true, Op::kLock)
CQ_LOCK_FAMILY(advisory_lock_shared, true, true, Op::kLock)
CQ_LOCK_FAMILY(try_advisory_lock, false, true, Op::kTryLock)
CQ_LOCK_FAMILY(try_advisory_lock_shared, true, true, Op::kTryLock)
CQ_LOCK_FAMILY(advisory_xact_lock, false, false, Op::kLock)
CQ_LOCK_FAMILY(advisory_xact_lock_shared, true, false, Op::kLock)
CQ_LOCK_FAMILY(try_advisory_xact_lock, false, false, Op::kTryLock)
CQ_LOCK_FAMILY(try_advisory_xact_lock_shared, true, false, Op::kTryLock)
CQ_LOCK_FAMILY(advisory_unlock, false, true, Op::kUnlock)
CQ_LOCK_FAMILY(advisory_unlock_shared, true, true, Op::kUnlock)

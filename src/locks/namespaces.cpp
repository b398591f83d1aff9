// Advisory-lock namespaces and registered keys (see namespaces.hpp).
#include "locks/namespaces.hpp"

extern "C" {
#include "mb/pg_wchar.h"
}

#include "pg/text.hpp"
#include "pg/statement.hpp"
#include "pg/errors.h"

namespace claimqueue {
namespace {

// Lookups read the latest committed state (ExecuteLatest), so a namespace or
// key registered after a REPEATABLE READ snapshot was taken is found all the
// same: the ids are facts, not data the snapshot should hide.
Statement kFindNamespace = {
    "SELECT namespace_id, key_mode, xmin FROM claimqueue.lock_namespaces WHERE name = $1",
    1, {TEXTOID}, nullptr};

// Registration: ON CONFLICT DO NOTHING waits for a concurrent registration of
// the same name and then returns no row; the caller reads the winner's id.
Statement kInsertNamespace = {
    "INSERT INTO claimqueue.lock_namespaces (name, key_mode) VALUES ($1, $2)"
    " ON CONFLICT (name) DO NOTHING RETURNING namespace_id, key_mode, xmin",
    2, {TEXTOID, TEXTOID}, nullptr};

Statement kFindNamespaceAndKey = {
    "SELECT n.namespace_id, n.key_mode, n.xmin, k.key_id, k.xmin"
    " FROM claimqueue.lock_namespaces n"
    " LEFT JOIN claimqueue.lock_keys k ON k.namespace_id = n.namespace_id AND k.key = $2"
    " WHERE n.name = $1",
    2, {TEXTOID, TEXTOID}, nullptr};

Statement kInsertKey = {
    "INSERT INTO claimqueue.lock_keys (namespace_id, key) VALUES ($1, $2)"
    " ON CONFLICT (namespace_id, key) DO NOTHING RETURNING key_id",
    2, {INT4OID, TEXTOID}, nullptr};

struct NamespaceRow {
    int32 id;
    locks::KeyMode mode;
    bool uncommitted;  // registered by this transaction, not yet committed
};

locks::KeyMode ModeOf(Datum mode_text)
{
    text *t = DatumGetTextPP(mode_text);
    std::string_view v = View(t);
    if (v == "internal")
        return locks::KeyMode::kInternal;
    if (v == "registered")
        return locks::KeyMode::kRegistered;
    if (v == "integer")
        return locks::KeyMode::kInteger;
    return locks::KeyMode::kHash;
}

// Row 0 of the last result, columns id, key_mode, xmin.
NamespaceRow ReadNamespace()
{
    NamespaceRow row;
    row.id = DatumGetInt32(ResultValue(0, 1));
    row.mode = ModeOf(ResultValue(0, 2));
    row.uncommitted = TransactionIdIsCurrentTransactionId(DatumGetTransactionId(ResultValue(0, 3)));
    return row;
}

[[noreturn]] void ReportUnknownNamespace(text *name)
{
    ereport(ERROR, (errcode(ERRCODE_CQ_LOCK_NAMESPACE_NOT_FOUND),
                    errmsg("lock namespace \"%s\" does not exist", text_to_cstring(name)),
                    errhint("Register it with lock_namespace('%s').", text_to_cstring(name))));
    pg_unreachable();
}

void RefuseReserved(text *name, const NamespaceRow &ns)
{
    if (ns.mode == locks::KeyMode::kInternal)
        ereport(ERROR, (errcode(ERRCODE_RESERVED_NAME),
                        errmsg("lock namespace \"%s\" is reserved for claimqueue's own locks",
                               text_to_cstring(name)),
                        errhint("Register a namespace of your own with lock_namespace().")));
}

// A text key in a namespace of integer keys, or the other way round.
void RequireKeyKind(text *name, const NamespaceRow &ns, bool text_key)
{
    bool takes_text = ns.mode != locks::KeyMode::kInteger;
    if (takes_text == text_key)
        return;
    if (text_key)
        ereport(ERROR, (errcode(ERRCODE_CQ_LOCK_KEY_MODE_MISMATCH),
                        errmsg("lock namespace \"%s\" takes integer keys, not text keys",
                               text_to_cstring(name)),
                        errhint("Use the functions ending in _int, e.g. advisory_lock_int().")));
    ereport(ERROR, (errcode(ERRCODE_CQ_LOCK_KEY_MODE_MISMATCH),
                    errmsg("lock namespace \"%s\" takes %s text keys, not integer keys",
                           text_to_cstring(name), locks::KeyModeName(ns.mode)),
                    errhint("Use the functions without _int, e.g. advisory_lock().")));
}

// `what` "name" (in lock namespace "ns_name", when given) was registered by
// this transaction: refused for session locks.
void RefuseUncommitted(const char *what, text *name, text *ns_name)
{
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("%s \"%s\"%s%s%s was registered by this transaction, which has not "
                           "committed",
                           what, text_to_cstring(name), ns_name ? " in lock namespace \"" : "",
                           ns_name ? text_to_cstring(ns_name) : "", ns_name ? "\"" : ""),
                    errdetail("A session lock outlives a rollback, which would undo the "
                              "registration and let the name get another id."),
                    errhint("Commit the registration first, or take a transaction-level lock.")));
}

// The namespace row (with SPI connected); QCL01 when unknown.
NamespaceRow FindNamespace(text *name)
{
    Datum args[1] = {PointerGetDatum(name)};
    if (ExecuteLatest(&kFindNamespace, args, nullptr, 1) == 0)
        ReportUnknownNamespace(name);
    return ReadNamespace();
}

}  // namespace

int32 HashTextKey(text *key)
{
    const char *bytes = VARDATA_ANY(key);
    int len = VARSIZE_ANY_EXHDR(key);
    // The hash is defined on UTF-8: convert when the database uses another
    // encoding, so one key has one id in every database.
    const char *utf8 = pg_server_to_any(bytes, len, PG_UTF8);
    if (utf8 != bytes)
        len = (int) strlen(utf8);
    return locks::HashedKey(std::string_view(utf8, len));
}

int32 RegisterNamespace(text *name, text *key_mode)
{
    const char *wanted = key_mode != nullptr ? text_to_cstring(key_mode) : nullptr;
    ConnectSpi();
    Datum args[2] = {PointerGetDatum(name),
                     PointerGetDatum(cstring_to_text(wanted != nullptr ? wanted : "hash"))};
    NamespaceRow ns;
    if (ExecuteLatest(&kFindNamespace, args, nullptr, 1) == 1) {
        ns = ReadNamespace();
    } else if (Execute(&kInsertNamespace, args, nullptr) == 1) {
        ns = ReadNamespace();
    } else {
        ns = FindNamespace(name);  // a concurrent registration won; it has committed
    }
    FinishSpi();
    if (wanted != nullptr && strcmp(wanted, locks::KeyModeName(ns.mode)) != 0)
        ereport(ERROR, (errcode(ERRCODE_CQ_LOCK_KEY_MODE_MISMATCH),
                        errmsg("lock namespace \"%s\" exists with key mode %s, not %s",
                               text_to_cstring(name), locks::KeyModeName(ns.mode), wanted),
                        errdetail("A namespace's key mode is fixed when it is registered."),
                        errhint("Call lock_namespace('%s') without a key mode to get its id, or "
                                "register another name.",
                                text_to_cstring(name))));
    return ns.id;
}

int32 RegisterLockKey(text *namespace_name, text *key)
{
    ConnectSpi();
    Datum args[2] = {PointerGetDatum(namespace_name), PointerGetDatum(key)};
    if (ExecuteLatest(&kFindNamespaceAndKey, args, nullptr, 1) == 0)
        ReportUnknownNamespace(namespace_name);
    NamespaceRow ns = ReadNamespace();
    RefuseReserved(namespace_name, ns);
    if (ns.mode != locks::KeyMode::kRegistered)
        ereport(ERROR, (errcode(ERRCODE_CQ_LOCK_KEY_MODE_MISMATCH),
                        errmsg("lock namespace \"%s\" takes %s keys, which are not registered",
                               text_to_cstring(namespace_name), locks::KeyModeName(ns.mode)),
                        errhint("Only a namespace registered with key mode 'registered' takes "
                                "registered keys; lock %s keys directly.",
                                locks::KeyModeName(ns.mode))));
    bool absent;
    Datum id = ResultValue(0, 4, &absent);
    if (absent) {
        Datum insert_args[2] = {Int32GetDatum(ns.id), PointerGetDatum(key)};
        if (Execute(&kInsertKey, insert_args, nullptr) == 1) {
            id = ResultValue(0, 1);
        } else {
            // A concurrent registration of the same key won and has committed.
            ExecuteLatest(&kFindNamespaceAndKey, args, nullptr, 1);
            id = ResultValue(0, 4, &absent);
            if (absent)
                elog(ERROR, "claimqueue: lock key vanished during registration");
        }
    }
    int32 key_id = DatumGetInt32(id);
    FinishSpi();
    return key_id;
}

NamespacedKey ResolveTextKey(text *namespace_name, text *key, bool for_session)
{
    ConnectSpi();
    Datum args[2] = {PointerGetDatum(namespace_name), PointerGetDatum(key)};
    if (ExecuteLatest(&kFindNamespaceAndKey, args, nullptr, 1) == 0)
        ReportUnknownNamespace(namespace_name);
    NamespaceRow ns = ReadNamespace();
    RefuseReserved(namespace_name, ns);
    RequireKeyKind(namespace_name, ns, true);
    if (for_session && ns.uncommitted)
        RefuseUncommitted("lock namespace", namespace_name, nullptr);
    NamespacedKey out = {ns.id, 0};
    if (ns.mode == locks::KeyMode::kRegistered) {
        bool absent;
        Datum id = ResultValue(0, 4, &absent);
        if (absent)
            ereport(ERROR, (errcode(ERRCODE_CQ_LOCK_KEY_NOT_FOUND),
                            errmsg("lock key \"%s\" is not registered in lock namespace \"%s\"",
                                   text_to_cstring(key), text_to_cstring(namespace_name)),
                            errhint("Register it with register_lock_key('%s', '%s').",
                                    text_to_cstring(namespace_name), text_to_cstring(key))));
        out.key_id = DatumGetInt32(id);
        if (for_session &&
            TransactionIdIsCurrentTransactionId(DatumGetTransactionId(ResultValue(0, 5))))
            RefuseUncommitted("lock key", key, namespace_name);
    } else {
        out.key_id = HashTextKey(key);
    }
    FinishSpi();
    return out;
}

NamespacedKey ResolveIntegerKey(text *namespace_name, int32 key, bool for_session)
{
    ConnectSpi();
    NamespaceRow ns = FindNamespace(namespace_name);
    RefuseReserved(namespace_name, ns);
    RequireKeyKind(namespace_name, ns, false);
    if (for_session && ns.uncommitted)
        RefuseUncommitted("lock namespace", namespace_name, nullptr);
    FinishSpi();
    return NamespacedKey{ns.id, key};
}

int32 LockableNamespaceId(text *namespace_name)
{
    ConnectSpi();
    NamespaceRow ns = FindNamespace(namespace_name);
    RefuseReserved(namespace_name, ns);
    FinishSpi();
    return ns.id;
}

}  // namespace claimqueue

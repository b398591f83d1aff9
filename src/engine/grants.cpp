// Per-queue grants (see grants.hpp).
#include "engine/grants.hpp"

#include "engine/queues.hpp"
#include "pg/statement.hpp"

namespace claimqueue {
namespace {

Statement kGrant = {
    "INSERT INTO claimqueue.queue_grants (queue_id, grantee, privilege)"
    " SELECT queue_id, $2::pg_catalog.oid::pg_catalog.regrole, $3 FROM claimqueue.queues"
    " WHERE name = $1 ON CONFLICT DO NOTHING",
    3, {TEXTOID, OIDOID, TEXTOID}, nullptr};

Statement kRevoke = {
    "DELETE FROM claimqueue.queue_grants g USING claimqueue.queues q"
    " WHERE q.queue_id = g.queue_id AND q.name = $1"
    "   AND g.grantee = $2::pg_catalog.oid::pg_catalog.regrole AND g.privilege = $3",
    3, {TEXTOID, OIDOID, TEXTOID}, nullptr};

// A grant to role `role` (a parameter), to a role it inherits from, or to
// PUBLIC (grantee 0); a grant to a role dropped since applies to nobody.
#define CQ_GRANT_APPLIES_TO(role)                                                         \
    "CASE WHEN g.grantee::pg_catalog.oid = 0 THEN true"                                   \
    "     WHEN NOT EXISTS (SELECT 1 FROM pg_catalog.pg_authid a"                          \
    "                      WHERE a.oid = g.grantee::pg_catalog.oid) THEN false"           \
    "     ELSE pg_catalog.pg_has_role(" role ", g.grantee::pg_catalog.oid, 'USAGE') END"

Statement kVisible = {
    "SELECT q.queue_id FROM claimqueue.queues q"
    " WHERE $1 OR EXISTS (SELECT 1 FROM claimqueue.queue_grants g WHERE g.queue_id = q.queue_id"
    "                     AND " CQ_GRANT_APPLIES_TO("$2") ")"
    " ORDER BY q.queue_id",
    2, {BOOLOID, OIDOID}, nullptr};

Statement kGranted = {
    "SELECT EXISTS (SELECT 1 FROM claimqueue.queue_grants g"
    "               WHERE g.queue_id = q.queue_id AND g.privilege = $2"
    "                 AND " CQ_GRANT_APPLIES_TO("$3") ")"
    " FROM claimqueue.queues q WHERE q.name = $1",
    3, {TEXTOID, TEXTOID, OIDOID}, nullptr};

// A left join, so that a job the caller may not see reads as a missing one.
Statement kJobStatuses = {
    "SELECT u.id, j.state, j.attempt, j.result, j.last_error"
    " FROM pg_catalog.unnest($1::bigint[]) WITH ORDINALITY AS u(id, o)"
    " LEFT JOIN claimqueue.jobs j ON j.id = u.id"
    "  AND ($2 OR EXISTS (SELECT 1 FROM claimqueue.queue_grants g"
    "                     WHERE g.queue_id = j.queue_id AND " CQ_GRANT_APPLIES_TO("$3") "))"
    " ORDER BY u.o",
    3, {INT8ARRAYOID, BOOLOID, OIDOID}, nullptr};

// The job's error history, oldest first; no row for a job the caller may not see.
Statement kJobErrors = {
    "SELECT (e.entry->>'attempt')::integer, (e.entry->>'at')::timestamptz, e.entry->>'error',"
    "       NULLIF(e.entry->'detail', 'null'::jsonb)"
    " FROM claimqueue.jobs j,"
    "      pg_catalog.jsonb_array_elements(CASE pg_catalog.jsonb_typeof(j.errors)"
    "          WHEN 'array' THEN j.errors ELSE '[]' END) WITH ORDINALITY AS e(entry, o)"
    " WHERE j.id = $1"
    "  AND ($2 OR EXISTS (SELECT 1 FROM claimqueue.queue_grants g"
    "                     WHERE g.queue_id = j.queue_id AND " CQ_GRANT_APPLIES_TO("$3") "))"
    " ORDER BY e.o",
    3, {INT8OID, BOOLOID, OIDOID}, nullptr};

// Each queue of the jobs, with the first position (from 1) of its jobs in $1.
Statement kJobsQueues = {
    "SELECT q.name, pg_catalog.min(u.o) FROM pg_catalog.unnest($1::bigint[]) WITH ORDINALITY AS u(id, o)"
    " JOIN claimqueue.jobs j ON j.id = u.id JOIN claimqueue.queues q ON q.queue_id = j.queue_id"
    " GROUP BY q.name ORDER BY 2",
    1, {INT8ARRAYOID}, nullptr};

bool Change(Statement *stmt, text *queue, const char *privilege, Oid role)
{
    ConnectSpi();
    RequireQueueExists(queue);
    Datum args[3] = {PointerGetDatum(queue), ObjectIdGetDatum(role),
                     CStringGetTextDatum(privilege)};
    bool changed = Execute(stmt, args, nullptr) > 0;
    FinishSpi();
    return changed;
}

}  // namespace

bool GrantQueue(text *queue, const char *privilege, Oid role)
{
    return Change(&kGrant, queue, privilege, role);
}

bool RevokeQueue(text *queue, const char *privilege, Oid role)
{
    return Change(&kRevoke, queue, privilege, role);
}

void VisibleQueues(Oid user, bool all, Tuplestorestate *out, TupleDesc out_desc)
{
    ConnectSpi();
    Datum args[2] = {BoolGetDatum(all), ObjectIdGetDatum(user)};
    uint64 n = Execute(&kVisible, args, nullptr);
    for (uint64 i = 0; i < n; i++) {
        bool isnull;
        Datum id = ResultValue(i, 1, &isnull);
        tuplestore_putvalues(out, out_desc, &id, &isnull);
    }
    FinishSpi();
}

GrantLookup QueueGranted(text *queue, const char *privilege, Oid user)
{
    Datum args[3] = {PointerGetDatum(queue), CStringGetTextDatum(privilege),
                     ObjectIdGetDatum(user)};
    ConnectSpi();
    GrantLookup result = GrantLookup::kNoQueue;
    if (Execute(&kGranted, args, nullptr, 1) == 1)
        result = DatumGetBool(ResultValue(0, 1)) ? GrantLookup::kGranted : GrantLookup::kDenied;
    FinishSpi();
    return result;
}

void JobStatuses(ArrayType *ids, Oid user, bool all, Tuplestorestate *out,
                 MemoryContext out_context)
{
    Datum args[3] = {PointerGetDatum(ids), BoolGetDatum(all), ObjectIdGetDatum(user)};
    ConnectSpi();
    ExecuteInto(&kJobStatuses, args, nullptr, out, out_context);
    FinishSpi();
}

void JobErrors(int64 id, Oid user, bool all, Tuplestorestate *out, MemoryContext out_context)
{
    Datum args[3] = {Int64GetDatum(id), BoolGetDatum(all), ObjectIdGetDatum(user)};
    ConnectSpi();
    ExecuteInto(&kJobErrors, args, nullptr, out, out_context);
    FinishSpi();
}

int JobQueues(int n, const int64 *ids, text ***queues, int **first)
{
    Datum *values = (Datum *) palloc(sizeof(Datum) * n);
    for (int i = 0; i < n; i++)
        values[i] = Int64GetDatum(ids[i]);
    Datum args[1] = {PointerGetDatum(Int8Array(values, n))};
    ConnectSpi();
    uint64 count = Execute(&kJobsQueues, args, nullptr);
    // Copied into the caller's memory (SPI_palloc): they outlive FinishSpi().
    *queues = (text **) SPI_palloc(sizeof(text *) * (count + 1));
    *first = (int *) SPI_palloc(sizeof(int) * (count + 1));
    for (uint64 i = 0; i < count; i++) {
        (*queues)[i] = (text *) SPI_datumTransfer(ResultValue(i, 1), false, -1);
        (*first)[i] = (int) DatumGetInt64(ResultValue(i, 2)) - 1;
    }
    FinishSpi();
    return (int) count;
}

}  // namespace claimqueue


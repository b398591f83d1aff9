// Per-queue grants (see grants.hpp).
#include "engine/grants.hpp"

#include "engine/job_rows.hpp"
#include "engine/queues.hpp"
#include "pg/statement.hpp"

extern "C" {
#include "catalog/namespace.h"
#include "utils/lsyscache.h"
}

namespace claimqueue {
namespace {

// The queue's id is read first and the row written with VALUES: Citus cannot
// plan a parameterised INSERT ... SELECT into a reference table.
Statement kQueueId = {
    "SELECT queue_id FROM claimqueue.queues WHERE name = $1", 1, {TEXTOID}, nullptr};

Statement kGrant = {
    "INSERT INTO claimqueue.queue_grants (queue_id, grantee, privilege, grantee_name)"
    " VALUES ($1, $2::pg_catalog.oid::pg_catalog.regrole, $3, $4) ON CONFLICT DO NOTHING",
    4, {INT4OID, OIDOID, TEXTOID, NAMEOID}, nullptr};
// The previous release's table has no grantee_name (a rolling restart: the
// library serves a database not yet updated); its statements below leave
// the name out, and take the same parameters.
Statement kGrantPrevious = {
    "INSERT INTO claimqueue.queue_grants (queue_id, grantee, privilege)"
    " VALUES ($1, $2::pg_catalog.oid::pg_catalog.regrole, $3) ON CONFLICT DO NOTHING",
    4, {INT4OID, OIDOID, TEXTOID, NAMEOID}, nullptr};

// Under Citus ($4) by the grantee's name: Citus writes a reference table's
// rows on every node from their text, so a regrole written after distribute()
// is each node's own oid of the role, and one copied by distribute() the
// coordinator's; the parameter $2 reaches every node as the coordinator's oid.
#define CQ_REVOKE(by_name)                                                                 \
    "DELETE FROM claimqueue.queue_grants g USING claimqueue.queues q"                      \
    " WHERE q.queue_id = g.queue_id AND q.name = $1 AND g.privilege = $3"                  \
    "   AND CASE " by_name "WHEN true THEN g.grantee = $2::pg_catalog.oid::pg_catalog.regrole END"
Statement kRevoke = {CQ_REVOKE("WHEN $4 AND $2 <> 0 THEN g.grantee_name = $5 "), 5,
                     {TEXTOID, OIDOID, TEXTOID, BOOLOID, NAMEOID}, nullptr};
Statement kRevokePrevious = {CQ_REVOKE(""), 5, {TEXTOID, OIDOID, TEXTOID, BOOLOID, NAMEOID},
                             nullptr};

// A grant to role `role` (a parameter), to a role it inherits from, or to
// PUBLIC (grantee 0); a grant to a role dropped since applies to nobody. With
// `by_name` (a parameter: claimqueue.jobs distributed by Citus) the grantee
// is the role of that name on this node, since the stored oid is the
// coordinator's; on one server it is the oid, which follows a rename.
#define CQ_GRANT_BY_NAME(role, by_name)                                                   \
    "     WHEN " by_name " THEN EXISTS (SELECT 1 FROM pg_catalog.pg_authid a"             \
    "                      WHERE a.rolname = g.grantee_name"                              \
    "                        AND pg_catalog.pg_has_role(" role ", a.oid, 'USAGE'))"
#define CQ_GRANT_APPLIES(role, by_name_case)                                              \
    "CASE WHEN g.grantee::pg_catalog.oid = 0 THEN true"                                   \
    by_name_case                                                                          \
    "     WHEN NOT EXISTS (SELECT 1 FROM pg_catalog.pg_authid a"                          \
    "                      WHERE a.oid = g.grantee::pg_catalog.oid) THEN false"           \
    "     ELSE pg_catalog.pg_has_role(" role ", g.grantee::pg_catalog.oid, 'USAGE') END"
#define CQ_GRANT_APPLIES_TO(role, by_name) CQ_GRANT_APPLIES(role, CQ_GRANT_BY_NAME(role, by_name))
// The previous release's: by oid only (`by_name` stays a parameter, unread).
#define CQ_GRANT_APPLIES_BY_OID(role) CQ_GRANT_APPLIES(role, "")

#define CQ_VISIBLE(applies)                                                                \
    "SELECT q.queue_id FROM claimqueue.queues q"                                           \
    " WHERE $1 OR EXISTS (SELECT 1 FROM claimqueue.queue_grants g WHERE g.queue_id = q.queue_id" \
    "                     AND " applies ")"                                                \
    " ORDER BY q.queue_id"
Statement kVisible = {CQ_VISIBLE(CQ_GRANT_APPLIES_TO("$2", "$3")), 3,
                      {BOOLOID, OIDOID, BOOLOID}, nullptr};
Statement kVisiblePrevious = {CQ_VISIBLE(CQ_GRANT_APPLIES_BY_OID("$2")), 3,
                              {BOOLOID, OIDOID, BOOLOID}, nullptr};

#define CQ_GRANTED(applies)                                                                \
    "SELECT EXISTS (SELECT 1 FROM claimqueue.queue_grants g"                               \
    "               WHERE g.queue_id = q.queue_id AND g.privilege = $2"                    \
    "                 AND " applies ")"                                                    \
    " FROM claimqueue.queues q WHERE q.name = $1"
Statement kGranted = {CQ_GRANTED(CQ_GRANT_APPLIES_TO("$3", "$4")), 4,
                      {TEXTOID, TEXTOID, OIDOID, BOOLOID}, nullptr};
Statement kGrantedPrevious = {CQ_GRANTED(CQ_GRANT_APPLIES_BY_OID("$3")), 4,
                              {TEXTOID, TEXTOID, OIDOID, BOOLOID}, nullptr};

// A left join, so that a job the caller may not see reads as a missing one.
#define CQ_JOB_STATUSES(applies)                                                           \
    "SELECT u.id, j.state, j.attempt, j.result, j.last_error"                              \
    " FROM pg_catalog.unnest($1::bigint[]) WITH ORDINALITY AS u(id, o)"                    \
    " LEFT JOIN claimqueue.jobs j ON j.id = u.id"                                          \
    "  AND ($2 OR EXISTS (SELECT 1 FROM claimqueue.queue_grants g"                         \
    "                     WHERE g.queue_id = j.queue_id AND " applies "))"                 \
    " ORDER BY u.o"
Statement kJobStatuses = {CQ_JOB_STATUSES(CQ_GRANT_APPLIES_TO("$3", "$4")), 4,
                          {INT8ARRAYOID, BOOLOID, OIDOID, BOOLOID}, nullptr};
Statement kJobStatusesPrevious = {CQ_JOB_STATUSES(CQ_GRANT_APPLIES_BY_OID("$3")), 4,
                                  {INT8ARRAYOID, BOOLOID, OIDOID, BOOLOID}, nullptr};

// The same under Citus, planned for the call's values: Citus reads the jobs
// of the ids from every shard first (the subquery, which it cannot join
// with the unnest), and the rest runs on the coordinator, with the grants
// checked there. (Citus cannot plan the join above with parameters.)
Statement kJobStatusesCitus = {
    "SELECT u.id, j.state, j.attempt, j.result, j.last_error"
    " FROM pg_catalog.unnest($1::bigint[]) WITH ORDINALITY AS u(id, o)"
    " LEFT JOIN (SELECT j.id, j.queue_id, j.state, j.attempt, j.result, j.last_error"
    "            FROM claimqueue.jobs j WHERE j.id = ANY ($1::bigint[]) OFFSET 0) j"
    "  ON j.id = u.id"
    "  AND ($2 OR EXISTS (SELECT 1 FROM claimqueue.queue_grants g"
    "                     WHERE g.queue_id = j.queue_id AND " CQ_GRANT_APPLIES_TO("$3", "true") "))"
    " ORDER BY u.o",
    3, {INT8ARRAYOID, BOOLOID, OIDOID}, nullptr, true};

// The job's error history, oldest first; no row for a job the caller may not see.
#define CQ_JOB_ERRORS(applies)                                                             \
    "SELECT (e.entry->>'attempt')::integer, (e.entry->>'at')::timestamptz, e.entry->>'error'," \
    "       NULLIF(e.entry->'detail', 'null'::jsonb)"                                      \
    " FROM claimqueue.jobs j,"                                                             \
    "      pg_catalog.jsonb_array_elements(CASE pg_catalog.jsonb_typeof(j.errors)"         \
    "          WHEN 'array' THEN j.errors ELSE '[]' END) WITH ORDINALITY AS e(entry, o)"   \
    " WHERE j.id = $1"                                                                     \
    "  AND ($2 OR EXISTS (SELECT 1 FROM claimqueue.queue_grants g"                         \
    "                     WHERE g.queue_id = j.queue_id AND " applies "))"                 \
    " ORDER BY e.o"
Statement kJobErrors = {CQ_JOB_ERRORS(CQ_GRANT_APPLIES_TO("$3", "$4")), 4,
                        {INT8OID, BOOLOID, OIDOID, BOOLOID}, nullptr};
Statement kJobErrorsPrevious = {CQ_JOB_ERRORS(CQ_GRANT_APPLIES_BY_OID("$3")), 4,
                                {INT8OID, BOOLOID, OIDOID, BOOLOID}, nullptr};

// The same under Citus, planned for the call's values: the job is read
// from every shard first (the subquery), and its history taken apart and
// the grants checked on the coordinator.
Statement kJobErrorsCitus = {
    "SELECT (e.entry->>'attempt')::integer, (e.entry->>'at')::timestamptz, e.entry->>'error',"
    "       NULLIF(e.entry->'detail', 'null'::jsonb)"
    " FROM (SELECT j.queue_id, j.errors FROM claimqueue.jobs j WHERE j.id = $1 OFFSET 0) j,"
    "      pg_catalog.jsonb_array_elements(CASE pg_catalog.jsonb_typeof(j.errors)"
    "          WHEN 'array' THEN j.errors ELSE '[]' END) WITH ORDINALITY AS e(entry, o)"
    " WHERE $2 OR EXISTS (SELECT 1 FROM claimqueue.queue_grants g"
    "                     WHERE g.queue_id = j.queue_id AND " CQ_GRANT_APPLIES_TO("$3", "true") ")"
    " ORDER BY e.o",
    3, {INT8OID, BOOLOID, OIDOID}, nullptr, true};

// Each queue of the jobs, with the first position (from 1) of its jobs in $1.
Statement kJobsQueues = {
    "SELECT q.name, pg_catalog.min(u.o) FROM pg_catalog.unnest($1::bigint[]) WITH ORDINALITY AS u(id, o)"
    " JOIN claimqueue.jobs j ON j.id = u.id JOIN claimqueue.queues q ON q.queue_id = j.queue_id"
    " GROUP BY q.name ORDER BY 2",
    1, {INT8ARRAYOID}, nullptr};

// Whether claimqueue.queue_grants has the column grantee_name (0.5.0): not
// at the previous release, which this library also serves until ALTER
// EXTENSION UPDATE.
bool GrantsHaveNames()
{
    Oid schema = get_namespace_oid("claimqueue", true);
    Oid relid = OidIsValid(schema) ? get_relname_relid("queue_grants", schema) : InvalidOid;
    return OidIsValid(relid) && get_attnum(relid, "grantee_name") != InvalidAttrNumber;
}

// The role's name as a `name` datum, or null for PUBLIC (InvalidOid) or a
// role that no longer exists.
Datum RoleName(Oid role, char *null)
{
    const char *role_name = role == InvalidOid ? nullptr : GetUserNameFromId(role, true);
    *null = role_name ? ' ' : 'n';
    return role_name ? DirectFunctionCall1(namein, CStringGetDatum(role_name)) : (Datum) 0;
}

}  // namespace

bool GrantQueue(text *queue, const char *privilege, Oid role)
{
    ConnectSpi();
    RequireQueueExists(queue);
    Datum id_args[1] = {PointerGetDatum(queue)};
    bool changed = false;
    if (Execute(&kQueueId, id_args, nullptr, 1) == 1) {
        char nulls[5] = "    ";
        Datum args[4] = {ResultValue(0, 1), ObjectIdGetDatum(role),
                         CStringGetTextDatum(privilege), RoleName(role, &nulls[3])};
        changed = Execute(GrantsHaveNames() ? &kGrant : &kGrantPrevious, args, nulls) > 0;
    }
    FinishSpi();
    return changed;
}

bool RevokeQueue(text *queue, const char *privilege, Oid role)
{
    char nulls[6] = "     ";
    Datum args[5] = {PointerGetDatum(queue), ObjectIdGetDatum(role),
                     CStringGetTextDatum(privilege), BoolGetDatum(JobsDistributed()),
                     RoleName(role, &nulls[4])};
    ConnectSpi();
    RequireQueueExists(queue);
    bool changed = Execute(GrantsHaveNames() ? &kRevoke : &kRevokePrevious, args, nulls) > 0;
    FinishSpi();
    return changed;
}

void VisibleQueues(Oid user, bool all, Tuplestorestate *out, TupleDesc out_desc)
{
    ConnectSpi();
    Datum args[3] = {BoolGetDatum(all), ObjectIdGetDatum(user), BoolGetDatum(JobsDistributed())};
    uint64 n = Execute(GrantsHaveNames() ? &kVisible : &kVisiblePrevious, args, nullptr);
    for (uint64 i = 0; i < n; i++) {
        bool isnull;
        Datum id = ResultValue(i, 1, &isnull);
        tuplestore_putvalues(out, out_desc, &id, &isnull);
    }
    FinishSpi();
}

GrantLookup QueueGranted(text *queue, const char *privilege, Oid user)
{
    Datum args[4] = {PointerGetDatum(queue), CStringGetTextDatum(privilege),
                     ObjectIdGetDatum(user), BoolGetDatum(JobsDistributed())};
    ConnectSpi();
    GrantLookup result = GrantLookup::kNoQueue;
    if (Execute(GrantsHaveNames() ? &kGranted : &kGrantedPrevious, args, nullptr, 1) == 1)
        result = DatumGetBool(ResultValue(0, 1)) ? GrantLookup::kGranted : GrantLookup::kDenied;
    FinishSpi();
    return result;
}

void JobStatuses(ArrayType *ids, Oid user, bool all, Tuplestorestate *out,
                 MemoryContext out_context)
{
    bool citus = JobsDistributed();
    Datum args[4] = {PointerGetDatum(ids), BoolGetDatum(all), ObjectIdGetDatum(user),
                     BoolGetDatum(citus)};
    ConnectSpi();
    ExecuteInto(citus ? &kJobStatusesCitus
                      : GrantsHaveNames() ? &kJobStatuses : &kJobStatusesPrevious, args, nullptr, out, out_context);
    FinishSpi();
}

void JobErrors(int64 id, Oid user, bool all, Tuplestorestate *out, MemoryContext out_context)
{
    Datum args[4] = {Int64GetDatum(id), BoolGetDatum(all), ObjectIdGetDatum(user),
                     BoolGetDatum(JobsDistributed())};
    ConnectSpi();
    ExecuteInto(JobsDistributed()      ? &kJobErrorsCitus
                : GrantsHaveNames() ? &kJobErrors
                                    : &kJobErrorsPrevious, args, nullptr, out,
                out_context);
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


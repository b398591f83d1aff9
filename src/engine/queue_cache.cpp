// What this backend remembers of the queues (see queue_cache.hpp).
#include "engine/queue_cache.hpp"

extern "C" {
#include "catalog/namespace.h"
#include "utils/lsyscache.h"
}

#include "pg/statement.hpp"

namespace claimqueue {
namespace {

// A few queues per backend: a worker uses one or two. Replaced round-robin.
constexpr int kQueues = 16;
constexpr int kGrants = 16;

struct QueueId {
    int len;  // 0: unused
    char name[NAMEDATALEN];
    int32 id;
};

struct Grant {
    int len;  // 0: unused
    char name[NAMEDATALEN];
    Oid user;
    int privilege;
};

QueueId ids[kQueues];
int next_id = 0;

struct Facts {
    bool used;
    QueueFacts facts;
};
Facts facts[kQueues];
int next_facts = 0;

Statement kQueueFacts = {
    "SELECT name, lease, backoff_base, backoff_cap, paused, max_attempts FROM claimqueue.queues"
    " WHERE queue_id = $1",
    1, {INT4OID}, nullptr};
// With the flow-control settings, once the table has them (0.5.0).
Statement kQueueFactsLimits = {
    "SELECT name, lease, backoff_base, backoff_cap, paused, max_attempts,"
    " coalesce(max_running, 0), coalesce(max_running_per_key, 0), fair, xmin"
    " FROM claimqueue.queues WHERE queue_id = $1",
    1, {INT4OID}, nullptr};
Grant grants[kGrants];
int next_grant = 0;

// The tables whose changes drop the cache; their oids change when the
// extension is dropped and created again, so they are looked up with the
// first entry after each drop.
Oid queues_relid = InvalidOid;
Oid grants_relid = InvalidOid;

void ForgetGrants()
{
    for (Grant &g : grants)
        g.len = 0;
}

void ForgetAll()
{
    for (QueueId &q : ids)
        q.len = 0;
    for (Facts &f : facts)
        f.used = false;
    ForgetGrants();
    queues_relid = InvalidOid;
    grants_relid = InvalidOid;
}

bool Same(const char *name, int len, text *t)
{
    return len == (int) VARSIZE_ANY_EXHDR(t) && memcmp(name, VARDATA_ANY(t), len) == 0;
}

// Before remembering anything: the tables whose invalidations drop it.
bool KnowTables()
{
    if (OidIsValid(queues_relid) && OidIsValid(grants_relid))
        return true;
    Oid schema = get_namespace_oid("claimqueue", true);
    if (!OidIsValid(schema))
        return false;
    queues_relid = get_relname_relid("queues", schema);
    grants_relid = get_relname_relid("queue_grants", schema);
    return OidIsValid(queues_relid) && OidIsValid(grants_relid);
}

}  // namespace

int32 CachedQueueId(text *name)
{
    for (const QueueId &q : ids)
        if (q.len > 0 && Same(q.name, q.len, name))
            return q.id;
    return 0;
}

void RememberQueueId(text *name, int32 queue_id)
{
    int len = VARSIZE_ANY_EXHDR(name);
    if (len == 0 || len >= NAMEDATALEN || queue_id <= 0 || !KnowTables())
        return;
    for (QueueId &q : ids)
        if (q.len > 0 && Same(q.name, q.len, name)) {
            q.id = queue_id;
            return;
        }
    QueueId &q = ids[next_id];
    next_id = (next_id + 1) % kQueues;
    memcpy(q.name, VARDATA_ANY(name), len);
    q.len = len;
    q.id = queue_id;
}

const QueueFacts *QueueFactsById(int32 queue_id)
{
    for (const Facts &f : facts)
        if (f.used && f.facts.queue_id == queue_id)
            return &f.facts;
    if (!KnowTables())
        return nullptr;
    ConnectSpi();
    Datum args[1] = {Int32GetDatum(queue_id)};
    Facts *slot = nullptr;
    // KnowTables again: the relids must be set whenever an entry is (anything
    // that ran meanwhile may have taken invalidations in and reset them).
    bool limits = get_attnum(queues_relid, "max_running") != InvalidAttrNumber;
    if (ExecuteLatest(limits ? &kQueueFactsLimits : &kQueueFacts, args, nullptr, 1) == 1 &&
        KnowTables()) {
        slot = &facts[next_facts];
        next_facts = (next_facts + 1) % kQueues;
        slot->facts.queue_id = queue_id;
        strlcpy(slot->facts.name, TextDatumGetCString(ResultValue(0, 1)), NAMEDATALEN);
        slot->facts.lease = *DatumGetIntervalP(ResultValue(0, 2));
        slot->facts.backoff_base = *DatumGetIntervalP(ResultValue(0, 3));
        slot->facts.backoff_cap = *DatumGetIntervalP(ResultValue(0, 4));
        slot->facts.paused = DatumGetBool(ResultValue(0, 5));
        slot->facts.max_attempts = DatumGetInt32(ResultValue(0, 6));
        slot->facts.max_running = limits ? DatumGetInt32(ResultValue(0, 7)) : 0;
        slot->facts.max_running_per_key = limits ? DatumGetInt32(ResultValue(0, 8)) : 0;
        slot->facts.fair = limits && DatumGetBool(ResultValue(0, 9));
        slot->facts.settings_xmin = limits ? DatumGetTransactionId(ResultValue(0, 10)) : 0;
        slot->used = true;
    }
    FinishSpi();
    return slot ? &slot->facts : nullptr;
}

bool CachedGrant(Oid user, int privilege, text *name)
{
    for (const Grant &g : grants)
        if (g.len > 0 && g.user == user && g.privilege == privilege && Same(g.name, g.len, name))
            return true;
    return false;
}

void RememberGrant(Oid user, int privilege, text *name)
{
    int len = VARSIZE_ANY_EXHDR(name);
    if (len == 0 || len >= NAMEDATALEN || !KnowTables())
        return;
    Grant &g = grants[next_grant];
    next_grant = (next_grant + 1) % kGrants;
    memcpy(g.name, VARDATA_ANY(name), len);
    g.len = len;
    g.user = user;
    g.privilege = privilege;
}

void QueueCacheAtRelationChange(Oid relid)
{
    if (!OidIsValid(relid) || relid == queues_relid || relid == grants_relid)
        ForgetAll();
}

void QueueCacheAtRoleChange()
{
    ForgetGrants();
}

}  // namespace claimqueue

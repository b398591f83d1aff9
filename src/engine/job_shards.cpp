// The local shards of claimqueue.jobs under Citus (see job_shards.hpp).
// claimqueue does not link with Citus: its catalog tables are read directly,
// by column name, as any catalog is.
#include "engine/job_shards.hpp"

#include "engine/queue_cache.hpp"

extern "C" {
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/pg_namespace.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
}

namespace claimqueue {
namespace {

struct ShardEntry {
    int32 queue_id;  // the key
    JobsShard shard;
};

HTAB *by_queue = nullptr;        // queue id -> its shard, for the table below
Oid cached_for = InvalidOid;     // the distributed table the cache is of
JobsShard *local_shards = nullptr;  // this node's shards, in CacheMemoryContext
int nlocal_shards = -1;          // -1: not read yet
int32 local_group = -1;          // -1: not read yet

void Forget()
{
    if (by_queue != nullptr)
        hash_destroy(by_queue);
    by_queue = nullptr;
    if (local_shards != nullptr)
        pfree(local_shards);
    local_shards = nullptr;
    nlocal_shards = -1;
    local_group = -1;
    cached_for = InvalidOid;
}

// A table of Citus's catalog, opened (AccessShareLock), or nullptr when Citus
// is not installed.
Relation OpenCitusCatalog(const char *name)
{
    Oid relid = get_relname_relid(name, PG_CATALOG_NAMESPACE);
    return OidIsValid(relid) ? table_open(relid, AccessShareLock) : nullptr;
}

AttrNumber Column(Relation catalog, const char *name)
{
    AttrNumber attnum = get_attnum(RelationGetRelid(catalog), name);
    if (attnum == InvalidAttrNumber)
        elog(ERROR, "claimqueue: Citus's %s has no column \"%s\"",
             RelationGetRelationName(catalog), name);
    return attnum;
}

// Whether shard `shardid` has a placement in this node's group
// (pg_dist_placement: a shard move changes the group, not the shard id).
bool PlacedHere(int64 shardid)
{
    Relation catalog = OpenCitusCatalog("pg_dist_placement");
    if (catalog == nullptr)
        return false;
    ScanKeyData keys[2];
    ScanKeyInit(&keys[0], Column(catalog, "shardid"), BTEqualStrategyNumber, F_INT8EQ,
                Int64GetDatum(shardid));
    ScanKeyInit(&keys[1], Column(catalog, "groupid"), BTEqualStrategyNumber, F_INT4EQ,
                Int32GetDatum(LocalGroupId()));
    SysScanDesc scan = systable_beginscan(catalog, InvalidOid, false, nullptr, 2, keys);
    bool found = HeapTupleIsValid(systable_getnext(scan));
    systable_endscan(scan);
    table_close(catalog, AccessShareLock);
    return found;
}

// The shard's relation on this node: Citus names it after the table, with
// "_<shard id>" appended, in the table's schema.
Oid ShardRelation(Oid jobs, int64 shardid)
{
    char name[NAMEDATALEN * 2];
    snprintf(name, sizeof(name), "%s_" INT64_FORMAT, get_rel_name(jobs), shardid);
    return get_relname_relid(name, get_rel_namespace(jobs));
}

JobsShard Resolve(Oid jobs, int32 queue_id)
{
    JobsShard found = {InvalidOid, 0};
    Relation catalog = OpenCitusCatalog("pg_dist_shard");
    if (catalog == nullptr)
        return found;
    // Citus hashes a hash-distributed column with its type's default hash
    // function under the column's collation, and keeps each shard's int4
    // range as text. The column is the queue's name (queue, text) since
    // distribute() routes the calls; the queue_id (int4) before.
    int32 hash;
    AttrNumber by_name = get_attnum(jobs, "queue");
    if (by_name != InvalidAttrNumber) {
        const QueueFacts *facts = QueueFactsById(queue_id);
        if (facts == nullptr) {
            table_close(catalog, AccessShareLock);
            return found;
        }
        Oid type, collation;
        int32 typmod;
        get_atttypetypmodcoll(jobs, by_name, &type, &typmod, &collation);
        hash = DatumGetInt32(DirectFunctionCall1Coll(hashtext, collation,
                                                     CStringGetTextDatum(facts->name)));
    } else {
        hash = DatumGetInt32(DirectFunctionCall1(hashint4, Int32GetDatum(queue_id)));
    }
    AttrNumber shardid_col = Column(catalog, "shardid");
    AttrNumber min_col = Column(catalog, "shardminvalue");
    AttrNumber max_col = Column(catalog, "shardmaxvalue");
    ScanKeyData key;
    ScanKeyInit(&key, Column(catalog, "logicalrelid"), BTEqualStrategyNumber, F_OIDEQ,
                ObjectIdGetDatum(jobs));
    SysScanDesc scan = systable_beginscan(catalog, InvalidOid, false, nullptr, 1, &key);
    TupleDesc desc = RelationGetDescr(catalog);
    HeapTuple tuple;
    while (found.shardid == 0 && HeapTupleIsValid(tuple = systable_getnext(scan))) {
        bool min_null, max_null, id_null;
        Datum min = heap_getattr(tuple, min_col, desc, &min_null);
        Datum max = heap_getattr(tuple, max_col, desc, &max_null);
        Datum id = heap_getattr(tuple, shardid_col, desc, &id_null);
        if (min_null || max_null || id_null)
            continue;
        if (pg_strtoint32(TextDatumGetCString(min)) <= hash &&
            hash <= pg_strtoint32(TextDatumGetCString(max)))
            found.shardid = DatumGetInt64(id);
    }
    systable_endscan(scan);
    table_close(catalog, AccessShareLock);
    if (found.shardid != 0 && PlacedHere(found.shardid))
        found.relid = ShardRelation(jobs, found.shardid);
    return found;
}

void StartCacheFor(Oid jobs)
{
    if (cached_for == jobs && by_queue != nullptr)
        return;
    Forget();
    HASHCTL ctl = {};
    ctl.keysize = sizeof(int32);
    ctl.entrysize = sizeof(ShardEntry);
    ctl.hcxt = CacheMemoryContext;
    by_queue = hash_create("claimqueue queue shards", 64, &ctl,
                           HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
    cached_for = jobs;
}

}  // namespace

bool DistributedByCitus(Oid relid)
{
    Relation catalog = OpenCitusCatalog("pg_dist_partition");
    if (catalog == nullptr)
        return false;
    ScanKeyData key;
    ScanKeyInit(&key, Column(catalog, "logicalrelid"), BTEqualStrategyNumber, F_OIDEQ,
                ObjectIdGetDatum(relid));
    SysScanDesc scan = systable_beginscan(catalog, InvalidOid, false, nullptr, 1, &key);
    bool found = HeapTupleIsValid(systable_getnext(scan));
    systable_endscan(scan);
    table_close(catalog, AccessShareLock);
    return found;
}

int32 LocalGroupId()
{
    if (local_group >= 0)
        return local_group;
    Relation catalog = OpenCitusCatalog("pg_dist_local_group");
    int32 group = 0;
    if (catalog != nullptr) {
        SysScanDesc scan = systable_beginscan(catalog, InvalidOid, false, nullptr, 0, nullptr);
        HeapTuple tuple = systable_getnext(scan);
        bool isnull = true;
        if (HeapTupleIsValid(tuple)) {
            Datum d = heap_getattr(tuple, Column(catalog, "groupid"), RelationGetDescr(catalog),
                                   &isnull);
            if (!isnull)
                group = DatumGetInt32(d);
        }
        systable_endscan(scan);
        table_close(catalog, AccessShareLock);
    }
    local_group = group;
    return group;
}

JobsShard LocalJobsShard(Oid jobs, int32 queue_id)
{
    StartCacheFor(jobs);
    bool present;
    ShardEntry *entry = (ShardEntry *) hash_search(by_queue, &queue_id, HASH_FIND, &present);
    if (present)
        return entry->shard;
    JobsShard shard = Resolve(jobs, queue_id);
    // The look-up may have taken in an invalidation that dropped the cache.
    StartCacheFor(jobs);
    if (OidIsValid(shard.relid)) {
        entry = (ShardEntry *) hash_search(by_queue, &queue_id, HASH_ENTER, &present);
        entry->shard = shard;
    }
    return shard;
}

int LocalJobsShards(Oid jobs, JobsShard **shards)
{
    StartCacheFor(jobs);
    if (nlocal_shards < 0) {
        Relation catalog = OpenCitusCatalog("pg_dist_shard");
        int64 *ids = nullptr;
        int nids = 0;
        if (catalog != nullptr) {
            AttrNumber shardid_col = Column(catalog, "shardid");
            ScanKeyData key;
            ScanKeyInit(&key, Column(catalog, "logicalrelid"), BTEqualStrategyNumber, F_OIDEQ,
                        ObjectIdGetDatum(jobs));
            SysScanDesc scan = systable_beginscan(catalog, InvalidOid, false, nullptr, 1, &key);
            HeapTuple tuple;
            int room = 0;
            while (HeapTupleIsValid(tuple = systable_getnext(scan))) {
                bool isnull;
                Datum id = heap_getattr(tuple, shardid_col, RelationGetDescr(catalog), &isnull);
                if (isnull)
                    continue;
                if (nids == room) {
                    room = room == 0 ? 32 : room * 2;
                    ids = ids == nullptr ? (int64 *) palloc(sizeof(int64) * room)
                                         : (int64 *) repalloc(ids, sizeof(int64) * room);
                }
                ids[nids++] = DatumGetInt64(id);
            }
            systable_endscan(scan);
            table_close(catalog, AccessShareLock);
        }
        JobsShard *found = (JobsShard *) MemoryContextAllocZero(
            CacheMemoryContext, sizeof(JobsShard) * (nids + 1));
        int n = 0;
        for (int i = 0; i < nids; i++) {
            int64 shardid = ids[i];
            if (!PlacedHere(shardid))
                continue;
            Oid relid = ShardRelation(jobs, shardid);
            if (OidIsValid(relid))
                found[n++] = JobsShard{relid, shardid};
        }
        StartCacheFor(jobs);  // as above
        if (local_shards != nullptr)
            pfree(local_shards);
        local_shards = found;
        nlocal_shards = n;
    }
    // A copy: opening a shard takes in invalidations, which may drop the cache.
    int n = nlocal_shards;
    *shards = (JobsShard *) palloc(sizeof(JobsShard) * (n + 1));
    memcpy(*shards, local_shards, sizeof(JobsShard) * n);
    return n;
}

int JobsTargets(Oid jobs, JobsTarget **targets)
{
    if (!DistributedByCitus(jobs)) {
        *targets = (JobsTarget *) palloc(sizeof(JobsTarget));
        (*targets)[0] = JobsTarget{jobs, 0, nullptr};
        return 1;
    }
    JobsShard *shards;
    int n = LocalJobsShards(jobs, &shards);
    *targets = (JobsTarget *) palloc(sizeof(JobsTarget) * (n + 1));
    int found = 0;
    for (int i = 0; i < n; i++) {
        char *name = get_rel_name(shards[i].relid);
        Oid nsp = get_rel_namespace(shards[i].relid);
        if (name == nullptr || !OidIsValid(nsp))
            continue;  // dropped since the list was read (a shard move)
        (*targets)[found++] = JobsTarget{
            shards[i].relid, shards[i].shardid,
            quote_qualified_identifier(get_namespace_name(nsp), name)};
    }
    pfree(shards);
    return found;
}

void JobShardsAtRelationChange(Oid relid, Oid jobs)
{
    if (cached_for == InvalidOid && local_group < 0)
        return;
    if (!OidIsValid(relid) || relid == jobs || relid == cached_for) {
        Forget();
        return;
    }
    for (int i = 0; i < nlocal_shards; i++)
        if (local_shards[i].relid == relid) {
            Forget();
            return;
        }
    if (by_queue == nullptr)
        return;
    HASH_SEQ_STATUS seq;
    hash_seq_init(&seq, by_queue);
    ShardEntry *entry;
    while ((entry = (ShardEntry *) hash_seq_search(&seq)) != nullptr)
        if (entry->shard.relid == relid) {
            hash_seq_term(&seq);
            Forget();
            return;
        }
}

}  // namespace claimqueue

// The shards of claimqueue.jobs on this node, when Citus distributes it by
// queue (claimqueue.distribute(), docs/citus.md): which local shard holds a
// queue's jobs, read from Citus's catalog without SQL, so the hot path can
// open the shard instead of the empty shell table.
#pragma once

#include "pg/pg.hpp"

namespace claimqueue {

// Whether Citus distributes the table `relid` (a row of pg_dist_partition).
bool DistributedByCitus(Oid relid);

// A shard of claimqueue.jobs: its relation on this node and Citus's shard id.
struct JobsShard {
    Oid relid;     // InvalidOid: the shard has no placement on this node
    int64 shardid;
};

// The shard of `jobs` (the distributed table) that holds queue_id's jobs:
// the shard whose hash range holds the hash Citus gives the queue's name
// (the column queue, text; the int4 queue_id for a table distributed by it).
// Cached per queue id until a relcache invalidation of the table or of the
// shard (Citus sends one for the table when a placement or shard changes).
// shardid 0 when Citus has no shard for the value.
JobsShard LocalJobsShard(Oid jobs, int32 queue_id);

// The shards of `jobs` placed on this node (a palloc'd copy of the cached list).
int LocalJobsShards(Oid jobs, JobsShard **shards);

// What the maintenance passes (reaping, retention) read on this node: `jobs`
// itself on one server, with no route; under Citus, each shard of it placed
// here, `route` its qualified name for RouteJobsTo (pg/statement.hpp), and
// none on a node that holds no shard (the coordinator). A palloc'd array.
struct JobsTarget {
    Oid relid;
    int64 shardid;      // 0: the table itself
    const char *route;  // nullptr: the table itself
};
int JobsTargets(Oid jobs, JobsTarget **targets);

// This node's Citus group id (0: the coordinator).
int32 LocalGroupId();

// The session module calls it (through JobRowsAtRelationChange).
void JobShardsAtRelationChange(Oid relid, Oid jobs);

}  // namespace claimqueue

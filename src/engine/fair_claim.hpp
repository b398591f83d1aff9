// Fair claiming (0.5.0): in a queue with `fair` on, a claim rotates across
// the tenants of each priority lane instead of taking the lane in position
// order. A tenant is a concurrency key; the lane's jobs without a key are one
// tenant more, after the keys. Each visit takes the tenant's first claimable
// job (in position order), then the claim moves to the next tenant, wrapping
// around, until it has its batch or a whole turn claimed nothing. Tenants
// come in the order of a 64-bit hash of their key (jobs_fair_idx): fixed, the
// same for every claim, and cheap to step through. Priority still comes first: a lane is rotated only once every
// higher lane has nothing claimable left for this call.
//
// Where the rotation stands (the tenant served last) is kept per queue in
// shared memory, so every session's claims continue one rotation; without the
// preload (or when the queue finds no slot there) each session keeps its own. With claim cursors, each session also
// remembers per tenant the position below which the tenant has no claimable
// job (the lane cursor's rule, applied per tenant: never past the bound of
// positions in flight), so a tenant's claims never walk the entries of its
// jobs claimed before, even under an old snapshot.
#pragma once

#include "pg/pg.hpp"

namespace claimqueue {

struct JobRows;
struct LaneWalk;
struct LimitGate;
struct ClaimWrite;

void RequestFairState();  // from _PG_init while preloading

// Claims up to `batch` jobs of fair queue `queue_id`, lane after lane along
// `walk` (begun, its snapshot taken), rotating across each lane's tenants.
// Rows go into `out` in claim order.
uint64 ClaimFairly(JobRows *rows, LaneWalk *walk, int32 queue_id, int batch,
                   const ClaimWrite &write, LimitGate *gate, Tuplestorestate *out,
                   TupleDesc out_desc);

}  // namespace claimqueue

// Enqueue: one job or a batch, transactional like any INSERT.
#pragma once

#include "pg/pg.hpp"

namespace claimqueue {

struct NewJob {
    Datum payload;       // jsonb
    Datum run_at;        // timestamptz; run_at_null: run now
    bool run_at_null;
    int32 priority;
    Datum max_attempts;  // int4; max_attempts_null: the queue's default
    bool max_attempts_null;
    text *concurrency_key;  // nullptr: none (also on a database still at 0.4.0)
};

// Returns the new job's id, or the id of the live (ready or running) job that
// already has `dedup_key` (which may be NULL: no deduplication).
int64 EnqueueJob(text *queue, const NewJob &job, text *dedup_key);

// Inserts one job per element of `payloads` (jsonb[] without NULLs); writes
// the ids, in payload order, to *ids (palloc'd in the caller's context).
int EnqueueBatch(text *queue, Datum payloads, const NewJob &common, int64 **ids);

}  // namespace claimqueue

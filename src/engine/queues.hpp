// Queue administration: create, alter, drop, look up (SQL in claimqueue.queues).
#pragma once

#include "pg/pg.hpp"

namespace claimqueue {

// The per-queue settings as Datums; a NULL pointer field in QueueChanges means
// "leave as it is". All values are validated by the caller.
struct QueueSettings {
    Datum lease;             // interval
    Datum max_attempts;      // int4
    Datum backoff_base;      // interval
    Datum backoff_cap;       // interval
    Datum retention;         // interval
    Datum failed_retention;  // interval; 0 (create_queue): NULL, as retention
};
constexpr int kQueueSettings = 6;

bool CreateQueue(text *name, const QueueSettings &settings, bool if_not_exists);

// `given[i]` says whether field i (in QueueSettings order) was passed.
void AlterQueue(text *name, const QueueSettings &settings, const bool given[kQueueSettings]);

// The flow-control settings (0.5.0) of the queue named `name`, which exists:
// each given one is set, a limit 0 meaning none (NULL). Raises QC001 for an
// unknown queue.
struct QueueLimits {
    bool max_running_given;
    int32 max_running;
    bool max_running_per_key_given;
    int32 max_running_per_key;
    bool fair_given;
    bool fair;  // claims rotate across concurrency keys (src/engine/fair_claim.hpp)
};
void SetQueueLimits(text *name, const QueueLimits &limits);

// Pauses (paused = true) or resumes the queue; returns whether that changed
// its state (false: it was paused, or running, already). Raises QC001 for an
// unknown queue. Every session's claims see the change once it commits (the
// queues' trigger invalidates their caches); a resume wakes the queue's
// waiters at commit, one per ready job.
bool SetQueuePaused(text *name, bool paused);

// Returns the number of jobs deleted with the queue.
int64 DropQueue(text *name, bool force);

// Raises QC001 when the queue does not exist (inside an SPI connection).
void RequireQueueExists(text *name);

// The queue's id; raises QC001 when it does not exist (inside an SPI connection).
int32 QueueIdOf(text *name);
// The same, and whether the queue is paused (*paused), as the queue's row
// shows it to this statement (not the cache).
int32 QueueIdOf(text *name, bool *paused);
// The same, outside an SPI connection (it makes one).
int32 LookUpQueueId(text *name);

// Under REPEATABLE READ or SERIALIZABLE the transaction's snapshot may still
// show a queue that was dropped (or dropped and re-created) since; with the
// queue-name lock held, this checks against what has committed by now and
// raises QC001 (dropped) or 40001 (re-created). A no-op under READ COMMITTED,
// where every statement already reads the latest state.
void RequireQueueCurrent(text *name);

[[noreturn]] void ReportUnknownQueue(text *name);

}  // namespace claimqueue

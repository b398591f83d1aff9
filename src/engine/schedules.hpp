// Recurring jobs: the schedules (table claimqueue.schedules) and the pass that
// turns their due slots into jobs. The cron grammar, the DST policy and the
// catch-up rules are pure C++ (core/cron.hpp, core/schedule_plan.hpp); time
// zones are PostgreSQL's (pg/time_zones.hpp); time is claimqueue's clock.
#pragma once

#include "pg/pg.hpp"

namespace claimqueue {

// A schedule as schedule() takes it, every field checked by the caller
// except `cron` (parsed here: 22023 naming the field).
struct ScheduleDefinition {
    text *name;
    const char *cron;
    text *queue;
    Datum payload;          // jsonb object
    const char *time_zone;  // canonical name (pg/time_zones.hpp)
    int32 priority;
    Datum max_attempts;     // int4; max_attempts_null: the queue's
    bool max_attempts_null;
    const char *catch_up;   // one, all or none
    bool enabled;
};

// The first run of `cron` in zone `time_zone` strictly after `after`; false
// when there is none (past the year 9999). Raises 22023 naming the field of a
// bad expression, and 22023 for an unknown zone.
bool NextScheduledRun(const char *cron, const char *time_zone, TimestampTz after,
                      TimestampTz *next);

// Creates or replaces schedule `d.name`. A replacement that keeps its cron
// and time zone (and stays enabled) keeps its next run; otherwise the next
// run is the first after now. Returns the stored next run (*none: no run,
// the schedule being disabled or never due again). Raises QC001 for an
// unknown queue.
TimestampTz PutSchedule(const ScheduleDefinition &d, bool *none);

// The queue of schedule `name`, or nullptr when there is no such schedule.
text *ScheduleQueue(text *name);

// Removes schedule `name`; QC006 when it does not exist.
void DropSchedule(text *name);

[[noreturn]] void ReportUnknownSchedule(text *name);

// Pauses (paused) or resumes schedule `name`: a paused schedule has no next
// run and fires nothing; a resumed one runs from its first slot after now,
// none of the slots it was paused for. Returns whether the state changed.
// QC006 when it does not exist.
bool SetSchedulePaused(text *name, bool paused);

// The reaper's pass: up to `limit` due schedules (of `queue`, or all when
// NULL), each locked with SKIP LOCKED, get their jobs (core/schedule_plan.hpp)
// and their next run, in the caller's transaction, so a slot's job and the
// advance past it commit together or not at all. Returns the schedules
// handled; adds the jobs enqueued to *jobs. `queue_ids`, when given: of those
// queues only (under Citus, those of the shard served: maintenance.hpp).
int64 RunDueSchedulesBatch(text *queue, int limit, int64 *jobs, ArrayType *queue_ids = nullptr);

// run_schedules(): batches until no due schedule is left, in the caller's
// transaction; returns the jobs enqueued.
int64 RunDueSchedules(text *queue);

}  // namespace claimqueue

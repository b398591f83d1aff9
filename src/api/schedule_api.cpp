// SQL API, recurring jobs: schedule(), unschedule(), pause_schedule(),
// resume_schedule() and run_schedules() (the reaper's schedule pass by hand).
// Arguments are checked here, before anything changes; src/engine/schedules.cpp
// does the work.
#include "pg/firewall.hpp"

extern "C" {
#include "access/detoast.h"
}

#include "api/access.hpp"
#include "api/args.hpp"
#include "core/rules.hpp"
#include "core/schedule_plan.hpp"
#include "engine/claim.hpp"
#include "engine/schedules.hpp"
#include "pg/settings.hpp"
#include "pg/time_zones.hpp"

using namespace claimqueue;

namespace {

// The key under which a scheduled job's payload carries its schedule and slot.
constexpr const char *kScheduleKey = "claimqueue";

text *ScheduleNameArg(FunctionCallInfo fcinfo, int n)
{
    text *name = TextArg(fcinfo, n, "schedule name");
    schedule::CheckScheduleName(View(name));
    return name;
}

// A JSON object without the key the jobs' schedule and slot go under.
Datum SchedulePayloadArg(FunctionCallInfo fcinfo, int n)
{
    RequireArg(fcinfo, n, "payload");
    Jsonb *payload = PG_GETARG_JSONB_P(n);
    if (!JB_ROOT_IS_OBJECT(payload) || JB_ROOT_IS_SCALAR(payload))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("payload of a schedule must be a JSON object"),
                        errdetail("Each job gets the schedule's payload with its schedule and "
                                  "slot added under the key \"%s\".", kScheduleKey)));
    if (DatumGetBool(DirectFunctionCall2(jsonb_exists, JsonbPGetDatum(payload),
                                         CStringGetTextDatum(kScheduleKey))))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("payload of a schedule must not have the key \"%s\"", kScheduleKey),
                        errdetail("claimqueue puts each job's schedule and slot there.")));
    rules::CheckPayloadSize((int64) toast_raw_datum_size(PointerGetDatum(payload)),
                            max_payload_size);
    return JsonbPGetDatum(payload);
}

}  // namespace

// schedule(name, cron, queue, payload, timezone, priority, max_attempts,
// catch_up, enabled) -> the next run (NULL when disabled or never again)
CQ_QUEUE_FUNCTION(cq_schedule)
{
    ScheduleDefinition d = {};
    d.name = ScheduleNameArg(fcinfo, 0);
    d.cron = text_to_cstring(TextArg(fcinfo, 1, "cron"));
    d.queue = QueueNameArg(fcinfo, 2);
    d.payload = SchedulePayloadArg(fcinfo, 3);
    const char *zone_name = text_to_cstring(TextArg(fcinfo, 4, "timezone"));
    RequireTimeZone(zone_name, &d.time_zone);
    RequireArg(fcinfo, 5, "priority");
    rules::CheckPriority(PG_GETARG_INT32(5));
    d.priority = PG_GETARG_INT32(5);
    d.max_attempts_null = PG_ARGISNULL(6);
    if (!d.max_attempts_null) {
        rules::CheckMaxAttempts(PG_GETARG_INT32(6));
        d.max_attempts = PG_GETARG_DATUM(6);
    }
    d.catch_up = schedule::CatchUpName(
        schedule::ParseCatchUp(View(TextArg(fcinfo, 7, "catch_up"))));
    RequireArg(fcinfo, 8, "enabled");
    d.enabled = PG_GETARG_BOOL(8);
    // The cron expression, checked before anything is stored (22023 naming the field).
    TimestampTz ignored;
    (void) NextScheduledRun(d.cron, d.time_zone, 0, &ignored);

    RequireQueuePrivilege(d.queue, QueuePrivilege::kManage, "schedule()");
    // Replacing a schedule of another queue takes it from that queue too.
    text *old_queue = ScheduleQueue(d.name);
    if (old_queue)
        RequireQueuePrivilege(old_queue, QueuePrivilege::kManage, "schedule()");
    bool none = false;
    TimestampTz next = PutSchedule(d, &none);
    if (none)
        PG_RETURN_NULL();
    PG_RETURN_TIMESTAMPTZ(next);
}

// unschedule(name): removes the schedule; QC006 when there is none
CQ_QUEUE_FUNCTION(cq_unschedule)
{
    text *name = ScheduleNameArg(fcinfo, 0);
    text *queue = ScheduleQueue(name);
    // A schedule of a queue the caller holds no privilege on reads as one
    // that does not exist.
    if (queue == nullptr || !CallerSeesQueue(queue))
        ReportUnknownSchedule(name);
    RequireQueuePrivilege(queue, QueuePrivilege::kManage, "unschedule()");
    DropSchedule(name);
    PG_RETURN_VOID();
}

namespace {

// The queue of schedule `name`, checked like unschedule()'s: QC006 when it
// does not exist or its queue is hidden from the caller, 42501 without manage.
void RequireScheduleManage(text *name, const char *what)
{
    text *queue = ScheduleQueue(name);
    if (queue == nullptr || !CallerSeesQueue(queue))
        ReportUnknownSchedule(name);
    RequireQueuePrivilege(queue, QueuePrivilege::kManage, what);
}

}  // namespace

// pause_schedule(name) -> true if it was running (false: paused already)
CQ_QUEUE_FUNCTION(cq_pause_schedule)
{
    text *name = ScheduleNameArg(fcinfo, 0);
    RequireScheduleManage(name, "pause_schedule()");
    PG_RETURN_BOOL(SetSchedulePaused(name, true));
}

// resume_schedule(name) -> true if it was paused (false: running already)
CQ_QUEUE_FUNCTION(cq_resume_schedule)
{
    text *name = ScheduleNameArg(fcinfo, 0);
    RequireScheduleManage(name, "resume_schedule()");
    PG_RETURN_BOOL(SetSchedulePaused(name, false));
}

// run_schedules(queue) -> jobs enqueued for the due slots of the queue's
// schedules (every queue's when NULL: administrators only)
CQ_QUEUE_FUNCTION(cq_run_schedules)
{
    text *queue = PG_ARGISNULL(0) ? nullptr : QueueNameArg(fcinfo, 0);
    RequireReadCommitted("run_schedules()");
    if (queue)
        RequireQueuePrivilege(queue, QueuePrivilege::kManage, "run_schedules()");
    else
        RequireAdmin("run run_schedules() on every queue");
    PG_RETURN_INT64(RunDueSchedules(queue));
}

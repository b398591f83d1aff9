// Recurring jobs (see schedules.hpp).
#include "engine/schedules.hpp"

#include "engine/job_rows.hpp"

#include <exception>
#include <optional>

extern "C" {
#include "catalog/namespace.h"
#include "utils/datum.h"
}

#include "core/cron.hpp"
#include "core/schedule_plan.hpp"
#include "engine/queue_locks.hpp"
#include "engine/queues.hpp"
#include "metrics/metrics.hpp"
#include "pg/clock.hpp"
#include "pg/errors.h"
#include "pg/firewall.hpp"
#include "pg/settings.hpp"
#include "engine/maintenance.hpp"
#include "pg/statement.hpp"
#include "pg/time_zones.hpp"
#include "wait/ready_notices.hpp"

namespace claimqueue {
namespace {

Statement kScheduleQueue = {
    "SELECT q.name FROM claimqueue.schedules s JOIN claimqueue.queues q ON q.queue_id = s.queue_id"
    " WHERE s.name = $1",
    1, {TEXTOID}, nullptr};

// A replacement keeps the next run when the slots stay the same (cron, zone,
// enabled): declaring a schedule again, as a deployment does, never drops or
// moves a slot. It keeps an operator's pause too (no next run while paused).
#define CQ_PUT_SCHEDULE(paused_case)                                                          \
    "INSERT INTO claimqueue.schedules AS s (name, queue_id, cron, timezone, payload, priority,"  \
    " max_attempts, catch_up, enabled, next_run_at)"                                          \
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"                                       \
    " ON CONFLICT (name) DO UPDATE SET queue_id = EXCLUDED.queue_id, cron = EXCLUDED.cron,"   \
    "   timezone = EXCLUDED.timezone, payload = EXCLUDED.payload, priority = EXCLUDED.priority," \
    "   max_attempts = EXCLUDED.max_attempts, catch_up = EXCLUDED.catch_up,"                  \
    "   enabled = EXCLUDED.enabled,"                                                          \
    "   next_run_at = CASE " paused_case                                                      \
    "                      WHEN s.enabled AND EXCLUDED.enabled AND s.cron = EXCLUDED.cron"    \
    "                           AND s.timezone = EXCLUDED.timezone"                           \
    "                      THEN s.next_run_at ELSE EXCLUDED.next_run_at END"                  \
    " RETURNING next_run_at"
#define CQ_PUT_SCHEDULE_TYPES                                                                  \
    {TEXTOID, INT4OID, TEXTOID, TEXTOID, JSONBOID, INT4OID, INT4OID, TEXTOID, BOOLOID,         \
     TIMESTAMPTZOID}
Statement kPutSchedule = {CQ_PUT_SCHEDULE("WHEN s.paused THEN NULL"), 10, CQ_PUT_SCHEDULE_TYPES,
                          nullptr};
// The previous release's table has no column paused (schema_version.hpp).
Statement kPutSchedulePrevious = {CQ_PUT_SCHEDULE(""), 10, CQ_PUT_SCHEDULE_TYPES, nullptr};

Statement kDropSchedule = {
    "DELETE FROM claimqueue.schedules WHERE name = $1", 1, {TEXTOID}, nullptr};

// pause_schedule() and resume_schedule(): the row, locked against the
// reaper's pass and schedule(), then its new state.
Statement kLockSchedule = {
    "SELECT cron, timezone, enabled, paused FROM claimqueue.schedules WHERE name = $1"
    " FOR NO KEY UPDATE",
    1, {TEXTOID}, nullptr};

Statement kSetSchedulePaused = {
    "UPDATE claimqueue.schedules SET paused = $2, next_run_at = $3 WHERE name = $1",
    3, {TEXTOID, BOOLOID, TIMESTAMPTZOID}, nullptr};

// Due schedules, earliest first; one the reaper or schedule() holds is left
// for the next pass. $4: of those queues only (under Citus, the queues of the
// shard being served), or every queue when NULL.
#define CQ_DUE_SCHEDULES(paused_test)                                                         \
    "SELECT s.name, s.cron, s.timezone, s.next_run_at, s.catch_up, q.name, s.queue_id,"       \
    "       s.payload, s.priority::integer, coalesce(s.max_attempts, q.max_attempts)"        \
    " FROM claimqueue.schedules s JOIN claimqueue.queues q ON q.queue_id = s.queue_id"         \
    " WHERE s.enabled " paused_test "AND s.next_run_at <= $1"                                 \
    "   AND ($2::text IS NULL OR q.name = $2)"                                                \
    "   AND ($4::integer[] IS NULL OR s.queue_id = ANY ($4::integer[]))"                      \
    " ORDER BY s.next_run_at LIMIT $3 FOR UPDATE OF s SKIP LOCKED"
Statement kDueSchedules = {CQ_DUE_SCHEDULES("AND NOT s.paused "), 4,
                           {TIMESTAMPTZOID, TEXTOID, INT4OID, INT4ARRAYOID}, nullptr};
Statement kDueSchedulesPrevious = {CQ_DUE_SCHEDULES(""), 4,
                                   {TIMESTAMPTZOID, TEXTOID, INT4OID, INT4ARRAYOID}, nullptr};

// One job per slot, in slot order, due at its slot; the payload carries the
// schedule's name and the slot (UTC, ISO 8601) under the key "claimqueue".
// The schedule's values come from kDueSchedules's row, locked: under Citus this
// may run on a shard, and Citus cannot plan a shard's INSERT joining the
// reference tables with parameters. The id is drawn as the column's default
// draws it, by name: a shard has no default.
#define CQ_INSERT_SCHEDULED(QUEUE_COLUMN, QUEUE_VALUE)                                      \
    "INSERT INTO claimqueue.jobs (id, queue_id, payload, run_at, priority, max_attempts,"   \
    " created_at, pos" QUEUE_COLUMN ")"                                                     \
    " SELECT pg_catalog.nextval('claimqueue.jobs_id_seq'::pg_catalog.regclass), $1,"        \
    "   $2 OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_object('claimqueue',"             \
    "     pg_catalog.jsonb_build_object('schedule', $3, 'slot',"                            \
    "       pg_catalog.to_char(r.slot AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'))),"  \
    "   r.slot, $4, $5, $7, claimqueue.ready_position($1, $4, r.slot, $7)" QUEUE_VALUE        \
    " FROM pg_catalog.unnest($6::timestamptz[]) WITH ORDINALITY AS r(slot, ord)"          \
    " ORDER BY r.ord RETURNING id, queue_id"
#define CQ_INSERT_SCHEDULED_ARGS \
    INT4OID, JSONBOID, TEXTOID, INT4OID, INT4OID, TIMESTAMPTZARRAYOID, TIMESTAMPTZOID
Statement kInsertScheduled = {CQ_INSERT_SCHEDULED("", ""), 7, {CQ_INSERT_SCHEDULED_ARGS},
                              nullptr};
// Once distributed, the jobs have the column queue (the queue's name, Citus's
// distribution column), which a shard has no default for.
Statement kInsertScheduledNamed = {CQ_INSERT_SCHEDULED(", queue", ", $8"), 8,
                                   {CQ_INSERT_SCHEDULED_ARGS, TEXTOID}, nullptr};

Statement kAdvanceSchedule = {
    "UPDATE claimqueue.schedules SET next_run_at = $2, last_run_at = coalesce($3, last_run_at),"
    " last_job_id = coalesce($4, last_job_id) WHERE name = $1",
    4, {TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID, INT8OID}, nullptr};

// Whether claimqueue.schedules has the column paused: not at the previous
// release, which this library also serves until ALTER EXTENSION UPDATE.
bool SchedulesHavePause()
{
    Oid schema = get_namespace_oid("claimqueue", true);
    Oid relid = OidIsValid(schema) ? get_relname_relid("schedules", schema) : InvalidOid;
    return OidIsValid(relid) && get_attnum(relid, "paused") != InvalidAttrNumber;
}

constexpr int kMaxRunsPlanned = schedule::kMaxCatchUpRuns + schedule::kMaxRunsPerPass;
constexpr int kSqlFunctionBatch = 100;  // schedules per batch of run_schedules()

// A plan in plain memory: the C++ objects that computed it are gone before
// any PostgreSQL function that can raise an error runs.
struct PlanResult {
    int nruns;
    bool skipped_missed;
    bool has_next;
    int64 next_usec;
    char error[256];  // not empty: the schedule could not be planned
};

// Pure computation and pg_localtime() only: nothing here raises a PostgreSQL
// error, and no exception leaves.
void PlanSchedule(const char *cron_text, const pg_tz *tz, int64 next_usec, int64 now_usec,
                  int64 late_after_usec, const char *catch_up, int64 *runs,
                  PlanResult *out) noexcept
{
    out->nruns = 0;
    out->skipped_missed = false;
    out->has_next = false;
    out->next_usec = 0;
    out->error[0] = '\0';
    try {
        const cron::Schedule s = cron::ParseSchedule(cron_text);
        const PgZoneRules zone(tz);
        const schedule::RunPlan plan =
            schedule::PlanRuns(s, next_usec, now_usec, late_after_usec,
                               schedule::ParseCatchUp(catch_up), zone);
        for (int64_t run : plan.runs_usec)
            if (out->nruns < kMaxRunsPlanned)
                runs[out->nruns++] = run;
        out->skipped_missed = plan.skipped_missed;
        out->has_next = plan.next_usec.has_value();
        out->next_usec = plan.next_usec.value_or(0);
    } catch (const std::exception &e) {
        strlcpy(out->error, e.what(), sizeof(out->error));
    } catch (...) {
        strlcpy(out->error, "unknown C++ exception", sizeof(out->error));
    }
}

// How late a slot may be reached and still count as on time
// (core/schedule_plan.hpp): a minute, or two reaper intervals if longer.
int64 LateAfterUsec()
{
    return Max((int64) 60 * USECS_PER_SEC, (int64) 2 * reaper_interval_ms * 1000);
}

}  // namespace

bool NextScheduledRun(const char *cron_text, const char *time_zone, TimestampTz after,
                      TimestampTz *next)
{
    const char *canonical;
    pg_tz *tz = RequireTimeZone(time_zone, &canonical);
    int64 next_usec = 0;
    bool found = RunGuarded([&]() -> bool {
        const cron::Schedule s = cron::ParseSchedule(cron_text);
        const PgZoneRules zone(tz);
        const std::optional<int64_t> run = cron::NextRunUsec(s, UnixUsecOf(after), zone);
        next_usec = run.value_or(0);
        return run.has_value();
    });
    *next = TimestampOfUnixUsec(next_usec);
    return found;
}

[[noreturn]] void ReportUnknownSchedule(text *name)
{
    ereport(ERROR, (errcode(ERRCODE_CQ_SCHEDULE_NOT_FOUND),
                    errmsg("schedule \"%s\" does not exist", text_to_cstring(name)),
                    errhint("The view schedules lists the schedules of your queues.")));
    pg_unreachable();
}

TimestampTz PutSchedule(const ScheduleDefinition &d, bool *none)
{
    TimestampTz next = 0;
    bool has_next = NextScheduledRun(d.cron, d.time_zone, ClockNow(), &next);
    LockQueueName(d.queue, ShareLock);  // drop_queue cannot run meanwhile
    ConnectSpi();
    RequireQueueCurrent(d.queue);
    int32 queue_id = QueueIdOf(d.queue);
    Datum args[10] = {PointerGetDatum(d.name),
                      Int32GetDatum(queue_id),
                      CStringGetTextDatum(d.cron),
                      CStringGetTextDatum(d.time_zone),
                      d.payload,
                      Int32GetDatum(d.priority),
                      d.max_attempts,
                      CStringGetTextDatum(d.catch_up),
                      BoolGetDatum(d.enabled),
                      TimestampTzGetDatum(next)};
    char nulls[11] = "          ";
    nulls[6] = d.max_attempts_null ? 'n' : ' ';
    nulls[9] = d.enabled && has_next ? ' ' : 'n';
    Execute(SchedulesHavePause() ? &kPutSchedule : &kPutSchedulePrevious, args, nulls);
    bool isnull = true;
    Datum stored = ResultValue(0, 1, &isnull);
    FinishSpi();
    *none = isnull;
    return isnull ? 0 : DatumGetTimestampTz(stored);
}

text *ScheduleQueue(text *name)
{
    ConnectSpi();
    Datum args[1] = {PointerGetDatum(name)};
    text *queue = nullptr;
    if (Execute(&kScheduleQueue, args, nullptr, 1) == 1)
        queue = (text *) SPI_datumTransfer(ResultValue(0, 1), false, -1);
    FinishSpi();
    return queue;
}

void DropSchedule(text *name)
{
    ConnectSpi();
    Datum args[1] = {PointerGetDatum(name)};
    uint64 n = Execute(&kDropSchedule, args, nullptr);
    FinishSpi();
    if (n == 0)
        ReportUnknownSchedule(name);
}

bool SetSchedulePaused(text *name, bool paused)
{
    ConnectSpi();
    Datum key[1] = {PointerGetDatum(name)};
    if (Execute(&kLockSchedule, key, nullptr, 1) != 1)
        ReportUnknownSchedule(name);  // removed since the caller looked
    char *cron_text = TextDatumGetCString(ResultValue(0, 1));
    char *time_zone = TextDatumGetCString(ResultValue(0, 2));
    bool enabled = DatumGetBool(ResultValue(0, 3));
    bool was_paused = DatumGetBool(ResultValue(0, 4));
    bool changed = was_paused != paused;
    if (changed) {
        // Resumed: the first slot after now, as a schedule enabled again.
        TimestampTz next = 0;
        bool has_next = !paused && enabled &&
                        NextScheduledRun(cron_text, time_zone, ClockNow(), &next);
        Datum args[3] = {PointerGetDatum(name), BoolGetDatum(paused), TimestampTzGetDatum(next)};
        Execute(&kSetSchedulePaused, args, has_next ? nullptr : "  n");
    }
    FinishSpi();
    return changed;
}

int64 RunDueSchedulesBatch(text *queue, int limit, int64 *jobs, ArrayType *queue_ids)
{
    ConnectSpi();
    TimestampTz now = ClockNow();
    Datum find[4] = {TimestampTzGetDatum(now), PointerGetDatum(queue), Int32GetDatum(limit),
                     PointerGetDatum(queue_ids)};
    char nulls[5] = "    ";
    nulls[1] = queue ? ' ' : 'n';
    nulls[3] = queue_ids ? ' ' : 'n';
    uint64 n = Execute(SchedulesHavePause() ? &kDueSchedules : &kDueSchedulesPrevious, find,
                       nulls);
    // SPI_tuptable belongs to the last statement: keep the due schedules apart.
    struct Due {
        text *name;
        char *cron;
        char *time_zone;
        TimestampTz next_run;
        char *catch_up;
        char *queue;
        Datum queue_id;
        Datum payload;
        Datum priority;
        Datum max_attempts;
    };
    Due *due = (Due *) palloc(sizeof(Due) * (n + 1));
    for (uint64 i = 0; i < n; i++) {
        due[i].name = cstring_to_text(TextDatumGetCString(ResultValue(i, 1)));
        due[i].cron = TextDatumGetCString(ResultValue(i, 2));
        due[i].time_zone = TextDatumGetCString(ResultValue(i, 3));
        due[i].next_run = DatumGetTimestampTz(ResultValue(i, 4));
        due[i].catch_up = TextDatumGetCString(ResultValue(i, 5));
        due[i].queue = TextDatumGetCString(ResultValue(i, 6));
        due[i].queue_id = ResultValue(i, 7);
        due[i].payload = datumCopy(ResultValue(i, 8), false, -1);
        due[i].priority = ResultValue(i, 9);
        due[i].max_attempts = ResultValue(i, 10);
    }
    int64 *runs = (int64 *) palloc(sizeof(int64) * kMaxRunsPlanned);
    Datum *slots = (Datum *) palloc(sizeof(Datum) * kMaxRunsPlanned);
    int64 handled = 0;
    for (uint64 i = 0; i < n; i++) {
        const Due &d = due[i];
        const char *canonical;
        pg_tz *tz = FindTimeZone(d.time_zone, &canonical);
        PlanResult plan;
        if (tz == nullptr) {
            ereport(WARNING, (errmsg("claimqueue: schedule \"%s\" skipped: unknown time zone "
                                     "\"%s\"", text_to_cstring(d.name), d.time_zone),
                              errhint("Replace it with schedule() and a known time zone.")));
            continue;
        }
        PlanSchedule(d.cron, tz, UnixUsecOf(d.next_run), UnixUsecOf(now), LateAfterUsec(),
                     d.catch_up, runs, &plan);
        if (plan.error[0] != '\0') {
            ereport(WARNING, (errmsg("claimqueue: schedule \"%s\" skipped: %s",
                                     text_to_cstring(d.name), plan.error),
                              errhint("Replace it with schedule().")));
            continue;
        }
        handled++;
        int64 last_job = 0;
        if (plan.nruns > 0) {
            for (int r = 0; r < plan.nruns; r++)
                slots[r] = TimestampTzGetDatum(TimestampOfUnixUsec(runs[r]));
            Datum insert[8] = {d.queue_id, d.payload, PointerGetDatum(d.name), d.priority,
                               d.max_attempts,
                               PointerGetDatum(construct_array(slots, plan.nruns, TIMESTAMPTZOID,
                                                               8, FLOAT8PASSBYVAL,
                                                               TYPALIGN_DOUBLE)),
                               TimestampTzGetDatum(now), CStringGetTextDatum(d.queue)};
            uint64 made = Execute(JobsDistributed() ? &kInsertScheduledNamed : &kInsertScheduled,
                                  insert, nullptr);
            for (uint64 j = 0; j < made; j++)
                last_job = Max(last_job, DatumGetInt64(ResultValue(j, 1)));
            *jobs += (int64) made;
            NoteJobsReady(d.queue, (int64) made, now);  // waiters wake at commit
            if (made > 0)
                CountTransition(DatumGetInt32(ResultValue(0, 2)), Transition::kEnqueue,
                                (int64) made);
        }
        if (plan.skipped_missed)
            ereport(LOG, (errmsg("claimqueue: schedule \"%s\" skipped slots missed since %s "
                                 "(catch_up %s)",
                                 text_to_cstring(d.name), timestamptz_to_str(d.next_run),
                                 d.catch_up)));
        Datum advance[4] = {PointerGetDatum(d.name),
                            TimestampTzGetDatum(TimestampOfUnixUsec(plan.next_usec)),
                            plan.nruns > 0 ? slots[plan.nruns - 1] : (Datum) 0, Int64GetDatum(last_job)};
        char nulls[5] = "    ";
        nulls[1] = plan.has_next ? ' ' : 'n';
        nulls[2] = plan.nruns > 0 ? ' ' : 'n';
        nulls[3] = plan.nruns > 0 ? ' ' : 'n';
        Execute(&kAdvanceSchedule, advance, nulls);
    }
    FinishSpi();
    return handled;
}

int64 RunDueSchedules(text *queue)
{
    ConnectSpi();  // the batches nest their own SPI connections inside this one
    if (queue)
        RequireQueueExists(queue);
    // Under Citus, the schedules of the queues of each shard on this node.
    int64 jobs = 0;
    (void) OnEachJobsTarget([queue, &jobs](const JobsTarget &target) {
        ArrayType *ids = QueueIdsOn(target);
        for (int64 n = kSqlFunctionBatch; n == kSqlFunctionBatch;)
            n = RunDueSchedulesBatch(queue, kSqlFunctionBatch, &jobs, ids);
        return (int64) 0;
    });
    FinishSpi();
    if (jobs > 0)
        ereport(LOG, (errmsg("claimqueue: enqueued %lld scheduled jobs", (long long) jobs)));
    return jobs;
}

}  // namespace claimqueue

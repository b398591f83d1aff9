// The reaper's plan for a due schedule (see schedule_plan.hpp).
#include "core/schedule_plan.hpp"

#include <string>
#include <utility>

#include "core/error.hpp"
#include "core/rules.hpp"

namespace claimqueue::schedule {

CatchUp ParseCatchUp(std::string_view text)
{
    if (text == "one")
        return CatchUp::kOne;
    if (text == "all")
        return CatchUp::kAll;
    if (text == "none")
        return CatchUp::kNone;
    throw Error(sqlstate::kInvalidParameterValue, "unknown catch_up " + rules::Quoted(text), {},
                "catch_up is one (one job for the slots missed while the server was down), "
                "all (one job per missed slot, at most " + std::to_string(kMaxCatchUpRuns) +
                    ") or none.");
}

const char *CatchUpName(CatchUp catch_up)
{
    switch (catch_up) {
    case CatchUp::kOne: return "one";
    case CatchUp::kAll: return "all";
    case CatchUp::kNone: return "none";
    }
    return "?";
}

void CheckScheduleName(std::string_view name)
{
    const char *kHint =
        "Schedule names are 1 to 63 bytes of lower-case letters, digits, '_', '.' and '-', "
        "starting with a letter, digit or '_'.";
    if (name.empty())
        throw Error(sqlstate::kInvalidParameterValue, "schedule name must not be empty", {},
                    kHint);
    if (name.size() > static_cast<size_t>(kMaxScheduleNameBytes))
        throw Error(sqlstate::kNameTooLong, "schedule name " + rules::Quoted(name) + " is too long",
                    "It is " + std::to_string(name.size()) + " bytes; the limit is " +
                        std::to_string(kMaxScheduleNameBytes) + " bytes.",
                    kHint);
    if (!rules::IsQueueNameSpelling(name))
        throw Error(sqlstate::kInvalidParameterValue,
                    "invalid schedule name " + rules::Quoted(name), {}, kHint);
}

RunPlan PlanRuns(const cron::Schedule &schedule, int64_t next_run_usec, int64_t now_usec,
                 int64_t late_after_usec, CatchUp catch_up, const zone::ZoneRules &zone)
{
    RunPlan plan;
    if (next_run_usec > now_usec) {
        plan.next_usec = next_run_usec;
        return plan;
    }
    // Slots are whole seconds, so one microsecond before the stored slot
    // makes the searches below include it.
    int64_t after = next_run_usec - 1;
    const int64_t missed_until = now_usec - late_after_usec;  // missed: slot <= this
    if (next_run_usec <= missed_until) {
        switch (catch_up) {
        case CatchUp::kAll: {
            cron::RunList missed =
                cron::RunsBetween(schedule, after, missed_until, zone, kMaxCatchUpRuns);
            plan.runs_usec = std::move(missed.runs_usec);
            plan.skipped_missed = missed.truncated;
            break;
        }
        case CatchUp::kOne: {
            plan.runs_usec.push_back(next_run_usec);
            const std::optional<int64_t> second = cron::NextRunUsec(schedule, next_run_usec, zone);
            plan.skipped_missed = second && *second <= missed_until;
            break;
        }
        case CatchUp::kNone:
            plan.skipped_missed = true;
            break;
        }
        after = missed_until;
    }
    cron::RunList on_time = cron::RunsBetween(schedule, after, now_usec, zone, kMaxRunsPerPass);
    plan.runs_usec.insert(plan.runs_usec.end(), on_time.runs_usec.begin(),
                          on_time.runs_usec.end());
    // Truncated on-time runs stay due: the next pass continues after the last one.
    plan.next_usec = cron::NextRunUsec(
        schedule, on_time.truncated ? on_time.runs_usec.back() : now_usec, zone);
    return plan;
}

}  // namespace claimqueue::schedule

// What the reaper does with a schedule that is due: which slots get a job
// now, which are skipped, and the schedule's next run. Pure C++ (no
// PostgreSQL), unit-tested; the engine (src/engine/schedules.cpp) runs the
// plan in one transaction with the schedule's row locked.
//
// A pass at `now` finds the due slots in [next_run, now]. A slot is ON TIME
// when the pass reaches it at most `late_after` after its time, and MISSED
// otherwise (the server was down, the reaper off or far behind):
//   * every on-time slot gets one job, whatever catch_up says, so a reaper
//     a few seconds late never drops a slot of "every 1 second";
//   * missed slots, by catch_up:
//       one   one job for all of them, carrying the first missed slot;
//       all   one job each, oldest first, at most kMaxCatchUpRuns; the rest
//             are skipped;
//       none  no job.
// At most kMaxRunsPerPass on-time jobs per schedule and pass: the rest stay
// due and the next pass takes them. Otherwise next_run becomes the first run
// after `now`, so no slot gets a second job.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/cron.hpp"
#include "core/time_zone.hpp"

namespace claimqueue::schedule {

// Documented limits (docs/recurring-jobs.md). Changing one is an API change.
inline constexpr int kMaxCatchUpRuns = 100;
inline constexpr int kMaxRunsPerPass = 1000;
inline constexpr int kMaxScheduleNameBytes = 63;

enum class CatchUp { kOne, kAll, kNone };

// "one", "all" or "none" (lower case); throws claimqueue::Error 22023 naming
// the value otherwise.
CatchUp ParseCatchUp(std::string_view text);
const char *CatchUpName(CatchUp catch_up);

// Throws claimqueue::Error (22023 or 42622) unless `name` is 1..63 bytes of
// [a-z0-9_.-] starting with a letter, digit or underscore (the queue rule).
void CheckScheduleName(std::string_view name);

struct RunPlan {
    std::vector<int64_t> runs_usec;     // slots that get a job now, earliest first
    bool skipped_missed = false;        // missed slots got no job of their own
    std::optional<int64_t> next_usec;   // the new next_run; nullopt: never again
};

// The plan for a schedule whose stored next run is `next_run_usec` (a slot),
// at `now_usec`. Nothing is due when next_run_usec > now_usec: no runs, and
// next_usec stays next_run_usec.
RunPlan PlanRuns(const cron::Schedule &schedule, int64_t next_run_usec, int64_t now_usec,
                 int64_t late_after_usec, CatchUp catch_up, const zone::ZoneRules &zone);

}  // namespace claimqueue::schedule

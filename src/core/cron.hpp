// Schedules for recurring jobs (issue 16), the pure part: the cron parser and
// the next-run computation. No PostgreSQL here; unit-tested with GoogleTest.
//
// API the engine calls
// --------------------
// Instants are int64 microseconds since 1970-01-01 00:00:00 UTC (Unix time;
// a TimestampTz plus 946684800 * 10^6). The engine supplies the schedule's
// time zone as a zone::ZoneRules (time_zone.hpp) built on pg_tz.
//
//   cron::Schedule s = cron::ParseSchedule(text);        // throws Error 22023
//   std::optional<int64_t> next = cron::NextRunUsec(s, after_usec, zone);
//   cron::RunList missed = cron::RunsBetween(s, after_usec, until_usec, zone, cap);
//
// * schedule(): parse (nothing is stored when it throws), then
//   next_run_at = NextRunUsec(s, now, zone).
// * The reaper, when next_run_at <= now: core/schedule_plan.hpp's PlanRuns()
//   (on-time slots, catch_up for the missed ones, the next run), built on
//   NextRunUsec() and RunsBetween(); each slot gives one job.
// * nullopt from NextRunUsec means "never again" (past kMaxYear).
//
// Grammar (case-insensitive; blanks are spaces and tabs, surrounding blanks
// ignored):
//   schedule  = fields | alias | interval
//   fields    = minute hour day-of-month month day-of-week   (5 fields)
//   field     = element *("," element)
//   element   = "*" ["/" step] | value ["-" value] ["/" step]
//   value     = digits | name       names: jan..dec (month), sun..sat (day-of-week)
//   alias     = @yearly | @annually | @monthly | @weekly | @daily | @midnight | @hourly
//   interval  = "every" digits unit  unit: second(s) | minute(s) | hour(s)
// Leading zeros are fine ("05"); names are the three-letter ones only.
// Ranges: minute 0-59, hour 0-23, day-of-month 1-31, month 1-12, day-of-week
// 0-7 with 0 and 7 both Sunday ("sun" may end a range: "mon-sun" = 1-7).
// Steps: "*/n" = first, first+n, ... of what "*" spans (day-of-week: 0-6);
// "a-b/n" = a, a+n, ... <= b; "a/n" = "a-last/n" (as robfig/cron, croniter
// and Quartz read it). A step is at most the span of "*" minus one: 59, 23,
// 30, 11 and 6, so "*/90" in minutes is refused with a hint to write
// "every 90 minutes". Ranges must not be reversed ("22-2" is refused with a
// hint to write "22-23,0-2").
// Aliases: @yearly = @annually = "0 0 1 1 *", @monthly = "0 0 1 * *",
// @weekly = "0 0 * * 0", @daily = @midnight = "0 0 * * *", @hourly = "0 * * * *".
//
// Day-of-month and day-of-week (Vixie cron's rule): a day field is
// UNRESTRICTED when its text starts with "*" ("*", "*/1", but also "*/2");
// otherwise it is restricted. When both are restricted a day matches if
// EITHER matches ("0 0 1,15 * fri": the 1st, the 15th and every Friday);
// otherwise a day must match both (the unrestricted one's set decides, so
// "0 0 */2 * mon" is odd-numbered Mondays, as in Vixie cron, cronie, pg_cron
// and robfig/cron). Following Vixie keeps a line copied from a crontab or
// pg_cron firing on the same days.
//
// Impossible dates are refused at parse time (22023): "0 0 30 2 *" names
// day-of-month "30" and month "2". Feb 29 is possible (leap years).
//
// Intervals ("every 30 seconds"): count 1 .. 24 hours' worth (86400 s,
// 1440 min, 24 h). Runs are in absolute time, unaffected by time zones and
// DST, and anchored at the Unix epoch: the runs are the instants that are a
// whole multiple of the interval after 1970-01-01 00:00:00 UTC. So the slots
// need no stored state, do not move when a schedule is replaced, and are the
// same on every server (a promoted standby computes the same ones); an
// interval dividing a day lands on round times ("every 15 minutes": :00,
// :15, :30, :45 UTC).
//
// Time zones and DST (cron fields and aliases): slots are wall-clock times in
// the schedule's zone, found by NextLocalSlot() and mapped to instants by
// zone::ResolveLocalTime(): a slot in a fall-back overlap runs once, at its
// first occurrence; a slot in a spring-forward gap runs at the first instant
// after the gap, and all the slots of one gap share that one run (which is
// also the run of a slot at the gap's end, e.g. 03:00 in Berlin). So no
// wall-clock slot runs twice, and one that does not exist is covered by the
// run at the gap's end instead of being dropped; the cost is that an hourly
// schedule pauses two hours at fall-back. Use zone 'UTC' or "every 1 hour"
// for a schedule that is even in absolute time.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/civil_time.hpp"
#include "core/time_zone.hpp"

namespace claimqueue::cron {

// Limits of the grammar and the search. Changing one is an API change.
inline constexpr int64_t kMaxIntervalSeconds = 86400;
// Searches end with this year: NextRunUsec() returns nullopt beyond it.
inline constexpr int64_t kMaxYear = 9999;

// A parsed schedule. For kCalendar, one bit per allowed value.
struct Schedule {
    enum class Kind { kCalendar, kInterval };
    Kind kind = Kind::kCalendar;

    uint64_t minutes = 0;        // bits 0..59
    uint32_t hours = 0;          // bits 0..23
    uint32_t days_of_month = 0;  // bits 1..31
    uint16_t months = 0;         // bits 1..12
    uint8_t days_of_week = 0;    // bits 0..6, 0 = Sunday (7 is folded into 0)
    // The field's text starts with '*' (see the OR rule above).
    bool day_of_month_unrestricted = false;
    bool day_of_week_unrestricted = false;

    int64_t interval_seconds = 0;  // kInterval: 1 .. kMaxIntervalSeconds
};

// Parses `text`. Throws claimqueue::Error 22023 whose message names the field
// and the bad value, e.g. `cron field "hour" value "25" is out of range 0-23`,
// with a hint where one helps.
Schedule ParseSchedule(std::string_view text);

// True when the wall-clock minute of `t` (seconds ignored) is a slot of a
// kCalendar schedule.
bool MatchesLocalMinute(const Schedule &schedule, const civil::CivilTime &t);

// The first slot of a kCalendar schedule strictly after wall-clock time
// `after` (second 0 of a matching minute), or nullopt past kMaxYear. Skips by
// field (month, then day, then hour, then minute), never minute by minute:
// the cost is a few steps per month searched plus a day scan within each
// matching month, so even "0 0 29 2 *" across 2100 (eight years) is cheap.
std::optional<civil::CivilTime> NextLocalSlot(const Schedule &schedule,
                                              const civil::CivilTime &after);

// The next run strictly after `after_usec`: for kCalendar the next slot in
// `zone` under the DST policy above, for kInterval the next multiple of the
// interval since the epoch (`zone` unused). nullopt when there is none
// before the end of kMaxYear.
std::optional<int64_t> NextRunUsec(const Schedule &schedule, int64_t after_usec,
                                   const zone::ZoneRules &zone);

// The runs in (after_usec, until_usec], earliest first, at most `max_runs`
// of them (none when max_runs < 1); `truncated` says that more runs fall in
// the span than were returned. Cost grows with the runs returned, not with
// the span, so a long outage with an "every 1 second" schedule is cheap.
struct RunList {
    std::vector<int64_t> runs_usec;
    bool truncated = false;
};
RunList RunsBetween(const Schedule &schedule, int64_t after_usec, int64_t until_usec,
                    const zone::ZoneRules &zone, int max_runs);

}  // namespace claimqueue::cron

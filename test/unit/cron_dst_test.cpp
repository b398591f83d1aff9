// Next runs in a time zone (NextRunUsec, RunsBetween): the DST policy at
// spring-forward gaps and fall-back overlaps in Berlin, New York, Lord Howe
// (half-hour shifts) and Apia (a skipped day), robfig/cron's DST vectors
// beside ours, and counts of runs over whole transition days.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/civil_time.hpp"
#include "core/cron.hpp"
#include "core/time_zone.hpp"
#include "fake_zones.hpp"

namespace {

using claimqueue::civil::CivilTime;
using claimqueue::cron::MatchesLocalMinute;
using claimqueue::cron::NextRunUsec;
using claimqueue::cron::ParseSchedule;
using claimqueue::cron::RunsBetween;
using claimqueue::cron::Schedule;
using claimqueue::test::Apia;
using claimqueue::test::Berlin;
using claimqueue::test::LordHowe;
using claimqueue::test::NewYork;
using claimqueue::test::TableZone;
using claimqueue::zone::ZoneRules;

constexpr int64_t kUsec = 1000000;

// The instant at which `zone`'s wall clock shows the given time with the
// given UTC offset ("+0200" is 2 hours east), in microseconds.
int64_t At(int64_t year, int month, int day, int hour, int minute, int offset_hhmm)
{
    CivilTime t;
    t.year = year;
    t.month = month;
    t.day = day;
    t.hour = hour;
    t.minute = minute;
    const int offset_seconds = (offset_hhmm / 100) * 3600 + (offset_hhmm % 100) * 60;
    return (claimqueue::civil::ToSeconds(t) - offset_seconds) * kUsec;
}

// An instant as the zone's wall clock shows it: "2024-03-31 03:00 +0200".
std::string Local(int64_t usec, const ZoneRules &zone)
{
    const int64_t seconds = claimqueue::civil::FloorDiv(usec, kUsec);
    const int offset = zone.UtcOffsetAt(seconds);
    const CivilTime t = claimqueue::civil::FromSeconds(seconds + offset);
    const int magnitude = offset < 0 ? -offset : offset;
    char buf[64];
    snprintf(buf, sizeof buf, "%04lld-%02d-%02d %02d:%02d %c%02d%02d",
             static_cast<long long>(t.year), t.month, t.day, t.hour, t.minute,
             offset < 0 ? '-' : '+', magnitude / 3600, magnitude % 3600 / 60);
    return buf;
}

std::string Next(const std::string &spec, int64_t after_usec, const ZoneRules &zone)
{
    const std::optional<int64_t> next = NextRunUsec(ParseSchedule(spec), after_usec, zone);
    return next ? Local(*next, zone) : "never";
}

// The first `count` runs after `after_usec`, each strictly after the one before.
std::vector<std::string> Runs(const std::string &spec, int64_t after_usec, const ZoneRules &zone,
                              int count)
{
    const Schedule s = ParseSchedule(spec);
    std::vector<std::string> out;
    int64_t at = after_usec;
    for (int i = 0; i < count; i++) {
        const std::optional<int64_t> next = NextRunUsec(s, at, zone);
        if (!next)
            break;
        EXPECT_GT(*next, at);
        at = *next;
        out.push_back(Local(at, zone));
    }
    return out;
}

// Runs in (after, until], with no cap that matters.
std::vector<int64_t> AllRuns(const std::string &spec, int64_t after_usec, int64_t until_usec,
                             const ZoneRules &zone)
{
    const auto list = RunsBetween(ParseSchedule(spec), after_usec, until_usec, zone, 100000);
    EXPECT_FALSE(list.truncated);
    return list.runs_usec;
}

using Strings = std::vector<std::string>;

// ------------------------------------------------------------------ Berlin
// 2024-03-31: 02:00 CET -> 03:00 CEST; 2024-10-27: 03:00 CEST -> 02:00 CET.

TEST(BerlinSpringForward, SlotInTheGapRunsWhenTheGapEnds)
{
    EXPECT_EQ(Runs("30 2 * * *", At(2024, 3, 30, 2, 30, 100), Berlin(), 2),
              (Strings{"2024-03-31 03:00 +0200", "2024-04-01 02:30 +0200"}));
}

TEST(BerlinSpringForward, SlotsOfOneGapShareOneRun)
{
    // 02:00, 02:15, 02:30 and 02:45 never happen; the run at 03:00 covers
    // them and the 03:00 slot itself.
    EXPECT_EQ(Runs("*/15 * * * *", At(2024, 3, 31, 1, 30, 100), Berlin(), 4),
              (Strings{"2024-03-31 01:45 +0100", "2024-03-31 03:00 +0200",
                       "2024-03-31 03:15 +0200", "2024-03-31 03:30 +0200"}));
    EXPECT_EQ(Runs("0,30 2,3 * * *", At(2024, 3, 31, 1, 0, 100), Berlin(), 3),
              (Strings{"2024-03-31 03:00 +0200", "2024-03-31 03:30 +0200",
                       "2024-04-01 02:00 +0200"}));
}

TEST(BerlinSpringForward, RunsOnTheShortDay)
{
    // Local midnight to midnight, a day of 23 hours.
    const int64_t day_start = At(2024, 3, 31, 0, 0, 100) - 1;
    const int64_t day_end = At(2024, 4, 1, 0, 0, 200) - 1;
    EXPECT_EQ(AllRuns("*/15 * * * *", day_start, day_end, Berlin()).size(), 96u - 4u);
    EXPECT_EQ(AllRuns("0 * * * *", day_start, day_end, Berlin()).size(), 23u);
    EXPECT_EQ(AllRuns("* * * * *", day_start, day_end, Berlin()).size(), 23u * 60u);
    EXPECT_EQ(AllRuns("0 2 * * *", day_start, day_end, Berlin()).size(), 1u);
}

TEST(BerlinFallBack, SlotInTheOverlapRunsOnceAtItsFirstOccurrence)
{
    EXPECT_EQ(Runs("30 2 * * *", At(2024, 10, 26, 3, 0, 200), Berlin(), 2),
              (Strings{"2024-10-27 02:30 +0200", "2024-10-28 02:30 +0100"}));
}

TEST(BerlinFallBack, TheRepeatedHourIsNotRunAgain)
{
    EXPECT_EQ(Runs("*/15 * * * *", At(2024, 10, 27, 2, 30, 200), Berlin(), 3),
              (Strings{"2024-10-27 02:45 +0200", "2024-10-27 03:00 +0100",
                       "2024-10-27 03:15 +0100"}));
    EXPECT_EQ(Runs("0 * * * *", At(2024, 10, 27, 1, 30, 200), Berlin(), 3),
              (Strings{"2024-10-27 02:00 +0200", "2024-10-27 03:00 +0100",
                       "2024-10-27 04:00 +0100"}));
}

TEST(BerlinFallBack, AfterAnInstantInTheSecondPass)
{
    // 02:10 CET, the second time 02:10 is shown: 02:15 ran (as 02:15 CEST).
    const int64_t second_pass = At(2024, 10, 27, 2, 10, 100);
    EXPECT_EQ(Next("*/15 * * * *", second_pass, Berlin()), "2024-10-27 03:00 +0100");
    EXPECT_EQ(Next("20 2 * * *", second_pass, Berlin()), "2024-10-28 02:20 +0100");
    EXPECT_EQ(Next("5 3 * * *", second_pass, Berlin()), "2024-10-27 03:05 +0100");
}

TEST(BerlinFallBack, RunsOnTheLongDay)
{
    // A day of 25 hours: still one run per wall-clock slot.
    const int64_t day_start = At(2024, 10, 27, 0, 0, 200) - 1;
    const int64_t day_end = At(2024, 10, 28, 0, 0, 100) - 1;
    EXPECT_EQ(AllRuns("*/15 * * * *", day_start, day_end, Berlin()).size(), 96u);
    EXPECT_EQ(AllRuns("0 * * * *", day_start, day_end, Berlin()).size(), 24u);
    EXPECT_EQ(AllRuns("* * * * *", day_start, day_end, Berlin()).size(), 24u * 60u);
    EXPECT_EQ(AllRuns("30 2 * * *", day_start, day_end, Berlin()).size(), 1u);
}

// A nightly job in the hour that DST moves runs once a day, every day of
// the year: never twice, never skipped.
TEST(Berlin, NightlyInTheMovingHourRunsOncePerDay)
{
    for (const char *spec : {"30 2 * * *", "0 2 * * *", "59 2 * * *"}) {
        const std::vector<int64_t> runs =
            AllRuns(spec, At(2024, 1, 1, 0, 0, 100), At(2025, 1, 1, 0, 0, 100), Berlin());
        ASSERT_EQ(runs.size(), 366u) << spec;
        for (size_t i = 1; i < runs.size(); i++) {
            const int64_t gap_hours = (runs[i] - runs[i - 1]) / (3600 * kUsec);
            ASSERT_GE(gap_hours, 23) << spec << " " << Local(runs[i], Berlin());
            ASSERT_LE(gap_hours, 25) << spec << " " << Local(runs[i], Berlin());
        }
    }
}

// ---------------------------------------------------------------- New York
//
// robfig/cron's DST vectors (spec_test.go, TestNext, America/New_York 2012).
// robfig skips a slot in the gap and runs a slot in the overlap twice; our
// policy runs the first and runs the second once. Where the results differ,
// robfig's is in the comment.

TEST(NewYork, RobfigSpringForwardVectors)
{
    const ZoneRules &ny = NewYork();
    // robfig: 2013-03-11 02:30 -0400 (2012's slot skipped).
    EXPECT_EQ(Next("30 2 11 Mar *", At(2012, 3, 11, 0, 0, -500), ny), "2012-03-11 03:00 -0400");
    // Hourly.
    EXPECT_EQ(Next("0 * * * *", At(2012, 3, 11, 0, 0, -500), ny), "2012-03-11 01:00 -0500");
    EXPECT_EQ(Next("0 * * * *", At(2012, 3, 11, 1, 0, -500), ny), "2012-03-11 03:00 -0400");
    EXPECT_EQ(Next("0 * * * *", At(2012, 3, 11, 3, 0, -400), ny), "2012-03-11 04:00 -0400");
    EXPECT_EQ(Next("0 * * * *", At(2012, 3, 11, 4, 0, -400), ny), "2012-03-11 05:00 -0400");
    // 1am nightly.
    EXPECT_EQ(Next("0 1 * * *", At(2012, 3, 11, 0, 0, -500), ny), "2012-03-11 01:00 -0500");
    EXPECT_EQ(Next("0 1 * * *", At(2012, 3, 11, 1, 0, -500), ny), "2012-03-12 01:00 -0400");
    // 2am nightly. robfig: 2012-03-12 02:00 -0400 (skipped).
    EXPECT_EQ(Next("0 2 * * *", At(2012, 3, 11, 0, 0, -500), ny), "2012-03-11 03:00 -0400");
}

TEST(NewYork, RobfigFallBackVectors)
{
    const ZoneRules &ny = NewYork();
    EXPECT_EQ(Next("30 2 04 Nov *", At(2012, 11, 4, 0, 0, -400), ny), "2012-11-04 02:30 -0500");
    // robfig: 2012-11-04 01:30 -0500 (the second 01:30). Ours ran at 01:30 -0400.
    EXPECT_EQ(Next("30 1 04 Nov *", At(2012, 11, 4, 1, 45, -400), ny), "2013-11-04 01:30 -0500");
    // Hourly. robfig: 01:00 -0500 after 01:00 -0400.
    EXPECT_EQ(Next("0 * * * *", At(2012, 11, 4, 0, 0, -400), ny), "2012-11-04 01:00 -0400");
    EXPECT_EQ(Next("0 * * * *", At(2012, 11, 4, 1, 0, -400), ny), "2012-11-04 02:00 -0500");
    EXPECT_EQ(Next("0 * * * *", At(2012, 11, 4, 1, 0, -500), ny), "2012-11-04 02:00 -0500");
    // 1am nightly (robfig runs it twice: 01:00 -0400 and 01:00 -0500).
    EXPECT_EQ(Next("0 1 * * *", At(2012, 11, 4, 0, 0, -400), ny), "2012-11-04 01:00 -0400");
    EXPECT_EQ(Next("0 1 * * *", At(2012, 11, 4, 1, 0, -400), ny), "2012-11-05 01:00 -0500");
    EXPECT_EQ(Next("0 1 * * *", At(2012, 11, 4, 1, 0, -500), ny), "2012-11-05 01:00 -0500");
    // 2am and 3am nightly.
    EXPECT_EQ(Next("0 2 * * *", At(2012, 11, 4, 0, 0, -400), ny), "2012-11-04 02:00 -0500");
    EXPECT_EQ(Next("0 2 * * *", At(2012, 11, 4, 2, 0, -500), ny), "2012-11-05 02:00 -0500");
    EXPECT_EQ(Next("0 3 * * *", At(2012, 11, 4, 0, 0, -400), ny), "2012-11-04 03:00 -0500");
    EXPECT_EQ(Next("0 3 * * *", At(2012, 11, 4, 3, 0, -500), ny), "2012-11-05 03:00 -0500");
}

TEST(NewYork, Transitions2024)
{
    const ZoneRules &ny = NewYork();
    EXPECT_EQ(Runs("*/20 2 * * *", At(2024, 3, 10, 1, 0, -500), ny, 2),
              (Strings{"2024-03-10 03:00 -0400", "2024-03-11 02:00 -0400"}));
    EXPECT_EQ(Runs("*/20 1 * * *", At(2024, 11, 3, 0, 0, -400), ny, 4),
              (Strings{"2024-11-03 01:00 -0400", "2024-11-03 01:20 -0400",
                       "2024-11-03 01:40 -0400", "2024-11-04 01:00 -0500"}));
}

// --------------------------------------------------------------- Lord Howe
// 2024-10-06: 02:00 -> 02:30 (+1030 -> +1100); 2024-04-07: 02:00 -> 01:30.

TEST(LordHowe, HalfHourGap)
{
    EXPECT_EQ(Runs("0 2 * * *", At(2024, 10, 5, 12, 0, 1030), LordHowe(), 2),
              (Strings{"2024-10-06 02:30 +1100", "2024-10-07 02:00 +1100"}));
    EXPECT_EQ(Runs("15,45 2 * * *", At(2024, 10, 6, 1, 0, 1030), LordHowe(), 3),
              (Strings{"2024-10-06 02:30 +1100", "2024-10-06 02:45 +1100",
                       "2024-10-07 02:15 +1100"}));
}

TEST(LordHowe, HalfHourOverlap)
{
    EXPECT_EQ(Runs("*/10 1 * * *", At(2024, 4, 7, 1, 25, 1100), LordHowe(), 4),
              (Strings{"2024-04-07 01:30 +1100", "2024-04-07 01:40 +1100",
                       "2024-04-07 01:50 +1100", "2024-04-08 01:00 +1030"}));
}

// ------------------------------------------------------------------- Apia
// 2011-12-30 never happened: 2011-12-29 23:59:59 -1000 was followed by
// 2011-12-31 00:00:00 +1400.

TEST(Apia, ASkippedDayGetsOneRun)
{
    EXPECT_EQ(Runs("0 12 * * *", At(2011, 12, 29, 13, 0, -1000), Apia(), 2),
              (Strings{"2011-12-31 00:00 +1400", "2011-12-31 12:00 +1400"}));
    EXPECT_EQ(Next("0 0 30 12 *", At(2011, 12, 1, 0, 0, -1000), Apia()), "2011-12-31 00:00 +1400");
    // 48 half-hour slots of the missing day share one run.
    EXPECT_EQ(Runs("*/30 * * * *", At(2011, 12, 29, 23, 0, -1000), Apia(), 3),
              (Strings{"2011-12-29 23:30 -1000", "2011-12-31 00:00 +1400",
                       "2011-12-31 00:30 +1400"}));
}

// ---------------------------------------------- brute force, every zone

// The policy restated as a definition and checked by brute force: a slot
// (a matching wall-clock minute) runs at the first instant the clock shows
// it or, if the clock never shows it, at the first instant it shows a later
// time. The reference walks every minute within 36 hours of a transition.
class WallClock {
public:
    WallClock(const ZoneRules &zone, int64_t transition)
    {
        const int64_t from = transition - 36 * 3600;
        const int64_t to = transition + 36 * 3600;
        std::map<int64_t, int64_t> first_shown;  // wall-clock minute -> first instant
        std::vector<std::pair<int64_t, int64_t>> shown;  // (instant, wall clock) by instant
        for (int64_t u = from; u <= to; u += 60) {
            const int64_t local = u + zone.UtcOffsetAt(u);
            first_shown.emplace(local, u);
            shown.push_back({u, local});
        }
        // Slots far enough inside the window that their runs are in it too.
        const int64_t first_local = from + 6 * 3600 + zone.UtcOffsetAt(from);
        const int64_t last_local = to - 6 * 3600 + zone.UtcOffsetAt(to);
        size_t later = 0;  // first instant showing a time after `local`
        for (int64_t local = first_local; local <= last_local; local += 60) {
            while (shown[later].second <= local)
                later++;
            const auto it = first_shown.find(local);
            runs_.push_back({local, it != first_shown.end() ? it->second : shown[later].first});
        }
    }

    // The earliest run after `after` (seconds) of a slot within the window,
    // or nullopt if none up to `until`.
    std::optional<int64_t> NextRun(const Schedule &s, int64_t after, int64_t until) const
    {
        std::optional<int64_t> best;
        for (const auto &[local, run] : runs_) {
            if (run > after && run <= until && (!best || run < *best) &&
                MatchesLocalMinute(s, claimqueue::civil::FromSeconds(local)))
                best = run;
        }
        return best;
    }

private:
    std::vector<std::pair<int64_t, int64_t>> runs_;  // (wall-clock minute, its run)
};

std::string RandomTimeField(std::mt19937 &rng, int max)
{
    const int a = static_cast<int>(rng() % (max + 1));
    const int b = a + static_cast<int>(rng() % (max + 1 - a));
    switch (rng() % 6) {
    case 0:
        return "*";
    case 1:
        return "*/" + std::to_string(1 + rng() % max);
    case 2:
        return std::to_string(a);
    case 3:
        return std::to_string(a) + "," + std::to_string(b);
    case 4:
        return std::to_string(a) + "-" + std::to_string(b);
    default:
        return std::to_string(a) + "-" + std::to_string(b) + "/" + std::to_string(1 + rng() % 5);
    }
}

TEST(DstPolicy, AgreesWithTheWallClockDefinitionAroundEveryTransition)
{
    struct Case {
        const TableZone *zone;
        int64_t transition;
    };
    const Case cases[] = {
        {&Berlin(), 1711846800},   {&Berlin(), 1729990800},   {&NewYork(), 1331449200},
        {&NewYork(), 1352008800},  {&LordHowe(), 1712415600}, {&LordHowe(), 1728142200},
        {&Apia(), 1325239200},
    };
    std::mt19937 rng(20241027);
    int compared = 0;
    for (const Case &c : cases) {
        const WallClock clock(*c.zone, c.transition);
        const int64_t until = c.transition + 24 * 3600;
        for (int i = 0; i < 60; i++) {
            const std::string dow = rng() % 4 == 0 ? std::to_string(rng() % 7) : "*";
            const std::string spec =
                RandomTimeField(rng, 59) + " " + RandomTimeField(rng, 23) + " * * " + dow;
            const Schedule s = ParseSchedule(spec);
            int64_t after = c.transition - 24 * 3600 + static_cast<int64_t>(rng() % (30 * 3600));
            // Follow the chain of runs through the transition.
            for (int k = 0; k < 8; k++) {
                const std::optional<int64_t> expected = clock.NextRun(s, after, until);
                const std::optional<int64_t> actual = NextRunUsec(s, after * kUsec, *c.zone);
                ASSERT_TRUE(actual.has_value()) << spec;
                if (!expected) {
                    ASSERT_GT(*actual, until * kUsec) << spec << " after " << after;
                    break;
                }
                ASSERT_EQ(Local(*actual, *c.zone), Local(*expected * kUsec, *c.zone))
                    << spec << " after " << Local(after * kUsec, *c.zone);
                after = *expected;
                compared++;
            }
        }
    }
    EXPECT_GT(compared, 2000);
}

// ---------------------------------------------------------------- intervals

TEST(Intervals, AnchoredAtTheEpoch)
{
    const claimqueue::zone::FixedOffsetZone utc;
    const Schedule every30 = ParseSchedule("every 30 seconds");
    EXPECT_EQ(NextRunUsec(every30, 0, utc), 30 * kUsec);
    EXPECT_EQ(NextRunUsec(every30, 30 * kUsec - 1, utc), 30 * kUsec);
    EXPECT_EQ(NextRunUsec(every30, 30 * kUsec, utc), 60 * kUsec);  // strictly after
    EXPECT_EQ(NextRunUsec(every30, -1, utc), 0);
    EXPECT_EQ(NextRunUsec(every30, -30 * kUsec, utc), 0);
    EXPECT_EQ(NextRunUsec(every30, -31 * kUsec, utc), -30 * kUsec);
    EXPECT_EQ(NextRunUsec(ParseSchedule("every 7 seconds"), 1000 * kUsec, utc), 1001 * kUsec);
    // Intervals that divide a day land on round times of day (UTC).
    const int64_t new_year = At(2024, 1, 1, 0, 0, 0);
    EXPECT_EQ(Local(*NextRunUsec(ParseSchedule("every 90 minutes"), new_year, utc), utc),
              "2024-01-01 01:30 +0000");
    EXPECT_EQ(Local(*NextRunUsec(ParseSchedule("every 24 hours"), new_year + 1, utc), utc),
              "2024-01-02 00:00 +0000");
    EXPECT_EQ(Local(*NextRunUsec(ParseSchedule("every 15 minutes"), new_year + 1, utc), utc),
              "2024-01-01 00:15 +0000");
}

// In absolute time: an hourly interval keeps 3600 s between runs through
// both of Berlin's transitions, whatever the wall clock shows.
TEST(Intervals, UnaffectedByDst)
{
    const Schedule hourly = ParseSchedule("every 1 hour");
    for (int64_t start : {At(2024, 3, 30, 22, 0, 100), At(2024, 10, 26, 22, 0, 200)}) {
        const auto list = RunsBetween(hourly, start, start + 8 * 3600 * kUsec, Berlin(), 100);
        ASSERT_EQ(list.runs_usec.size(), 8u);
        for (size_t i = 1; i < list.runs_usec.size(); i++)
            EXPECT_EQ(list.runs_usec[i] - list.runs_usec[i - 1], 3600 * kUsec);
    }
    EXPECT_EQ(Runs("every 1 hour", At(2024, 3, 31, 1, 30, 100), Berlin(), 2),
              (Strings{"2024-03-31 03:00 +0200", "2024-03-31 04:00 +0200"}));
    EXPECT_EQ(Runs("every 1 hour", At(2024, 10, 27, 2, 30, 200), Berlin(), 2),
              (Strings{"2024-10-27 02:00 +0100", "2024-10-27 03:00 +0100"}));
}

TEST(Intervals, HandBuiltScheduleWithoutAnIntervalNeverRuns)
{
    Schedule s;
    s.kind = Schedule::Kind::kInterval;
    EXPECT_FALSE(NextRunUsec(s, 0, Berlin()).has_value());
}

// --------------------------------------------------------- end of the range

TEST(NextRunUsec, EndsWithYear9999)
{
    const claimqueue::zone::FixedOffsetZone utc;
    const int64_t last_second = At(9999, 12, 31, 23, 59, 0) + 59 * kUsec;
    const Schedule every_second = ParseSchedule("every 1 second");
    EXPECT_EQ(NextRunUsec(every_second, last_second - kUsec, utc), last_second);
    EXPECT_FALSE(NextRunUsec(every_second, last_second, utc).has_value());
    EXPECT_FALSE(NextRunUsec(every_second, INT64_MAX, utc).has_value());
    EXPECT_EQ(Next("59 23 31 12 *", At(9999, 12, 31, 23, 58, 0), utc), "9999-12-31 23:59 +0000");
    EXPECT_EQ(Next("59 23 31 12 *", At(9999, 12, 31, 23, 59, 0), utc), "never");
    EXPECT_EQ(Next("* * * * *", INT64_MAX, utc), "never");
    // The far past works too.
    EXPECT_TRUE(NextRunUsec(ParseSchedule("* * * * *"), INT64_MIN, utc).has_value());
    EXPECT_TRUE(NextRunUsec(every_second, INT64_MIN, utc).has_value());
}

// ------------------------------------------------------------- RunsBetween

TEST(RunsBetween, HalfOpenSpan)
{
    const claimqueue::zone::FixedOffsetZone utc;
    const Schedule hourly = ParseSchedule("0 * * * *");
    const int64_t t0 = At(2024, 5, 1, 0, 0, 0);
    const int64_t hour = 3600 * kUsec;
    auto list = RunsBetween(hourly, t0, t0 + 3 * hour, utc, 10);
    EXPECT_EQ(list.runs_usec, (std::vector<int64_t>{t0 + hour, t0 + 2 * hour, t0 + 3 * hour}));
    EXPECT_FALSE(list.truncated);
    list = RunsBetween(hourly, t0, t0 + 3 * hour, utc, 3);  // cap reached exactly
    EXPECT_EQ(list.runs_usec.size(), 3u);
    EXPECT_FALSE(list.truncated);
    list = RunsBetween(hourly, t0 - 1, t0 + hour - 1, utc, 10);
    EXPECT_EQ(list.runs_usec, std::vector<int64_t>{t0});
    list = RunsBetween(hourly, t0 + 1, t0 + hour - 1, utc, 10);
    EXPECT_TRUE(list.runs_usec.empty());
    EXPECT_FALSE(list.truncated);
}

TEST(RunsBetween, EmptyOrBackwardSpan)
{
    const claimqueue::zone::FixedOffsetZone utc;
    const Schedule minutely = ParseSchedule("* * * * *");
    const int64_t t0 = At(2024, 5, 1, 0, 0, 0);
    for (int64_t until : {t0, t0 - 1, t0 - 3600 * kUsec}) {
        const auto list = RunsBetween(minutely, t0, until, utc, 10);
        EXPECT_TRUE(list.runs_usec.empty());
        EXPECT_FALSE(list.truncated);
    }
}

TEST(RunsBetween, CapsAndSaysSo)
{
    const claimqueue::zone::FixedOffsetZone utc;
    const Schedule hourly = ParseSchedule("0 * * * *");
    const int64_t t0 = At(2024, 5, 1, 0, 0, 0);
    auto list = RunsBetween(hourly, t0, t0 + 3 * 3600 * kUsec, utc, 2);
    EXPECT_EQ(list.runs_usec.size(), 2u);
    EXPECT_EQ(list.runs_usec.front(), t0 + 3600 * kUsec);  // the earliest are kept
    EXPECT_TRUE(list.truncated);
    for (int cap : {0, -1}) {
        list = RunsBetween(hourly, t0, t0 + 3 * 3600 * kUsec, utc, cap);
        EXPECT_TRUE(list.runs_usec.empty());
        EXPECT_TRUE(list.truncated);
    }
    // A year of an every-second schedule costs only the runs returned.
    const int64_t year = 366 * 86400 * kUsec;
    list = RunsBetween(ParseSchedule("every 1 second"), t0, t0 + year, utc, 100);
    ASSERT_EQ(list.runs_usec.size(), 100u);
    EXPECT_EQ(list.runs_usec.front(), t0 + kUsec);
    EXPECT_EQ(list.runs_usec.back(), t0 + 100 * kUsec);
    EXPECT_TRUE(list.truncated);
    list = RunsBetween(ParseSchedule("* * * * *"), t0, t0 + 10 * year, utc, 1000);
    EXPECT_EQ(list.runs_usec.size(), 1000u);
    EXPECT_TRUE(list.truncated);
}

// Catching up over a week that contains Berlin's spring-forward day: one run
// per day, the gap day's at 03:00 CEST.
TEST(RunsBetween, CatchUpAcrossAGap)
{
    const auto list = RunsBetween(ParseSchedule("30 2 * * *"), At(2024, 3, 28, 12, 0, 100),
                                  At(2024, 4, 3, 12, 0, 200), Berlin(), 50);
    Strings runs;
    for (int64_t run : list.runs_usec)
        runs.push_back(Local(run, Berlin()));
    EXPECT_EQ(runs, (Strings{"2024-03-29 02:30 +0100", "2024-03-30 02:30 +0100",
                             "2024-03-31 03:00 +0200", "2024-04-01 02:30 +0200",
                             "2024-04-02 02:30 +0200", "2024-04-03 02:30 +0200"}));
    EXPECT_FALSE(list.truncated);
}

}  // namespace

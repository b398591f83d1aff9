// The next-slot search on wall-clock time: robfig/cron's published vectors,
// the day-of-month/day-of-week rule, month ends, leap years, year rollover,
// the end of the search range, and a randomized comparison with a brute-force
// reference.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>

#include "core/civil_time.hpp"
#include "core/cron.hpp"
#include "core/time_zone.hpp"
#include "test_util.hpp"

namespace {

using claimqueue::civil::CivilTime;
using claimqueue::cron::MatchesLocalMinute;
using claimqueue::cron::NextLocalSlot;
using claimqueue::cron::NextRunUsec;
using claimqueue::cron::ParseSchedule;
using claimqueue::cron::Schedule;

CivilTime At(int64_t year, int month, int day, int hour = 0, int minute = 0, int second = 0)
{
    CivilTime t;
    t.year = year;
    t.month = month;
    t.day = day;
    t.hour = hour;
    t.minute = minute;
    t.second = second;
    return t;
}

std::string Show(const CivilTime &t)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%04lld-%02d-%02d %02d:%02d:%02d", static_cast<long long>(t.year),
             t.month, t.day, t.hour, t.minute, t.second);
    return buf;
}

std::string Show(const std::optional<CivilTime> &t)
{
    return t ? Show(*t) : "never";
}

// The next slot of `spec` after `after`, as text (easy to read in failures).
std::string Next(const std::string &spec, const CivilTime &after)
{
    return Show(NextLocalSlot(ParseSchedule(spec), after));
}

// ------------------------------------------------------ robfig/cron vectors
//
// From robfig/cron (MIT licence), spec_test.go, TestActivation and TestNext:
// the same instants and expectations, rewritten for five fields (robfig's
// leading seconds field dropped, its "?" written "*"). robfig's DST vectors
// are in cron_dst_test.cpp; its "unsatisfiable" vectors are refused here at
// parse time (cron_parse_test.cpp, DatesThatNeverOccur).

TEST(RobfigVectors, Activation)
{
    struct Case {
        CivilTime time;
        const char *spec;
        bool expected;
    };
    const Case cases[] = {
        // Every fifteen minutes.
        {At(2012, 7, 9, 15, 0), "0/15 * * * *", true},
        {At(2012, 7, 9, 15, 45), "0/15 * * * *", true},
        {At(2012, 7, 9, 15, 40), "0/15 * * * *", false},
        // Every fifteen minutes, starting at 5 minutes.
        {At(2012, 7, 9, 15, 5), "5/15 * * * *", true},
        {At(2012, 7, 9, 15, 20), "5/15 * * * *", true},
        {At(2012, 7, 9, 15, 50), "5/15 * * * *", true},
        // Named months.
        {At(2012, 7, 15, 15, 0), "0/15 * * Jul *", true},
        {At(2012, 7, 15, 15, 0), "0/15 * * Jun *", false},
        // Everything set.
        {At(2012, 7, 15, 8, 30), "30 08 * Jul Sun", true},
        {At(2012, 7, 15, 8, 30), "30 08 15 Jul *", true},
        {At(2012, 7, 16, 8, 30), "30 08 * Jul Sun", false},
        {At(2012, 7, 16, 8, 30), "30 08 15 Jul *", false},
        // Predefined schedules.
        {At(2012, 7, 9, 15, 0), "@hourly", true},
        {At(2012, 7, 9, 15, 4), "@hourly", false},
        {At(2012, 7, 9, 15, 0), "@daily", false},
        {At(2012, 7, 9, 0, 0), "@daily", true},
        {At(2012, 7, 9, 0, 0), "@weekly", false},
        {At(2012, 7, 8, 0, 0), "@weekly", true},
        {At(2012, 7, 8, 1, 0), "@weekly", false},
        {At(2012, 7, 8, 0, 0), "@monthly", false},
        {At(2012, 7, 1, 0, 0), "@monthly", true},
        // Both day fields restricted: either may match.
        {At(2012, 7, 15, 0, 0), "* * 1,15 * Sun", true},
        {At(2012, 6, 15, 0, 0), "* * 1,15 * Sun", true},
        {At(2012, 8, 1, 0, 0), "* * 1,15 * Sun", true},
        // One starts with a star: both must match.
        {At(2012, 7, 15, 0, 0), "* * * * Mon", false},
        {At(2012, 7, 15, 0, 0), "* * */10 * Sun", false},
        {At(2012, 7, 9, 0, 0), "* * 1,15 * *", false},
        {At(2012, 7, 15, 0, 0), "* * 1,15 * *", true},
        {At(2012, 7, 15, 0, 0), "* * */2 * Sun", true},
    };
    for (const Case &c : cases) {
        const Schedule s = ParseSchedule(c.spec);
        EXPECT_EQ(MatchesLocalMinute(s, c.time), c.expected) << c.spec << " at " << Show(c.time);
        // robfig's own check: the next slot after one second before is that time.
        CivilTime before = c.time;
        before.second = -1;
        const bool fires = Show(NextLocalSlot(s, before)) == Show(c.time);
        EXPECT_EQ(fires, c.expected) << c.spec << " at " << Show(c.time);
    }
}

TEST(RobfigVectors, Next)
{
    struct Case {
        CivilTime after;
        const char *spec;
        CivilTime expected;
    };
    const Case cases[] = {
        // Simple cases.
        {At(2012, 7, 9, 14, 45), "0/15 * * * *", At(2012, 7, 9, 15, 0)},
        {At(2012, 7, 9, 14, 59), "0/15 * * * *", At(2012, 7, 9, 15, 0)},
        {At(2012, 7, 9, 14, 59, 59), "0/15 * * * *", At(2012, 7, 9, 15, 0)},
        // Wrap around hours.
        {At(2012, 7, 9, 15, 45), "20-35/15 * * * *", At(2012, 7, 9, 16, 20)},
        // Wrap around days (robfig's seconds field "15/35" dropped: :20:15 becomes :20).
        {At(2012, 7, 9, 23, 46), "*/15 * * * *", At(2012, 7, 10, 0, 0)},
        {At(2012, 7, 9, 23, 45), "20-35/15 * * * *", At(2012, 7, 10, 0, 20)},
        {At(2012, 7, 9, 23, 35, 51), "20-35/15 * * * *", At(2012, 7, 10, 0, 20)},
        {At(2012, 7, 9, 23, 35, 51), "20-35/15 1/2 * * *", At(2012, 7, 10, 1, 20)},
        {At(2012, 7, 9, 23, 35, 51), "20-35/15 10-12 * * *", At(2012, 7, 10, 10, 20)},
        {At(2012, 7, 9, 23, 35, 51), "20-35/15 1/2 */2 * *", At(2012, 7, 11, 1, 20)},
        {At(2012, 7, 9, 23, 35, 51), "20-35/15 * 9-20 * *", At(2012, 7, 10, 0, 20)},
        {At(2012, 7, 9, 23, 35, 51), "20-35/15 * 9-20 Jul *", At(2012, 7, 10, 0, 20)},
        // Wrap around months.
        {At(2012, 7, 9, 23, 35), "0 0 9 Apr-Oct *", At(2012, 8, 9)},
        {At(2012, 7, 9, 23, 35), "0 0 */5 Apr,Aug,Oct Mon", At(2012, 8, 6)},
        {At(2012, 7, 9, 23, 35), "0 0 */5 Oct Mon", At(2012, 10, 1)},
        // Wrap around years.
        {At(2012, 7, 9, 23, 35), "0 0 * Feb Mon", At(2013, 2, 4)},
        {At(2012, 7, 9, 23, 35), "0 0 * Feb Mon/2", At(2013, 2, 1)},
        // Wrap around minute, hour, day, month and year.
        {At(2012, 12, 31, 23, 59, 45), "* * * * *", At(2013, 1, 1)},
        // Leap year.
        {At(2012, 7, 9, 23, 35), "0 0 29 Feb *", At(2016, 2, 29)},
    };
    for (const Case &c : cases)
        EXPECT_EQ(Next(c.spec, c.after), Show(c.expected)) << c.spec << " after " << Show(c.after);
}

// ---------------------------------------------------------- our own cases

TEST(NextLocalSlot, StrictlyAfter)
{
    EXPECT_EQ(Next("* * * * *", At(2024, 5, 1, 12, 0, 0)), Show(At(2024, 5, 1, 12, 1)));
    EXPECT_EQ(Next("* * * * *", At(2024, 5, 1, 11, 59, 59)), Show(At(2024, 5, 1, 12, 0)));
    EXPECT_EQ(Next("0 12 * * *", At(2024, 5, 1, 12, 0, 0)), Show(At(2024, 5, 2, 12, 0)));
    EXPECT_EQ(Next("0 12 * * *", At(2024, 5, 1, 11, 59, 59)), Show(At(2024, 5, 1, 12, 0)));
    EXPECT_EQ(Next("0 12 * * *", At(2024, 5, 1, 12, 0, 1)), Show(At(2024, 5, 2, 12, 0)));
}

TEST(NextLocalSlot, UnnormalizedStartIsCarried)
{
    // 2024-02-30 is 2024-03-01.
    EXPECT_EQ(Next("0 0 * * *", At(2024, 2, 30, 0, 0)), Show(At(2024, 3, 2)));
}

// crontab(5): "30 4 1,15 * 5" runs at 4:30 on the 1st and 15th of each month
// plus every Friday. March 2024 began on a Friday.
TEST(NextLocalSlot, BothDayFieldsRestrictedMeansEither)
{
    const Schedule s = ParseSchedule("30 4 1,15 * 5");
    std::vector<std::string> runs;
    CivilTime at = At(2024, 2, 29, 5, 0);
    for (int i = 0; i < 9; i++) {
        at = *NextLocalSlot(s, at);
        runs.push_back(Show(at));
    }
    const std::vector<std::string> expected = {
        "2024-03-01 04:30:00", "2024-03-08 04:30:00", "2024-03-15 04:30:00",
        "2024-03-22 04:30:00", "2024-03-29 04:30:00", "2024-04-01 04:30:00",
        "2024-04-05 04:30:00", "2024-04-12 04:30:00", "2024-04-15 04:30:00",
    };
    EXPECT_EQ(runs, expected);
}

// Vixie cron: "*/2" starts with '*', so it is unrestricted and both fields
// must match (odd-numbered Mondays); "1-31/2" is restricted (odd days or Mondays).
TEST(NextLocalSlot, StarStepDayFieldMeansBoth)
{
    // January 2024 began on a Monday.
    EXPECT_EQ(Next("0 0 */2 * mon", At(2024, 1, 1, 0, 0)), Show(At(2024, 1, 15)));
    EXPECT_EQ(Next("0 0 */2 * mon", At(2024, 1, 15, 0, 0)), Show(At(2024, 1, 29)));
    EXPECT_EQ(Next("0 0 */2 * mon", At(2024, 1, 29, 0, 0)), Show(At(2024, 2, 5)));
    EXPECT_EQ(Next("0 0 1-31/2 * mon", At(2024, 1, 1, 0, 0)), Show(At(2024, 1, 3)));
    EXPECT_EQ(Next("0 0 1-31/2 * mon", At(2024, 1, 7, 0, 0)), Show(At(2024, 1, 8)));
    // A restricted day-of-month with "*/3" day-of-week: a 10th that is a
    // Sunday, Wednesday or Saturday: in 2024 the 10th of January (Wednesday),
    // February (Saturday) and March (Sunday), then April (Wednesday).
    EXPECT_EQ(Next("0 0 10 * */3", At(2024, 1, 1)), Show(At(2024, 1, 10)));
    EXPECT_EQ(Next("0 0 10 * */3", At(2024, 1, 10, 0, 0)), Show(At(2024, 2, 10)));
    EXPECT_EQ(Next("0 0 10 * */3", At(2024, 2, 10, 0, 0)), Show(At(2024, 3, 10)));
    EXPECT_EQ(Next("0 0 10 * */3", At(2024, 3, 10, 0, 0)), Show(At(2024, 4, 10)));
    EXPECT_EQ(Next("0 0 10 * */3", At(2024, 4, 10, 0, 0)), Show(At(2024, 7, 10)));
}

TEST(NextLocalSlot, DayOfWeekSevenIsSunday)
{
    // 2024-06-02 was a Sunday.
    EXPECT_EQ(Next("0 0 * * 7", At(2024, 5, 31)), Show(At(2024, 6, 2)));
    EXPECT_EQ(Next("0 0 * * 0", At(2024, 5, 31)), Show(At(2024, 6, 2)));
    EXPECT_EQ(Next("0 0 * * sun", At(2024, 5, 31)), Show(At(2024, 6, 2)));
    EXPECT_EQ(Next("0 0 * * sat-sun", At(2024, 6, 2, 0, 0)), Show(At(2024, 6, 8)));
}

TEST(NextLocalSlot, WorkingHours)
{
    // Friday 2024-06-07 17:00 -> Monday 09:00.
    EXPECT_EQ(Next("0 9-17 * * mon-fri", At(2024, 6, 7, 17, 0)), Show(At(2024, 6, 10, 9, 0)));
    EXPECT_EQ(Next("0 9-17 * * mon-fri", At(2024, 6, 10, 9, 0)), Show(At(2024, 6, 10, 10, 0)));
    EXPECT_EQ(Next("*/20 9-17 * * 1-5", At(2024, 6, 10, 17, 40)), Show(At(2024, 6, 11, 9, 0)));
}

TEST(NextLocalSlot, MonthEnds)
{
    const Schedule s = ParseSchedule("0 0 31 * *");
    std::vector<std::string> runs;
    CivilTime at = At(2024, 1, 31, 0, 0);
    for (int i = 0; i < 7; i++) {
        at = *NextLocalSlot(s, at);
        runs.push_back(Show(at));
    }
    const std::vector<std::string> expected = {
        "2024-03-31 00:00:00", "2024-05-31 00:00:00", "2024-07-31 00:00:00",
        "2024-08-31 00:00:00", "2024-10-31 00:00:00", "2024-12-31 00:00:00",
        "2025-01-31 00:00:00",
    };
    EXPECT_EQ(runs, expected);
    EXPECT_EQ(Next("0 0 30 * *", At(2024, 1, 30, 0, 0)), Show(At(2024, 3, 30)));
    EXPECT_EQ(Next("59 23 28-31 * *", At(2023, 2, 28, 23, 59)), Show(At(2023, 3, 28, 23, 59)));
    EXPECT_EQ(Next("59 23 28-31 * *", At(2024, 2, 28, 23, 59)), Show(At(2024, 2, 29, 23, 59)));
}

TEST(NextLocalSlot, LeapDays)
{
    EXPECT_EQ(Next("0 0 29 2 *", At(2023, 3, 1)), Show(At(2024, 2, 29)));
    EXPECT_EQ(Next("0 0 29 2 *", At(2024, 2, 29, 0, 0)), Show(At(2028, 2, 29)));
    // 2100 is not a leap year: eight years between leap days.
    EXPECT_EQ(Next("0 0 29 2 *", At(2096, 3, 1)), Show(At(2104, 2, 29)));
    // 2000 is.
    EXPECT_EQ(Next("0 0 29 2 *", At(1997, 1, 1)), Show(At(2000, 2, 29)));
    // Leap day on a Sunday, both fields must match ("*/6" is 0,6 and unrestricted):
    // 2032-02-29 is a Sunday.
    EXPECT_EQ(Next("0 0 29 2 */6", At(2024, 3, 1)), Show(At(2032, 2, 29)));
    // Either: the next Monday in February, or the 29th.
    EXPECT_EQ(Next("0 0 29 2 mon", At(2023, 3, 1)), Show(At(2024, 2, 5)));
}

TEST(NextLocalSlot, YearRollover)
{
    EXPECT_EQ(Next("0 0 1 1 *", At(2024, 6, 1)), Show(At(2025, 1, 1)));
    EXPECT_EQ(Next("0 0 1 1 *", At(2024, 12, 31, 23, 59, 59)), Show(At(2025, 1, 1)));
    EXPECT_EQ(Next("@yearly", At(2025, 1, 1, 0, 0)), Show(At(2026, 1, 1)));
    EXPECT_EQ(Next("59 23 31 12 *", At(2024, 12, 31, 23, 59)), Show(At(2025, 12, 31, 23, 59)));
    EXPECT_EQ(Next("0 0 * jan mon", At(2024, 1, 29, 0, 0)), Show(At(2025, 1, 6)));
    EXPECT_EQ(Next("@monthly", At(2024, 12, 15)), Show(At(2025, 1, 1)));
}

TEST(NextLocalSlot, Aliases)
{
    // 2024-06-05 was a Wednesday.
    const CivilTime wed = At(2024, 6, 5, 10, 30);
    EXPECT_EQ(Next("@hourly", wed), Show(At(2024, 6, 5, 11, 0)));
    EXPECT_EQ(Next("@daily", wed), Show(At(2024, 6, 6)));
    EXPECT_EQ(Next("@midnight", wed), Show(At(2024, 6, 6)));
    EXPECT_EQ(Next("@weekly", wed), Show(At(2024, 6, 9)));
    EXPECT_EQ(Next("@monthly", wed), Show(At(2024, 7, 1)));
    EXPECT_EQ(Next("@annually", wed), Show(At(2025, 1, 1)));
}

TEST(NextLocalSlot, EndsWithYear9999)
{
    EXPECT_EQ(Next("0 0 1 1 *", At(9998, 6, 1)), Show(At(9999, 1, 1)));
    EXPECT_EQ(Next("59 23 31 12 *", At(9999, 1, 1)), Show(At(9999, 12, 31, 23, 59)));
    EXPECT_EQ(Next("0 0 1 1 *", At(9999, 6, 1)), "never");
    EXPECT_EQ(Next("* * * * *", At(9999, 12, 31, 23, 59)), "never");
    // The next leap day after 9996 would be in 10000.
    EXPECT_EQ(Next("0 0 29 2 *", At(9996, 3, 1)), "never");
}

TEST(NextLocalSlot, IntervalsHaveNoWallClockSlots)
{
    const Schedule s = ParseSchedule("every 10 seconds");
    EXPECT_FALSE(NextLocalSlot(s, At(2024, 1, 1)).has_value());
    EXPECT_FALSE(MatchesLocalMinute(s, At(2024, 1, 1)));
}

// Consecutive slots of an every-minute schedule over a leap year: one per
// minute, 527040 of them, and nothing skipped.
TEST(NextLocalSlot, EveryMinuteOfALeapYear)
{
    const Schedule s = ParseSchedule("* * * * *");
    CivilTime at = At(2023, 12, 31, 23, 59);
    const int64_t first = claimqueue::civil::ToSeconds(at);
    int64_t count = 0;
    for (;;) {
        const CivilTime next = *NextLocalSlot(s, at);
        if (next.year > 2024)
            break;
        ASSERT_EQ(claimqueue::civil::ToSeconds(next) - claimqueue::civil::ToSeconds(at), 60);
        at = next;
        count++;
    }
    EXPECT_EQ(count, 366 * 1440);
    EXPECT_EQ(claimqueue::civil::ToSeconds(at) - first, 366 * 86400);
}

// ------------------------------------------------- randomized, brute force

// A field of random elements: "*", "*/n", "a", "a-b", "a-b/n", "a/n"; half
// of the fields are one or two plain values, so that slots are far apart.
std::string RandomField(std::mt19937 &rng, int min, int max, int star_max)
{
    auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng() % (hi - lo + 1)); };
    if (pick(0, 1) == 0) {
        const int a = pick(min, max);
        return pick(0, 1) == 0 ? std::to_string(a) : std::to_string(a) + "," + std::to_string(pick(min, max));
    }
    std::string out;
    const int elements = pick(1, 3);
    for (int e = 0; e < elements; e++) {
        if (e > 0)
            out += ',';
        const int step = pick(1, star_max - min);
        const int a = pick(min, max);
        const int b = pick(a, max);
        switch (pick(0, 6)) {
        case 0:
            out += "*";
            break;
        case 1:
            out += "*/" + std::to_string(step);
            break;
        case 2:
        case 3:
            out += std::to_string(a);
            break;
        case 4:
            out += std::to_string(a) + "-" + std::to_string(b);
            break;
        case 5:
            out += std::to_string(a) + "-" + std::to_string(b) + "/" + std::to_string(step);
            break;
        default:
            out += std::to_string(a) + "/" + std::to_string(step);
            break;
        }
    }
    return out;
}

// The reference: the rule restated from the header, minute by minute within
// each day, day by day for up to 40 years.
std::optional<CivilTime> BruteForceNext(const Schedule &s, const CivilTime &after)
{
    using namespace claimqueue::civil;
    const int64_t start = FloorDiv(ToSeconds(after), 60) * 60 + 60;
    const int64_t first_day = FloorDiv(start, kSecondsPerDay);
    for (int64_t day = first_day; day < first_day + 40 * 366; day++) {
        const CivilTime date = CivilFromDays(day);
        const bool dom = s.days_of_month >> date.day & 1;
        const bool dow = s.days_of_week >> DayOfWeek(day) & 1;
        const bool day_ok = (!s.day_of_month_unrestricted && !s.day_of_week_unrestricted)
                                ? (dom || dow)
                                : (dom && dow);
        if (!(s.months >> date.month & 1) || !day_ok)
            continue;
        for (int minute_of_day = 0; minute_of_day < 1440; minute_of_day++) {
            const int64_t t = day * kSecondsPerDay + minute_of_day * 60;
            if (t < start)
                continue;
            if ((s.hours >> (minute_of_day / 60) & 1) && (s.minutes >> (minute_of_day % 60) & 1))
                return FromSeconds(t);
        }
    }
    return std::nullopt;
}

TEST(NextLocalSlot, AgreesWithBruteForceOnRandomSchedules)
{
    std::mt19937 rng(20240331);
    int compared = 0;
    int refused = 0;
    int long_jumps = 0;  // next slot more than 31 days ahead
    for (int i = 0; i < 400; i++) {
        const std::string spec = RandomField(rng, 0, 59, 59) + " " + RandomField(rng, 0, 23, 23) +
                                 " " + RandomField(rng, 1, 31, 31) + " " +
                                 RandomField(rng, 1, 12, 12) + " " + RandomField(rng, 0, 7, 6);
        Schedule s;
        try {
            s = ParseSchedule(spec);
        } catch (const claimqueue::Error &) {
            refused++;  // a date that never occurs
            continue;
        }
        const claimqueue::zone::FixedOffsetZone utc;
        CivilTime at = claimqueue::civil::FromSeconds(
            static_cast<int64_t>(rng() % (30u * 365 * 86400)) + INT64_C(946684800));
        for (int k = 0; k < 5; k++) {
            const std::optional<CivilTime> expected = BruteForceNext(s, at);
            const std::optional<CivilTime> actual = NextLocalSlot(s, at);
            ASSERT_EQ(Show(actual), Show(expected)) << spec << " after " << Show(at);
            ASSERT_TRUE(actual.has_value()) << spec;
            ASSERT_TRUE(MatchesLocalMinute(s, *actual)) << spec;
            // In UTC the instant is the wall-clock time read as Unix time.
            const int64_t after_usec = claimqueue::civil::ToSeconds(at) * 1000000 + 250000;
            ASSERT_EQ(NextRunUsec(s, after_usec, utc),
                      claimqueue::civil::ToSeconds(*actual) * 1000000)
                << spec;
            if (claimqueue::civil::ToSeconds(*actual) - claimqueue::civil::ToSeconds(at) >
                31 * 86400)
                long_jumps++;
            at = *actual;
            compared++;
        }
    }
    EXPECT_GT(compared, 1500);
    EXPECT_GT(long_jumps, 100);
    EXPECT_LT(refused, 100);
}

}  // namespace

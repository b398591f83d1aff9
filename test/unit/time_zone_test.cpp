// The DST policy: ResolveLocalTime() on unique, repeated (fall-back) and
// skipped (spring-forward) wall-clock times, in four zones with known
// transitions, plus the invariants it keeps around every transition.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/civil_time.hpp"
#include "core/error.hpp"
#include "core/time_zone.hpp"
#include "fake_zones.hpp"
#include "test_util.hpp"

namespace {

using claimqueue::civil::CivilTime;
using claimqueue::civil::ToSeconds;
using claimqueue::test::Apia;
using claimqueue::test::Berlin;
using claimqueue::test::LordHowe;
using claimqueue::test::NewYork;
using claimqueue::test::TableZone;
using namespace claimqueue::zone;

// Seconds of a civil time: wall-clock "local seconds", or Unix time when the
// civil time is read as UTC.
int64_t Seconds(int64_t year, int month, int day, int hour, int minute, int second = 0)
{
    CivilTime t;
    t.year = year;
    t.month = month;
    t.day = day;
    t.hour = hour;
    t.minute = minute;
    t.second = second;
    return ToSeconds(t);
}

void ExpectResolves(const ZoneRules &zone, int64_t local, int64_t utc, LocalTimeKind kind)
{
    const ResolvedTime r = ResolveLocalTime(local, zone);
    EXPECT_EQ(r.utc_seconds, utc) << "local " << local;
    EXPECT_EQ(static_cast<int>(r.kind), static_cast<int>(kind)) << "local " << local;
}

TEST(FixedOffsetZone, ShiftsByItsOffset)
{
    const FixedOffsetZone utc;
    const FixedOffsetZone india(5 * 3600 + 1800);
    EXPECT_EQ(LocalSecondsAt(1000, utc), 1000);
    EXPECT_EQ(LocalSecondsAt(1000, india), 1000 + 19800);
    ExpectResolves(utc, 1000, 1000, LocalTimeKind::kUnique);
    ExpectResolves(india, 1000 + 19800, 1000, LocalTimeKind::kUnique);
    ExpectResolves(FixedOffsetZone(-kMaxUtcOffsetSeconds), 0, kMaxUtcOffsetSeconds,
                   LocalTimeKind::kUnique);
}

TEST(LocalSecondsAt, RefusesAnOffsetOfADayOrMore)
{
    const FixedOffsetZone too_far(86400);
    auto err = claimqueue::test::CatchError([&] { LocalSecondsAt(0, too_far); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->sqlstate(), "XX000");
    EXPECT_STREQ(err->what(), "time zone UTC offset 86400 seconds is out of range");
    EXPECT_CQ_ERROR(ResolveLocalTime(0, FixedOffsetZone(-86400)), "XX000");
}

TEST(ResolveLocalTime, BerlinSpringForwardGapRunsAtTheGapsEnd)
{
    const ZoneRules &z = Berlin();
    const int64_t gap_end = 1711846800;  // 2024-03-31 01:00 UTC = 03:00 CEST
    ExpectResolves(z, Seconds(2024, 3, 31, 1, 59, 59), gap_end - 1, LocalTimeKind::kUnique);
    ExpectResolves(z, Seconds(2024, 3, 31, 2, 0), gap_end, LocalTimeKind::kSkipped);
    ExpectResolves(z, Seconds(2024, 3, 31, 2, 30), gap_end, LocalTimeKind::kSkipped);
    ExpectResolves(z, Seconds(2024, 3, 31, 2, 59, 59), gap_end, LocalTimeKind::kSkipped);
    ExpectResolves(z, Seconds(2024, 3, 31, 3, 0), gap_end, LocalTimeKind::kUnique);
    ExpectResolves(z, Seconds(2024, 3, 31, 3, 30), gap_end + 1800, LocalTimeKind::kUnique);
}

TEST(ResolveLocalTime, BerlinFallBackOverlapTakesTheFirstOccurrence)
{
    const ZoneRules &z = Berlin();
    // 02:00-02:59:59 happens in CEST (from 00:00 UTC) and again in CET (from 01:00 UTC).
    ExpectResolves(z, Seconds(2024, 10, 27, 1, 59, 59), Seconds(2024, 10, 26, 23, 59, 59),
                   LocalTimeKind::kUnique);
    ExpectResolves(z, Seconds(2024, 10, 27, 2, 0), Seconds(2024, 10, 27, 0, 0),
                   LocalTimeKind::kRepeated);
    ExpectResolves(z, Seconds(2024, 10, 27, 2, 30), Seconds(2024, 10, 27, 0, 30),
                   LocalTimeKind::kRepeated);
    ExpectResolves(z, Seconds(2024, 10, 27, 2, 59, 59), Seconds(2024, 10, 27, 0, 59, 59),
                   LocalTimeKind::kRepeated);
    ExpectResolves(z, Seconds(2024, 10, 27, 3, 0), Seconds(2024, 10, 27, 2, 0),
                   LocalTimeKind::kUnique);
}

TEST(ResolveLocalTime, NewYorkGapAndOverlap)
{
    const ZoneRules &z = NewYork();
    // 2024-03-10: 02:00 EST -> 03:00 EDT at 07:00 UTC.
    ExpectResolves(z, Seconds(2024, 3, 10, 1, 59), Seconds(2024, 3, 10, 6, 59),
                   LocalTimeKind::kUnique);
    ExpectResolves(z, Seconds(2024, 3, 10, 2, 0), Seconds(2024, 3, 10, 7, 0),
                   LocalTimeKind::kSkipped);
    ExpectResolves(z, Seconds(2024, 3, 10, 2, 45), Seconds(2024, 3, 10, 7, 0),
                   LocalTimeKind::kSkipped);
    ExpectResolves(z, Seconds(2024, 3, 10, 3, 0), Seconds(2024, 3, 10, 7, 0),
                   LocalTimeKind::kUnique);
    // 2024-11-03: 02:00 EDT -> 01:00 EST at 06:00 UTC; 01:00-01:59 twice.
    ExpectResolves(z, Seconds(2024, 11, 3, 0, 59), Seconds(2024, 11, 3, 4, 59),
                   LocalTimeKind::kUnique);
    ExpectResolves(z, Seconds(2024, 11, 3, 1, 0), Seconds(2024, 11, 3, 5, 0),
                   LocalTimeKind::kRepeated);
    ExpectResolves(z, Seconds(2024, 11, 3, 1, 30), Seconds(2024, 11, 3, 5, 30),
                   LocalTimeKind::kRepeated);
    ExpectResolves(z, Seconds(2024, 11, 3, 2, 0), Seconds(2024, 11, 3, 7, 0),
                   LocalTimeKind::kUnique);
}

TEST(ResolveLocalTime, LordHoweHalfHourShifts)
{
    const ZoneRules &z = LordHowe();
    // 2024-10-06: 02:00 +10:30 -> 02:30 +11 at 2024-10-05 15:30 UTC.
    ExpectResolves(z, Seconds(2024, 10, 6, 1, 59), Seconds(2024, 10, 5, 15, 29),
                   LocalTimeKind::kUnique);
    ExpectResolves(z, Seconds(2024, 10, 6, 2, 0), Seconds(2024, 10, 5, 15, 30),
                   LocalTimeKind::kSkipped);
    ExpectResolves(z, Seconds(2024, 10, 6, 2, 29, 59), Seconds(2024, 10, 5, 15, 30),
                   LocalTimeKind::kSkipped);
    ExpectResolves(z, Seconds(2024, 10, 6, 2, 30), Seconds(2024, 10, 5, 15, 30),
                   LocalTimeKind::kUnique);
    // 2024-04-07: 02:00 +11 -> 01:30 +10:30 at 2024-04-06 15:00 UTC; 01:30-01:59 twice.
    ExpectResolves(z, Seconds(2024, 4, 7, 1, 29), Seconds(2024, 4, 6, 14, 29),
                   LocalTimeKind::kUnique);
    ExpectResolves(z, Seconds(2024, 4, 7, 1, 30), Seconds(2024, 4, 6, 14, 30),
                   LocalTimeKind::kRepeated);
    ExpectResolves(z, Seconds(2024, 4, 7, 1, 59), Seconds(2024, 4, 6, 14, 59),
                   LocalTimeKind::kRepeated);
    ExpectResolves(z, Seconds(2024, 4, 7, 2, 0), Seconds(2024, 4, 6, 15, 30),
                   LocalTimeKind::kUnique);
}

TEST(ResolveLocalTime, ApiaSkippedAWholeDay)
{
    const ZoneRules &z = Apia();
    const int64_t jump = 1325239200;  // 2011-12-30 10:00 UTC = 2011-12-31 00:00 +14
    ExpectResolves(z, Seconds(2011, 12, 29, 23, 59, 59), jump - 1, LocalTimeKind::kUnique);
    ExpectResolves(z, Seconds(2011, 12, 30, 0, 0), jump, LocalTimeKind::kSkipped);
    ExpectResolves(z, Seconds(2011, 12, 30, 12, 0), jump, LocalTimeKind::kSkipped);
    ExpectResolves(z, Seconds(2011, 12, 30, 23, 59, 59), jump, LocalTimeKind::kSkipped);
    ExpectResolves(z, Seconds(2011, 12, 31, 0, 0), jump, LocalTimeKind::kUnique);
    ExpectResolves(z, Seconds(2011, 12, 31, 9, 0), jump + 9 * 3600, LocalTimeKind::kUnique);
}

// Every wall-clock second within three hours of each transition: the result
// shows that time (unique, repeated) or is the transition itself (skipped);
// repeated times take the earlier instant; and the mapping never goes back.
TEST(ResolveLocalTime, InvariantsAroundEveryTransition)
{
    struct Case {
        const TableZone *zone;
        int64_t transition;
    };
    const Case cases[] = {
        {&Berlin(), 1711846800}, {&Berlin(), 1729990800}, {&NewYork(), 1331449200},
        {&NewYork(), 1352008800}, {&LordHowe(), 1712415600}, {&LordHowe(), 1728142200},
        {&Apia(), 1325239200},
    };
    for (const Case &c : cases) {
        const ZoneRules &z = *c.zone;
        const int64_t old_offset = z.UtcOffsetAt(c.transition - 1);
        const int64_t new_offset = z.UtcOffsetAt(c.transition);
        const int64_t around = 3 * 3600;
        int64_t previous = INT64_MIN;
        int skipped = 0;
        int repeated = 0;
        for (int64_t local = c.transition + old_offset - around;
             local <= c.transition + new_offset + around; local++) {
            const ResolvedTime r = ResolveLocalTime(local, z);
            ASSERT_GE(r.utc_seconds, previous) << "local " << local;
            previous = r.utc_seconds;
            switch (r.kind) {
            case LocalTimeKind::kUnique:
                ASSERT_EQ(LocalSecondsAt(r.utc_seconds, z), local);
                break;
            case LocalTimeKind::kRepeated:
                repeated++;
                ASSERT_EQ(LocalSecondsAt(r.utc_seconds, z), local);
                // The other occurrence is later and shows the same time.
                ASSERT_EQ(LocalSecondsAt(r.utc_seconds + (old_offset - new_offset), z), local);
                ASSERT_LT(r.utc_seconds, c.transition);
                break;
            case LocalTimeKind::kSkipped:
                skipped++;
                ASSERT_EQ(r.utc_seconds, c.transition);
                ASSERT_GT(LocalSecondsAt(r.utc_seconds, z), local);
                ASSERT_LT(LocalSecondsAt(r.utc_seconds - 1, z), local);
                break;
            }
        }
        // The gap or overlap is exactly the offset change long.
        if (new_offset > old_offset) {
            EXPECT_EQ(skipped, new_offset - old_offset) << "transition " << c.transition;
            EXPECT_EQ(repeated, 0);
        } else {
            EXPECT_EQ(repeated, old_offset - new_offset) << "transition " << c.transition;
            EXPECT_EQ(skipped, 0);
        }
    }
}

}  // namespace

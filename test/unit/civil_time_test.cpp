// Gregorian calendar arithmetic: leap years, month lengths, day counts,
// weekdays and the seconds <-> civil time conversion.
#include <gtest/gtest.h>

#include <cstdint>

#include "core/civil_time.hpp"

namespace {

using namespace claimqueue::civil;

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

TEST(FloorDiv, RoundsTowardMinusInfinity)
{
    EXPECT_EQ(FloorDiv(7, 2), 3);
    EXPECT_EQ(FloorDiv(6, 2), 3);
    EXPECT_EQ(FloorDiv(0, 60), 0);
    EXPECT_EQ(FloorDiv(-1, 60), -1);
    EXPECT_EQ(FloorDiv(-60, 60), -1);
    EXPECT_EQ(FloorDiv(-61, 60), -2);
}

TEST(IsLeapYear, GregorianRule)
{
    EXPECT_TRUE(IsLeapYear(2024));
    EXPECT_TRUE(IsLeapYear(2000));   // divisible by 400
    EXPECT_TRUE(IsLeapYear(2400));
    EXPECT_TRUE(IsLeapYear(1996));
    EXPECT_TRUE(IsLeapYear(0));      // 1 BC, proleptic
    EXPECT_TRUE(IsLeapYear(-4));
    EXPECT_FALSE(IsLeapYear(2023));
    EXPECT_FALSE(IsLeapYear(1900));  // divisible by 100, not 400
    EXPECT_FALSE(IsLeapYear(2100));
    EXPECT_FALSE(IsLeapYear(2200));
    EXPECT_FALSE(IsLeapYear(-1));
}

TEST(DaysInMonth, EveryMonthOfALeapAndACommonYear)
{
    const int common[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    for (int month = 1; month <= 12; month++) {
        EXPECT_EQ(DaysInMonth(2023, month), common[month - 1]) << "month " << month;
        EXPECT_EQ(DaysInMonth(2024, month), month == 2 ? 29 : common[month - 1])
            << "month " << month;
    }
    EXPECT_EQ(DaysInMonth(1900, 2), 28);
    EXPECT_EQ(DaysInMonth(2000, 2), 29);
    EXPECT_EQ(DaysInMonth(2100, 2), 28);
}

TEST(DaysFromCivil, KnownDates)
{
    EXPECT_EQ(DaysFromCivil(1970, 1, 1), 0);
    EXPECT_EQ(DaysFromCivil(1970, 1, 2), 1);
    EXPECT_EQ(DaysFromCivil(1969, 12, 31), -1);
    EXPECT_EQ(DaysFromCivil(2000, 1, 1), 10957);   // PostgreSQL's epoch
    EXPECT_EQ(DaysFromCivil(2000, 3, 1), 11017);   // after a 400-year leap day
    EXPECT_EQ(DaysFromCivil(1, 1, 1), -719162);
    EXPECT_EQ(DaysFromCivil(9999, 12, 31), 2932896);
}

TEST(DaysFromCivil, MonthsAndDaysCarryOver)
{
    EXPECT_EQ(DaysFromCivil(2024, 13, 1), DaysFromCivil(2025, 1, 1));
    EXPECT_EQ(DaysFromCivil(2024, 0, 1), DaysFromCivil(2023, 12, 1));
    EXPECT_EQ(DaysFromCivil(2024, -11, 1), DaysFromCivil(2023, 1, 1));
    EXPECT_EQ(DaysFromCivil(2024, 2, 30), DaysFromCivil(2024, 3, 1));
    EXPECT_EQ(DaysFromCivil(2023, 2, 29), DaysFromCivil(2023, 3, 1));
    EXPECT_EQ(DaysFromCivil(2024, 1, 0), DaysFromCivil(2023, 12, 31));
}

// Every day from 1600 to 2400 round-trips and follows its predecessor.
TEST(CivilFromDays, RoundTripsAndCountsEveryDay)
{
    const int64_t first = DaysFromCivil(1600, 1, 1);
    const int64_t last = DaysFromCivil(2400, 12, 31);
    CivilTime previous = CivilFromDays(first - 1);
    EXPECT_EQ(previous, At(1599, 12, 31));
    for (int64_t days = first; days <= last; days++) {
        const CivilTime t = CivilFromDays(days);
        ASSERT_EQ(DaysFromCivil(t.year, t.month, t.day), days);
        ASSERT_GE(t.day, 1);
        ASSERT_LE(t.day, DaysInMonth(t.year, t.month));
        if (t.day == 1) {
            ASSERT_EQ(previous.day, DaysInMonth(previous.year, previous.month));
            ASSERT_EQ(t.month, previous.month == 12 ? 1 : previous.month + 1);
        } else {
            ASSERT_EQ(t.day, previous.day + 1);
        }
        previous = t;
    }
}

TEST(CivilFromDays, FarFromTheEpoch)
{
    EXPECT_EQ(CivilFromDays(-719162), At(1, 1, 1));
    EXPECT_EQ(CivilFromDays(2932896), At(9999, 12, 31));
    EXPECT_EQ(CivilFromDays(DaysFromCivil(-4712, 1, 1)), At(-4712, 1, 1));
    EXPECT_EQ(CivilFromDays(DaysFromCivil(294276, 12, 31)), At(294276, 12, 31));
}

TEST(DayOfWeek, KnownWeekdays)
{
    EXPECT_EQ(DayOfWeek(0), 4);                                // 1970-01-01 Thursday
    EXPECT_EQ(DayOfWeek(-1), 3);                               // 1969-12-31 Wednesday
    EXPECT_EQ(DayOfWeek(DaysFromCivil(2000, 1, 1)), 6);        // Saturday
    EXPECT_EQ(DayOfWeek(DaysFromCivil(2024, 2, 29)), 4);       // Thursday
    EXPECT_EQ(DayOfWeek(DaysFromCivil(2012, 7, 15)), 0);       // Sunday
    EXPECT_EQ(DayOfWeek(DaysFromCivil(2012, 7, 9)), 1);        // Monday
    EXPECT_EQ(DayOfWeek(DaysFromCivil(1582, 10, 15)), 5);      // Friday, first Gregorian day
}

TEST(ToSeconds, UnixTimeOfKnownInstants)
{
    EXPECT_EQ(ToSeconds(At(1970, 1, 1)), 0);
    EXPECT_EQ(ToSeconds(At(1969, 12, 31, 23, 59, 59)), -1);
    EXPECT_EQ(ToSeconds(At(2001, 9, 9, 1, 46, 40)), 1000000000);
    EXPECT_EQ(ToSeconds(At(2038, 1, 19, 3, 14, 8)), INT64_C(2147483648));
    EXPECT_EQ(ToSeconds(At(2024, 3, 31, 1, 0, 0)), INT64_C(1711846800));
}

TEST(ToSeconds, CarriesUnnormalizedFields)
{
    EXPECT_EQ(ToSeconds(At(2024, 12, 31, 23, 59, 60)), ToSeconds(At(2025, 1, 1)));
    EXPECT_EQ(ToSeconds(At(2024, 2, 28, 24, 0, 0)), ToSeconds(At(2024, 2, 29)));
    EXPECT_EQ(ToSeconds(At(2024, 1, 1, 0, -1, 0)), ToSeconds(At(2023, 12, 31, 23, 59, 0)));
}

TEST(FromSeconds, InverseOfToSeconds)
{
    EXPECT_EQ(FromSeconds(-1), At(1969, 12, 31, 23, 59, 59));
    EXPECT_EQ(FromSeconds(1000000000), At(2001, 9, 9, 1, 46, 40));
    for (int64_t s = -200000; s <= 200000; s += 997)
        ASSERT_EQ(ToSeconds(FromSeconds(s)), s);
    // Every second of a leap day.
    const int64_t leap_day = ToSeconds(At(2024, 2, 29));
    for (int64_t s = leap_day; s < leap_day + kSecondsPerDay; s++) {
        const CivilTime t = FromSeconds(s);
        ASSERT_EQ(t.month, 2);
        ASSERT_EQ(t.day, 29);
        ASSERT_EQ(ToSeconds(t), s);
    }
}

TEST(CivilTime, OrderIsChronological)
{
    EXPECT_LT(At(2024, 1, 1), At(2024, 1, 1, 0, 0, 1));
    EXPECT_LT(At(2023, 12, 31, 23, 59, 59), At(2024, 1, 1));
    EXPECT_LT(At(2024, 2, 1), At(2024, 10, 1));
    EXPECT_FALSE(At(2024, 1, 1) < At(2024, 1, 1));
    EXPECT_NE(At(2024, 1, 1), At(2024, 1, 2));
}

}  // namespace

// Proleptic Gregorian calendar arithmetic on civil (wall-clock) times, with no
// time zone: leap years, month lengths, weekdays, and the conversion between a
// civil time and a count of seconds since 1970-01-01 00:00:00. Pure C++.
#pragma once

#include <cstdint>

namespace claimqueue::civil {

inline constexpr int64_t kSecondsPerMinute = 60;
inline constexpr int64_t kSecondsPerHour = 3600;
inline constexpr int64_t kSecondsPerDay = 86400;

// A civil time: what a wall clock and a calendar show. Fields are normalized
// (month 1-12, day 1..DaysInMonth, hour 0-23, minute 0-59, second 0-59) when
// they come from this header; ToSeconds() also accepts unnormalized fields and
// carries them over (second 60 is the next minute).
struct CivilTime {
    int64_t year = 1970;
    int month = 1;
    int day = 1;
    int hour = 0;
    int minute = 0;
    int second = 0;
};

bool operator==(const CivilTime &a, const CivilTime &b);
bool operator!=(const CivilTime &a, const CivilTime &b);
bool operator<(const CivilTime &a, const CivilTime &b);

// Division rounding toward minus infinity (b > 0): FloorDiv(-1, 60) == -1.
inline int64_t FloorDiv(int64_t a, int64_t b)
{
    const int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

bool IsLeapYear(int64_t year);

// Days in `month` (1-12) of `year`: 28 to 31.
int DaysInMonth(int64_t year, int month);

// Days from 1970-01-01 to the given date (negative before it). Months and
// days outside their ranges carry over: (2024, 13, 1) is 2025-01-01.
int64_t DaysFromCivil(int64_t year, int month, int day);

// The date `days` days after 1970-01-01; hour, minute and second are zero.
CivilTime CivilFromDays(int64_t days);

// 0 = Sunday .. 6 = Saturday, the cron numbering; 1970-01-01 was a Thursday.
int DayOfWeek(int64_t days);

// Seconds from 1970-01-01 00:00:00 to `t`, counting every day as 86400 s.
// Read with a UTC offset of zero this is Unix time; read as wall-clock time it
// is the "local seconds" of a zone (see time_zone.hpp).
int64_t ToSeconds(const CivilTime &t);

// Inverse of ToSeconds(): the normalized civil time `seconds` after 1970-01-01.
CivilTime FromSeconds(int64_t seconds);

}  // namespace claimqueue::civil

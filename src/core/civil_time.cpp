// Gregorian calendar arithmetic (see civil_time.hpp). The day counts use the
// 400-year-era method described in Howard Hinnant's "chrono-Compatible
// Low-Level Date Algorithms": exact integer arithmetic, no tables, no loops.
#include "core/civil_time.hpp"

#include <tuple>

namespace claimqueue::civil {

namespace {

// The Gregorian calendar repeats every 400 years, which hold 146097 days.
constexpr int64_t kDaysPer400Years = 146097;
// Days from 0000-03-01 to 1970-01-01, counting in years that start in March
// (so that the leap day is the last day of its year).
constexpr int64_t kDaysFromMarchYear0To1970 = 719468;

// The non-negative remainder that goes with FloorDiv (b > 0).
int64_t FloorMod(int64_t a, int64_t b)
{
    return a - FloorDiv(a, b) * b;
}

}  // namespace

bool operator==(const CivilTime &a, const CivilTime &b)
{
    return std::tie(a.year, a.month, a.day, a.hour, a.minute, a.second) ==
           std::tie(b.year, b.month, b.day, b.hour, b.minute, b.second);
}

bool operator!=(const CivilTime &a, const CivilTime &b)
{
    return !(a == b);
}

bool operator<(const CivilTime &a, const CivilTime &b)
{
    return std::tie(a.year, a.month, a.day, a.hour, a.minute, a.second) <
           std::tie(b.year, b.month, b.day, b.hour, b.minute, b.second);
}

bool IsLeapYear(int64_t year)
{
    return FloorMod(year, 4) == 0 && (FloorMod(year, 100) != 0 || FloorMod(year, 400) == 0);
}

int DaysInMonth(int64_t year, int month)
{
    static constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (month == 2 && IsLeapYear(year))
        return 29;
    return kDays[(month - 1) % 12];
}

int64_t DaysFromCivil(int64_t year, int month, int day)
{
    // Carry whole years out of the month first.
    year += FloorDiv(month - 1, 12);
    const int64_t month0 = FloorMod(month - 1, 12);  // 0 = January
    // Count years from March: January and February belong to the year before.
    const int64_t march_year = month0 < 2 ? year - 1 : year;
    const int64_t era = FloorDiv(march_year, 400);
    const int64_t year_of_era = march_year - era * 400;                     // 0..399
    const int64_t month_from_march = (month0 + 10) % 12;                     // March = 0
    const int64_t day_of_march_year = (153 * month_from_march + 2) / 5;      // days before it
    const int64_t day_of_era =
        year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_march_year;
    return era * kDaysPer400Years + day_of_era + (day - 1) - kDaysFromMarchYear0To1970;
}

CivilTime CivilFromDays(int64_t days)
{
    const int64_t from_march_year0 = days + kDaysFromMarchYear0To1970;
    const int64_t era = FloorDiv(from_march_year0, kDaysPer400Years);
    const int64_t day_of_era = from_march_year0 - era * kDaysPer400Years;  // 0..146096
    // Years of the era: 365 days each, plus the leap days before them.
    const int64_t year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
    const int64_t day_of_year =
        day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);  // 0..365
    const int64_t month_from_march = (5 * day_of_year + 2) / 153;                 // 0..11
    CivilTime t;
    t.day = static_cast<int>(day_of_year - (153 * month_from_march + 2) / 5 + 1);
    t.month = static_cast<int>(month_from_march < 10 ? month_from_march + 3 : month_from_march - 9);
    t.year = era * 400 + year_of_era + (t.month <= 2 ? 1 : 0);
    return t;
}

int DayOfWeek(int64_t days)
{
    return static_cast<int>(FloorMod(days + 4, 7));
}

int64_t ToSeconds(const CivilTime &t)
{
    return DaysFromCivil(t.year, t.month, t.day) * kSecondsPerDay + t.hour * kSecondsPerHour +
           t.minute * kSecondsPerMinute + t.second;
}

CivilTime FromSeconds(int64_t seconds)
{
    const int64_t days = FloorDiv(seconds, kSecondsPerDay);
    int64_t rest = seconds - days * kSecondsPerDay;
    CivilTime t = CivilFromDays(days);
    t.hour = static_cast<int>(rest / kSecondsPerHour);
    rest %= kSecondsPerHour;
    t.minute = static_cast<int>(rest / kSecondsPerMinute);
    t.second = static_cast<int>(rest % kSecondsPerMinute);
    return t;
}

}  // namespace claimqueue::civil

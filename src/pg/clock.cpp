// claimqueue's clock (see clock.hpp).
#include "pg/clock.hpp"

#include "core/rules.hpp"
#include "pg/settings.hpp"

namespace claimqueue {

TimestampTz ClockNow()
{
    return GetCurrentTimestamp() + (TimestampTz) debug_clock_offset_seconds * USECS_PER_SEC;
}

int64 IntervalUsec(const Interval *interval)
{
    __int128 years = interval->month / MONTHS_PER_YEAR;
    __int128 months = interval->month % MONTHS_PER_YEAR;
    // 365.25 days a year, kept exact: a quarter day is 6 hours.
    __int128 usec = (__int128) interval->time + (__int128) interval->day * USECS_PER_DAY +
                    months * DAYS_PER_MONTH * USECS_PER_DAY +
                    years * (365 * USECS_PER_DAY + USECS_PER_DAY / 4);
    if (usec > PG_INT64_MAX)
        return PG_INT64_MAX;
    if (usec < PG_INT64_MIN)
        return PG_INT64_MIN;
    return (int64) usec;
}

char *IntervalText(const Interval *interval)
{
    return DatumGetCString(DirectFunctionCall1(interval_out, IntervalPGetDatum(interval)));
}

void CheckBackoffDatums(Datum base, Datum cap)
{
    const Interval *b = DatumGetIntervalP(base);
    const Interval *c = DatumGetIntervalP(cap);
    rules::CheckBackoffBounds(IntervalUsec(b), IntervalUsec(c), IntervalText(b), IntervalText(c));
}

}  // namespace claimqueue

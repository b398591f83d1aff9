// claimqueue's clock (see clock.hpp).
#include "engine/clock.hpp"

namespace claimqueue {

int debug_clock_offset_seconds = 0;

TimestampTz ClockNow()
{
    return GetCurrentTimestamp() + (TimestampTz) debug_clock_offset_seconds * USECS_PER_SEC;
}

int64 IntervalUsec(const Interval *interval)
{
    __int128 usec = (__int128) interval->time +
                    (__int128) interval->day * USECS_PER_DAY +
                    (__int128) interval->month * DAYS_PER_MONTH * USECS_PER_DAY;
    if (usec > PG_INT64_MAX)
        return PG_INT64_MAX;
    if (usec < PG_INT64_MIN)
        return PG_INT64_MIN;
    return (int64) usec;
}

}  // namespace claimqueue

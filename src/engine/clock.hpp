// claimqueue's clock. All queue times (run_at, leases, backoff) come from here,
// so tests can move time forward (claimqueue.debug_clock_offset, superuser
// only) instead of sleeping through a lease.
#pragma once

#include "pg.hpp"

namespace claimqueue {

extern int debug_clock_offset_seconds;

TimestampTz ClockNow();

// An interval as microseconds, months counted as 30 days (as PostgreSQL's
// interval comparison does). Saturates instead of overflowing.
int64 IntervalUsec(const Interval *interval);

}  // namespace claimqueue

// claimqueue's clock. All queue times (run_at, leases, backoff) come from here,
// so tests can move time forward (claimqueue.debug_clock_offset, superuser
// only) instead of sleeping through a lease.
#pragma once

#include "pg/pg.hpp"

namespace claimqueue {

TimestampTz ClockNow();

// An interval as a fixed duration in microseconds, with the same rule as
// extract(epoch from interval): a day is 24 hours, a month 30 days, a year
// (12 months) 365.25 days. Leases, extensions, backoff and retry_in are all
// such durations, never calendar steps: no DST shifts, no month lengths.
// Saturates instead of overflowing.
int64 IntervalUsec(const Interval *interval);

// The interval as PostgreSQL prints it (for messages).
char *IntervalText(const Interval *interval);

// Checks backoff_cap >= backoff_base (two interval Datums), quoting both.
void CheckBackoffDatums(Datum base, Datum cap);

// SQL for `start + duration`, used where the claim engine adds a stored or
// given interval to a timestamp in a statement: the same rule as IntervalUsec.
#define CQ_PLUS_DURATION(start, interval) \
    "(" start " + pg_catalog.make_interval(secs => pg_catalog.date_part('epoch', " interval ")))"

}  // namespace claimqueue

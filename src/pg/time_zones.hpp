// Time zones of schedules: PostgreSQL's own tz database (pg_tz, the zones SET
// timezone knows) behind the pure core's ZoneRules, and the conversion
// between PostgreSQL's timestamps and the core's Unix microseconds.
#pragma once

#include "pg/pg.hpp"

extern "C" {
#include "pgtime.h"
}

#include "core/time_zone.hpp"

namespace claimqueue {

// The zone `name` as SET timezone takes it (an IANA name such as
// Europe/Berlin in any case, UTC, or a POSIX specification), or NULL when
// PostgreSQL knows no such zone (or refuses it: leap-second zones). *canonical
// gets its name as PostgreSQL spells it. May raise (out of memory).
pg_tz *FindTimeZone(const char *name, const char **canonical);

// The same, raising 22023 naming the zone when it is unknown.
pg_tz *RequireTimeZone(const char *name, const char **canonical);

// ZoneRules over a pg_tz: the offset is pg_localtime()'s tm_gmtoff, which
// never raises a PostgreSQL error (a NULL result throws claimqueue::Error).
class PgZoneRules final : public zone::ZoneRules {
public:
    explicit PgZoneRules(const pg_tz *tz) : tz_(tz) {}
    int32_t UtcOffsetAt(int64_t utc_seconds) const override;

private:
    const pg_tz *tz_;
};

// PostgreSQL's epoch is 2000-01-01, the core's 1970-01-01.
inline constexpr int64 kUnixEpochOffsetUsec =
    (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * USECS_PER_SEC;

inline int64 UnixUsecOf(TimestampTz t)
{
    return t + kUnixEpochOffsetUsec;
}

inline TimestampTz TimestampOfUnixUsec(int64 usec)
{
    return usec - kUnixEpochOffsetUsec;
}

}  // namespace claimqueue

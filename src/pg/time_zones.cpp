// Time zones of schedules (see time_zones.hpp).
#include "pg/time_zones.hpp"

#include <string>

#include "core/error.hpp"

namespace claimqueue {

pg_tz *FindTimeZone(const char *name, const char **canonical)
{
    // pg_tzset reads names up to TZ_STRLEN_MAX bytes; longer ones are unknown.
    if (name[0] == '\0' || strlen(name) > TZ_STRLEN_MAX)
        return nullptr;
    pg_tz *tz = pg_tzset(name);
    if (tz == nullptr || !pg_tz_acceptable(tz))
        return nullptr;
    *canonical = pg_get_timezone_name(tz);
    return tz;
}

pg_tz *RequireTimeZone(const char *name, const char **canonical)
{
    pg_tz *tz = FindTimeZone(name, canonical);
    if (tz == nullptr)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("unknown time zone \"%s\"", name),
                        errhint("Use a name of pg_timezone_names, such as 'UTC' or "
                                "'Europe/Berlin'.")));
    return tz;
}

int32_t PgZoneRules::UtcOffsetAt(int64_t utc_seconds) const
{
    const pg_time_t t = utc_seconds;
    const struct pg_tm *tm = pg_localtime(&t, tz_);
    if (tm == nullptr)
        throw Error(sqlstate::kInternalError, "time zone lookup failed",
                    "pg_localtime() found no local time for Unix time " +
                        std::to_string(utc_seconds) + ".");
    return static_cast<int32_t>(tm->tm_gmtoff);
}

}  // namespace claimqueue

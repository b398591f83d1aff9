// Table-driven time zones for the unit tests: real zones' UTC offsets around
// known transitions, so DST gaps and overlaps can be tested without a tz
// database. The transition instants are facts from the IANA tz database
// (checked with zdump); each is written as Unix time with its UTC date. A
// table is right only for the years it lists.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/time_zone.hpp"

namespace claimqueue::test {

class TableZone final : public zone::ZoneRules {
public:
    // `initial` is in effect before the first transition; each transition is
    // (first Unix second of the new offset, new offset), in order.
    TableZone(int32_t initial, std::vector<std::pair<int64_t, int32_t>> transitions)
        : initial_(initial), transitions_(std::move(transitions))
    {
    }

    int32_t UtcOffsetAt(int64_t utc_seconds) const override
    {
        int32_t offset = initial_;
        for (const auto &[starts, next] : transitions_)
            if (utc_seconds >= starts)
                offset = next;
        return offset;
    }

private:
    int32_t initial_;
    std::vector<std::pair<int64_t, int32_t>> transitions_;
};

inline constexpr int32_t kHour = 3600;

// Europe/Berlin: CET (+1) and CEST (+2); the clocks change at 01:00 UTC on
// the last Sundays of March and October.
inline const TableZone &Berlin()
{
    static const TableZone zone(1 * kHour, {
        {1711846800, 2 * kHour},  // 2024-03-31 01:00 UTC: 02:00 CET -> 03:00 CEST
        {1729990800, 1 * kHour},  // 2024-10-27 01:00 UTC: 03:00 CEST -> 02:00 CET
        {1743296400, 2 * kHour},  // 2025-03-30 01:00 UTC
        {1761440400, 1 * kHour},  // 2025-10-26 01:00 UTC
    });
    return zone;
}

// America/New_York: EST (-5) and EDT (-4); the clocks change at 02:00 local
// on the second Sunday of March and the first Sunday of November.
inline const TableZone &NewYork()
{
    static const TableZone zone(-5 * kHour, {
        {1299999600, -4 * kHour},  // 2011-03-13 07:00 UTC
        {1320559200, -5 * kHour},  // 2011-11-06 06:00 UTC
        {1331449200, -4 * kHour},  // 2012-03-11 07:00 UTC: 02:00 EST -> 03:00 EDT
        {1352008800, -5 * kHour},  // 2012-11-04 06:00 UTC: 02:00 EDT -> 01:00 EST
        {1362898800, -4 * kHour},  // 2013-03-10 07:00 UTC
        {1383458400, -5 * kHour},  // 2013-11-03 06:00 UTC
        {1394348400, -4 * kHour},  // 2014-03-09 07:00 UTC
        {1414908000, -5 * kHour},  // 2014-11-02 06:00 UTC
        {1710054000, -4 * kHour},  // 2024-03-10 07:00 UTC
        {1730613600, -5 * kHour},  // 2024-11-03 06:00 UTC
    });
    return zone;
}

// Australia/Lord_Howe: +10:30 in winter, +11 in summer, a half-hour shift.
inline const TableZone &LordHowe()
{
    static const TableZone zone(11 * kHour, {
        {1712415600, 10 * kHour + 1800},  // 2024-04-06 15:00 UTC: 02:00 -> 01:30 local
        {1728142200, 11 * kHour},         // 2024-10-05 15:30 UTC: 02:00 -> 02:30 local
    });
    return zone;
}

// Pacific/Apia crossed the date line at the end of 2011-12-29 local time:
// from -10 (its daylight time) straight to +14, so 2011-12-30 never
// happened there.
inline const TableZone &Apia()
{
    static const TableZone zone(-10 * kHour, {
        {1325239200, 14 * kHour},  // 2011-12-30 10:00 UTC: 12-29 24:00 -> 12-31 00:00
    });
    return zone;
}

}  // namespace claimqueue::test

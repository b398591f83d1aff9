// Local-time resolution and the DST policy (see time_zone.hpp).
#include "core/time_zone.hpp"

#include <string>

#include "core/civil_time.hpp"
#include "core/error.hpp"

namespace claimqueue::zone {

namespace {

int32_t CheckedOffset(const ZoneRules &zone, int64_t utc_seconds)
{
    const int32_t offset = zone.UtcOffsetAt(utc_seconds);
    if (offset > kMaxUtcOffsetSeconds || offset < -kMaxUtcOffsetSeconds)
        throw Error(sqlstate::kInternalError,
                    "time zone UTC offset " + std::to_string(offset) + " seconds is out of range",
                    "Offsets must lie within one day of UTC.");
    return offset;
}

// True when the wall clock shows `local_seconds` at `utc_seconds`.
bool ShowsLocal(const ZoneRules &zone, int64_t utc_seconds, int64_t local_seconds)
{
    return utc_seconds + CheckedOffset(zone, utc_seconds) == local_seconds;
}

}  // namespace

int64_t LocalSecondsAt(int64_t utc_seconds, const ZoneRules &zone)
{
    return utc_seconds + CheckedOffset(zone, utc_seconds);
}

ResolvedTime ResolveLocalTime(int64_t local_seconds, const ZoneRules &zone)
{
    // Every instant showing this wall-clock time lies within one day of it
    // (read as UTC), so the offsets in effect a day before and a day after
    // are the only candidates when at most one transition is near.
    const int32_t offset_before = CheckedOffset(zone, local_seconds - civil::kSecondsPerDay);
    const int32_t offset_after = CheckedOffset(zone, local_seconds + civil::kSecondsPerDay);
    const int64_t with_before = local_seconds - offset_before;
    const int64_t with_after = local_seconds - offset_after;
    const bool before_ok = ShowsLocal(zone, with_before, local_seconds);
    const bool after_ok = offset_after != offset_before && ShowsLocal(zone, with_after, local_seconds);

    if (before_ok && after_ok) {
        return {with_before < with_after ? with_before : with_after, LocalTimeKind::kRepeated};
    }
    if (before_ok)
        return {with_before, LocalTimeKind::kUnique};
    if (after_ok)
        return {with_after, LocalTimeKind::kUnique};

    // Skipped. With the clock set forward (offset_after > offset_before), the
    // transition lies in (with_after, with_before]: the last instant before it
    // still has the old offset. Find the first instant with the new one.
    if (offset_after > offset_before) {
        int64_t old_side = with_after;   // offset_before in effect
        int64_t new_side = with_before;  // offset_after in effect
        while (new_side - old_side > 1) {
            const int64_t mid = old_side + (new_side - old_side) / 2;
            if (CheckedOffset(zone, mid) == offset_before)
                old_side = mid;
            else
                new_side = mid;
        }
        return {new_side, LocalTimeKind::kSkipped};
    }
    // Only reachable when two transitions are close together: keep the
    // earlier offset's reading, which is within a day of the wall-clock time.
    return {with_before, LocalTimeKind::kSkipped};
}

}  // namespace claimqueue::zone

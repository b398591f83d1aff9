// Time zones as the schedule code sees them: ZoneRules gives the UTC offset in
// effect at an instant (the engine implements it with PostgreSQL's pg_tz, the
// unit tests with tables of known transitions), and ResolveLocalTime() is the
// DST policy that turns a wall-clock time into exactly one instant. Pure C++.
#pragma once

#include <cstdint>

namespace claimqueue::zone {

// Offsets are whole seconds east of UTC, strictly within one day.
inline constexpr int32_t kMaxUtcOffsetSeconds = 86399;

class ZoneRules {
public:
    virtual ~ZoneRules() = default;

    // Seconds east of UTC in effect at Unix time `utc_seconds` (Europe/Berlin:
    // 3600 in winter, 7200 in summer). Must be a pure function of its
    // argument and within +-kMaxUtcOffsetSeconds. It may throw
    // claimqueue::Error but must never longjmp (ereport): callers hold C++
    // objects across the call. Over pg_tz this is pg_localtime()'s tm_gmtoff,
    // which does not ereport (a NULL result should throw instead).
    virtual int32_t UtcOffsetAt(int64_t utc_seconds) const = 0;
};

// A zone whose offset never changes, such as UTC.
class FixedOffsetZone final : public ZoneRules {
public:
    explicit FixedOffsetZone(int32_t offset_seconds = 0) : offset_seconds_(offset_seconds) {}
    int32_t UtcOffsetAt(int64_t) const override { return offset_seconds_; }

private:
    int32_t offset_seconds_;
};

// Local seconds (civil::ToSeconds of the wall-clock time) at Unix time
// `utc_seconds`. Throws claimqueue::Error (XX000) if the zone returns an
// offset outside +-kMaxUtcOffsetSeconds.
int64_t LocalSecondsAt(int64_t utc_seconds, const ZoneRules &zone);

// How a wall-clock time maps onto the zone's instants.
enum class LocalTimeKind {
    kUnique,    // it happens once
    kRepeated,  // it happens twice (the clock was set back: fall-back overlap)
    kSkipped,   // it never happens (the clock was set forward: spring-forward gap)
};

struct ResolvedTime {
    int64_t utc_seconds;  // Unix time
    LocalTimeKind kind;
};

// The DST policy. Returns the one instant at which wall-clock time
// `local_seconds` is taken to happen in `zone`:
//   * a time that happens once: that instant;
//   * a repeated time (fall-back overlap): its FIRST occurrence, so a slot in
//     the overlap runs once, before the clock is set back;
//   * a skipped time (spring-forward gap): the first instant after the gap
//     (the transition itself), so the slot is late but not lost. Every
//     skipped time of one gap maps to that same instant.
// Assumes the zone changes its offset at most once within any two days,
// as real zones do; were that ever false, the result is still an instant
// within a day of the wall-clock time, never an error.
ResolvedTime ResolveLocalTime(int64_t local_seconds, const ZoneRules &zone);

}  // namespace claimqueue::zone

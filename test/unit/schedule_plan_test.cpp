// The reaper's plan for a due schedule: on-time slots each get a job, missed
// slots follow catch_up (one, all up to its cap, none), the next run never
// repeats a slot that got a job, and a DST gap is run once at its end.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/cron.hpp"
#include "core/schedule_plan.hpp"
#include "core/time_zone.hpp"
#include "fake_zones.hpp"
#include "test_util.hpp"

namespace {

using claimqueue::cron::ParseSchedule;
using claimqueue::schedule::CatchUp;
using claimqueue::schedule::CheckScheduleName;
using claimqueue::schedule::kMaxCatchUpRuns;
using claimqueue::schedule::kMaxRunsPerPass;
using claimqueue::schedule::ParseCatchUp;
using claimqueue::schedule::PlanRuns;
using claimqueue::schedule::RunPlan;
using claimqueue::zone::FixedOffsetZone;

constexpr int64_t kSec = 1000000;
constexpr int64_t kMin = 60 * kSec;
constexpr int64_t kHourUsec = 60 * kMin;
// 2026-01-01 00:00:00 UTC, a whole hour.
constexpr int64_t kT0 = INT64_C(1767225600) * kSec;
constexpr int64_t kLate = kMin;  // the engine's smallest lateness bound

const FixedOffsetZone kUtc;

TEST(ScheduleNames, FollowTheQueueRule)
{
    CheckScheduleName("nightly-report.v2");
    EXPECT_CQ_ERROR(CheckScheduleName(""), "22023");
    EXPECT_CQ_ERROR(CheckScheduleName("Nightly"), "22023");
    EXPECT_CQ_ERROR(CheckScheduleName(std::string(64, 'a')), "42622");
}

TEST(CatchUpValues, OneAllNone)
{
    EXPECT_EQ(ParseCatchUp("one"), CatchUp::kOne);
    EXPECT_EQ(ParseCatchUp("all"), CatchUp::kAll);
    EXPECT_EQ(ParseCatchUp("none"), CatchUp::kNone);
    auto e = claimqueue::test::CatchError([] { ParseCatchUp("some"); });
    ASSERT_TRUE(e.has_value());
    EXPECT_STREQ(e->sqlstate(), "22023");
    EXPECT_TRUE(claimqueue::test::Contains(e->what(), "\"some\""));
}

TEST(PlanRuns, NothingDueKeepsTheNextRun)
{
    RunPlan p = PlanRuns(ParseSchedule("@hourly"), kT0 + kHourUsec, kT0, kLate, CatchUp::kOne, kUtc);
    EXPECT_TRUE(p.runs_usec.empty());
    EXPECT_EQ(p.next_usec, kT0 + kHourUsec);
}

TEST(PlanRuns, OnTimeSlotGetsOneJobAndTheNextRunFollows)
{
    for (CatchUp c : {CatchUp::kOne, CatchUp::kAll, CatchUp::kNone}) {
        RunPlan p = PlanRuns(ParseSchedule("@hourly"), kT0, kT0 + 2 * kSec, kLate, c, kUtc);
        EXPECT_EQ(p.runs_usec, std::vector<int64_t>{kT0});
        EXPECT_FALSE(p.skipped_missed);
        EXPECT_EQ(p.next_usec, kT0 + kHourUsec);
    }
}

TEST(PlanRuns, ALateReaperDropsNoSecondOfAnInterval)
{
    // "every 1 second", the pass 5 s after the slot: six slots, six jobs, under none too.
    RunPlan p = PlanRuns(ParseSchedule("every 1 second"), kT0, kT0 + 5 * kSec, kLate,
                         CatchUp::kNone, kUtc);
    ASSERT_EQ(p.runs_usec.size(), 6u);
    EXPECT_EQ(p.runs_usec.front(), kT0);
    EXPECT_EQ(p.runs_usec.back(), kT0 + 5 * kSec);
    EXPECT_EQ(p.next_usec, kT0 + 6 * kSec);
}

TEST(PlanRuns, MissedSlotsOneJob)
{
    // Down from 00:00 to 05:30: slots 00:00 .. 05:00 were missed.
    RunPlan p = PlanRuns(ParseSchedule("@hourly"), kT0, kT0 + 5 * kHourUsec + 30 * kMin, kLate,
                         CatchUp::kOne, kUtc);
    EXPECT_EQ(p.runs_usec, std::vector<int64_t>{kT0});
    EXPECT_TRUE(p.skipped_missed);
    EXPECT_EQ(p.next_usec, kT0 + 6 * kHourUsec);
}

TEST(PlanRuns, OneMissedSlotUnderOneIsNotReportedSkipped)
{
    RunPlan p = PlanRuns(ParseSchedule("@hourly"), kT0, kT0 + 30 * kMin, kLate, CatchUp::kOne,
                         kUtc);
    EXPECT_EQ(p.runs_usec, std::vector<int64_t>{kT0});
    EXPECT_FALSE(p.skipped_missed);
}

TEST(PlanRuns, MissedSlotsAll)
{
    RunPlan p = PlanRuns(ParseSchedule("@hourly"), kT0, kT0 + 5 * kHourUsec + 30 * kMin, kLate,
                         CatchUp::kAll, kUtc);
    ASSERT_EQ(p.runs_usec.size(), 6u);
    for (size_t i = 0; i < 6; i++)
        EXPECT_EQ(p.runs_usec[i], kT0 + static_cast<int64_t>(i) * kHourUsec);
    EXPECT_FALSE(p.skipped_missed);
    EXPECT_EQ(p.next_usec, kT0 + 6 * kHourUsec);
}

TEST(PlanRuns, MissedSlotsAllIsCapped)
{
    // A day down with "every 1 minute": 1440 missed, the first 100 get jobs,
    // then the on-time minute.
    const int64_t now = kT0 + 24 * kHourUsec + 30 * kSec;
    RunPlan p = PlanRuns(ParseSchedule("every 1 minute"), kT0, now, kLate, CatchUp::kAll, kUtc);
    ASSERT_EQ(p.runs_usec.size(), static_cast<size_t>(kMaxCatchUpRuns) + 1);
    EXPECT_EQ(p.runs_usec[0], kT0);
    EXPECT_EQ(p.runs_usec[kMaxCatchUpRuns - 1], kT0 + (kMaxCatchUpRuns - 1) * kMin);
    EXPECT_EQ(p.runs_usec.back(), kT0 + 24 * kHourUsec);  // on time: 30 s late
    EXPECT_TRUE(p.skipped_missed);
    EXPECT_EQ(p.next_usec, kT0 + 24 * kHourUsec + kMin);
}

TEST(PlanRuns, MissedSlotsNone)
{
    RunPlan p = PlanRuns(ParseSchedule("@hourly"), kT0, kT0 + 5 * kHourUsec + 30 * kMin, kLate,
                         CatchUp::kNone, kUtc);
    EXPECT_TRUE(p.runs_usec.empty());
    EXPECT_TRUE(p.skipped_missed);
    EXPECT_EQ(p.next_usec, kT0 + 6 * kHourUsec);
}

TEST(PlanRuns, NoneStillRunsTheOnTimeSlotAfterAnOutage)
{
    // Back at 05:00:10: 00:00 .. 04:00 missed, 05:00 on time.
    RunPlan p = PlanRuns(ParseSchedule("@hourly"), kT0, kT0 + 5 * kHourUsec + 10 * kSec, kLate,
                         CatchUp::kNone, kUtc);
    EXPECT_EQ(p.runs_usec, std::vector<int64_t>{kT0 + 5 * kHourUsec});
    EXPECT_TRUE(p.skipped_missed);
}

TEST(PlanRuns, TheNextRunNeverRepeatsASlot)
{
    // Replaying the plan from its own next run at the same instant finds nothing due.
    for (CatchUp c : {CatchUp::kOne, CatchUp::kAll, CatchUp::kNone}) {
        const int64_t now = kT0 + 3 * kHourUsec + 17 * kSec;
        RunPlan p = PlanRuns(ParseSchedule("*/7 * * * *"), kT0, now, kLate, c, kUtc);
        ASSERT_TRUE(p.next_usec.has_value());
        EXPECT_GT(*p.next_usec, now);
        for (int64_t run : p.runs_usec)
            EXPECT_LT(run, *p.next_usec);
    }
}

TEST(PlanRuns, OnTimeJobsPerPassAreBoundedAndTheRestStayDue)
{
    // An hour behind with "every 1 second" and a lateness bound of two hours
    // (a reaper_interval of an hour): 3601 on-time slots.
    const int64_t now = kT0 + kHourUsec;
    RunPlan p = PlanRuns(ParseSchedule("every 1 second"), kT0, now, 2 * kHourUsec,
                         CatchUp::kOne, kUtc);
    ASSERT_EQ(p.runs_usec.size(), static_cast<size_t>(kMaxRunsPerPass));
    EXPECT_EQ(p.next_usec, kT0 + kMaxRunsPerPass * kSec);
    RunPlan rest = PlanRuns(ParseSchedule("every 1 second"), *p.next_usec, now, 2 * kHourUsec,
                            CatchUp::kOne, kUtc);
    EXPECT_EQ(rest.runs_usec.front(), kT0 + kMaxRunsPerPass * kSec);
}

TEST(PlanRuns, BerlinGapSlotRunsOnceAtTheGapsEnd)
{
    // "30 2 * * *" in Europe/Berlin on 2024-03-31: 02:30 does not exist; the
    // run is at 03:00 CEST (01:00 UTC), once.
    const auto &berlin = claimqueue::test::Berlin();
    auto s = ParseSchedule("30 2 * * *");
    const int64_t gap_end = INT64_C(1711846800) * kSec;
    auto next = claimqueue::cron::NextRunUsec(s, gap_end - 6 * kHourUsec, berlin);
    ASSERT_EQ(next, gap_end);
    RunPlan p = PlanRuns(s, *next, gap_end + 5 * kSec, kLate, CatchUp::kAll, berlin);
    EXPECT_EQ(p.runs_usec, std::vector<int64_t>{gap_end});
    // The next run is 02:30 CEST on April 1st (00:30 UTC).
    EXPECT_EQ(p.next_usec, gap_end + 23 * kHourUsec + 30 * kMin);
}

TEST(PlanRuns, BerlinOverlapSlotRunsOnce)
{
    // "30 2 * * *" on 2024-10-27: 02:30 happens twice; it runs at the first
    // (00:30 UTC) and a pass during the second finds nothing due.
    const auto &berlin = claimqueue::test::Berlin();
    auto s = ParseSchedule("30 2 * * *");
    const int64_t first = INT64_C(1729989000) * kSec;  // 2024-10-27 00:30 UTC, 02:30 CEST
    auto next = claimqueue::cron::NextRunUsec(s, first - 6 * kHourUsec, berlin);
    ASSERT_EQ(next, first);
    RunPlan p = PlanRuns(s, first, first + kSec, kLate, CatchUp::kAll, berlin);
    EXPECT_EQ(p.runs_usec, std::vector<int64_t>{first});
    ASSERT_TRUE(p.next_usec.has_value());
    EXPECT_GT(*p.next_usec, first + kHourUsec + kSec);  // not at 02:30 CET
    RunPlan second = PlanRuns(s, *p.next_usec, first + kHourUsec + kSec, kLate, CatchUp::kAll,
                              berlin);
    EXPECT_TRUE(second.runs_usec.empty());
}

}  // namespace

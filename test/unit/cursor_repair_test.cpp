// RepairCursor: the claim-cursor sweep's rule. The stalled state of 0.3.0 was a
// cursor of -1 read as int64 (all bits set): its sweep compared it signed and
// found nothing to repair, while claims compared it unsigned and skipped the
// lane. Every case here is compared as the cursors are stored, unsigned.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "core/cursor_repair.hpp"

namespace {

using claimqueue::RepairCursor;

constexpr uint64_t kAllOnes = std::numeric_limits<uint64_t>::max();

TEST(CursorRepair, TheStalledCursorIsLoweredToTheLowestClaimableJob)
{
    auto r = RepairCursor(kAllOnes, 1000, true, 640);
    EXPECT_TRUE(r.needed);
    EXPECT_EQ(r.target, 640u);
    EXPECT_STREQ(r.why, "past the last position drawn");
}

TEST(CursorRepair, TheStalledCursorOfAnEmptyLaneGoesToTheCounter)
{
    auto r = RepairCursor(kAllOnes, 1000, false, 0);
    EXPECT_TRUE(r.needed);
    EXPECT_EQ(r.target, 1000u);
}

TEST(CursorRepair, ACursorPastAClaimableJobGoesDownToIt)
{
    auto r = RepairCursor(700, 1000, true, 640);
    EXPECT_TRUE(r.needed);
    EXPECT_EQ(r.target, 640u);
    EXPECT_STREQ(r.why, "past a claimable job");
}

TEST(CursorRepair, ValidCursorsAreLeftAlone)
{
    EXPECT_FALSE(RepairCursor(0, 1000, false, 0).needed);
    EXPECT_FALSE(RepairCursor(640, 1000, true, 640).needed);   // at the lowest job
    EXPECT_FALSE(RepairCursor(600, 1000, true, 640).needed);   // below it: a lower bound
    EXPECT_FALSE(RepairCursor(1000, 1000, false, 0).needed);   // at the counter, lane empty
}

TEST(CursorRepair, TheTargetIsNeverAboveTheCounterNorAboveTheLowestJob)
{
    const uint64_t cursors[] = {0, 1, 639, 640, 641, 999, 1000, 1001, kAllOnes - 1, kAllOnes};
    for (uint64_t cursor : cursors)
        for (bool any : {false, true}) {
            auto r = RepairCursor(cursor, 1000, any, 640);
            uint64_t after = r.needed ? r.target : cursor;
            EXPECT_LE(after, 1000u) << cursor;
            if (any) {
                EXPECT_LE(after, 640u) << cursor;
            }
            if (r.needed) {
                EXPECT_LT(r.target, cursor) << "a repair only ever lowers: " << cursor;
            }
        }
}

}  // namespace

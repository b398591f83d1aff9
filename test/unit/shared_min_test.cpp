// LowestOfOnce: the minimum over shared slots that change between reads (the
// claim-cursor bound, src/cursors/shared.cpp). The claim stall of 0.3.0
// came from a minimum that read a slot twice: a slot released between the two
// reads made the bound "no position" (all ones), which moved a cursor past
// every job for good.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/shared_min.hpp"

namespace {

using claimqueue::LowestOfOnce;

constexpr uint64_t kReleased = std::numeric_limits<uint64_t>::max();

// Slots that a concurrent commit releases: the first read of a slot sees its
// position, every later read sees it released. Counts reads per slot.
struct ReleasingSlots {
    std::vector<uint64_t> positions;
    std::vector<int> reads;

    explicit ReleasingSlots(std::vector<uint64_t> p) : positions(std::move(p)), reads(positions.size()) {}

    uint64_t operator()(int i)
    {
        return reads[i]++ == 0 ? positions[i] : kReleased;
    }
};

TEST(SharedMin, ReadsEachSlotOnce)
{
    ReleasingSlots slots({kReleased, 120, kReleased, 90, 150});
    uint64_t lowest = LowestOfOnce(1000, 5, [&](int i) { return slots(i); });
    EXPECT_EQ(lowest, 90u);
    for (int r : slots.reads)
        EXPECT_EQ(r, 1);
}

// The stall's interleaving: a slot below the counter is released between the
// comparison and the assignment. The bound must stay at or below the counter.
TEST(SharedMin, SlotReleasedDuringTheScanNeverRaisesTheBound)
{
    for (uint64_t low = 1; low < 1000; low += 37) {
        ReleasingSlots slots({kReleased, low, kReleased});
        uint64_t bound = LowestOfOnce(1000, 3, [&](int i) { return slots(i); });
        EXPECT_LE(bound, 1000u);
        EXPECT_EQ(bound, low);
    }
}

TEST(SharedMin, NoSlotHeldGivesTheStart)
{
    std::vector<uint64_t> none(8, kReleased);
    EXPECT_EQ(LowestOfOnce(42, 8, [&](int i) { return none[i]; }), 42u);
    EXPECT_EQ(LowestOfOnce(42, 0, [&](int) { return uint64_t{0}; }), 42u);
}

TEST(SharedMin, NeverAboveTheStart)
{
    // Whatever the slots hold (released, above or below), the result is at
    // most the start value, so a bound never exceeds the counter.
    const uint64_t values[] = {0, 1, 41, 42, 43, kReleased - 1, kReleased};
    for (uint64_t a : values)
        for (uint64_t b : values) {
            std::vector<uint64_t> s = {a, b};
            uint64_t r = LowestOfOnce(42, 2, [&](int i) { return s[i]; });
            EXPECT_LE(r, 42u);
            EXPECT_EQ(r, std::min<uint64_t>({42, a, b}));
        }
}

}  // namespace

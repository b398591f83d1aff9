// BackoffUsec: capped exponential backoff with "equal jitter".
//   d = min(cap, base * 2^(attempts_made - 1));  result = d/2 + u * (d - d/2)
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "core/rules.hpp"

namespace {

using claimqueue::rules::BackoffUsec;
using claimqueue::rules::kMaxAttemptsLimit;
using claimqueue::rules::kMaxDelayUsec;
using claimqueue::rules::kUsecPerSecond;

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kSec = kUsecPerSecond;

// The largest double below 1.0: the top of unit_random's range.
const double kAlmostOne = std::nextafter(1.0, 0.0);

// Reference model, computed without overflow via a saturating shift.
int64_t ExpectedD(int attempts, int64_t base, int64_t cap)
{
    int64_t d = base;
    for (int i = 1; i < attempts; i++) {
        if (d > cap / 2) {
            d = cap;
            break;
        }
        d *= 2;
    }
    return d < cap ? d : cap;
}

TEST(BackoffUsec, WithZeroJitterIsHalfOfD)
{
    EXPECT_EQ(BackoffUsec(1, 10 * kSec, 3600 * kSec, 0.0), 5 * kSec);
    EXPECT_EQ(BackoffUsec(2, 10 * kSec, 3600 * kSec, 0.0), 10 * kSec);
    EXPECT_EQ(BackoffUsec(3, 10 * kSec, 3600 * kSec, 0.0), 20 * kSec);
}

TEST(BackoffUsec, DoublesPerAttempt)
{
    const int64_t base = kSec;
    const int64_t cap = kI64Max;
    for (int n = 1; n < 40; n++) {
        const int64_t lo = BackoffUsec(n, base, cap, 0.0);
        const int64_t next = BackoffUsec(n + 1, base, cap, 0.0);
        EXPECT_EQ(lo, (base << (n - 1)) / 2) << "attempt " << n;
        EXPECT_EQ(next, 2 * lo) << "attempt " << n;
    }
}

TEST(BackoffUsec, HalfJitterIsThreeQuartersOfD)
{
    // d = 8 s at the third attempt: 4 s + 0.5 * 4 s.
    EXPECT_EQ(BackoffUsec(3, 2 * kSec, 3600 * kSec, 0.5), 6 * kSec);
}

TEST(BackoffUsec, CapIsRespected)
{
    const int64_t base = kSec;
    const int64_t cap = 10 * kSec;
    // 1, 2, 4, 8, then min(16, 10) = 10 seconds.
    EXPECT_EQ(BackoffUsec(4, base, cap, 0.0), 4 * kSec);
    EXPECT_EQ(BackoffUsec(5, base, cap, 0.0), 5 * kSec);
    for (int n = 5; n <= kMaxAttemptsLimit; n++) {
        EXPECT_EQ(BackoffUsec(n, base, cap, 0.0), cap / 2) << "attempt " << n;
        const int64_t top = BackoffUsec(n, base, cap, kAlmostOne);
        ASSERT_LT(top, cap) << "attempt " << n;
        ASSERT_GE(top, cap / 2) << "attempt " << n;
    }
}

TEST(BackoffUsec, CapThatIsNotAPowerOfTwoMultipleOfBase)
{
    // 3, 6, 12, 24, 48, then 50 forever.
    EXPECT_EQ(BackoffUsec(5, 3, 50, 0.0), 24);
    EXPECT_EQ(BackoffUsec(6, 3, 50, 0.0), 25);
    EXPECT_EQ(BackoffUsec(100, 3, 50, 0.0), 25);
}

TEST(BackoffUsec, BaseEqualToCapStaysAtCap)
{
    for (int n : {1, 2, 3, 64, 10000})
        EXPECT_EQ(BackoffUsec(n, 60 * kSec, 60 * kSec, 0.0), 30 * kSec) << "attempt " << n;
}

TEST(BackoffUsec, EqualJitterBounds)
{
    std::mt19937_64 rng(20240601);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const std::vector<double> fixed = {0.0, 1e-12, 0.25, 0.5, 0.75, 0.999999, kAlmostOne};
    const std::vector<int64_t> bases = {1, 2, 3, 7, 1000, kSec, 7 * kSec + 1, kMaxDelayUsec};
    for (int64_t base : bases) {
        for (int64_t cap : {base, base * 3 + 1, 3600 * kSec, kMaxDelayUsec, kI64Max}) {
            if (cap < base)
                continue;
            for (int n : {1, 2, 3, 10, 30, 63, 64, 1000}) {
                const int64_t d = ExpectedD(n, base, cap);
                std::vector<double> us = fixed;
                for (int k = 0; k < 20; k++)
                    us.push_back(unit(rng));
                for (double u : us) {
                    const int64_t r = BackoffUsec(n, base, cap, u);
                    ASSERT_GE(r, d / 2) << "base=" << base << " cap=" << cap << " n=" << n
                                        << " u=" << u;
                    // [d/2, d): strictly below d, except d = 1 whose range is {0}.
                    ASSERT_LT(r, d) << "base=" << base << " cap=" << cap << " n=" << n
                                    << " u=" << u;
                    ASSERT_LE(r, cap);
                }
            }
        }
    }
}

TEST(BackoffUsec, StrictlyBelowDAtTheTopOfTheRangeForLargeD)
{
    // Rounding of d - d/2 to double must never push the result up to d.
    std::mt19937_64 rng(7);
    for (int k = 0; k < 200000; k++) {
        const int64_t d = static_cast<int64_t>(rng() >> (1 + rng() % 62));
        if (d < 2)
            continue;
        const int64_t r = BackoffUsec(1, d, d, kAlmostOne);
        ASSERT_LT(r, d) << "d=" << d;
        ASSERT_GE(r, d / 2) << "d=" << d;
    }
    for (int s = 1; s < 63; s++) {
        for (int64_t o = -64; o <= 64; o++) {
            const int64_t d = (int64_t{1} << s) + o;
            if (d < 2)
                continue;
            const int64_t r = BackoffUsec(1, d, d, kAlmostOne);
            ASSERT_LT(r, d) << "d=" << d;
            ASSERT_GE(r, d / 2) << "d=" << d;
        }
    }
}

TEST(BackoffUsec, NonDecreasingInUnitRandom)
{
    int64_t prev = -1;
    for (int i = 0; i <= 1000; i++) {
        const double u = i == 1000 ? kAlmostOne : i / 1000.0;
        const int64_t r = BackoffUsec(4, 3 * kSec, 3600 * kSec, u);
        ASSERT_GE(r, prev) << "u=" << u;
        prev = r;
    }
}

TEST(BackoffUsec, NoOverflowForAllAttemptsWithHugeBaseAndCap)
{
    struct Case {
        int64_t base, cap;
    };
    const Case cases[] = {
        {1, kI64Max},
        {kSec, kI64Max},
        {kI64Max / 3, kI64Max},
        {kI64Max / 2, kI64Max},
        {kI64Max / 2 + 1, kI64Max},
        {kI64Max - 1, kI64Max},
        {kI64Max, kI64Max},
        {kSec, kMaxDelayUsec},
        {kMaxDelayUsec, kMaxDelayUsec},
    };
    for (const Case &c : cases) {
        int64_t prev_lo = 0;
        for (int n = 1; n <= kMaxAttemptsLimit; n++) {
            const int64_t lo = BackoffUsec(n, c.base, c.cap, 0.0);
            const int64_t hi = BackoffUsec(n, c.base, c.cap, kAlmostOne);
            const int64_t d = ExpectedD(n, c.base, c.cap);
            ASSERT_GE(lo, 0) << "base=" << c.base << " n=" << n;
            ASSERT_EQ(lo, d / 2) << "base=" << c.base << " n=" << n;
            ASSERT_GE(hi, lo) << "base=" << c.base << " n=" << n;
            ASSERT_LE(hi, c.cap) << "base=" << c.base << " n=" << n;
            ASSERT_GE(lo, prev_lo) << "base=" << c.base << " n=" << n;
            prev_lo = lo;
        }
        EXPECT_EQ(prev_lo, c.cap / 2) << "base=" << c.base << " never reached the cap";
    }
}

TEST(BackoffUsec, HugeAttemptCountTerminatesAtCap)
{
    EXPECT_EQ(BackoffUsec(INT_MAX, 1, kI64Max, 0.0), kI64Max / 2);
    EXPECT_EQ(BackoffUsec(INT_MAX, kSec, 3600 * kSec, 0.0), 1800 * kSec);
}

TEST(BackoffUsec, BaseZeroGivesZero)
{
    for (int n : {1, 2, 10, 10000, INT_MAX})
        for (double u : {0.0, 0.5, kAlmostOne})
            EXPECT_EQ(BackoffUsec(n, 0, 3600 * kSec, u), 0) << "n=" << n << " u=" << u;
    EXPECT_EQ(BackoffUsec(5, 0, 0, 0.5), 0);
}

TEST(BackoffUsec, NegativeBaseOrNonPositiveCapGivesZero)
{
    // Not reachable through the SQL API (CheckDelay/CheckBackoffBounds reject
    // these), but the function is total.
    EXPECT_EQ(BackoffUsec(3, -kSec, 3600 * kSec, 0.5), 0);
    EXPECT_EQ(BackoffUsec(3, kSec, 0, 0.5), 0);
    EXPECT_EQ(BackoffUsec(3, kSec, -1, 0.5), 0);
    EXPECT_EQ(BackoffUsec(3, std::numeric_limits<int64_t>::min(), kI64Max, 0.5), 0);
}

TEST(BackoffUsec, BaseAboveCapIsClampedToCap)
{
    // Also rejected by CheckBackoffBounds; the function still never exceeds cap.
    EXPECT_EQ(BackoffUsec(1, 100, 10, 0.0), 5);
    EXPECT_EQ(BackoffUsec(7, 100, 10, 0.0), 5);
    EXPECT_LT(BackoffUsec(1, kI64Max, 10, kAlmostOne), 10);
}

TEST(BackoffUsec, AttemptsBelowOneCountAsOne)
{
    for (int n : {0, -1, INT_MIN})
        for (double u : {0.0, 0.3})
            EXPECT_EQ(BackoffUsec(n, 4 * kSec, 3600 * kSec, u),
                      BackoffUsec(1, 4 * kSec, 3600 * kSec, u))
                << "n=" << n;
}

TEST(BackoffUsec, OutOfRangeUnitRandomIsTreatedAsZero)
{
    const int64_t base = 8 * kSec;
    const int64_t cap = 3600 * kSec;
    const int64_t at_zero = BackoffUsec(2, base, cap, 0.0);
    ASSERT_EQ(at_zero, 8 * kSec);
    const double bad[] = {-0.0001,
                          -1.0,
                          1.0,
                          1.5,
                          1e300,
                          -std::numeric_limits<double>::min(),
                          std::numeric_limits<double>::infinity(),
                          -std::numeric_limits<double>::infinity(),
                          std::numeric_limits<double>::quiet_NaN()};
    for (double u : bad)
        EXPECT_EQ(BackoffUsec(2, base, cap, u), at_zero) << "u=" << u;
    // -0.0 compares equal to 0.0 and is in range.
    EXPECT_EQ(BackoffUsec(2, base, cap, -0.0), at_zero);
}

TEST(BackoffUsec, OneMicrosecondDIsAlwaysZero)
{
    // d = 1: the range [d/2, d) = [0, 1) holds only 0.
    for (double u : {0.0, 0.5, kAlmostOne})
        EXPECT_EQ(BackoffUsec(1, 1, 1000, u), 0);
    EXPECT_EQ(BackoffUsec(2, 1, 1000, 0.0), 1);
}

}  // namespace

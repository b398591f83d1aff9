// Range checks: priority, batch, max_attempts, leases, delays, backoff bounds.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "core/error.hpp"
#include "core/rules.hpp"
#include "test_util.hpp"

namespace {

using namespace claimqueue::rules;
using claimqueue::test::CatchError;
using claimqueue::test::Contains;

constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

TEST(Limits, DocumentedValues)
{
    EXPECT_EQ(kMinPriority, -100);
    EXPECT_EQ(kMaxPriority, 100);
    EXPECT_EQ(kMaxBatch, 1000);
    EXPECT_EQ(kMaxAttemptsLimit, 10000);
    EXPECT_EQ(kUsecPerSecond, 1000000);
    EXPECT_EQ(kUsecPerDay, INT64_C(86400000000));
    EXPECT_EQ(kMaxLeaseUsec, INT64_C(31536000000000));       // 365 days
    EXPECT_EQ(kMaxDelayUsec, INT64_C(3155760000000000));     // 36525 days: '100 years'
}

// ------------------------------------------------------------------- priority

TEST(CheckPriority, AcceptsMinus100To100)
{
    for (int64_t p : {int64_t{-100}, int64_t{-99}, int64_t{-1}, int64_t{0}, int64_t{1},
                      int64_t{99}, int64_t{100}})
        EXPECT_CQ_OK(CheckPriority(p)) << " priority=" << p;
}

TEST(CheckPriority, OutsideIs22003)
{
    for (int64_t p : {int64_t{-101}, int64_t{101}, int64_t{1000}, int64_t{-1000},
                      int64_t{32767}, kI64Min, kI64Max})
        EXPECT_CQ_ERROR(CheckPriority(p), "22003");
}

TEST(CheckPriority, MessageNamesValueAndRange)
{
    auto err = CatchError([] { CheckPriority(101); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->what(), "priority 101 is out of range");
    EXPECT_TRUE(Contains(err->hint(), "-100 to 100"));
}

// ---------------------------------------------------------------------- batch

TEST(CheckBatch, Accepts1To1000)
{
    for (int64_t b : {int64_t{1}, int64_t{2}, int64_t{500}, int64_t{999}, int64_t{1000}})
        EXPECT_CQ_OK(CheckBatch(b)) << " batch=" << b;
}

TEST(CheckBatch, OutsideIs22003)
{
    for (int64_t b : {int64_t{0}, int64_t{-1}, int64_t{1001}, kI64Min, kI64Max})
        EXPECT_CQ_ERROR(CheckBatch(b), "22003");
    auto err = CatchError([] { CheckBatch(0); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->what(), "batch 0 is out of range");
    EXPECT_TRUE(Contains(err->hint(), "between 1 and 1000"));
}

// -------------------------------------------------------------- payload size

TEST(CheckPayloadSize, AtOrBelowTheLimitIsAccepted)
{
    EXPECT_CQ_OK(CheckPayloadSize(0, 1024));
    EXPECT_CQ_OK(CheckPayloadSize(1024, 1024));
    EXPECT_CQ_OK(CheckPayloadSize(1024, 1024, 7));
}

TEST(CheckPayloadSize, AboveIs54000NamingSizeLimitAndSetting)
{
    EXPECT_CQ_ERROR(CheckPayloadSize(1025, 1024), "54000");
    EXPECT_CQ_ERROR(CheckPayloadSize(kI64Max, 1024), "54000");
    auto err = CatchError([] { CheckPayloadSize(2000, 1024); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->what(),
                 "payload is 2000 bytes, more than claimqueue.max_payload_size (1024 bytes)");
    EXPECT_TRUE(Contains(err->hint(), "reference"));
}

TEST(CheckResultSize, AboveIs54000NamingTheResultAndItsPosition)
{
    EXPECT_CQ_OK(CheckResultSize(1024, 1024));
    EXPECT_CQ_ERROR(CheckResultSize(1025, 1024), "54000");
    auto err = CatchError([] { CheckResultSize(2000, 1024, 2); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->what(),
                 "result 2 is 2000 bytes, more than claimqueue.max_payload_size (1024 bytes)");
    EXPECT_TRUE(Contains(err->hint(), "return a reference"));
}

TEST(CheckAwaitCount, AtMost1000Jobs)
{
    EXPECT_EQ(kMaxAwaitJobs, 1000);
    EXPECT_CQ_OK(CheckAwaitCount(0));
    EXPECT_CQ_OK(CheckAwaitCount(1000));
    EXPECT_CQ_ERROR(CheckAwaitCount(1001), "54000");
    auto err = CatchError([] { CheckAwaitCount(1001); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->what(), "cannot await 1001 jobs at once: at most 1000 per call");
    EXPECT_TRUE(Contains(err->hint(), "at most 1000"));
}

TEST(CheckPayloadSize, BatchErrorNamesThePosition)
{
    auto err = CatchError([] { CheckPayloadSize(2000, 1024, 3); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->what(),
                 "payload 3 is 2000 bytes, more than claimqueue.max_payload_size (1024 bytes)");
}

// --------------------------------------------------------------- max_attempts

TEST(CheckMaxAttempts, Accepts1To10000)
{
    for (int64_t m : {int64_t{1}, int64_t{2}, int64_t{25}, int64_t{9999}, int64_t{10000}})
        EXPECT_CQ_OK(CheckMaxAttempts(m)) << " max_attempts=" << m;
}

TEST(CheckMaxAttempts, OutsideIs22003)
{
    for (int64_t m : {int64_t{0}, int64_t{-1}, int64_t{10001}, kI64Min, kI64Max})
        EXPECT_CQ_ERROR(CheckMaxAttempts(m), "22003");
    auto err = CatchError([] { CheckMaxAttempts(10001); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->what(), "max_attempts 10001 is out of range");
    EXPECT_TRUE(Contains(err->hint(), "1 to 10000"));
}

// ---------------------------------------------------------------------- lease

TEST(CheckLease, AcceptsOneMicrosecondTo365Days)
{
    EXPECT_CQ_OK(CheckLease("lease", 1));
    EXPECT_CQ_OK(CheckLease("lease", 30 * kUsecPerSecond));
    EXPECT_CQ_OK(CheckLease("lease", kMaxLeaseUsec));
}

TEST(CheckLease, ZeroIs22023)
{
    auto err = CatchError([] { CheckLease("lease", 0); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->sqlstate(), "22023");
    EXPECT_STREQ(err->what(), "lease must be positive");
    EXPECT_FALSE(err->hint().empty());
}

TEST(CheckLease, NegativeIs22023)
{
    for (int64_t v : {int64_t{-1}, -kUsecPerSecond, kI64Min})
        EXPECT_CQ_ERROR(CheckLease("lease", v), "22023");
}

TEST(CheckLease, AboveMaxIs22023)
{
    EXPECT_CQ_ERROR(CheckLease("lease", kMaxLeaseUsec + 1), "22023");
    EXPECT_CQ_ERROR(CheckLease("lease", kI64Max), "22023");
    auto err = CatchError([] { CheckLease("extend_by", kMaxLeaseUsec + 1); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->what(), "extend_by is longer than 365 days");
    EXPECT_TRUE(Contains(err->hint(), "heartbeat()"));
}

TEST(CheckLease, MessageNamesTheArgument)
{
    auto err = CatchError([] { CheckLease("heartbeat extension", -5); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->what(), "heartbeat extension must be positive");
}

TEST(CheckLease, QuotesTheValueAsWrittenWhenGiven)
{
    auto err = CatchError([] { CheckLease("lease", -60 * kUsecPerSecond, "-1 mins"); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->sqlstate(), "22023");
    EXPECT_STREQ(err->what(), "lease '-1 mins' must be positive");
    err = CatchError([] { CheckLease("lease", kMaxLeaseUsec + 1, "366 days"); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->what(), "lease '366 days' is longer than 365 days");
    // An empty `shown` leaves the message unquoted.
    err = CatchError([] { CheckLease("lease", 0, ""); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->what(), "lease must be positive");
    EXPECT_CQ_OK(CheckLease("lease", kUsecPerSecond, "1 second"));
}

// ---------------------------------------------------------------------- delay

TEST(CheckDelay, AcceptsZeroTo100Years)
{
    EXPECT_CQ_OK(CheckDelay("retry_in", 0));
    EXPECT_CQ_OK(CheckDelay("retry_in", 1));
    EXPECT_CQ_OK(CheckDelay("backoff_base", kMaxLeaseUsec + 1));
    EXPECT_CQ_OK(CheckDelay("retention", kMaxDelayUsec));
}

TEST(CheckDelay, NegativeIs22023)
{
    for (int64_t v : {int64_t{-1}, -kUsecPerDay, kI64Min})
        EXPECT_CQ_ERROR(CheckDelay("retry_in", v), "22023");
    auto err = CatchError([] { CheckDelay("retry_in", -1); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->what(), "retry_in must not be negative");
}

TEST(CheckDelay, AboveMaxIs22023)
{
    EXPECT_CQ_ERROR(CheckDelay("retention", kMaxDelayUsec + 1), "22023");
    EXPECT_CQ_ERROR(CheckDelay("retention", kI64Max), "22023");
    auto err = CatchError([] { CheckDelay("retention", kMaxDelayUsec + 1); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->what(), "retention is longer than 100 years");
}

TEST(CheckDelay, QuotesTheValueAsWrittenWhenGiven)
{
    auto err = CatchError([] { CheckDelay("retry_in", -1, "-1 microsecond"); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->sqlstate(), "22023");
    EXPECT_STREQ(err->what(), "retry_in '-1 microsecond' must not be negative");
    err = CatchError([] { CheckDelay("retention", kMaxDelayUsec + 1, "200 years"); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->what(), "retention '200 years' is longer than 100 years");
    EXPECT_CQ_OK(CheckDelay("retry_in", 0, "0"));
}

// -------------------------------------------------------------- backoff bounds

TEST(CheckBackoffBounds, CapAtOrAboveBaseIsFine)
{
    EXPECT_CQ_OK(CheckBackoffBounds(0, 0));
    EXPECT_CQ_OK(CheckBackoffBounds(kUsecPerSecond, kUsecPerSecond));
    EXPECT_CQ_OK(CheckBackoffBounds(kUsecPerSecond, 3600 * kUsecPerSecond));
    EXPECT_CQ_OK(CheckBackoffBounds(0, kMaxDelayUsec));
}

TEST(CheckBackoffBounds, CapBelowBaseIs22023)
{
    EXPECT_CQ_ERROR(CheckBackoffBounds(2, 1), "22023");
    EXPECT_CQ_ERROR(CheckBackoffBounds(kMaxDelayUsec, 0), "22023");
    auto err = CatchError([] { CheckBackoffBounds(10, 9); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->what(), "backoff_cap must not be smaller than backoff_base");
    auto shown = CatchError([] { CheckBackoffBounds(2, 1, "@ 2 hours", "@ 1 hour"); });
    ASSERT_TRUE(shown);
    EXPECT_STREQ(shown->what(),
                 "backoff_cap '@ 1 hour' must not be smaller than backoff_base '@ 2 hours'");
    EXPECT_FALSE(err->hint().empty());
}

}  // namespace

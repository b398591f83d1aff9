// Name and label rules: CheckQueueName, CheckWorkerName, CheckDedupKey.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/rules.hpp"
#include "test_util.hpp"

namespace {

using namespace claimqueue::rules;
using claimqueue::test::CatchError;
using claimqueue::test::Contains;
using namespace std::string_literals;

// ---------------------------------------------------------------- queue names

TEST(CheckQueueName, AcceptsValidNames)
{
    for (const char *name : {"a", "z", "0", "9", "_", "jobs", "email_outbound", "_private",
                             "0day", "a.b-c_d", "q-1", "v1.2.3", "a..", "a--", "a.", "a-",
                             "abcdefghijklmnopqrstuvwxyz0123456789_.-"}) {
        EXPECT_CQ_OK(CheckQueueName(name)) << " name=" << name;
    }
}

TEST(CheckQueueName, EmptyIs22023WithHint)
{
    auto err = CatchError([] { CheckQueueName(""); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->sqlstate(), "22023");
    EXPECT_STREQ(err->what(), "queue name must not be empty");
    EXPECT_TRUE(Contains(err->hint(), "1 to 63 bytes"));
}

TEST(CheckQueueName, SixtyThreeBytesIsTheLimit)
{
    EXPECT_EQ(kMaxQueueNameBytes, 63);
    EXPECT_CQ_OK(CheckQueueName(std::string(63, 'a')));
    EXPECT_CQ_OK(CheckQueueName("_" + std::string(62, '9')));
}

TEST(CheckQueueName, SixtyFourBytesIs42622)
{
    const std::string name(64, 'a');
    auto err = CatchError([&] { CheckQueueName(name); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->sqlstate(), "42622");
    EXPECT_EQ(std::string(err->what()), "queue name \"" + name + "\" is too long");
    EXPECT_EQ(err->detail(), "It is 64 bytes; the limit is 63 bytes.");
    EXPECT_FALSE(err->hint().empty());
}

TEST(CheckQueueName, LengthIsCheckedBeforeCharacters)
{
    // Too long and badly spelt at once: the length wins.
    EXPECT_CQ_ERROR(CheckQueueName(std::string(64, 'A')), "42622");
    EXPECT_CQ_ERROR(CheckQueueName("-" + std::string(100, ' ')), "42622");
}

TEST(CheckQueueName, LimitIsBytesNotCharacters)
{
    // "é" is two bytes in UTF-8: 32 of them are 64 bytes.
    std::string name;
    for (int i = 0; i < 32; i++)
        name += "\xc3\xa9";
    EXPECT_CQ_ERROR(CheckQueueName(name), "42622");
    // Short, but not in [a-z0-9_.-]: invalid, not too long.
    EXPECT_CQ_ERROR(CheckQueueName("caf\xc3\xa9"), "22023");
}

TEST(CheckQueueName, LongNamesAreShortenedInTheMessage)
{
    const std::string name(1000, 'x');
    auto err = CatchError([&] { CheckQueueName(name); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->sqlstate(), "42622");
    const std::string msg = err->what();
    EXPECT_FALSE(Contains(msg, name));
    EXPECT_TRUE(Contains(msg, "\"" + std::string(80, 'x') + "...\""));
    EXPECT_EQ(err->detail(), "It is 1000 bytes; the limit is 63 bytes.");
}

TEST(CheckQueueName, ShorteningNeverSplitsAUtf8Character)
{
    // 79 ASCII bytes, then two-byte characters: byte 80 falls inside one.
    const std::string name = std::string(79, 'x') + "\xc3\xa9\xc3\xa9\xc3\xa9";
    auto err = CatchError([&] { CheckQueueName(name); });
    ASSERT_TRUE(err);
    EXPECT_TRUE(Contains(err->what(), "\"" + std::string(79, 'x') + "...\""));
    // A three-byte character ("€") straddling the cut is dropped whole too.
    const std::string worker = std::string(78, 'y') + "\xe2\x82\xac" + std::string(200, 'y');
    auto err2 = CatchError([&] { CheckWorkerName(worker); });
    ASSERT_TRUE(err2);
    EXPECT_TRUE(Contains(err2->what(), "\"" + std::string(78, 'y') + "...\""));
    EXPECT_FALSE(Contains(err2->what(), "\xe2"));
}

TEST(CheckQueueName, UpperCaseIs22023)
{
    for (const char *name : {"A", "Jobs", "JOBS", "jobS", "emailOutbound"}) {
        auto err = CatchError([&] { CheckQueueName(name); });
        ASSERT_TRUE(err) << name;
        EXPECT_STREQ(err->sqlstate(), "22023") << name;
        EXPECT_EQ(std::string(err->what()), "invalid queue name \""s + name + "\"");
        EXPECT_TRUE(Contains(err->hint(), "lower-case"));
    }
}

TEST(CheckQueueName, WhitespaceIs22023)
{
    for (const char *name : {" ", " jobs", "jobs ", "my jobs", "jobs\t", "jobs\n", "\tjobs"})
        EXPECT_CQ_ERROR(CheckQueueName(name), "22023");
}

TEST(CheckQueueName, LeadingDotOrDashIs22023)
{
    for (const char *name : {".", "-", ".jobs", "-jobs", "..", "--", ".a", "-0", "._"})
        EXPECT_CQ_ERROR(CheckQueueName(name), "22023");
}

TEST(CheckQueueName, OtherPunctuationIs22023)
{
    for (const char *name : {"jobs/1", "jobs$", "a:b", "a;b", "a'b", "a\"b", "a,b", "a*",
                             "a+b", "a@b", "a\\b", "a%b", "(a)", "a=b"})
        EXPECT_CQ_ERROR(CheckQueueName(name), "22023");
}

TEST(CheckQueueName, EmbeddedNulIs22023)
{
    // string_view carries its length, so a NUL inside the name is seen.
    EXPECT_CQ_ERROR(CheckQueueName(std::string_view("jobs\0x", 6)), "22023");
    EXPECT_CQ_ERROR(CheckQueueName(std::string_view("\0", 1)), "22023");
}

TEST(CheckQueueName, LooksOnlyAtTheViewItIsGiven)
{
    const char buffer[] = "jobs UPPER";
    EXPECT_CQ_OK(CheckQueueName(std::string_view(buffer, 4)));
    EXPECT_CQ_ERROR(CheckQueueName(std::string_view(buffer, 5)), "22023");
}

// --------------------------------------------------------------- worker names

TEST(CheckWorkerName, AcceptsAnyNonEmptyLabelUpTo200Bytes)
{
    EXPECT_EQ(kMaxWorkerNameBytes, 200);
    for (const char *w : {"w", "worker-1", "Worker 1", "host:1234/pid 99", ".hidden", "-x",
                          "caf\xc3\xa9", " "})
        EXPECT_CQ_OK(CheckWorkerName(w)) << " worker=" << w;
    EXPECT_CQ_OK(CheckWorkerName(std::string(200, 'w')));
}

TEST(CheckWorkerName, EmptyIs22023)
{
    auto err = CatchError([] { CheckWorkerName(""); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->sqlstate(), "22023");
    EXPECT_STREQ(err->what(), "worker name must not be empty");
}

TEST(CheckWorkerName, TwoHundredOneBytesIs42622)
{
    auto err = CatchError([] { CheckWorkerName(std::string(201, 'w')); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->sqlstate(), "42622");
    EXPECT_TRUE(Contains(err->what(), "worker name \""));
    EXPECT_TRUE(Contains(err->what(), "...\" is too long"));
    EXPECT_EQ(err->detail(), "It is 201 bytes; the limit is 200 bytes.");
}

// ----------------------------------------------------------------- dedup keys

TEST(CheckDedupKey, AcceptsAnyNonEmptyKeyUpTo512Bytes)
{
    EXPECT_EQ(kMaxDedupKeyBytes, 512);
    for (const char *k : {"k", "order:42", "Mixed Case / with spaces", "{\"json\": true}"})
        EXPECT_CQ_OK(CheckDedupKey(k)) << " key=" << k;
    EXPECT_CQ_OK(CheckDedupKey(std::string(512, 'k')));
}

TEST(CheckDedupKey, EmptyIs22023)
{
    auto err = CatchError([] { CheckDedupKey(""); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->sqlstate(), "22023");
    EXPECT_STREQ(err->what(), "dedup_key must not be empty");
}

TEST(CheckDedupKey, FiveHundredThirteenBytesIs42622)
{
    auto err = CatchError([] { CheckDedupKey(std::string(513, 'k')); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->sqlstate(), "42622");
    EXPECT_TRUE(Contains(err->what(), "dedup_key \""));
    EXPECT_EQ(err->detail(), "It is 513 bytes; the limit is 512 bytes.");
}

}  // namespace

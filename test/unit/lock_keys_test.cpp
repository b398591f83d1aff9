// Advisory-lock namespaces: the FNV-1a key hash (published test vectors),
// namespace names, text keys and key modes.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/lock_keys.hpp"
#include "test_util.hpp"

namespace {

using namespace claimqueue::locks;
using claimqueue::test::CatchError;
using claimqueue::test::Contains;

// ------------------------------------------------------------------- the hash

// Vectors from the FNV reference test suite (Landon Curt Noll, test_fnv.c,
// FNV-1a 32-bit), also in draft-eastlake-fnv.
TEST(Fnv1a32, PublishedVectors)
{
    EXPECT_EQ(Fnv1a32(""), 0x811c9dc5u);  // the offset basis
    EXPECT_EQ(Fnv1a32("a"), 0xe40c292cu);
    EXPECT_EQ(Fnv1a32("b"), 0xe70c2de5u);
    EXPECT_EQ(Fnv1a32("foo"), 0xa9f37ed7u);
    EXPECT_EQ(Fnv1a32("foobar"), 0xbf9cf968u);
    EXPECT_EQ(Fnv1a32("chongo was here!\n"), 0xd49930d5u);
}

TEST(Fnv1a32, HashesBytesNotCharacters)
{
    // "é" is C3 A9 in UTF-8; bytes >= 0x80 are taken unsigned.
    EXPECT_EQ(Fnv1a32("\xc3\xa9"), 0x1e9de8c1u);
    EXPECT_EQ(Fnv1a32("\xe6\x8a\xa5\xe8\xa1\xa8"), 0xc43c2cd5u);  // 报表
    // An embedded NUL is a byte like any other.
    EXPECT_NE(Fnv1a32(std::string_view("a\0", 2)), Fnv1a32("a"));
}

// The table of docs/locks.md: what hash namespaces lock for these keys.
TEST(HashedKey, ReadmeVectorsAsInt4)
{
    EXPECT_EQ(HashedKey(""), -2128831035);
    EXPECT_EQ(HashedKey("a"), -468965076);
    EXPECT_EQ(HashedKey("foobar"), -1080231576);
    EXPECT_EQ(HashedKey("daily-revenue"), -674965897);
    EXPECT_EQ(HashedKey("reports:daily"), -8506397);
    EXPECT_EQ(HashedKey("\xc3\xa9"), 513665217);
    EXPECT_EQ(HashedKey("\xe6\x8a\xa5\xe8\xa1\xa8"), -1002689323);
}

TEST(HashedKey, IsTheTwosComplementOfTheHash)
{
    for (const char *k : {"", "a", "foobar", "x", "order:42"}) {
        const uint32_t h = Fnv1a32(k);
        const int64_t expected = h >= 0x80000000u ? int64_t(h) - 4294967296LL : int64_t(h);
        EXPECT_EQ(HashedKey(k), expected) << k;
    }
}

// ------------------------------------------------------------ namespace names

TEST(CheckNamespaceName, AcceptsQueueNameSpellings)
{
    for (const char *name : {"a", "reports", "app.reports", "shard-7", "_internal", "0day"})
        EXPECT_CQ_OK(CheckNamespaceName(name)) << name;
    EXPECT_CQ_OK(CheckNamespaceName(std::string(63, 'n')));
}

TEST(CheckNamespaceName, EmptyIs22023)
{
    auto err = CatchError([] { CheckNamespaceName(""); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->sqlstate(), "22023");
    EXPECT_STREQ(err->what(), "lock namespace name must not be empty");
    EXPECT_TRUE(Contains(err->hint(), "1 to 63 bytes"));
}

TEST(CheckNamespaceName, SixtyFourBytesIs42622)
{
    auto err = CatchError([] { CheckNamespaceName(std::string(64, 'n')); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->sqlstate(), "42622");
    EXPECT_EQ(std::string(err->what()), "lock namespace name \"" + std::string(64, 'n') +
                                             "\" is too long");
    EXPECT_EQ(err->detail(), "It is 64 bytes; the limit is 63 bytes.");
}

TEST(CheckNamespaceName, BadSpellingIs22023AndNamed)
{
    for (const char *name : {"Reports", "my reports", "-x", ".x", "a/b", "caf\xc3\xa9"}) {
        auto err = CatchError([&] { CheckNamespaceName(name); });
        ASSERT_TRUE(err) << name;
        EXPECT_STREQ(err->sqlstate(), "22023") << name;
        EXPECT_EQ(std::string(err->what()), "invalid lock namespace name \"" + std::string(name) + "\"");
    }
    EXPECT_CQ_ERROR(CheckNamespaceName(std::string_view("a\0b", 3)), "22023");
}

// ------------------------------------------------------------------ text keys

TEST(CheckLockKey, AnyNonEmptyKeyUpTo512Bytes)
{
    EXPECT_EQ(kMaxLockKeyBytes, 512);
    for (const char *k : {"k", "Daily Revenue", "order:42", "\xe6\x8a\xa5\xe8\xa1\xa8", " "})
        EXPECT_CQ_OK(CheckLockKey(k)) << k;
    EXPECT_CQ_OK(CheckLockKey(std::string(512, 'k')));
}

TEST(CheckLockKey, EmptyIs22023)
{
    auto err = CatchError([] { CheckLockKey(""); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->sqlstate(), "22023");
    EXPECT_STREQ(err->what(), "lock key must not be empty");
}

TEST(CheckLockKey, FiveHundredThirteenBytesIs42622)
{
    auto err = CatchError([] { CheckLockKey(std::string(513, 'k')); });
    ASSERT_TRUE(err);
    EXPECT_STREQ(err->sqlstate(), "42622");
    EXPECT_TRUE(Contains(err->what(), "lock key \"" + std::string(80, 'k') + "...\" is too long"));
    EXPECT_EQ(err->detail(), "It is 513 bytes; the limit is 512 bytes.");
}

// ------------------------------------------------------------------ key modes

TEST(KeyMode, ParsesTheThreeUserModes)
{
    EXPECT_EQ(ParseKeyMode("registered"), KeyMode::kRegistered);
    EXPECT_EQ(ParseKeyMode("hash"), KeyMode::kHash);
    EXPECT_EQ(ParseKeyMode("integer"), KeyMode::kInteger);
    for (KeyMode m : {KeyMode::kRegistered, KeyMode::kHash, KeyMode::kInteger})
        EXPECT_EQ(ParseKeyMode(KeyModeName(m)), m);
}

TEST(KeyMode, OthersAre22023)
{
    for (const char *m : {"internal", "Hash", "", "int", "text"}) {
        auto err = CatchError([&] { ParseKeyMode(m); });
        ASSERT_TRUE(err) << m;
        EXPECT_STREQ(err->sqlstate(), "22023");
        EXPECT_EQ(std::string(err->what()), "invalid lock key mode \"" + std::string(m) + "\"");
        EXPECT_TRUE(Contains(err->hint(), "'registered', 'hash' and 'integer'"));
    }
}

}  // namespace

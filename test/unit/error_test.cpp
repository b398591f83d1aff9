// claimqueue::Error: the carrier of SQLSTATE, message, detail and hint.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>

#include "core/error.hpp"

namespace {

using claimqueue::Error;

TEST(Error, KeepsAllFields)
{
    Error e("42622", "message text", "detail text", "hint text");
    EXPECT_STREQ(e.sqlstate(), "42622");
    EXPECT_STREQ(e.what(), "message text");
    EXPECT_EQ(e.detail(), "detail text");
    EXPECT_EQ(e.hint(), "hint text");
}

TEST(Error, DetailAndHintDefaultToEmpty)
{
    Error e(claimqueue::sqlstate::kInvalidParameterValue, "m");
    EXPECT_STREQ(e.sqlstate(), "22023");
    EXPECT_TRUE(e.detail().empty());
    EXPECT_TRUE(e.hint().empty());
}

TEST(Error, SqlstateIsFiveCharactersTerminated)
{
    Error e("22003xyz", "m");
    EXPECT_EQ(std::strlen(e.sqlstate()), 5u);
    EXPECT_STREQ(e.sqlstate(), "22003");
}

TEST(Error, IsAStdException)
{
    try {
        throw Error("22004", "null");
    } catch (const std::exception &e) {
        EXPECT_STREQ(e.what(), "null");
        return;
    }
    FAIL() << "not caught as std::exception";
}

TEST(Error, SqlstateConstantsMatchPostgres)
{
    EXPECT_STREQ(claimqueue::sqlstate::kInvalidParameterValue, "22023");
    EXPECT_STREQ(claimqueue::sqlstate::kNullValueNotAllowed, "22004");
    EXPECT_STREQ(claimqueue::sqlstate::kNumericValueOutOfRange, "22003");
    EXPECT_STREQ(claimqueue::sqlstate::kNameTooLong, "42622");
}

}  // namespace

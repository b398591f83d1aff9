// Helpers shared by the unit tests of src/core.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace claimqueue::test {

// Runs `f` and returns the claimqueue::Error it threw, or nothing.
// Any other exception propagates and fails the test.
template <typename F>
std::optional<Error> CatchError(F &&f)
{
    try {
        std::forward<F>(f)();
    } catch (const Error &e) {
        return e;
    }
    return std::nullopt;
}

inline bool Contains(const std::string &haystack, const std::string &needle)
{
    return haystack.find(needle) != std::string::npos;
}

}  // namespace claimqueue::test

// EXPECT_CQ_ERROR(statement, "22023"): `statement` throws claimqueue::Error
// with that SQLSTATE. Evaluates to nothing; use CatchError to inspect text.
#define EXPECT_CQ_ERROR(statement, state)                                                 \
    do {                                                                                  \
        auto cq_err_ = ::claimqueue::test::CatchError([&] { statement; });                \
        ASSERT_TRUE(cq_err_.has_value()) << #statement " did not throw claimqueue::Error"; \
        EXPECT_STREQ(cq_err_->sqlstate(), state) << #statement ": " << cq_err_->what();   \
    } while (0)

#define EXPECT_CQ_OK(statement) EXPECT_NO_THROW(statement) << #statement

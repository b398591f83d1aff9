// CompareVersions: which of two extension versions is the earlier release
// (the library serves its own and the previous one, refuses the rest).
#include <gtest/gtest.h>

#include "core/versions.hpp"

namespace {

using claimqueue::CompareVersions;

int Sign(int v) { return (v > 0) - (v < 0); }

TEST(CompareVersions, EqualVersionsCompareEqual)
{
    for (const char *v : {"", "0", "0.4.0", "1.2.3", "0.5.0beta1"})
        EXPECT_EQ(CompareVersions(v, v), 0) << v;
}

TEST(CompareVersions, PartsCompareAsNumbers)
{
    struct { const char *a, *b; } earlier[] = {
        {"0.3.0", "0.4.0"}, {"0.4.0", "0.5.0"}, {"0.3.0", "0.3.1"}, {"0.3.1", "0.4.0"},
        {"0.9.0", "0.10.0"}, {"0.4.9", "0.4.10"}, {"0.99.99", "1.0.0"}, {"1.0.0", "10.0.0"},
    };
    for (auto &p : earlier) {
        EXPECT_EQ(Sign(CompareVersions(p.a, p.b)), -1) << p.a << " < " << p.b;
        EXPECT_EQ(Sign(CompareVersions(p.b, p.a)), 1) << p.b << " > " << p.a;
    }
}

TEST(CompareVersions, AMissingPartIsZero)
{
    EXPECT_EQ(CompareVersions("1.2", "1.2.0"), 0);
    EXPECT_EQ(CompareVersions("1", "1.0.0"), 0);
    EXPECT_EQ(Sign(CompareVersions("1.2", "1.2.1")), -1);
    EXPECT_EQ(Sign(CompareVersions("1.3", "1.2.9")), 1);
}

TEST(CompareVersions, ASuffixComesAfterTheBareNumber)
{
    EXPECT_EQ(Sign(CompareVersions("0.5.0", "0.5.0beta1")), -1);
    EXPECT_EQ(Sign(CompareVersions("0.5.0beta1", "0.5.0beta2")), -1);
    EXPECT_EQ(Sign(CompareVersions("0.5.0beta2", "0.5.1")), -1);
}

}  // namespace

// The cron parser: every field's bounds, names, lists, ranges and steps, the
// day-field restriction flags, aliases, the interval form, and the error
// messages (SQLSTATE 22023, naming the field and the bad value).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/cron.hpp"
#include "core/error.hpp"
#include "test_util.hpp"

namespace {

using claimqueue::cron::NextLocalSlot;
using claimqueue::cron::ParseSchedule;
using claimqueue::cron::Schedule;
using claimqueue::test::CatchError;
using claimqueue::test::Contains;

std::vector<int> Values(uint64_t bits)
{
    std::vector<int> out;
    for (int i = 0; i < 64; i++)
        if (bits >> i & 1)
            out.push_back(i);
    return out;
}

std::vector<int> Span(int low, int high, int step = 1)
{
    std::vector<int> out;
    for (int v = low; v <= high; v += step)
        out.push_back(v);
    return out;
}

// The five fields of an expression with `text` in field `index`, '*' elsewhere.
std::string WithField(int index, const std::string &text)
{
    std::string out;
    for (int i = 0; i < 5; i++) {
        if (i > 0)
            out += ' ';
        out += i == index ? text : "*";
    }
    return out;
}

uint64_t FieldBits(const Schedule &s, int index)
{
    switch (index) {
    case 0:
        return s.minutes;
    case 1:
        return s.hours;
    case 2:
        return s.days_of_month;
    case 3:
        return s.months;
    default:
        return s.days_of_week;
    }
}

struct FieldInfo {
    const char *name;
    int min;
    int max;
    int star_max;
};
const FieldInfo kFieldInfo[5] = {
    {"minute", 0, 59, 59},
    {"hour", 0, 23, 23},
    {"day-of-month", 1, 31, 31},
    {"month", 1, 12, 12},
    {"day-of-week", 0, 7, 6},
};

// Parses and expects 22023 with exactly `message`; returns the error.
claimqueue::Error ExpectRejected(const std::string &text, const std::string &message)
{
    auto err = CatchError([&] { ParseSchedule(text); });
    if (!err) {
        ADD_FAILURE() << "accepted: " << text;
        return claimqueue::Error("00000", "");
    }
    EXPECT_STREQ(err->sqlstate(), "22023") << text;
    EXPECT_EQ(std::string(err->what()), message) << text;
    return *err;
}

// ------------------------------------------------------------ full fields

TEST(ParseSchedule, StarsMatchEverything)
{
    const Schedule s = ParseSchedule("* * * * *");
    EXPECT_EQ(s.kind, Schedule::Kind::kCalendar);
    EXPECT_EQ(Values(s.minutes), Span(0, 59));
    EXPECT_EQ(Values(s.hours), Span(0, 23));
    EXPECT_EQ(Values(s.days_of_month), Span(1, 31));
    EXPECT_EQ(Values(s.months), Span(1, 12));
    EXPECT_EQ(Values(s.days_of_week), Span(0, 6));
    EXPECT_TRUE(s.day_of_month_unrestricted);
    EXPECT_TRUE(s.day_of_week_unrestricted);
}

// Every single value of every field, and one past each end.
TEST(ParseSchedule, EveryFieldAcceptsExactlyItsRange)
{
    for (int f = 0; f < 5; f++) {
        const FieldInfo &info = kFieldInfo[f];
        for (int v = info.min; v <= info.max; v++) {
            const Schedule s = ParseSchedule(WithField(f, std::to_string(v)));
            const int expected = (f == 4 && v == 7) ? 0 : v;  // 7 is Sunday
            ASSERT_EQ(Values(FieldBits(s, f)), std::vector<int>{expected}) << info.name << v;
        }
        for (int v : {info.min - 1, info.max + 1}) {
            if (v < 0)
                continue;
            ExpectRejected(WithField(f, std::to_string(v)),
                           std::string("cron field \"") + info.name + "\" value \"" +
                               std::to_string(v) + "\" is out of range " +
                               std::to_string(info.min) + "-" + std::to_string(info.max));
        }
    }
}

TEST(ParseSchedule, OutOfRangeMessagesNameFieldAndValue)
{
    ExpectRejected("60 * * * *", "cron field \"minute\" value \"60\" is out of range 0-59");
    ExpectRejected("0 25 * * *", "cron field \"hour\" value \"25\" is out of range 0-23");
    ExpectRejected("0 0 0 * *", "cron field \"day-of-month\" value \"0\" is out of range 1-31");
    ExpectRejected("0 0 32 * *", "cron field \"day-of-month\" value \"32\" is out of range 1-31");
    ExpectRejected("0 0 * 13 *", "cron field \"month\" value \"13\" is out of range 1-12");
    ExpectRejected("0 0 * 0 *", "cron field \"month\" value \"0\" is out of range 1-12");
    ExpectRejected("0 0 * * 8", "cron field \"day-of-week\" value \"8\" is out of range 0-7");
    // The bad element is named, not the whole field.
    ExpectRejected("0 1,25 * * *", "cron field \"hour\" value \"25\" is out of range 0-23");
    ExpectRejected("0 20-24 * * *", "cron field \"hour\" value \"24\" is out of range 0-23");
    ExpectRejected("99999999999 * * * *",
                   "cron field \"minute\" value \"99999999999\" is out of range 0-59");
    auto err = ExpectRejected("0 24 * * *", "cron field \"hour\" value \"24\" is out of range 0-23");
    EXPECT_TRUE(Contains(err.hint(), "Hours are 0-23"));
}

// Every range a-b with every step, in every field, against a reference.
TEST(ParseSchedule, EveryRangeAndStepOfEveryField)
{
    for (int f = 0; f < 5; f++) {
        const FieldInfo &info = kFieldInfo[f];
        const int max_step = info.star_max - info.min;
        for (int low = info.min; low <= info.max; low++) {
            for (int high = low; high <= info.max; high++) {
                for (int step = 1; step <= max_step; step++) {
                    const std::string text = std::to_string(low) + "-" + std::to_string(high) +
                                             (step > 1 ? "/" + std::to_string(step) : "");
                    uint64_t expected = 0;
                    for (int v = low; v <= high; v += step)
                        expected |= uint64_t{1} << (f == 4 && v == 7 ? 0 : v);
                    ASSERT_EQ(FieldBits(ParseSchedule(WithField(f, text)), f), expected)
                        << info.name << " " << text;
                }
            }
        }
    }
}

TEST(ParseSchedule, ListsCombineElements)
{
    EXPECT_EQ(Values(ParseSchedule("0,15,30,45 * * * *").minutes),
              (std::vector<int>{0, 15, 30, 45}));
    EXPECT_EQ(Values(ParseSchedule("* 1-3,5,20-22 * * *").hours),
              (std::vector<int>{1, 2, 3, 5, 20, 21, 22}));
    EXPECT_EQ(Values(ParseSchedule("5,5,1-5 * * * *").minutes), Span(1, 5));  // overlaps merge
    EXPECT_EQ(Values(ParseSchedule("* * 1,*/10 * *").days_of_month),
              (std::vector<int>{1, 11, 21, 31}));
}

TEST(ParseSchedule, Steps)
{
    EXPECT_EQ(Values(ParseSchedule("*/15 * * * *").minutes), Span(0, 59, 15));
    EXPECT_EQ(Values(ParseSchedule("*/1 * * * *").minutes), Span(0, 59));
    EXPECT_EQ(Values(ParseSchedule("*/59 * * * *").minutes), (std::vector<int>{0, 59}));
    EXPECT_EQ(Values(ParseSchedule("* */5 * * *").hours), Span(0, 23, 5));
    EXPECT_EQ(Values(ParseSchedule("* * 1-30/7 * *").days_of_month),
              (std::vector<int>{1, 8, 15, 22, 29}));
    EXPECT_EQ(Values(ParseSchedule("* * */2 * *").days_of_month), Span(1, 31, 2));
    EXPECT_EQ(Values(ParseSchedule("* * * */3 *").months), (std::vector<int>{1, 4, 7, 10}));
    // "a/n" runs to the end of the field.
    EXPECT_EQ(Values(ParseSchedule("5/15 * * * *").minutes), (std::vector<int>{5, 20, 35, 50}));
    EXPECT_EQ(Values(ParseSchedule("* 22/1 * * *").hours), (std::vector<int>{22, 23}));
    EXPECT_EQ(Values(ParseSchedule("* * * feb/3 *").months), (std::vector<int>{2, 5, 8, 11}));
    // A step larger than the range leaves its start only.
    EXPECT_EQ(Values(ParseSchedule("0-10/20 * * * *").minutes), (std::vector<int>{0}));
}

TEST(ParseSchedule, DayOfWeekStepsAndSunday)
{
    // "*" in day-of-week is 0-6, so "*/2" does not add 7 (Sunday twice).
    EXPECT_EQ(Values(ParseSchedule("* * * * */2").days_of_week), (std::vector<int>{0, 2, 4, 6}));
    EXPECT_EQ(Values(ParseSchedule("* * * * */6").days_of_week), (std::vector<int>{0, 6}));
    EXPECT_EQ(Values(ParseSchedule("* * * * 1-7/2").days_of_week),
              (std::vector<int>{0, 1, 3, 5}));
    EXPECT_EQ(Values(ParseSchedule("* * * * mon/2").days_of_week), (std::vector<int>{1, 3, 5}));
    EXPECT_EQ(Values(ParseSchedule("* * * * 7").days_of_week), (std::vector<int>{0}));
    EXPECT_EQ(Values(ParseSchedule("* * * * 0,7").days_of_week), (std::vector<int>{0}));
    EXPECT_EQ(Values(ParseSchedule("* * * * 5-7").days_of_week), (std::vector<int>{0, 5, 6}));
    EXPECT_EQ(Values(ParseSchedule("* * * * 7/1").days_of_week), (std::vector<int>{0}));
}

TEST(ParseSchedule, MonthNames)
{
    const char *names[] = {"jan", "feb", "mar", "apr", "may", "jun",
                           "jul", "aug", "sep", "oct", "nov", "dec"};
    for (int i = 0; i < 12; i++) {
        std::string upper = names[i];
        for (char &c : upper)
            c = static_cast<char>(c - 'a' + 'A');
        std::string title = names[i];
        title[0] = static_cast<char>(title[0] - 'a' + 'A');
        for (const std::string &spelling : {std::string(names[i]), upper, title})
            ASSERT_EQ(Values(ParseSchedule("0 0 1 " + spelling + " *").months),
                      std::vector<int>{i + 1})
                << spelling;
    }
    EXPECT_EQ(Values(ParseSchedule("0 0 1 jan-mar,oct-dec *").months),
              (std::vector<int>{1, 2, 3, 10, 11, 12}));
    EXPECT_EQ(Values(ParseSchedule("0 0 1 Apr-Oct *").months), Span(4, 10));
    EXPECT_EQ(Values(ParseSchedule("0 0 1 1-mar *").months), Span(1, 3));  // names and numbers mix
}

TEST(ParseSchedule, DayNames)
{
    const char *names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};
    for (int i = 0; i < 7; i++) {
        std::string upper = names[i];
        for (char &c : upper)
            c = static_cast<char>(c - 'a' + 'A');
        for (const std::string &spelling : {std::string(names[i]), upper})
            ASSERT_EQ(Values(ParseSchedule("0 0 * * " + spelling).days_of_week),
                      std::vector<int>{i})
                << spelling;
    }
    EXPECT_EQ(Values(ParseSchedule("0 0 * * mon-fri").days_of_week), Span(1, 5));
    EXPECT_EQ(Values(ParseSchedule("0 0 * * sun-sat").days_of_week), Span(0, 6));
    // "sun" closing a range is 7, so "mon-sun" is the whole week, "sat-sun" the weekend.
    EXPECT_EQ(Values(ParseSchedule("0 0 * * mon-sun").days_of_week), Span(0, 6));
    EXPECT_EQ(Values(ParseSchedule("0 0 * * sat-sun").days_of_week), (std::vector<int>{0, 6}));
    EXPECT_EQ(Values(ParseSchedule("0 0 * * Mon,WED,fri").days_of_week),
              (std::vector<int>{1, 3, 5}));
}

TEST(ParseSchedule, BlanksAndLeadingZeros)
{
    const Schedule s = ParseSchedule("  00\t08   01 01\t \t00  ");
    EXPECT_EQ(Values(s.minutes), std::vector<int>{0});
    EXPECT_EQ(Values(s.hours), std::vector<int>{8});
    EXPECT_EQ(Values(s.days_of_month), std::vector<int>{1});
    EXPECT_EQ(Values(s.months), std::vector<int>{1});
    EXPECT_EQ(Values(s.days_of_week), std::vector<int>{0});
    EXPECT_EQ(Values(ParseSchedule("*/05 * * * *").minutes), Span(0, 59, 5));
}

// Vixie cron's rule: a day field is unrestricted when its text starts with '*'.
TEST(ParseSchedule, DayFieldRestriction)
{
    struct Case {
        const char *field;
        bool unrestricted;
    };
    const Case cases[] = {
        {"*", true},     {"*/1", true},  {"*/2", true},   {"*,5", true},
        {"1-31", false}, {"5,*", false}, {"1/1", false},  {"15", false},
    };
    for (const Case &c : cases) {
        const std::string field = c.field;
        EXPECT_EQ(ParseSchedule("0 0 " + field + " * *").day_of_month_unrestricted,
                  c.unrestricted)
            << field;
        const std::string dow = field == "1-31" ? "0-6" : field == "15" ? "5" : field;
        EXPECT_EQ(ParseSchedule("0 0 * * " + dow).day_of_week_unrestricted, c.unrestricted)
            << dow;
    }
    // The other fields' spelling does not matter.
    const Schedule s = ParseSchedule("*/5 1 * 2 *");
    EXPECT_TRUE(s.day_of_month_unrestricted);
    EXPECT_TRUE(s.day_of_week_unrestricted);
}

// ------------------------------------------------------------------ aliases

TEST(ParseSchedule, AliasesEqualTheirExpansions)
{
    struct Case {
        const char *alias;
        const char *fields;
    };
    const Case cases[] = {
        {"@yearly", "0 0 1 1 *"},  {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
        {"@weekly", "0 0 * * 0"},  {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
        {"@hourly", "0 * * * *"},  {"@HOURLY", "0 * * * *"},   {"  @Daily\t", "0 0 * * *"},
    };
    for (const Case &c : cases) {
        const Schedule a = ParseSchedule(c.alias);
        const Schedule b = ParseSchedule(c.fields);
        EXPECT_EQ(a.kind, Schedule::Kind::kCalendar) << c.alias;
        EXPECT_EQ(a.minutes, b.minutes) << c.alias;
        EXPECT_EQ(a.hours, b.hours) << c.alias;
        EXPECT_EQ(a.days_of_month, b.days_of_month) << c.alias;
        EXPECT_EQ(a.months, b.months) << c.alias;
        EXPECT_EQ(a.days_of_week, b.days_of_week) << c.alias;
        EXPECT_EQ(a.day_of_month_unrestricted, b.day_of_month_unrestricted) << c.alias;
        EXPECT_EQ(a.day_of_week_unrestricted, b.day_of_week_unrestricted) << c.alias;
    }
    EXPECT_EQ(Values(ParseSchedule("@weekly").days_of_week), std::vector<int>{0});
}

TEST(ParseSchedule, UnknownAliases)
{
    auto err = ExpectRejected("@fortnightly", "unknown cron alias \"@fortnightly\"");
    EXPECT_TRUE(Contains(err.hint(), "@yearly, @annually, @monthly, @weekly, @daily, @midnight "
                                     "and @hourly"));
    err = ExpectRejected("@reboot", "unknown cron alias \"@reboot\"");
    EXPECT_TRUE(Contains(err.hint(), "@reboot has no meaning"));
    ExpectRejected("@", "unknown cron alias \"@\"");
    err = ExpectRejected("@daily 5", "cron alias \"@daily\" must stand alone");
    EXPECT_EQ(err.hint(), "Remove what follows the alias.");
}

// ---------------------------------------------------------------- intervals

TEST(ParseSchedule, Intervals)
{
    struct Case {
        const char *text;
        int64_t seconds;
    };
    const Case cases[] = {
        {"every 30 seconds", 30},     {"every 1 second", 1},       {"every 1 seconds", 1},
        {"every 2 second", 2},        {"every 5 minutes", 300},    {"every 1 minute", 60},
        {"every 2 hours", 7200},      {"every 1 hour", 3600},      {"EVERY 5 Minutes", 300},
        {"  every\t90   SECONDS ", 90}, {"every 007 seconds", 7},  {"every 86400 seconds", 86400},
        {"every 1440 minutes", 86400}, {"every 24 hours", 86400},  {"every 90 minutes", 5400},
    };
    for (const Case &c : cases) {
        const Schedule s = ParseSchedule(c.text);
        EXPECT_EQ(s.kind, Schedule::Kind::kInterval) << c.text;
        EXPECT_EQ(s.interval_seconds, c.seconds) << c.text;
    }
    EXPECT_EQ(claimqueue::cron::kMaxIntervalSeconds, 86400);
}

TEST(ParseSchedule, IntervalErrors)
{
    auto err = ExpectRejected("every 0 seconds",
                              "cron interval count \"0\" is out of range 1-86400 for seconds");
    EXPECT_EQ(err.detail(), "Intervals run from 1 second to 24 hours.");
    ExpectRejected("every 86401 seconds",
                   "cron interval count \"86401\" is out of range 1-86400 for seconds");
    ExpectRejected("every 1441 minutes",
                   "cron interval count \"1441\" is out of range 1-1440 for minutes");
    ExpectRejected("every 0 minutes", "cron interval count \"0\" is out of range 1-1440 for minutes");
    err = ExpectRejected("every 25 hours", "cron interval count \"25\" is out of range 1-24 for hours");
    EXPECT_TRUE(Contains(err.hint(), "0 0 */2 * *"));
    ExpectRejected("every 99999999999 seconds",
                   "cron interval count \"99999999999\" is out of range 1-86400 for seconds");
    ExpectRejected("every -5 seconds", "cron interval count \"-5\" is not a number");
    ExpectRejected("every five seconds", "cron interval count \"five\" is not a number");
    ExpectRejected("every 1.5 hours", "cron interval count \"1.5\" is not a number");
    err = ExpectRejected("every 2 days",
                         "cron interval unit \"days\" is not seconds, minutes or hours");
    EXPECT_TRUE(Contains(err.hint(), "@weekly"));
    err = ExpectRejected("every 2 fortnights",
                         "cron interval unit \"fortnights\" is not seconds, minutes or hours");
    EXPECT_TRUE(Contains(err.hint(), "every 30 seconds"));
    ExpectRejected("every 5 secs", "cron interval unit \"secs\" is not seconds, minutes or hours");
    ExpectRejected("every 5",
                   "cron interval \"every 5\" is not of the form \"every <count> <unit>\"");
    ExpectRejected("every", "cron interval \"every\" is not of the form \"every <count> <unit>\"");
    ExpectRejected("every 5 seconds please", "cron interval \"every 5 seconds please\" is not of "
                                             "the form \"every <count> <unit>\"");
}

// ------------------------------------------------------------ other errors

TEST(ParseSchedule, EmptyExpression)
{
    for (const char *text : {"", " ", "\t \t"}) {
        auto err = ExpectRejected(text, "cron expression must not be empty");
        EXPECT_TRUE(Contains(err.hint(), "every 30 seconds")) << err.hint();
    }
}

TEST(ParseSchedule, WrongNumberOfFields)
{
    auto err = ExpectRejected("* * * *", "cron expression \"* * * *\" has 4 fields, not 5");
    EXPECT_EQ(err.detail(), "The fields are minute, hour, day-of-month, month and day-of-week.");
    ExpectRejected("*", "cron expression \"*\" has 1 field, not 5");
    ExpectRejected("xyz", "cron expression \"xyz\" has 1 field, not 5");
    err = ExpectRejected("0 * * * * *", "cron expression \"0 * * * * *\" has 6 fields, not 5");
    EXPECT_TRUE(Contains(err.hint(), "Seconds and years are not supported"));
    EXPECT_TRUE(Contains(err.hint(), "every 30 seconds"));
    err = ExpectRejected("0 0 12 * * ? 2030",
                         "cron expression \"0 0 12 * * ? 2030\" has 7 fields, not 5");
    EXPECT_TRUE(Contains(err.hint(), "Seconds and years"));
    ExpectRejected("1 2 3 4 5 6 7 8", "cron expression \"1 2 3 4 5 6 7 8\" has 8 fields, not 5");
}

TEST(ParseSchedule, ReversedRanges)
{
    auto err = ExpectRejected("0 22-2 * * *", "cron field \"hour\" range \"22-2\" is reversed");
    EXPECT_TRUE(Contains(err.hint(), "\"22-23,0-2\"")) << err.hint();
    err = ExpectRejected("50-10 * * * *", "cron field \"minute\" range \"50-10\" is reversed");
    EXPECT_TRUE(Contains(err.hint(), "\"50-59,0-10\"")) << err.hint();
    err = ExpectRejected("0 0 * nov-feb *", "cron field \"month\" range \"nov-feb\" is reversed");
    EXPECT_TRUE(Contains(err.hint(), "\"nov-12,1-feb\"")) << err.hint();
    err = ExpectRejected("0 0 * * fri-mon",
                         "cron field \"day-of-week\" range \"fri-mon\" is reversed");
    EXPECT_TRUE(Contains(err.hint(), "\"fri-6,0-mon\"")) << err.hint();
    ExpectRejected("0 0 31-1 * *", "cron field \"day-of-month\" range \"31-1\" is reversed");
    ExpectRejected("0 0 * * 6-0/2", "cron field \"day-of-week\" range \"6-0\" is reversed");
}

TEST(ParseSchedule, BadSteps)
{
    auto err = ExpectRejected("*/0 * * * *", "cron field \"minute\" step \"0\" is out of range 1-59");
    err = ExpectRejected("*/60 * * * *", "cron field \"minute\" step \"60\" is out of range 1-59");
    EXPECT_TRUE(Contains(err.hint(), "every 90 minutes"));
    ExpectRejected("*/90 * * * *", "cron field \"minute\" step \"90\" is out of range 1-59");
    ExpectRejected("0 */24 * * *", "cron field \"hour\" step \"24\" is out of range 1-23");
    ExpectRejected("0 0 */31 * *", "cron field \"day-of-month\" step \"31\" is out of range 1-30");
    ExpectRejected("0 0 * */12 *", "cron field \"month\" step \"12\" is out of range 1-11");
    ExpectRejected("0 0 * * */7", "cron field \"day-of-week\" step \"7\" is out of range 1-6");
    ExpectRejected("*/x * * * *", "cron field \"minute\" step \"x\" is not a number");
    ExpectRejected("*/ * * * *", "cron field \"minute\" step \"\" is not a number");
    ExpectRejected("*/-1 * * * *", "cron field \"minute\" step \"-1\" is not a number");
    ExpectRejected("1/2/3 * * * *", "cron field \"minute\" step \"2/3\" is not a number");
    ExpectRejected("*/99999999999 * * * *",
                   "cron field \"minute\" step \"99999999999\" is out of range 1-59");
}

TEST(ParseSchedule, MalformedElements)
{
    ExpectRejected("1,,2 * * * *", "cron field \"minute\" value \"1,,2\" has an empty list element");
    ExpectRejected("1, * * * *", "cron field \"minute\" value \"1,\" has an empty list element");
    ExpectRejected("0 ,5 * * *", "cron field \"hour\" value \",5\" has an empty list element");
    ExpectRejected("5- * * * *", "cron field \"minute\" value \"5-\" is incomplete");
    ExpectRejected("-5 * * * *", "cron field \"minute\" value \"-5\" is incomplete");
    ExpectRejected("/5 * * * *", "cron field \"minute\" value \"/5\" is incomplete");
    ExpectRejected("*-5 * * * *", "cron field \"minute\" value \"*-5\" uses \"*\" inside a range");
    ExpectRejected("1-2-3 * * * *", "cron field \"minute\" value \"2-3\" is not a number");
    ExpectRejected("x * * * *", "cron field \"minute\" value \"x\" is not a number");
    ExpectRejected("0 jan * * *", "cron field \"hour\" value \"jan\" is not a number");
    ExpectRejected("0 0 mon * *", "cron field \"day-of-month\" value \"mon\" is not a number");
    ExpectRejected("0 0 * foo *", "cron field \"month\" value \"foo\" is not a month number or name");
    ExpectRejected("0 0 * mon *", "cron field \"month\" value \"mon\" is not a month number or name");
    ExpectRejected("0 0 * * XYZ",
                   "cron field \"day-of-week\" value \"XYZ\" is not a day-of-week number or name");
    ExpectRejected("0 0 * * jan",
                   "cron field \"day-of-week\" value \"jan\" is not a day-of-week number or name");
    ExpectRejected("0 0 * * 1.5",
                   "cron field \"day-of-week\" value \"1.5\" is not a day-of-week number or name");
}

TEST(ParseSchedule, HintsForLongNamesAndQuartz)
{
    auto err = ExpectRejected("0 0 * * monday",
                              "cron field \"day-of-week\" value \"monday\" is not a day-of-week "
                              "number or name");
    EXPECT_EQ(err.hint(), "Use the three-letter name \"mon\".");
    err = ExpectRejected("0 0 1 January *",
                         "cron field \"month\" value \"January\" is not a month number or name");
    EXPECT_EQ(err.hint(), "Use the three-letter name \"jan\".");
    for (const char *text : {"0 0 ? * mon", "0 0 L * *", "0 0 15W * *", "0 0 LW * *",
                             "0 0 * * 5L", "0 0 * * 1#2"}) {
        auto quartz = CatchError([&] { ParseSchedule(text); });
        ASSERT_TRUE(quartz) << text;
        EXPECT_STREQ(quartz->sqlstate(), "22023");
        EXPECT_TRUE(Contains(quartz->hint(), "Quartz extensions")) << text;
        EXPECT_TRUE(Contains(quartz->what(), "cron field \"day-")) << quartz->what();
    }
}

TEST(ParseSchedule, LongValuesAreShortenedInMessages)
{
    const std::string junk(200, 'x');
    auto err = CatchError([&] { ParseSchedule(junk + " * * * *"); });
    ASSERT_TRUE(err);
    EXPECT_TRUE(Contains(err->what(), std::string(80, 'x') + "...\" is not a number"));
    EXPECT_LT(std::string(err->what()).size(), 200u);
}

// Impossible dates are refused when parsed, naming both fields.
TEST(ParseSchedule, DatesThatNeverOccur)
{
    auto err = ExpectRejected("0 0 30 2 *",
                              "cron field \"day-of-month\" value \"30\" never occurs in field "
                              "\"month\" value \"2\"");
    EXPECT_TRUE(Contains(err.detail(), "February has 29 days at most"));
    ExpectRejected("0 0 31 apr,jun,sep,nov *",
                   "cron field \"day-of-month\" value \"31\" never occurs in field \"month\" "
                   "value \"apr,jun,sep,nov\"");
    ExpectRejected("0 0 30,31 feb *", "cron field \"day-of-month\" value \"30,31\" never occurs "
                                      "in field \"month\" value \"feb\"");
    // With day-of-week "*/2" (unrestricted) both day fields must match: still impossible.
    ExpectRejected("0 0 30 2 */2", "cron field \"day-of-month\" value \"30\" never occurs in "
                                   "field \"month\" value \"2\"");
    // Possible: leap days, a month that has the day, the OR rule, an unrestricted day field.
    for (const char *text : {"0 0 29 2 *", "0 0 31 2,3 *", "0 0 30 2 mon", "0 0 */30 2 *",
                             "0 0 30 * *", "0 0 31 jan *", "0 0 29-31 feb *"})
        EXPECT_CQ_OK(ParseSchedule(text));
}

// Random words made of cron's tokens: each text either parses into a
// schedule with a next slot, or is refused with 22023; nothing else happens.
TEST(ParseSchedule, RandomInputIsParsedOrRefused)
{
    const char *tokens[] = {"*", "*", "0", "1", "2", "5", "7", "12", "15", "23", "30", "31",
                            "59", "60", "-", "/", "/", ",", ",", "mon", "sun", "jan", "dec",
                            "L", "?", "#", "x", "@daily", "every", "seconds", "\t"};
    const size_t token_count = sizeof tokens / sizeof tokens[0];
    const char *common_words[] = {"*", "*/5", "*/2", "0", "1", "5", "1-5", "0,30", "2-4/2",
                                  "7", "12", "mon-fri", "jan", "sun"};
    const size_t common_word_count = sizeof common_words / sizeof common_words[0];
    std::mt19937 rng(16);
    int parsed = 0;
    int refused = 0;
    for (int i = 0; i < 20000; i++) {
        const size_t words = rng() % 4 != 0 ? 5 : rng() % 8;
        std::string text;
        for (size_t w = 0; w < words; w++) {
            if (w > 0)
                text += ' ';
            if (rng() % 5 != 0) {  // mostly words that are often valid
                text += common_words[rng() % common_word_count];
                continue;
            }
            const size_t parts = 1 + rng() % 4;
            for (size_t k = 0; k < parts; k++)
                text += tokens[rng() % token_count];
        }
        try {
            const Schedule s = ParseSchedule(text);
            parsed++;
            if (s.kind == Schedule::Kind::kCalendar) {
                ASSERT_TRUE(NextLocalSlot(s, claimqueue::civil::CivilTime{}).has_value()) << text;
            }
        } catch (const claimqueue::Error &e) {
            refused++;
            ASSERT_STREQ(e.sqlstate(), "22023") << text;
            ASSERT_FALSE(std::string(e.what()).empty());
        }
    }
    EXPECT_GT(parsed, 100);
    EXPECT_GT(refused, 100);
}

TEST(ParseSchedule, HugeInputIsRefusedQuickly)
{
    const std::string huge(100000, '1');
    auto err = CatchError([&] { ParseSchedule(huge + " * * * *"); });
    ASSERT_TRUE(err);
    EXPECT_TRUE(Contains(err->what(), "is out of range 0-59"));
    const std::string list = "0" + std::string(50000, ',') + " * * * *";
    EXPECT_CQ_ERROR(ParseSchedule(list), "22023");
}

}  // namespace

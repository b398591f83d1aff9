// The cron parser and the next-run computation (see cron.hpp).
#include "core/cron.hpp"

#include <algorithm>
#include <cctype>
#include <string>

#include "core/error.hpp"
#include "core/rules.hpp"

namespace claimqueue::cron {

using civil::CivilTime;
using civil::FloorDiv;
using rules::Quoted;

namespace {

constexpr int64_t kUsecPerSecond = 1000000;
// The last microsecond of kMaxYear, UTC: 9999-12-31 23:59:59.999999.
constexpr int64_t kMaxInstantUsec = INT64_C(253402300800) * kUsecPerSecond - 1;
// Longer digit strings are out of range in every field; stops overflow.
constexpr size_t kMaxDigits = 9;

// ------------------------------------------------------------------ fields

const char *const kMonthNames[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                   "jul", "aug", "sep", "oct", "nov", "dec"};
const char *const kDayNames[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

enum FieldIndex { kMinute, kHour, kDayOfMonth, kMonth, kDayOfWeek };

struct Field {
    FieldIndex index;
    const char *name;
    int min;
    int max;       // largest value accepted
    int star_max;  // what "*" and "a/n" run up to (day-of-week: 6, Saturday)
    const char *const *names;  // three-letter names, or nullptr
    int first_named;           // the value of names[0]
    int name_count;
    const char *hint;
};

const Field kFields[5] = {
    {kMinute, "minute", 0, 59, 59, nullptr, 0, 0,
     "Minutes are 0-59; write a list such as 0,30, a range such as 10-20 or a step such as "
     "*/15."},
    {kHour, "hour", 0, 23, 23, nullptr, 0, 0,
     "Hours are 0-23; write a list such as 8,17, a range such as 9-17 or a step such as */2."},
    {kDayOfMonth, "day-of-month", 1, 31, 31, nullptr, 0, 0,
     "Days of the month are 1-31; write a list such as 1,15, a range such as 1-7 or a step "
     "such as */2."},
    {kMonth, "month", 1, 12, 12, kMonthNames, 1, 12,
     "Months are 1-12 or jan, feb, ..., dec; write a list such as jan,jul, a range such as "
     "mar-oct or a step such as */3."},
    {kDayOfWeek, "day-of-week", 0, 7, 6, kDayNames, 0, 7,
     "Days of the week are 0-7 (0 and 7 are Sunday) or sun, mon, ..., sat; write a list "
     "such as mon,thu or a range such as mon-fri."},
};
const char *kExamplesHint =
    "Write five fields (minute hour day-of-month month day-of-week) such as \"*/5 * * * *\", "
    "an alias such as \"@hourly\", or an interval such as \"every 30 seconds\".";
const char *kIntervalHint =
    "Write an interval such as \"every 30 seconds\", \"every 5 minutes\" or \"every 2 hours\".";

std::string Lower(std::string_view text)
{
    std::string out(text);
    for (char &c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool IsBlank(char c)
{
    return c == ' ' || c == '\t';
}

bool AllDigits(std::string_view text)
{
    return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return c >= '0' && c <= '9';
    });
}

// Digits as a number; more than kMaxDigits digits reads as a huge value.
int64_t DigitsValue(std::string_view digits)
{
    if (digits.size() > kMaxDigits)
        return INT64_C(1000000000);
    int64_t value = 0;
    for (char c : digits)
        value = value * 10 + (c - '0');
    return value;
}

std::vector<std::string_view> SplitBlanks(std::string_view text)
{
    std::vector<std::string_view> words;
    size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && IsBlank(text[i]))
            i++;
        size_t start = i;
        while (i < text.size() && !IsBlank(text[i]))
            i++;
        if (i > start)
            words.push_back(text.substr(start, i - start));
    }
    return words;
}

[[noreturn]] void FieldError(const Field &field, const std::string &what, const std::string &hint)
{
    throw Error(sqlstate::kInvalidParameterValue,
                std::string("cron field \"") + field.name + "\" " + what, {}, hint);
}

// Quartz's extensions, refused with a hint that says so.
bool LooksLikeQuartz(std::string_view piece)
{
    const std::string lower = Lower(piece);
    if (lower.find_first_of("?#") != std::string::npos || lower == "l" || lower == "lw")
        return true;
    return lower.size() >= 2 && (lower.back() == 'l' || lower.back() == 'w') &&
           AllDigits(std::string_view(lower).substr(0, lower.size() - 1));
}

// One value of a field: a number or a three-letter name. `range_end` lets
// "sun" close a range as 7 ("mon-sun").
int ParseValue(const Field &field, std::string_view piece, std::string_view element,
               bool range_end)
{
    if (piece.empty())
        FieldError(field, "value " + Quoted(element) + " is incomplete", field.hint);
    if (piece == "*")
        FieldError(field, "value " + Quoted(element) + " uses \"*\" inside a range", field.hint);
    if (AllDigits(piece)) {
        const int64_t value = DigitsValue(piece);
        if (value < field.min || value > field.max)
            FieldError(field,
                       "value " + Quoted(piece) + " is out of range " + std::to_string(field.min) +
                           "-" + std::to_string(field.max),
                       field.hint);
        return static_cast<int>(value);
    }
    const std::string lower = Lower(piece);
    for (int i = 0; i < field.name_count; i++) {
        if (lower == field.names[i]) {
            const int value = field.first_named + i;
            return (range_end && field.index == kDayOfWeek && value == 0) ? 7 : value;
        }
    }
    std::string hint = field.hint;
    if (LooksLikeQuartz(piece)) {
        hint = "\"?\", \"L\", \"W\" and \"#\" are Quartz extensions and are not supported. " + hint;
    } else if (field.names != nullptr && lower.size() > 3) {
        for (int i = 0; i < field.name_count; i++)
            if (lower.compare(0, 3, field.names[i]) == 0)
                hint = std::string("Use the three-letter name \"") + field.names[i] + "\".";
    }
    const char *kind = field.names == nullptr ? "is not a number"
                       : field.index == kMonth ? "is not a month number or name"
                                                    : "is not a day-of-week number or name";
    FieldError(field, "value " + Quoted(piece) + " " + kind, hint);
}

// Adds one list element ("*", "a", "a-b", each with an optional "/n") to `bits`.
void ParseElement(const Field &field, std::string_view element, uint64_t *bits)
{
    std::string_view base = element;
    int step = 1;
    bool stepped = false;
    if (size_t slash = element.find('/'); slash != std::string_view::npos) {
        base = element.substr(0, slash);
        std::string_view step_text = element.substr(slash + 1);
        if (!AllDigits(step_text))
            FieldError(field, "step " + Quoted(step_text) + " is not a number", field.hint);
        const int64_t max_step = field.star_max - field.min;
        const int64_t value = DigitsValue(step_text);
        if (value < 1 || value > max_step)
            FieldError(field,
                       "step " + Quoted(step_text) + " is out of range 1-" +
                           std::to_string(max_step),
                       field.index == kMinute || field.index == kHour
                           ? "A step cannot reach past the end of its field; for a longer "
                             "period write an interval such as \"every 90 minutes\"."
                           : field.hint);
        step = static_cast<int>(value);
        stepped = true;
    }

    int low;
    int high;
    if (base == "*") {
        low = field.min;
        high = field.star_max;
    } else if (size_t dash = base.find('-'); dash != std::string_view::npos) {
        low = ParseValue(field, base.substr(0, dash), element, false);
        high = ParseValue(field, base.substr(dash + 1), element, true);
        if (low > high)
            FieldError(field, "range " + Quoted(base) + " is reversed",
                       "Ranges run from low to high; for a range that wraps around write \"" +
                           std::string(base.substr(0, dash)) + "-" +
                           std::to_string(field.star_max) + "," + std::to_string(field.min) +
                           "-" + std::string(base.substr(dash + 1)) + "\" instead.");
    } else {
        low = ParseValue(field, base, element, false);
        // "a/n" runs to the end of the field, as robfig/cron and croniter read it.
        high = stepped ? std::max(low, field.star_max) : low;
    }
    for (int v = low; v <= high; v += step)
        *bits |= uint64_t{1} << v;
}

uint64_t ParseField(const Field &field, std::string_view text)
{
    uint64_t bits = 0;
    size_t start = 0;
    for (;;) {
        const size_t comma = text.find(',', start);
        const std::string_view element =
            text.substr(start, comma == std::string_view::npos ? std::string_view::npos
                                                               : comma - start);
        if (element.empty())
            FieldError(field, "value " + Quoted(text) + " has an empty list element", field.hint);
        ParseElement(field, element, &bits);
        if (comma == std::string_view::npos)
            return bits;
        start = comma + 1;
    }
}

// A restricted day-of-month with an unrestricted day-of-week must name a day
// that exists in one of the months (Feb 29 counts: leap years have it).
void CheckSomeDateExists(const Schedule &s, std::string_view day_text, std::string_view month_text)
{
    if (s.day_of_month_unrestricted || !s.day_of_week_unrestricted)
        return;
    for (int month = 1; month <= 12; month++) {
        if ((s.months >> month & 1) == 0)
            continue;
        const int longest = month == 2 ? 29 : civil::DaysInMonth(2001, month);
        for (int day = 1; day <= longest; day++)
            if (s.days_of_month >> day & 1)
                return;
    }
    throw Error(sqlstate::kInvalidParameterValue,
                "cron field \"day-of-month\" value " + Quoted(day_text) +
                    " never occurs in field \"month\" value " + Quoted(month_text),
                "None of those months has such a day (February has 29 days at most, April, "
                "June, September and November 30).",
                "Choose days that exist in those months.");
}

Schedule ParseFields(const std::vector<std::string_view> &words)
{
    Schedule s;
    s.kind = Schedule::Kind::kCalendar;
    s.minutes = ParseField(kFields[kMinute], words[kMinute]);
    s.hours = static_cast<uint32_t>(ParseField(kFields[kHour], words[kHour]));
    s.days_of_month = static_cast<uint32_t>(ParseField(kFields[kDayOfMonth], words[kDayOfMonth]));
    s.months = static_cast<uint16_t>(ParseField(kFields[kMonth], words[kMonth]));
    uint64_t days_of_week = ParseField(kFields[kDayOfWeek], words[kDayOfWeek]);
    if (days_of_week >> 7 & 1)
        days_of_week = (days_of_week | 1) & ~(uint64_t{1} << 7);  // 7 is Sunday, as 0
    s.days_of_week = static_cast<uint8_t>(days_of_week);
    s.day_of_month_unrestricted = words[kDayOfMonth][0] == '*';
    s.day_of_week_unrestricted = words[kDayOfWeek][0] == '*';
    CheckSomeDateExists(s, words[kDayOfMonth], words[kMonth]);
    return s;
}

Schedule ParseAlias(std::string_view word)
{
    struct Alias {
        const char *name;
        const char *fields;
    };
    static const Alias kAliases[] = {
        {"@yearly", "0 0 1 1 *"},  {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
        {"@weekly", "0 0 * * 0"},  {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
        {"@hourly", "0 * * * *"},
    };
    const std::string lower = Lower(word);
    for (const Alias &alias : kAliases)
        if (lower == alias.name)
            return ParseFields(SplitBlanks(alias.fields));
    std::string hint =
        "The aliases are @yearly, @annually, @monthly, @weekly, @daily, @midnight and @hourly.";
    if (lower == "@reboot")
        hint = "@reboot has no meaning for a schedule in the database. " + hint;
    throw Error(sqlstate::kInvalidParameterValue, "unknown cron alias " + Quoted(word), {}, hint);
}

Schedule ParseInterval(std::string_view text, const std::vector<std::string_view> &words)
{
    if (words.size() != 3)
        throw Error(sqlstate::kInvalidParameterValue,
                    "cron interval " + Quoted(text) + " is not of the form \"every <count> <unit>\"",
                    {}, kIntervalHint);
    struct Unit {
        const char *singular;
        const char *plural;
        int64_t seconds;
    };
    static const Unit kUnits[] = {
        {"second", "seconds", 1}, {"minute", "minutes", 60}, {"hour", "hours", 3600}};
    const std::string unit_text = Lower(words[2]);
    const Unit *unit = nullptr;
    for (const Unit &u : kUnits)
        if (unit_text == u.singular || unit_text == u.plural)
            unit = &u;
    if (unit == nullptr) {
        const bool longer = unit_text.rfind("day", 0) == 0 || unit_text.rfind("week", 0) == 0 ||
                            unit_text.rfind("month", 0) == 0 || unit_text.rfind("year", 0) == 0;
        throw Error(sqlstate::kInvalidParameterValue,
                    "cron interval unit " + Quoted(words[2]) + " is not seconds, minutes or hours",
                    {},
                    longer ? "For daily or longer periods use cron fields such as \"0 0 * * *\" "
                             "or an alias such as \"@weekly\"."
                           : kIntervalHint);
    }
    if (!AllDigits(words[1]))
        throw Error(sqlstate::kInvalidParameterValue,
                    "cron interval count " + Quoted(words[1]) + " is not a number", {},
                    kIntervalHint);
    const int64_t most = kMaxIntervalSeconds / unit->seconds;
    const int64_t count = DigitsValue(words[1]);
    if (count < 1 || count > most)
        throw Error(sqlstate::kInvalidParameterValue,
                    "cron interval count " + Quoted(words[1]) + " is out of range 1-" +
                        std::to_string(most) + " for " + unit->plural,
                    "Intervals run from 1 second to 24 hours.",
                    count < 1 ? kIntervalHint
                              : "For longer periods use cron fields, such as \"0 0 */2 * *\" "
                                "for every other day.");
    Schedule s;
    s.kind = Schedule::Kind::kInterval;
    s.interval_seconds = count * unit->seconds;
    return s;
}

// ------------------------------------------------------------------ search

// The lowest set bit of `bits` at or above `from`, or -1.
int NextBit(uint64_t bits, int from)
{
    if (from > 63)
        return -1;
    const uint64_t rest = bits & (~uint64_t{0} << from);
    return rest == 0 ? -1 : __builtin_ctzll(rest);
}

bool DayMatches(const Schedule &s, int day, int weekday)
{
    const bool by_month_day = (s.days_of_month >> day & 1) != 0;
    const bool by_weekday = (s.days_of_week >> weekday & 1) != 0;
    if (!s.day_of_month_unrestricted && !s.day_of_week_unrestricted)
        return by_month_day || by_weekday;
    return by_month_day && by_weekday;
}

// The first day >= `day` of the month that matches, or -1.
int NextMatchingDay(const Schedule &s, int64_t year, int month, int day)
{
    const int last = civil::DaysInMonth(year, month);
    int weekday = civil::DayOfWeek(civil::DaysFromCivil(year, month, day));
    for (int d = day; d <= last; d++) {
        if (DayMatches(s, d, weekday))
            return d;
        weekday = (weekday + 1) % 7;
    }
    return -1;
}

// Where the slot search stands: a wall-clock minute. Moving to the next
// month, day or hour resets the smaller fields.
struct SearchPosition {
    explicit SearchPosition(const CivilTime &t)
        : year(t.year), month(t.month), day(t.day), hour(t.hour), minute(t.minute)
    {
    }
    void StartOfMonth(int m)
    {
        month = m;
        StartOfDay(1);
    }
    void StartOfDay(int d)
    {
        day = d;
        StartOfHour(0);
    }
    void StartOfHour(int h)
    {
        hour = h;
        minute = 0;
    }
    void NextMonth()
    {
        if (month == 12) {
            year++;
            StartOfMonth(1);
        } else {
            StartOfMonth(month + 1);
        }
    }
    void NextDay()
    {
        if (day >= civil::DaysInMonth(year, month))
            NextMonth();
        else
            StartOfDay(day + 1);
    }
    void NextHour()
    {
        if (hour == 23)
            NextDay();
        else
            StartOfHour(hour + 1);
    }

    int64_t year;
    int month;
    int day;
    int hour;
    int minute;
};

std::optional<int64_t> NextIntervalRun(const Schedule &s, int64_t after_usec)
{
    // Only a hand-built Schedule can hold a bad interval; ParseSchedule never does.
    if (s.interval_seconds < 1 || s.interval_seconds > kMaxIntervalSeconds ||
        after_usec > kMaxInstantUsec)
        return std::nullopt;
    const int64_t period = s.interval_seconds * kUsecPerSecond;
    // after_usec <= kMaxInstantUsec keeps this far from overflow.
    const int64_t next = (FloorDiv(after_usec, period) + 1) * period;
    if (next > kMaxInstantUsec)
        return std::nullopt;
    return next;
}

}  // namespace

Schedule ParseSchedule(std::string_view text)
{
    const std::vector<std::string_view> words = SplitBlanks(text);
    if (words.empty())
        throw Error(sqlstate::kInvalidParameterValue, "cron expression must not be empty", {},
                    kExamplesHint);
    if (words[0][0] == '@') {
        if (words.size() > 1)
            throw Error(sqlstate::kInvalidParameterValue,
                        "cron alias " + Quoted(words[0]) + " must stand alone", {},
                        "Remove what follows the alias.");
        return ParseAlias(words[0]);
    }
    if (Lower(words[0]) == "every")
        return ParseInterval(text, words);
    if (words.size() != 5) {
        const bool longer = words.size() == 6 || words.size() == 7;
        throw Error(sqlstate::kInvalidParameterValue,
                    "cron expression " + Quoted(text) + " has " + std::to_string(words.size()) +
                        (words.size() == 1 ? " field" : " fields") + ", not 5",
                    "The fields are minute, hour, day-of-month, month and day-of-week.",
                    longer ? "Seconds and years are not supported; for a schedule shorter than "
                             "a minute write an interval such as \"every 30 seconds\"."
                           : kExamplesHint);
    }
    return ParseFields(words);
}

bool MatchesLocalMinute(const Schedule &s, const CivilTime &t)
{
    if (s.kind != Schedule::Kind::kCalendar)
        return false;
    const int weekday = civil::DayOfWeek(civil::DaysFromCivil(t.year, t.month, t.day));
    return (s.months >> t.month & 1) && DayMatches(s, t.day, weekday) &&
           (s.hours >> t.hour & 1) && (s.minutes >> t.minute & 1);
}

std::optional<CivilTime> NextLocalSlot(const Schedule &s, const CivilTime &after)
{
    if (s.kind != Schedule::Kind::kCalendar)
        return std::nullopt;
    // Start at the first whole minute after `after`.
    const int64_t seconds = civil::ToSeconds(after);
    SearchPosition at(civil::FromSeconds(
        (FloorDiv(seconds, civil::kSecondsPerMinute) + 1) * civil::kSecondsPerMinute));

    // Each pass settles one more field or moves past the unit that cannot
    // match, so a pass costs O(1) (the day scan at most a month).
    while (at.year <= kMaxYear) {
        const int month = NextBit(s.months, at.month);
        if (month < 0) {
            at.year++;
            at.StartOfMonth(1);
            continue;
        }
        if (month != at.month)
            at.StartOfMonth(month);
        const int day = NextMatchingDay(s, at.year, at.month, at.day);
        if (day < 0) {
            at.NextMonth();
            continue;
        }
        if (day != at.day)
            at.StartOfDay(day);
        const int hour = NextBit(s.hours, at.hour);
        if (hour < 0) {
            at.NextDay();
            continue;
        }
        if (hour != at.hour)
            at.StartOfHour(hour);
        const int minute = NextBit(s.minutes, at.minute);
        if (minute < 0) {
            at.NextHour();
            continue;
        }
        CivilTime slot;
        slot.year = at.year;
        slot.month = at.month;
        slot.day = at.day;
        slot.hour = at.hour;
        slot.minute = minute;
        return slot;
    }
    return std::nullopt;
}

std::optional<int64_t> NextRunUsec(const Schedule &s, int64_t after_usec, const zone::ZoneRules &zone)
{
    if (s.kind == Schedule::Kind::kInterval)
        return NextIntervalRun(s, after_usec);
    if (after_usec > kMaxInstantUsec)
        return std::nullopt;
    const int64_t after_seconds = FloorDiv(after_usec, kUsecPerSecond);
    CivilTime local = civil::FromSeconds(zone::LocalSecondsAt(after_seconds, zone));
    // Slots whose instant is not after `after_usec` already ran: in a
    // fall-back overlap, the second pass meets slots of the first.
    for (;;) {
        const std::optional<CivilTime> slot = NextLocalSlot(s, local);
        if (!slot)
            return std::nullopt;
        const zone::ResolvedTime resolved = zone::ResolveLocalTime(civil::ToSeconds(*slot), zone);
        const int64_t run_usec = resolved.utc_seconds * kUsecPerSecond;
        if (run_usec > after_usec)
            return run_usec;
        local = *slot;
    }
}

RunList RunsBetween(const Schedule &s, int64_t after_usec, int64_t until_usec,
                    const zone::ZoneRules &zone, int max_runs)
{
    RunList out;
    const size_t cap = max_runs > 0 ? static_cast<size_t>(max_runs) : 0;
    out.runs_usec.reserve(std::min<size_t>(cap, 1024));
    int64_t cursor = after_usec;
    while (cursor < until_usec) {
        const std::optional<int64_t> next = NextRunUsec(s, cursor, zone);
        if (!next || *next > until_usec)
            break;
        if (out.runs_usec.size() >= cap) {
            out.truncated = true;
            break;
        }
        out.runs_usec.push_back(*next);
        cursor = *next;
    }
    return out;
}

}  // namespace claimqueue::cron

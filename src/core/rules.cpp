// Queue rules without database access (see rules.hpp).
#include "core/rules.hpp"

#include <string>

#include "core/error.hpp"

namespace claimqueue::rules {

std::string Quoted(std::string_view value)
{
    std::string out = "\"";
    // Keep messages readable when a caller passes something enormous.
    constexpr size_t kShown = 80;
    if (value.size() <= kShown) {
        out.append(value);
    } else {
        // Cut at a character boundary: never split a UTF-8 sequence.
        size_t cut = kShown;
        while (cut > 0 && (static_cast<unsigned char>(value[cut]) & 0xC0) == 0x80)
            cut--;
        out.append(value.substr(0, cut));
        out.append("...");
    }
    out.push_back('"');
    return out;
}

namespace {

bool IsNameStart(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

bool IsNameChar(char c)
{
    return IsNameStart(c) || c == '.' || c == '-';
}

void CheckLabel(const char *what, std::string_view value, size_t max_bytes)
{
    if (value.empty())
        throw Error(sqlstate::kInvalidParameterValue, std::string(what) + " must not be empty");
    if (value.size() > max_bytes)
        throw Error(sqlstate::kNameTooLong,
                    std::string(what) + " " + Quoted(value) + " is too long",
                    "It is " + std::to_string(value.size()) + " bytes; the limit is " +
                        std::to_string(max_bytes) + " bytes.");
}

// "lease" or "lease '-1 mins'" when the value is known.
std::string Named(const char *what, std::string_view shown)
{
    std::string out(what);
    if (!shown.empty()) {
        out += " '";
        out.append(shown);
        out += "'";
    }
    return out;
}

}  // namespace

bool IsQueueNameSpelling(std::string_view name)
{
    bool ok = !name.empty() && IsNameStart(name[0]);
    for (char c : name)
        ok = ok && IsNameChar(c);
    return ok;
}

void CheckQueueName(std::string_view name)
{
    const char *kHint =
        "Queue names are 1 to 63 bytes of lower-case letters, digits, '_', '.' and '-', "
        "starting with a letter, digit or '_'.";
    if (name.empty())
        throw Error(sqlstate::kInvalidParameterValue, "queue name must not be empty", {}, kHint);
    if (name.size() > static_cast<size_t>(kMaxQueueNameBytes))
        throw Error(sqlstate::kNameTooLong, "queue name " + Quoted(name) + " is too long",
                    "It is " + std::to_string(name.size()) + " bytes; the limit is " +
                        std::to_string(kMaxQueueNameBytes) + " bytes.",
                    kHint);
    if (!IsQueueNameSpelling(name))
        throw Error(sqlstate::kInvalidParameterValue, "invalid queue name " + Quoted(name), {},
                    kHint);
}

void CheckWorkerName(std::string_view worker)
{
    CheckLabel("worker name", worker, kMaxWorkerNameBytes);
}

void CheckDedupKey(std::string_view key)
{
    CheckLabel("dedup_key", key, kMaxDedupKeyBytes);
}

void CheckConcurrencyKey(std::string_view key)
{
    CheckLabel("concurrency_key", key, kMaxDedupKeyBytes);
}

void CheckPriority(int64_t priority)
{
    if (priority < kMinPriority || priority > kMaxPriority)
        throw Error(sqlstate::kNumericValueOutOfRange,
                    "priority " + std::to_string(priority) + " is out of range",
                    {},
                    "Priorities run from " + std::to_string(kMinPriority) + " to " +
                        std::to_string(kMaxPriority) + "; higher runs first, 0 is the default.");
}

void CheckBatch(int64_t batch)
{
    if (batch < 1 || batch > kMaxBatch)
        throw Error(sqlstate::kNumericValueOutOfRange,
                    "batch " + std::to_string(batch) + " is out of range", {},
                    "A dequeue claims between 1 and " + std::to_string(kMaxBatch) + " jobs.");
}

namespace {

void CheckStoredSize(const char *what, const char *advice, int64_t bytes, int64_t limit,
                     int64_t position)
{
    if (bytes <= limit)
        return;
    std::string which = position > 0 ? what + (" " + std::to_string(position)) : what;
    throw Error(sqlstate::kProgramLimitExceeded,
                which + " is " + std::to_string(bytes) +
                    " bytes, more than claimqueue.max_payload_size (" + std::to_string(limit) +
                    " bytes)",
                {},
                std::string("Keep large data elsewhere and ") + advice +
                    " a reference to it, or raise claimqueue.max_payload_size (superuser).");
}

}  // namespace

void CheckPayloadSize(int64_t bytes, int64_t limit, int64_t position)
{
    CheckStoredSize("payload", "enqueue", bytes, limit, position);
}

void CheckResultSize(int64_t bytes, int64_t limit, int64_t position)
{
    CheckStoredSize("result", "return", bytes, limit, position);
}

void CheckErrorEntrySize(int64_t error_bytes, int64_t detail_bytes)
{
    int64_t bytes = error_bytes + detail_bytes;
    if (bytes <= kMaxErrorEntryBytes)
        return;
    throw Error(sqlstate::kProgramLimitExceeded,
                "error and error_detail are " + std::to_string(bytes) + " bytes, more than " +
                    std::to_string(kMaxErrorEntryBytes) + " per failed attempt",
                "The job's error history keeps every failed attempt's error and detail.",
                "Shorten the message or the detail (a stack trace's first frames are usually "
                "enough).");
}

void CheckAwaitCount(int64_t n)
{
    if (n > kMaxAwaitJobs)
        throw Error(sqlstate::kProgramLimitExceeded,
                    "cannot await " + std::to_string(n) + " jobs at once: at most " +
                        std::to_string(kMaxAwaitJobs) + " per call",
                    {},
                    "await_jobs() waits for at most " + std::to_string(kMaxAwaitJobs) +
                        " jobs per call; split the ids, or await them in turn.");
}

void CheckMaxAttempts(int64_t max_attempts)
{
    if (max_attempts < 1 || max_attempts > kMaxAttemptsLimit)
        throw Error(sqlstate::kNumericValueOutOfRange,
                    "max_attempts " + std::to_string(max_attempts) + " is out of range", {},
                    "max_attempts runs from 1 to " + std::to_string(kMaxAttemptsLimit) + ".");
}

void CheckRunningLimit(const char *what, int64_t limit, bool zero_clears)
{
    if (limit >= 1 || (zero_clears && limit == 0))
        return;
    throw Error(sqlstate::kInvalidParameterValue,
                std::string(what) + " " + std::to_string(limit) + " is not a positive integer", {},
                zero_clears ? "Give at least 1, 0 to remove the limit, or NULL to leave it as it is."
                            : "Give at least 1, or NULL for no limit.");
}

void CheckLease(const char *what, int64_t usec, std::string_view shown)
{
    if (usec <= 0)
        throw Error(sqlstate::kInvalidParameterValue, Named(what, shown) + " must be positive", {},
                    "Give an interval such as '30 seconds'.");
    if (usec > kMaxLeaseUsec)
        throw Error(sqlstate::kInvalidParameterValue,
                    Named(what, shown) + " is longer than 365 days", {},
                    "Use a shorter lease and extend it with heartbeat().");
}

void CheckDelay(const char *what, int64_t usec, std::string_view shown)
{
    if (usec < 0)
        throw Error(sqlstate::kInvalidParameterValue, Named(what, shown) + " must not be negative");
    if (usec > kMaxDelayUsec)
        throw Error(sqlstate::kInvalidParameterValue,
                    Named(what, shown) + " is longer than 100 years");
}

void CheckBackoffBounds(int64_t base_usec, int64_t cap_usec, std::string_view shown_base,
                        std::string_view shown_cap)
{
    if (cap_usec < base_usec)
        throw Error(sqlstate::kInvalidParameterValue,
                    Named("backoff_cap", shown_cap) + " must not be smaller than " +
                        Named("backoff_base", shown_base),
                    {}, "Raise backoff_cap or lower backoff_base.");
}

int64_t BackoffUsec(int attempts_made, int64_t base_usec, int64_t cap_usec, double unit_random)
{
    if (base_usec <= 0 || cap_usec <= 0)
        return 0;
    if (attempts_made < 1)
        attempts_made = 1;
    if (unit_random < 0.0 || !(unit_random < 1.0))
        unit_random = 0.0;
    // Double until the cap is reached; stops early, so no overflow.
    int64_t d = base_usec;
    for (int i = 1; i < attempts_made && d < cap_usec; i++)
        d = (d > cap_usec / 2) ? cap_usec : d * 2;
    if (d > cap_usec)
        d = cap_usec;
    const int64_t half = d / 2;
    return half + static_cast<int64_t>(unit_random * static_cast<double>(d - half));
}

}  // namespace claimqueue::rules

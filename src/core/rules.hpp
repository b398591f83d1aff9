// Queue rules that need no database: name validation, documented limits and
// the retry backoff. Pure C++, unit-tested with GoogleTest (test/unit).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace claimqueue::rules {

// Documented limits (docs/sql-api.md, "Limits"). Changing one is an API change.
inline constexpr int kMaxQueueNameBytes = 63;
inline constexpr int kMaxWorkerNameBytes = 200;
inline constexpr int kMaxDedupKeyBytes = 512;
inline constexpr int kMinPriority = -100;
inline constexpr int kMaxPriority = 100;
inline constexpr int kMaxBatch = 1000;
inline constexpr int kMaxAwaitJobs = 1000;  // ids one await_jobs() call waits for
inline constexpr int kMaxAttemptsLimit = 10000;
// The error history of a job (jobs.errors, 0.5.0): the latest kMaxErrorHistory
// failed attempts, each with at most kMaxErrorEntryBytes of error text and detail.
inline constexpr int kMaxErrorHistory = 20;
inline constexpr int64_t kMaxErrorEntryBytes = 65536;
inline constexpr int64_t kUsecPerSecond = 1000000;
inline constexpr int64_t kUsecPerDay = 86400 * kUsecPerSecond;
inline constexpr int64_t kMaxLeaseUsec = 365 * kUsecPerDay;      // leases and extensions
// backoff, retry_in, retention, await_jobs: 100 years of 365.25 days, as
// extract(epoch ...) counts '100 years' (the durations' one rule).
inline constexpr int64_t kMaxDelayUsec = 100 * (365 * kUsecPerDay + kUsecPerDay / 4);

// `value` in double quotes for a message, shortened to 80 bytes ("...") at a
// UTF-8 character boundary.
std::string Quoted(std::string_view value);

// True when `name` is spelt as a queue name: [a-z0-9_][a-z0-9_.-]* (no length check).
bool IsQueueNameSpelling(std::string_view name);

// Throws claimqueue::Error (22023 or 42622) unless `name` is 1..63 bytes of
// [a-z0-9_.-] starting with a letter, digit or underscore.
void CheckQueueName(std::string_view name);

// Throws unless the worker label is 1..200 bytes.
void CheckWorkerName(std::string_view worker);

// Throws unless the dedup key is 1..512 bytes.
void CheckDedupKey(std::string_view key);
// A concurrency key: as a dedup key (not empty, at most kMaxDedupKeyBytes).
void CheckConcurrencyKey(std::string_view key);

// Range checks; each message names the argument and its value.
void CheckPriority(int64_t priority);
void CheckBatch(int64_t batch);
// A job's payload, `bytes` as stored, against claimqueue.max_payload_size
// (`limit` bytes). `position` > 0 names the element of a batch.
void CheckPayloadSize(int64_t bytes, int64_t limit, int64_t position = 0);
// A job's result (complete), by the same limit; `position` > 0 names the
// element of complete_batch's results.
void CheckResultSize(int64_t bytes, int64_t limit, int64_t position = 0);
// fail()'s error text and error_detail together: at most kMaxErrorEntryBytes (54000).
void CheckErrorEntrySize(int64_t error_bytes, int64_t detail_bytes);
// The number of ids one await_jobs() call waits for: at most kMaxAwaitJobs.
void CheckAwaitCount(int64_t n);
void CheckMaxAttempts(int64_t max_attempts);
// A concurrency limit (`what`: max_running or max_running_per_key): at least 1;
// 0 too when `zero_clears` (alter_queue: 0 removes the limit).
void CheckRunningLimit(const char *what, int64_t limit, bool zero_clears);
// A lease or lease extension: strictly positive, at most kMaxLeaseUsec.
// `shown` is the value as the user wrote it, quoted in the message if given.
void CheckLease(const char *what, int64_t usec, std::string_view shown = {});
// A delay (backoff, retry_in, retention): zero or positive, at most kMaxDelayUsec.
void CheckDelay(const char *what, int64_t usec, std::string_view shown = {});
// backoff_cap must not be smaller than backoff_base; the shown values, if
// given, are quoted in the message.
void CheckBackoffBounds(int64_t base_usec, int64_t cap_usec, std::string_view shown_base = {},
                        std::string_view shown_cap = {});

// Delay before the next try after `attempts_made` failed attempts (>= 1):
// d = min(cap, base * 2^(attempts_made - 1)), then "equal jitter":
// d/2 + unit_random * d/2, with unit_random in [0, 1). Never exceeds cap,
// never below half of d, never overflows.
int64_t BackoffUsec(int attempts_made, int64_t base_usec, int64_t cap_usec, double unit_random);

}  // namespace claimqueue::rules

// claimqueue's settings (see settings.hpp).
#include "pg/settings.hpp"

namespace claimqueue {

int debug_clock_offset_seconds = 0;
int max_payload_size = 1024 * 1024;
bool notify_on_ready = false;
bool reaper_enabled = true;
int reaper_interval_ms = 1000;
int reaper_batch_size = 1000;
int max_waiters = 128;
int claim_cursor_queues = 1024;
int metrics_queues = 1024;

void DefineSettings()
{
    DefineCustomIntVariable(
        "claimqueue.debug_clock_offset", "Moves claimqueue's clock by this much (testing only).",
        "Shifts run_at, lease and backoff times for this session so tests need not sleep.",
        &debug_clock_offset_seconds, 0, -INT_MAX, INT_MAX, PGC_SUSET,
        GUC_UNIT_S | GUC_NOT_IN_SAMPLE, nullptr, nullptr, nullptr);
    DefineCustomIntVariable(
        "claimqueue.max_payload_size", "The largest job payload enqueue() takes.",
        "The size of the jsonb value as stored, before compression; larger payloads are "
        "refused with SQLSTATE 54000. Keep large data elsewhere and enqueue a reference.",
        &max_payload_size, 1024 * 1024, 1, MaxAllocSize / 2, PGC_SUSET, GUC_UNIT_BYTE,
        nullptr, nullptr, nullptr);
    DefineCustomBoolVariable(
        "claimqueue.notify", "Sends NOTIFY on the queue's channel when jobs become ready.",
        "When a transaction that enqueued jobs (or that returned expired leases) commits, "
        "channel cq_<queue> gets one notification per queue, with the number of jobs and "
        "when the earliest is due.",
        &notify_on_ready, false, PGC_USERSET, 0, nullptr, nullptr, nullptr);
    DefineCustomBoolVariable(
        "claimqueue.reaper_enabled",
        "Runs claimqueue's reaper in every database that has the extension.",
        "Off stops every reaper; expired leases then come back only when reap() is called.",
        &reaper_enabled, true, PGC_SIGHUP, 0, nullptr, nullptr, nullptr);
    DefineCustomIntVariable(
        "claimqueue.reaper_interval", "Time between two reaper passes in a database.",
        "Also how often the launcher looks for new databases. An expired lease comes back "
        "within about one interval.",
        &reaper_interval_ms, 1000, 10, 3600 * 1000, PGC_SIGHUP, GUC_UNIT_MS, nullptr, nullptr,
        nullptr);
    DefineCustomIntVariable(
        "claimqueue.reaper_batch_size", "Jobs a reaper returns or purges per transaction.",
        "A pass commits after each batch, so a backlog never becomes one large transaction.",
        &reaper_batch_size, 1000, 1, 100000, PGC_SIGHUP, 0, nullptr, nullptr, nullptr);
    // A PGC_POSTMASTER setting can only be defined while preloading; without
    // the preload there is no shared memory to size.
    if (process_shared_preload_libraries_in_progress) {
        DefineCustomIntVariable(
            "claimqueue.max_waiters", "Workers that can wait in dequeue_wait() at once, cluster-wide.",
            "Each waiter takes one slot of shared memory (about 130 bytes); 0 turns waiting off.",
            &max_waiters, 128, 0, 100000, PGC_POSTMASTER, 0, nullptr, nullptr, nullptr);
        DefineCustomIntVariable(
            "claimqueue.claim_cursor_queues",
            "Queues that can have claim cursors at once (shared memory, fixed at server start).",
            "A claim cursor lets a claim start past the jobs already claimed, so claims stay fast "
            "while an old snapshot keeps their dead index entries. A dropped queue's entry is "
            "freed for others; queues beyond this many work without one. 0 turns claim cursors "
            "off.",
            &claim_cursor_queues, 1024, 0, 65536, PGC_POSTMASTER, 0, nullptr, nullptr, nullptr);
        DefineCustomIntVariable(
            "claimqueue.metrics_queues",
            "Queues whose metrics can be kept at once (shared memory, fixed at server start).",
            "Each queue's totals and gauges for queue_metrics take one slot (about 120 bytes). "
            "A dropped queue's slot is freed for others; queues beyond this many are not counted "
            "(queue_metrics shows NULL for them). 0 turns the metrics off.",
            &metrics_queues, 1024, 0, 65536, PGC_POSTMASTER, 0, nullptr, nullptr, nullptr);
    }
    MarkGUCPrefixReserved("claimqueue");
}

}  // namespace claimqueue

// Commit-time notices of ready jobs (see ready_notices.hpp).
#include "wait/ready_notices.hpp"

extern "C" {
#include "commands/async.h"
#include "utils/datetime.h"
#include "utils/json.h"
#include "utils/memutils.h"
}

#include "pg/clock.hpp"
#include "pg/settings.hpp"
#include "pg/subtransactions.hpp"
#include "wait/waiters.hpp"

namespace claimqueue {
namespace {

struct Notice {
    char queue[NAMEDATALEN];
    int64 n;
    TimestampTz due;
    int level;  // transaction nesting level that recorded it
};

List *pending = NIL;  // of Notice *, in TopTransactionContext

// The jobs this transaction finished, as a filter (waiters.hpp); `finished`
// says whether it has a bit set.
JobFilter finished_jobs;
bool finished = false;

void ForgetFinished()
{
    if (finished)
        memset(&finished_jobs, 0, sizeof(finished_jobs));
    finished = false;
}

void SendNotifications()
{
    ListCell *cell;
    foreach (cell, pending) {
        const Notice *notice = (const Notice *) lfirst(cell);
        char channel[NAMEDATALEN];
        char due[MAXDATELEN + 1];
        QueueChannel(notice->queue, channel);
        JsonEncodeDateTime(due, TimestampTzGetDatum(notice->due), TIMESTAMPTZOID, nullptr);
        char *payload = psprintf("{\"jobs\": %lld, \"due\": \"%s\"}", (long long) notice->n, due);
        Async_Notify(channel, payload);
    }
}

}  // namespace

void ReadyNoticesAtTransactionEnd(XactEvent event)
{
    switch (event) {
    case XACT_EVENT_PRE_COMMIT:
        // NOTIFY is itself delivered only once the transaction commits.
        if (notify_on_ready && pending != NIL)
            SendNotifications();
        break;
    case XACT_EVENT_COMMIT: {
        ListCell *cell;
        TimestampTz now = ClockNow();
        foreach (cell, pending) {
            const Notice *notice = (const Notice *) lfirst(cell);
            WakeWaiters(MyDatabaseId, notice->queue, notice->n, notice->due, now);
        }
        pending = NIL;
        if (finished)
            WakeJobWaiters(MyDatabaseId, &finished_jobs);
        ForgetFinished();
        break;
    }
    case XACT_EVENT_ABORT:
    case XACT_EVENT_PREPARE:
        // A prepared transaction commits later, from another session: its
        // waiters learn of it when they look next (timer or deadline).
        pending = NIL;
        ForgetFinished();
        break;
    default:
        break;
    }
}

void ReadyNoticesAtSubtransactionEnd(SubXactEvent event)
{
    if (pending != NIL)
        pending = EntriesAfterSubtransaction<Notice>(pending, event);
}

void NoteJobFinished(int64 id)
{
    if (!WaitersAvailable())
        return;
    AddToJobFilter(&finished_jobs, id);
    finished = true;
}

void NoteUnfinishedJobsGone()
{
    if (!WaitersAvailable())
        return;
    memset(&finished_jobs, 0xFF, sizeof(finished_jobs));  // shares a bit with every filter
    finished = true;
}

void NoteJobsReady(const char *queue, int64 n, TimestampTz due)
{
    if (n <= 0 || (!WaitersAvailable() && !notify_on_ready))
        return;
    int level = GetCurrentTransactionNestLevel();
    ListCell *cell;
    foreach (cell, pending) {
        Notice *notice = (Notice *) lfirst(cell);
        if (notice->level == level && strcmp(notice->queue, queue) == 0) {
            notice->n += n;
            notice->due = Min(notice->due, due);
            return;
        }
    }
    MemoryContext caller = MemoryContextSwitchTo(TopTransactionContext);
    Notice *notice = (Notice *) palloc(sizeof(Notice));
    strlcpy(notice->queue, queue, sizeof(notice->queue));
    notice->n = n;
    notice->due = due;
    notice->level = level;
    pending = lappend(pending, notice);
    MemoryContextSwitchTo(caller);
}

void QueueChannel(const char *queue, char *out)
{
    size_t len = strlen(queue);
    if (len + 3 < NAMEDATALEN) {
        snprintf(out, NAMEDATALEN, "cq_%s", queue);
        return;
    }
    // cq_ + the first 51 bytes + _ + 8 hex digits of the whole name's hash = 63 bytes.
    uint32 hash = hash_bytes((const unsigned char *) queue, (int) len);
    snprintf(out, NAMEDATALEN, "cq_%.51s_%08x", queue, hash);
}

}  // namespace claimqueue

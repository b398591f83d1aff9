// SQL API, queue administration: create_queue, alter_queue, drop_queue.
#include "firewall.hpp"

#include "api/args.hpp"
#include "core/rules.hpp"
#include "engine/claim.hpp"
#include "engine/clock.hpp"
#include "engine/queues.hpp"

using namespace claimqueue;

namespace {

// The settings, in QueueSettings order and in argument order after the name.
const char *const kSettingNames[5] = {"lease", "max_attempts", "backoff_base", "backoff_cap",
                                      "retention"};

// Checks one setting (argument n) if given; returns whether it was given.
bool CheckSetting(FunctionCallInfo fcinfo, int n, int field, Datum *out)
{
    if (PG_ARGISNULL(n))
        return false;
    if (field == 1) {
        rules::CheckMaxAttempts(PG_GETARG_INT32(n));
    } else {
        CheckIntervalArg(kSettingNames[field], PG_GETARG_INTERVAL_P(n), field == 0);
    }
    *out = PG_GETARG_DATUM(n);
    return true;
}

}  // namespace

// create_queue(name, lease, max_attempts, backoff_base, backoff_cap, retention, if_not_exists)
CQ_FUNCTION(cq_create_queue)
{
    text *name = QueueNameArg(fcinfo, 0);
    Datum values[5];
    for (int i = 0; i < 5; i++) {
        RequireArg(fcinfo, i + 1, kSettingNames[i]);
        CheckSetting(fcinfo, i + 1, i, &values[i]);
    }
    CheckBackoffDatums(values[2], values[3]);
    RequireArg(fcinfo, 6, "if_not_exists");
    QueueSettings settings = {values[0], values[1], values[2], values[3], values[4]};
    PG_RETURN_BOOL(CreateQueue(name, settings, PG_GETARG_BOOL(6)));
}

// alter_queue(name, lease, max_attempts, backoff_base, backoff_cap, retention); NULL = unchanged
CQ_FUNCTION(cq_alter_queue)
{
    text *name = QueueNameArg(fcinfo, 0);
    Datum values[5] = {0, 0, 0, 0, 0};
    bool given[5];
    for (int i = 0; i < 5; i++)
        given[i] = CheckSetting(fcinfo, i + 1, i, &values[i]);
    QueueSettings settings = {values[0], values[1], values[2], values[3], values[4]};
    AlterQueue(name, settings, given);
    PG_RETURN_VOID();
}

// drop_queue(name, force) -> jobs deleted
CQ_FUNCTION(cq_drop_queue)
{
    text *name = QueueNameArg(fcinfo, 0);
    RequireArg(fcinfo, 1, "force");
    // A transaction snapshot would miss jobs enqueued after it began: they
    // would be neither counted nor deleted, and outlive their queue.
    RequireReadCommitted("drop_queue()");
    PG_RETURN_INT64(DropQueue(name, PG_GETARG_BOOL(1)));
}

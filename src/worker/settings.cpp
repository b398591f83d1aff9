// The background worker's settings (see settings.hpp).
#include "worker/settings.hpp"

namespace claimqueue {

bool reaper_enabled = true;
int reaper_interval_ms = 1000;
int reaper_batch_size = 1000;

void DefineWorkerSettings()
{
    DefineCustomBoolVariable(
        "claimqueue.reaper_enabled", "Runs claimqueue's reaper in every database that has the extension.",
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
}

}  // namespace claimqueue

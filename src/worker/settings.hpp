// The background worker's settings (claimqueue.reaper_*), all reloadable:
// the launcher and the reapers re-read them on SIGHUP.
#pragma once

#include "pg.hpp"

namespace claimqueue {

extern bool reaper_enabled;      // claimqueue.reaper_enabled
extern int reaper_interval_ms;   // claimqueue.reaper_interval
extern int reaper_batch_size;    // claimqueue.reaper_batch_size

void DefineWorkerSettings();

}  // namespace claimqueue

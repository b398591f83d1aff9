// Every claimqueue.* setting, defined in one place (settings.cpp) and read by
// the modules through these variables. The table of docs/settings.md lists the same
// settings with the same defaults (test/perl/settings.pl compares the two).
#pragma once

#include "pg/pg.hpp"

namespace claimqueue {

// Per session or reloadable.
extern int debug_clock_offset_seconds;  // claimqueue.debug_clock_offset (superuser, tests)
extern int max_payload_size;            // claimqueue.max_payload_size, bytes (superuser)
extern bool notify_on_ready;            // claimqueue.notify
extern bool reaper_enabled;             // claimqueue.reaper_enabled (reload)
extern int reaper_interval_ms;          // claimqueue.reaper_interval (reload)
extern int reaper_batch_size;           // claimqueue.reaper_batch_size (reload)

// Sizes of shared memory, fixed at server start; defined only while the
// library is preloaded (there is no shared memory otherwise).
extern int max_waiters;                 // claimqueue.max_waiters
extern int claim_cursor_queues;         // claimqueue.claim_cursor_queues
extern int metrics_queues;              // claimqueue.metrics_queues

// Defines them all and reserves the prefix; from _PG_init.
void DefineSettings();

}  // namespace claimqueue

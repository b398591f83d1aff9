// The reapers' slots in shared memory: one per database the launcher knows,
// shared by the launcher, the reapers, the DATABASE-command guard and
// reaper_stats. Exists only when the library is in shared_preload_libraries.
#pragma once

#include "pg/pg.hpp"

extern "C" {
#include "storage/latch.h"
#include "storage/lwlock.h"
}

namespace claimqueue {

// One database's reaper, as the launcher sees it (src/worker/README.md has the
// state machine).
enum class ReaperState : uint8 {
    kUnknown,      // seen; whether it has the extension is not known yet
    kStarting,     // a reaper was registered and has not run a pass yet
    kRunning,      // a reaper is connected and running passes
    kNoExtension,  // no usable extension there; waits for CREATE/ALTER EXTENSION
    kRestartWait,  // the reaper exited unexpectedly; restarted at retry_at
    kPaused,       // DROP/RENAME/CREATE ... TEMPLATE needs the database free
    kIneligible,   // a template, or not accepting connections
    kDisabled,     // claimqueue.reaper_enabled is off
};

const char *ReaperStateName(ReaperState state);

struct ReaperSlot {
    Oid database;             // InvalidOid: the slot is free
    ReaperState state;
    bool worker_active;       // a reaper process for this slot exists or is starting
    bool stop_requested;      // the reaper exits at its next check
    bool recheck;             // CREATE/ALTER EXTENSION committed while a reaper was active:
                              // look again once it has exited, whatever it concluded
    int pause_count;          // DATABASE commands in progress (kPaused while > 0)
    int failures;             // unexpected exits since the last good pass
    pid_t pid;                // the reaper, once connected; 0 otherwise
    Latch *latch;             // its latch, while pid != 0
    TimestampTz retry_at;     // kRestartWait: when the launcher starts it again
    TimestampTz started_at;   // when the current reaper connected
    TimestampTz last_pass_at; // end of the latest completed pass
    int64 passes;             // counters since the server started
    int64 jobs_reaped;
    int64 jobs_purged;
    char last_error[256];     // the latest failed pass's message, "" if none
};

struct SharedState {
    LWLock *lock;             // guards everything below
    pid_t launcher_pid;
    Latch *launcher_latch;
    int nslots;
    ReaperSlot slots[FLEXIBLE_ARRAY_MEMBER];
};

// Adds the reapers' region (SharedState); called by _PG_init while preloading.
void RequestSharedState();

// The shared state, or nullptr when the library was not preloaded.
SharedState *Shared();

// The slot of `database`, or nullptr. The caller holds Shared()->lock.
ReaperSlot *FindSlot(Oid database);

// The slot of `database`, or a free one given to it (zeroed: state unknown);
// nullptr when every slot is taken. The caller holds the lock exclusively.
ReaperSlot *FindOrClaimSlot(Oid database);

// Asks the slot's reaper, if one runs or is starting, to exit at its next
// check. The caller holds the lock exclusively.
void RequestStopLocked(ReaperSlot *slot);

// Sets the launcher's latch, if a launcher runs. The caller holds the lock.
void WakeLauncherLocked();

// Sets the latch of `database`'s reaper, if one runs, so its next pass starts
// now (a session whose claims die with it has ended). Takes the lock.
void WakeReaper(Oid database);

}  // namespace claimqueue

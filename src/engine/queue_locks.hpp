// Transaction-level advisory locks on queue names in claimqueue's reserved
// lock namespace: enqueue holds SHARE, drop_queue holds EXCLUSIVE, so no job is
// ever inserted into a queue that is being dropped.
#pragma once

#include "pg.hpp"

namespace claimqueue {

// The lock namespace id claimqueue reserves for its own advisory locks
// (two-int4 form: namespace id, key).
inline constexpr int32 kInternalLockNamespace = 1;

void LockQueueName(text *name, LOCKMODE mode);

// The one-reaper-per-database guarantee: a session-level exclusive advisory
// lock in the reserved namespace, taken without waiting. False when another
// process (a second reaper) holds it.
bool TryLockReaper();

}  // namespace claimqueue

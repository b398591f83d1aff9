// Under Citus, a guard in front of its function delegation: Citus hashes a
// delegated call's queue argument to find its worker, and a NULL there takes
// the coordinator down. The guard refuses such a call while it is planned.
#pragma once

#include "pg/pg.hpp"

namespace claimqueue {

// Installs the planner and utility hooks; from _PG_init, when Citus is preloaded too
// (shared_preload_libraries lists it before claimqueue, so these hooks run
// before Citus's).
void InstallCitusCallGuard();

}  // namespace claimqueue

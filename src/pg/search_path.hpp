// The search_path claimqueue's own code resolves names under: pg_catalog,
// pg_temp. The API functions that run no SQL (the hot path: dequeue,
// complete, complete_batch, complete_and_dequeue, fail, heartbeat) carry no
// SET clause, which would cost every call a parse, a save and a restore of the
// setting (6.6 % of a drained job's instructions, bench/instructions.sh). They pin
// it where names can be resolved instead: around every SPI statement
// (ConnectSpi to FinishSpi) and around a row write that may run code someone
// added to claimqueue.jobs (a trigger, an expression), which runs as the
// extension's owner.
#pragma once

#include "pg/pg.hpp"

namespace claimqueue {

// Sets search_path to pg_catalog, pg_temp until UnpinSearchPath(level), or
// the end of the (sub)transaction on an error. Returns 0, and changes
// nothing, when it is already so.
int PinSearchPath();
void UnpinSearchPath(int level);

}  // namespace claimqueue

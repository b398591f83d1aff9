// Work a transaction collects to act on at its end (counts to publish, waiters
// to wake), kept as a List of entries that each record the subtransaction
// nest level that made them (an `int level` member): a subtransaction that
// aborts takes its entries with it, one that commits hands them to its parent.
#pragma once

#include "pg/pg.hpp"

extern "C" {
#include "access/xact.h"
#include "nodes/pg_list.h"
#include "utils/memutils.h"
}

namespace claimqueue {

// `entries` after the subtransaction at the current nest level ends with
// `event` (other events leave it as it is). The list lives in
// TopTransactionContext; the dropped cells go with it at the transaction's end.
template <typename Entry>
List *EntriesAfterSubtransaction(List *entries, SubXactEvent event)
{
    int level = GetCurrentTransactionNestLevel();
    ListCell *cell;
    if (event == SUBXACT_EVENT_ABORT_SUB) {
        MemoryContext caller = MemoryContextSwitchTo(TopTransactionContext);
        List *kept = NIL;
        foreach (cell, entries) {
            Entry *entry = (Entry *) lfirst(cell);
            if (entry->level < level)
                kept = lappend(kept, entry);
        }
        MemoryContextSwitchTo(caller);
        return kept;
    }
    if (event == SUBXACT_EVENT_COMMIT_SUB) {
        foreach (cell, entries) {
            Entry *entry = (Entry *) lfirst(cell);
            if (entry->level >= level)
                entry->level = level - 1;
        }
    }
    return entries;
}

}  // namespace claimqueue

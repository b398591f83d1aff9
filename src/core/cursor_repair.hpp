// The claim-cursor sweep's rule (src/cursors/sweep.cpp, SweepCursors): where
// a lane's cursor must go when it breaks its invariant. Pure C++, unit-tested.
#pragma once

#include <cstdint>

namespace claimqueue {

struct CursorRepair {
    bool needed;
    uint64_t target;  // where the cursor goes (down), when needed
    const char *why;
};

// A lane's cursor must be at most the counter (the next position to be
// drawn) and at most the lowest position the sweep's snapshot shows
// claimable. `cursor` and `counter` are read before that snapshot, the
// counter after the cursor, so a valid cursor is never above either. Values
// are compared unsigned, as they are stored: a cursor that reads as -1 (the
// "no position" value, all bits set) is past the counter, not below zero.
inline CursorRepair RepairCursor(uint64_t cursor, uint64_t counter, bool any_claimable,
                                 uint64_t lowest_claimable)
{
    if (cursor > counter) {
        uint64_t target = any_claimable && lowest_claimable < counter ? lowest_claimable : counter;
        return {true, target, "past the last position drawn"};
    }
    if (any_claimable && lowest_claimable < cursor)
        return {true, lowest_claimable, "past a claimable job"};
    return {false, cursor, nullptr};
}

}  // namespace claimqueue

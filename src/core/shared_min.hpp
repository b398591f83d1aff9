// Minimum over values that other processes change while we read them (the
// claim cursors' in-flight slots). Pure C++, so the rule is unit-tested.
#pragma once

#include <cstdint>

namespace claimqueue {

// The lowest of `start` and read(0) .. read(n - 1), reading each value exactly
// once. Reading a slot twice is the bug this exists to prevent: with a
// two-read minimum such as `Min(lowest, read(i))`, a slot that holds a low
// value at the comparison and is released (set to the highest value) before
// the second read makes the result that highest value, above `start`.
template <typename Read>
inline uint64_t LowestOfOnce(uint64_t start, int n, Read read)
{
    uint64_t lowest = start;
    for (int i = 0; i < n; i++) {
        uint64_t value = read(i);
        if (value < lowest)
            lowest = value;
    }
    return lowest;
}

}  // namespace claimqueue

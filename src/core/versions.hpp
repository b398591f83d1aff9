// Extension versions ("0.4.0") compared as numbers, part by part: which of two
// releases came first. Pure C++, so the rule is unit-tested.
#pragma once

#include <cstdint>

namespace claimqueue {

// < 0 when `a` is an earlier release than `b`, 0 when the same, > 0 when
// later. Dot-separated numbers, so "0.10.0" comes after "0.9.0"; a missing
// part counts as 0 ("1.2" is "1.2.0"); text after a part's number (a suffix
// such as "0.5.0beta1") is compared as text, none first.
inline int CompareVersions(const char *a, const char *b)
{
    auto digit = [](char c) { return c >= '0' && c <= '9'; };
    auto in_part = [](char c) { return c != '\0' && c != '.'; };
    while (*a != '\0' || *b != '\0') {
        uint64_t x = 0, y = 0;
        for (; digit(*a); a++)
            x = x * 10 + static_cast<uint64_t>(*a - '0');
        for (; digit(*b); b++)
            y = y * 10 + static_cast<uint64_t>(*b - '0');
        if (x != y)
            return x < y ? -1 : 1;
        while (in_part(*a) || in_part(*b)) {
            unsigned char ca = in_part(*a) ? static_cast<unsigned char>(*a) : 0;
            unsigned char cb = in_part(*b) ? static_cast<unsigned char>(*b) : 0;
            if (ca != cb)
                return ca < cb ? -1 : 1;
            a++;
            b++;
        }
        if (*a == '.')
            a++;
        if (*b == '.')
            b++;
    }
    return 0;
}

}  // namespace claimqueue

// A PostgreSQL text value seen from C++: the pure core's checks take
// std::string_view, and this is how a text argument reaches them (no copy).
#pragma once

#include "pg/pg.hpp"

#include <string_view>

namespace claimqueue {

// The bytes of `t` (detoasted by the caller), without the varlena header.
inline std::string_view View(const text *t)
{
    return std::string_view(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
}

}  // namespace claimqueue

// Pinning search_path for claimqueue's own name lookups (see search_path.hpp).
#include "pg/search_path.hpp"

extern "C" {
#include "catalog/namespace.h"
}

namespace claimqueue {

namespace {
constexpr const char *kPinnedPath = "pg_catalog, pg_temp";
}  // namespace

int PinSearchPath()
{
    if (namespace_search_path != nullptr && strcmp(namespace_search_path, kPinnedPath) == 0)
        return 0;
    int level = NewGUCNestLevel();
    (void) set_config_option("search_path", kPinnedPath, PGC_USERSET, PGC_S_SESSION,
                             GUC_ACTION_SAVE, true, 0, false);
    return level;
}

void UnpinSearchPath(int level)
{
    // AtEOXact_GUC restores what this level saved (as a function's SET
    // clause is undone when the function returns).
    if (level > 0)
        AtEOXact_GUC(true, level);
}

}  // namespace claimqueue

// The extension version whose schema this library's statements are written
// for. A database whose extension is older (new binaries installed, ALTER
// EXTENSION claimqueue UPDATE not yet run) gets a clear error from the queue
// API instead of "column ... does not exist".
#pragma once

#include "pg.hpp"

namespace claimqueue {

constexpr const char *kSchemaVersion = "0.3.0";

// Raises 55000 (object not in prerequisite state) unless the extension in
// this database is at kSchemaVersion. Looked up once, and again after any
// relcache invalidation (an ALTER/DROP/CREATE EXTENSION sends some).
void RequireCurrentSchema();

}  // namespace claimqueue

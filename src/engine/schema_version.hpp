// The extension version whose schema this library's statements are written
// for: the control file's default_version, which the Makefile passes to the
// compiler as CLAIMQUEUE_VERSION (it is written nowhere else). A database whose
// extension is at another version (new binaries installed, ALTER EXTENSION
// claimqueue UPDATE not yet run) gets a clear error from the queue API and no
// reaper, instead of "column ... does not exist".
#pragma once

#include "pg/pg.hpp"

#ifndef CLAIMQUEUE_VERSION
#error "CLAIMQUEUE_VERSION must be defined by the build (the control file's default_version)"
#endif

namespace claimqueue {

constexpr const char *kSchemaVersion = CLAIMQUEUE_VERSION;

enum class SchemaState { kAbsent, kCurrent, kOther };

// The extension in this database, read from pg_extension (no cache).
SchemaState InstalledSchema();

// Raises 55000 (object not in prerequisite state) unless the extension in
// this database is at kSchemaVersion. Looked up once, and again after any
// relcache invalidation (an ALTER/DROP/CREATE EXTENSION sends some).
void RequireCurrentSchema();

// Any relation changed (the session module calls it): look again next time.
void SchemaAtRelationChange(Oid relid);

}  // namespace claimqueue

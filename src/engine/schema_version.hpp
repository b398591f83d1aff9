// The extension versions whose schema this library serves: its own, the
// control file's default_version (CLAIMQUEUE_VERSION), and the release before
// it (CLAIMQUEUE_PREVIOUS_VERSION: where the last update part in
// src/sql/updates starts). The Makefile passes both to the compiler; they are
// written nowhere else. Serving the previous release lets operators restart
// onto a new library (a rolling restart) with every database still working,
// and run ALTER EXTENSION claimqueue UPDATE later, database by database. So
// code that reads a column the previous release lacks looks it up by name and
// leaves its feature off while it is absent. A database at any other version
// gets a clear error from the queue API and no reaper, instead of "column ...
// does not exist".
#pragma once

#include "pg/pg.hpp"

#ifndef CLAIMQUEUE_VERSION
#error "CLAIMQUEUE_VERSION must be defined by the build (the control file's default_version)"
#endif
#ifndef CLAIMQUEUE_PREVIOUS_VERSION
#error "CLAIMQUEUE_PREVIOUS_VERSION must be defined by the build (the first version of the last update part)"
#endif

namespace claimqueue {

constexpr const char *kSchemaVersion = CLAIMQUEUE_VERSION;
constexpr const char *kPreviousSchemaVersion = CLAIMQUEUE_PREVIOUS_VERSION;
static_assert(CLAIMQUEUE_PREVIOUS_VERSION[0] != '\0',
              "CLAIMQUEUE_PREVIOUS_VERSION is empty: src/sql/updates has no part ending at this version");

enum class SchemaState {
    kAbsent,    // no claimqueue in this database
    kCurrent,   // at kSchemaVersion
    kPrevious,  // at kPreviousSchemaVersion: served until ALTER EXTENSION UPDATE
    kOlder,     // older than that: refused until ALTER EXTENSION UPDATE
    kNewer,     // newer than this library (or unknown): refused
};

// Whether this library runs the queue API and a reaper on a schema in `state`.
inline bool Served(SchemaState state)
{
    return state == SchemaState::kCurrent || state == SchemaState::kPrevious;
}

// The extension in this database, read from pg_extension (no cache).
SchemaState InstalledSchema();

// Raises 55000 (object not in prerequisite state) unless this library serves
// the extension's version in this database; returns the state (kAbsent while
// the extension is not visible). Looked up once, and again after any relcache
// invalidation (an ALTER/DROP/CREATE EXTENSION sends some: every script
// replaces the views), so a session sees another session's committed ALTER
// EXTENSION UPDATE at its next call.
SchemaState RequireServedSchema();

// Any relation changed (the session module calls it): look again next time.
void SchemaAtRelationChange(Oid relid);

}  // namespace claimqueue

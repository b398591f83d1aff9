// The background workers: the launcher (launcher.cpp), one reaper per
// database with the extension (reaper.cpp), and the guard that keeps them out
// of the way of DATABASE commands and wakes them after CREATE EXTENSION
// (database_guard.cpp). README.md beside this file has the state machine.
#pragma once

#include "pg/firewall.hpp"

namespace claimqueue {

// Registers the launcher; from _PG_init while shared_preload_libraries is processed.
void RegisterLauncher();

// Installs the ProcessUtility hook that pauses a database's reaper while
// DROP DATABASE, ALTER DATABASE ... RENAME / SET TABLESPACE or CREATE DATABASE
// ... TEMPLATE needs that database free of connections.
void InstallDatabaseGuard();

// At the end of every transaction (the session module calls it): resumes the
// reapers this transaction paused, and wakes the launcher after a commit that
// created or updated the extension.
void GuardAtTransactionEnd(XactEvent event);

// Asks the launcher to (re)start this database's reaper once the current
// transaction commits; the install and upgrade scripts call it (via
// claimqueue.start_reaper()). Nothing happens on rollback.
void StartReaperAtCommit();

}  // namespace claimqueue

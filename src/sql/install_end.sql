-- Last in the install script only: CREATE EXTENSION warns, with a hint, when
-- the library is not in shared_preload_libraries (no reaper, no claim
-- cursors). An update does not warn.
SELECT claimqueue.check_preload();

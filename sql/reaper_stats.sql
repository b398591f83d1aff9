\i test/regress/setup.sql
-- reaper_stats: this database's reaper, one row. The suite runs with the
-- library preloaded; whether the reaper has started by now depends on timing,
-- so only what cannot vary is shown. test/perl/reaper.pl follows the state
-- through the worker's whole life; test/perl/no_preload.pl shows 'not preloaded'.
SELECT preloaded, enabled, state IN ('unknown', 'starting', 'running', 'no extension', 'restart wait')
       AS known_state
FROM reaper_stats;
SELECT count(*) FROM reaper_stats;
SELECT column_name, data_type FROM information_schema.columns
WHERE table_name = 'reaper_stats' ORDER BY ordinal_position;
-- The worker's settings, with their defaults.
SELECT name, setting, unit, context FROM pg_settings WHERE name LIKE 'claimqueue.reaper%' ORDER BY name;

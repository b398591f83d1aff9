-- claimqueue 0.1.0 -> 0.2.0. test/upgrade/run.sh checks that 0.1.0 updated by
-- this script is the same extension as a fresh CREATE EXTENSION of 0.2.0.
\echo Use "ALTER EXTENSION claimqueue UPDATE TO '0.2.0'" to load this file. \quit

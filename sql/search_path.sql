\i test/regress/setup.sql
-- The hot path's functions have no SET search_path (src/sql/api/jobs.sql);
-- the names they resolve are resolved under pg_catalog, pg_temp all the same,
-- whatever the caller's search_path: the SQL a claim runs through SPI (the
-- promotion of jobs that became due), and a trigger on claimqueue.jobs, which
-- runs with the extension owner's rights during the call.

-- A caller's schema that shadows bigint's = (the promotion's statement
-- compares job ids).
CREATE SCHEMA shadow;
CREATE FUNCTION shadow.eq(bigint, bigint) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    RAISE NOTICE 'shadow.= called';
    RETURN $1 OPERATOR(pg_catalog.=) $2;
END $$;
CREATE OPERATOR shadow.= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = shadow.eq);
CREATE TABLE pg_temp.paths (n serial, job bigint, new_state text, path text, who name);
CREATE FUNCTION pg_temp.note_path() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO pg_temp.paths (job, new_state, path, who)
    VALUES (NEW.id, NEW.state, current_setting('search_path'), current_user);
    RETURN NEW;
END $$;

SELECT create_queue('paths', backoff_base => '0');
SELECT enqueue('paths', '{"n": 1}');
SELECT enqueue('paths', '{"n": 2}', run_at => now() + interval '1 hour');

-- The caller puts its schema first, before pg_catalog.
SET search_path = shadow, pg_catalog, public;
SELECT id, attempt FROM dequeue('paths', 'w');
SELECT complete(1, 1);
-- The delayed job is promoted by SPI when it is due (claimqueue's clock moved
-- for the test): bigint's = is pg_catalog's, no notice.
SET claimqueue.debug_clock_offset = '2h';
SELECT id, attempt FROM dequeue('paths', 'w');
RESET claimqueue.debug_clock_offset;
-- The caller's setting is its own again after each call.
SHOW search_path;

-- With a trigger on the table, its code runs under the pinned search_path.
RESET search_path;
SELECT enqueue('paths', '{"n": 3}');
CREATE TRIGGER note_path AFTER UPDATE ON claimqueue.jobs
    FOR EACH ROW EXECUTE FUNCTION pg_temp.note_path();
SET search_path = shadow, pg_catalog, public;
SELECT id, attempt FROM dequeue('paths', 'w');
SELECT heartbeat(3, 1) > now() AS extended;
SELECT fail(3, 1, 'once', retry_in => '0');
SELECT id, attempt FROM complete_and_dequeue(2, 1, 'paths', 'w');
SELECT complete_batch(ARRAY[3], ARRAY[2]);
SHOW search_path;
RESET search_path;
SELECT job, new_state, path, who = (SELECT extowner::regrole::name FROM pg_extension
                                    WHERE extname = 'claimqueue') AS as_owner
FROM pg_temp.paths ORDER BY n;
DROP TRIGGER note_path ON claimqueue.jobs;
DROP SCHEMA shadow CASCADE;

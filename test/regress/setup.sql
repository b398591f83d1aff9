-- Included by every sql/*.sql file: a fresh install (ids start at 1) and helpers.
\set ECHO none
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS claimqueue CASCADE;
CREATE EXTENSION claimqueue;
RESET client_min_messages;

-- Runs a statement and reports its SQLSTATE and message instead of failing.
CREATE FUNCTION pg_temp.err(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- A digest of everything claimqueue stores: equal before and after = nothing changed.
CREATE FUNCTION pg_temp.fingerprint() RETURNS text LANGUAGE sql AS $$
    SELECT md5(coalesce((SELECT string_agg(q::text, ',' ORDER BY q.queue_id) FROM claimqueue.queues q), '')
            || '|' || coalesce((SELECT string_agg(j::text, ',' ORDER BY j.id) FROM claimqueue.jobs j), '')
            || '|' || coalesce((SELECT string_agg(g::text, ',' ORDER BY g::text) FROM claimqueue.queue_grants g), ''))
$$;

-- Jobs without volatile timestamps, for stable expected output.
CREATE VIEW pg_temp.jobs AS
SELECT j.id, q.name AS queue, j.state, j.priority, j.attempt, j.max_attempts, j.worker,
       j.last_error, j.dedup_key, j.payload,
       j.run_at > clock_timestamp() AS delayed,
       j.lease_expires_at IS NOT NULL AS leased,
       j.started_at IS NOT NULL AS started,
       j.finished_at IS NOT NULL AS finished
FROM claimqueue.jobs j JOIN claimqueue.queues q USING (queue_id)
ORDER BY j.id;
\set ECHO all

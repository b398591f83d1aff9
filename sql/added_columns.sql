\i test/regress/setup.sql
-- Columns and constraints a user adds to claimqueue.jobs hold through every
-- single-row write (src/engine/job_rows.cpp) as through an UPDATE or INSERT.
-- ALTER TABLE ... ADD COLUMN ... DEFAULT with a non-volatile default rewrites
-- nothing: the rows written before it read the default from the catalog
-- (a "missing" attribute), and a new version of such a row must carry it.
CREATE FUNCTION pg_temp.jobs_with(col text) RETURNS TABLE (id bigint, state text, val text)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format('SELECT id, state, %I::text FROM claimqueue.jobs ORDER BY id', col);
END $$;
SELECT create_queue('a', backoff_base => '0');
-- Jobs 1 to 9, all written before the column exists; job 9 holds a dedup key
-- (ids are drawn from the sequence: a dedup enqueue that finds a job uses one).
SELECT count(*) FROM enqueue_batch('a', array_fill('{}'::jsonb, ARRAY[8]));
SELECT enqueue('a', dedup_key => 'k9');
ALTER TABLE claimqueue.jobs ADD COLUMN region text DEFAULT 'eu';
-- claim, complete, fail, heartbeat, complete_and_dequeue, dequeue_wait,
-- complete_batch, each over a row written before the column.
SELECT id, attempt FROM dequeue('a', 'w', 3);
SELECT complete(1, 1);
SELECT fail(2, 1, 'boom');
SELECT heartbeat(3, 1, '1 hour') > now() AS extended;
SELECT id, attempt FROM complete_and_dequeue(3, 1, 'a', 'w');
CALL dequeue_wait('a', 'w', wait => '0') \gset
SELECT e->'id' AS id FROM pg_catalog.jsonb_array_elements(:'jobs') e;
SELECT complete_batch(ARRAY[4, 5], ARRAY[1, 1]);
-- enqueue's dedup path finds job 9 (written before); new jobs take the default.
SELECT enqueue('a', dedup_key => 'k9');
SELECT enqueue('a');
SELECT count(*) FROM enqueue_batch('a', ARRAY['{}', '{}']::jsonb[]);
SELECT * FROM pg_temp.jobs_with('region');
SELECT count(*) AS null_regions FROM claimqueue.jobs WHERE region IS NULL;

-- The same with NOT NULL: without the default carried, every claim of an
-- older row failed (23502) and the jobs behind it were stuck.
SELECT create_queue('b', backoff_base => '0');
SELECT min(id) AS b, count(*) FROM enqueue_batch('b', array_fill('{}'::jsonb, ARRAY[7])) id \gset
SELECT enqueue('b', dedup_key => 'kb') = :b + 7 AS dedup_job_follows;
ALTER TABLE claimqueue.jobs ADD COLUMN tier int NOT NULL DEFAULT 1;
SELECT id - :b AS nth, attempt FROM dequeue('b', 'w', 3);
SELECT complete(:b, 1);
SELECT fail(:b + 1, 1, 'boom');
SELECT heartbeat(:b + 2, 1, '1 hour') > now() AS extended;
SELECT id - :b AS nth, attempt FROM complete_and_dequeue(:b + 2, 1, 'b', 'w');
CALL dequeue_wait('b', 'w', wait => '0') \gset
SELECT (e->>'id')::bigint - :b AS nth FROM pg_catalog.jsonb_array_elements(:'jobs') e;
SELECT complete_batch(ARRAY[:b + 3, :b + 4], ARRAY[1, 1]);
SELECT enqueue('b', dedup_key => 'kb') = :b + 7 AS dedup_found;
SELECT enqueue('b');
SELECT count(*) FROM enqueue_batch('b', ARRAY['{}', '{}']::jsonb[]);
-- The rows of queue a, written before both columns, once more.
SELECT id, attempt FROM dequeue('a', 'w', 2);
SELECT * FROM pg_temp.jobs_with('tier');
SELECT count(*) AS null_regions FROM claimqueue.jobs WHERE region IS NULL;

-- A dropped column: its place stays in every version, NULL.
ALTER TABLE claimqueue.jobs ADD COLUMN scratch int DEFAULT 7;
ALTER TABLE claimqueue.jobs DROP COLUMN scratch;
SELECT create_queue('c');
SELECT enqueue('c') AS c \gset
SELECT id = :c AS claimed, attempt FROM dequeue('c', 'w');
SELECT complete(:c, 1);
SELECT state, region, tier FROM claimqueue.jobs WHERE id = :c;

-- A CHECK constraint a user adds holds on every write: a refused claim
-- changes nothing and claims nothing.
ALTER TABLE claimqueue.jobs ADD CONSTRAINT no_banned_worker CHECK (worker IS DISTINCT FROM 'banned');
SELECT enqueue('c');
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT * FROM dequeue('c', 'banned')$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
SELECT id, attempt FROM dequeue('c', 'allowed');
ALTER TABLE claimqueue.jobs DROP CONSTRAINT no_banned_worker;

-- A stored generated column is computed for every version written (the
-- writes then go through the executor's trigger-aware path).
ALTER TABLE claimqueue.jobs ADD COLUMN label text GENERATED ALWAYS AS (state || '/' || attempt) STORED;
SELECT enqueue('c') AS g \gset
SELECT id = :g AS claimed, attempt FROM dequeue('c', 'w');
SELECT label FROM claimqueue.jobs WHERE id = :g;
SELECT complete(:g, 1);
SELECT id - :c AS nth, state, label, region, tier FROM claimqueue.jobs WHERE id >= :c ORDER BY id;
ALTER TABLE claimqueue.jobs DROP COLUMN label;

-- A virtual generated column (18): nothing is stored, every write leaves it
-- to be computed on reading; an insert must not take its expression for a
-- default (it crashed the backend). Before 18 there is no such column and
-- the checks below hold trivially.
DO $$
BEGIN
    IF current_setting('server_version_num')::int >= 180000 THEN
        EXECUTE $a$ALTER TABLE claimqueue.jobs ADD COLUMN vlabel text
                   GENERATED ALWAYS AS (state || '/' || attempt) VIRTUAL$a$;
    END IF;
END $$;
SELECT enqueue('c') AS v \gset
SELECT id = :v AS claimed, attempt FROM dequeue('c', 'w');
SELECT complete(:v, 1);
SELECT count(*) AS jobs,
       count(*) FILTER (WHERE to_jsonb(j)->>'vlabel' IS DISTINCT FROM
                        CASE WHEN current_setting('server_version_num')::int >= 180000
                             THEN state || '/' || attempt END) AS vlabel_wrong
FROM claimqueue.jobs j WHERE id >= :c;
DO $$
BEGIN
    IF current_setting('server_version_num')::int >= 180000 THEN
        ALTER TABLE claimqueue.jobs DROP COLUMN vlabel;
    END IF;
END $$;
ALTER TABLE claimqueue.jobs DROP COLUMN tier;
ALTER TABLE claimqueue.jobs DROP COLUMN region;

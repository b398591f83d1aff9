\i test/regress/setup.sql
-- complete(), fail() and heartbeat() of a job this session claimed fetch its
-- running version where the claim wrote it (job_rows.cpp, the claimed
-- versions) instead of asking the primary key; whenever that version is not
-- the one the statement's snapshot sees, the key decides. Each case below
-- answers as the key alone would.
-- The default retention (7 days): the background reaper purges nothing here,
-- and the purge below moves claimqueue's clock past it.
SELECT create_queue('cv', lease => '1 minute', max_attempts => 5, backoff_base => '0');
-- Claimed and completed by this session.
SELECT enqueue('cv', '{"n": 1}') AS id \gset
SELECT attempt FROM dequeue('cv', 'w1') \gset
SELECT complete(:id, :attempt);
SELECT state, attempt FROM claimqueue.jobs WHERE id = :id;
SELECT pg_temp.err(format('SELECT complete(%s, %s)', :id, :attempt));
-- A claim rolled back wrote a version that never committed: the job is ready.
SELECT enqueue('cv', '{"n": 2}') AS id \gset
BEGIN;
SELECT attempt FROM dequeue('cv', 'w1') \gset
ROLLBACK;
SELECT pg_temp.err(format('SELECT complete(%s, %s)', :id, :attempt));
SELECT state, attempt FROM claimqueue.jobs WHERE id = :id;
-- Reaped and claimed again by this session: the first token is stale, the
-- second holds; after a heartbeat (a newer running version) too.
SELECT attempt FROM dequeue('cv', 'w1') \gset
SET claimqueue.debug_clock_offset = '2min';
SELECT reap();
SELECT attempt AS attempt2 FROM dequeue('cv', 'w1') \gset
SELECT :attempt AS first, :attempt2 AS second;
SELECT pg_temp.err(format('SELECT complete(%s, %s)', :id, :attempt));
SELECT heartbeat(:id, :attempt2) IS NOT NULL AS extended;
SELECT fail(:id, :attempt2, 'once more', retry_in => '0');
SELECT attempt AS attempt3 FROM dequeue('cv', 'w1') \gset
SELECT complete(:id, :attempt3);
SELECT state, attempt FROM claimqueue.jobs WHERE id = :id;
RESET claimqueue.debug_clock_offset;
-- Cancelled by a statement after the claim: the claimed version is gone.
SELECT enqueue('cv', '{"n": 3}') AS id \gset
SELECT attempt FROM dequeue('cv', 'w1') \gset
SELECT cancel(:id);
SELECT pg_temp.err(format('SELECT complete(%s, %s)', :id, :attempt));
-- The table rewritten (VACUUM FULL) between claim and completion: the kept
-- place is in the old file; the key finds the job in the new one.
SELECT enqueue('cv', '{"n": 4}') AS id \gset
SELECT attempt FROM dequeue('cv', 'w1') \gset
VACUUM FULL claimqueue.jobs;
SELECT complete(:id, :attempt);
SELECT state FROM claimqueue.jobs WHERE id = :id;
-- Truncated: the job is gone (QC002).
SELECT enqueue('cv', '{"n": 5}') AS id \gset
SELECT attempt FROM dequeue('cv', 'w1') \gset
TRUNCATE claimqueue.jobs;
SELECT pg_temp.err(format('SELECT complete(%s, %s)', :id, :attempt));
-- VACUUM cut the table short behind a claim: the claimed version lay in its
-- last page, the job was cancelled and purged, and the page is gone. The
-- completion is told the job does not exist, and reads no missing page.
SELECT count(*) FROM enqueue_batch('cv',
    (SELECT array_agg(jsonb_build_object('pad', repeat('x', 400))) FROM generate_series(1, 200)));
SELECT max(id) AS id, max(attempt) AS attempt FROM dequeue('cv', 'w1', batch => 200) \gset
SELECT cancel_jobs('cv', '{running}');
SET claimqueue.debug_clock_offset = '8d';
SELECT purge('cv');
RESET claimqueue.debug_clock_offset;
VACUUM claimqueue.jobs;
SELECT pg_temp.err(format('SELECT complete(%s, %s)', :id, :attempt));
SELECT pg_temp.err(format('SELECT heartbeat(%s, %s)', :id, :attempt));
-- A batch claimed and completed by this session: every job done once.
SELECT count(*) FROM enqueue_batch('cv', (SELECT array_agg('{}'::jsonb) FROM generate_series(1, 50)));
SELECT array_agg(id) AS ids, array_agg(attempt) AS attempts FROM dequeue('cv', 'w1', batch => 50) \gset
SELECT complete_batch(:'ids'::bigint[], :'attempts'::integer[]);
SELECT state, count(*) FROM claimqueue.jobs GROUP BY state ORDER BY state;
SELECT pg_temp.err(format('SELECT complete_batch(%L::bigint[], %L::integer[])', :'ids', :'attempts'));

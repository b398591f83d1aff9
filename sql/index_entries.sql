\i test/regress/setup.sql
-- The hot path's writes leave the indexes of claimqueue.jobs as an UPDATE
-- would: every version gets an entry in each index whose predicate it
-- satisfies (and in each index without one). A call opens only the indexes
-- it scans and those its writes put entries in (src/engine/job_rows.cpp,
-- OpenIndexesToWrite), so this checks every index against the table with
-- amcheck's heapallindexed after each kind of write, a user's own indexes
-- (one partial, one not) included.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amcheck;
RESET client_min_messages;
CREATE INDEX user_running_worker_idx ON claimqueue.jobs (worker) WHERE state = 'running';
CREATE INDEX user_attempt_idx ON claimqueue.jobs (attempt);
-- Every index of claimqueue.jobs checked: the table's visible versions each
-- have the entries their index's predicate says they need.
CREATE FUNCTION pg_temp.indexes_complete() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    index regclass;
    n int := 0;
BEGIN
    FOR index IN SELECT indexrelid::regclass FROM pg_index
                 WHERE indrelid = 'claimqueue.jobs'::regclass ORDER BY indexrelid LOOP
        PERFORM bt_index_check(index, true);
        n := n + 1;
    END LOOP;
    RETURN n || ' indexes complete';
END $$;
SELECT create_queue('plain');
SELECT create_queue('limited', max_running => 10, max_running_per_key => 5);
SELECT create_queue('fair', fair => true);
SELECT enqueue('plain', '{}', dedup_key => 'd' || g) FROM generate_series(1, 6) g;
SELECT enqueue('limited', '{}', concurrency_key => 'k' || g % 2) FROM generate_series(1, 4) g;
SELECT enqueue('fair', '{}', concurrency_key => 'k' || g % 2) FROM generate_series(1, 4) g;
SELECT enqueue('fair', '{}');
SELECT pg_temp.indexes_complete();
-- Claims: a dedup key (jobs_dedup_idx keeps running jobs), an owner
-- (jobs_owned_idx), concurrency keys (jobs_running_key_idx), a fair queue.
SELECT id, attempt FROM dequeue('plain', 'w1', batch => 3);
SELECT id, attempt FROM dequeue('plain', 'w2', release_on_disconnect => true);
SELECT id, attempt FROM dequeue('limited', 'w3', batch => 3);
-- (Ordered by id: a fair queue's claim starts at the tenant its rotation stands at: the
-- order of the batch depends on what earlier tests left in shared memory.)
SELECT id, attempt FROM dequeue('fair', 'w4', batch => 3) ORDER BY id;
SELECT pg_temp.indexes_complete();
-- Finishes: complete with a result, a batch, a retried failure, a delayed
-- one, the last attempt's, a heartbeat, and complete_and_dequeue.
SELECT complete(1, 1, '{"ok": true}');
SELECT complete_batch(ARRAY[2, 3], ARRAY[1, 1]);
SELECT fail(4, 1, 'again now', retry_in => '0');
SELECT fail(7, 1, 'again later', retry_in => '1 hour');
SELECT heartbeat(8, 1, '10 minutes') > now() AS extended;
SELECT id, attempt FROM complete_and_dequeue(9, 1, 'plain', 'w5');
SELECT pg_temp.indexes_complete();
SELECT enqueue('fair', '{"last": true}', max_attempts => 1);
SELECT id, attempt FROM dequeue('fair', 'w6', batch => 10) ORDER BY id;
SELECT fail(id, attempt, 'gave up') FROM claimqueue.jobs WHERE payload ? 'last';
SELECT pg_temp.indexes_complete();
SELECT id, state, attempt, dedup_key IS NOT NULL AS dedup, worker FROM pg_temp.jobs;
-- What a call locks: the table, the indexes it scans and those it writes
-- entries in. A claim of a job without dedup key, owner or concurrency key:
-- the ready index it scans; the primary key, jobs_running_idx and the
-- user's two indexes it writes to (jobs_running_key_idx holds keyed jobs only).
-- (A queue's first claim loads its lanes through SQL: that one comes first.)
SELECT create_queue('solo');
SELECT enqueue('solo', '{}') AS first \gset
SELECT complete(id, attempt) FROM dequeue('solo', 'w7');
SELECT enqueue('solo', '{}') AS fresh \gset
BEGIN;
SELECT id, attempt FROM dequeue('solo', 'w7');
SELECT relation::regclass AS locked, mode FROM pg_locks
WHERE pid = pg_backend_pid() AND locktype = 'relation'
  AND relation::regclass::text ~ '^(claimqueue\.)?(jobs|user_)' ORDER BY relation::regclass::text COLLATE "C", mode;
COMMIT;
-- Its completion: the primary key it reads, and the user's index without a
-- predicate, which the done version goes into with the primary key (done
-- jobs have no index of their own).
BEGIN;
SELECT complete(:fresh, 1);
SELECT relation::regclass AS locked, mode FROM pg_locks
WHERE pid = pg_backend_pid() AND locktype = 'relation'
  AND relation::regclass::text ~ '^(claimqueue\.)?(jobs|user_)' ORDER BY relation::regclass::text COLLATE "C", mode;
COMMIT;
SELECT pg_temp.indexes_complete();
-- An index made while this session keeps its writer between calls: the
-- session's next writes put their entries there too.
CREATE INDEX user_late_idx ON claimqueue.jobs (worker) WHERE state = 'done';
SELECT enqueue('solo', '{}') AS late \gset
SELECT id, attempt FROM dequeue('solo', 'w8');
SELECT complete(:late, 1);
SELECT pg_temp.indexes_complete();
-- amcheck's functions are not the next test's (install.sql lists the
-- functions in the database).
DROP EXTENSION amcheck;

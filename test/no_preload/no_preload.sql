-- Without shared_preload_libraries: CREATE EXTENSION works and warns, with a hint.
CREATE EXTENSION claimqueue;
SELECT claimqueue.check_preload() AS preloaded;
-- The queue works; reap() returns expired leases by hand.
SELECT enqueue('default', '{"n": 1}');
SELECT id, attempt FROM dequeue('default', 'w1', lease => '1 second');
SET claimqueue.debug_clock_offset = '1min';
SELECT reap();
SELECT state, last_error FROM queue_jobs;
-- Nothing reaps in the background: reaper_stats says why, and purge() does
-- the retention pass by hand.
SELECT preloaded, state, pid FROM reaper_stats;
SET claimqueue.debug_clock_offset = '2min';
SELECT id, attempt FROM dequeue('default', 'w1');
SELECT complete(1, 2);
SET claimqueue.debug_clock_offset = '8d';
SELECT purge();
SELECT count(*) AS jobs_left FROM queue_jobs;
-- dequeue_wait() claims without the preload, but cannot wait: nothing to
-- register waiters in. The error says so, with a hint.
SELECT enqueue('default', '{"n": 2}');
CALL dequeue_wait('default', 'w1', wait => '0') \gset
SELECT jsonb_path_query_array(:'jobs', '$[*].id') AS claimed;
CALL dequeue_wait('default', 'w1', wait => '1s');

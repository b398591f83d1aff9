-- Without shared_preload_libraries: CREATE EXTENSION works and warns, with a hint.
CREATE EXTENSION claimqueue;
SELECT claimqueue.check_preload() AS preloaded;
-- The queue works; reap() returns expired leases by hand.
SELECT enqueue('default', '{"n": 1}');
SELECT id, attempt FROM dequeue('default', 'w1', lease => '1 second');
SET claimqueue.debug_clock_offset = '1min';
SELECT reap();
SELECT state, last_error FROM queue_jobs;

\i test/regress/setup.sql
-- failed_retention: how long failed jobs are kept, apart from retention (done
-- and cancelled jobs). NULL, the default, keeps them as long as retention
-- says. Time moves with claimqueue.debug_clock_offset (the background reaper
-- runs on the real clock, so it leaves these jobs alone).
SELECT create_queue('keep_failures', retention => '1 day', failed_retention => '30 days', max_attempts => 1);
SELECT create_queue('plain', retention => '1 day', max_attempts => 1);
SELECT queue, retention, failed_retention FROM queue_settings ORDER BY queue;
-- One job done, one failed and one cancelled in each queue.
SELECT enqueue('keep_failures', jsonb_build_object('n', g)) FROM generate_series(1, 3) g;
SELECT enqueue('plain', jsonb_build_object('n', g)) FROM generate_series(4, 6) g;
SELECT count(*) FROM dequeue('keep_failures', 'w1', batch => 2);
SELECT complete(1, 1);
SELECT fail(2, 1, 'boom');
SELECT cancel(3);
SELECT count(*) FROM dequeue('plain', 'w1', batch => 2);
SELECT complete(4, 1);
SELECT fail(5, 1, 'boom');
SELECT cancel(6);
-- Two days later the done and cancelled jobs of both queues go, and the
-- failed job of the queue without failed_retention; the other stays.
SET claimqueue.debug_clock_offset = '2d';
SELECT purge();
SELECT id, queue, state FROM pg_temp.jobs;
-- After 30 days it goes too.
SET claimqueue.debug_clock_offset = '31d';
SELECT purge();
SELECT id, queue, state FROM pg_temp.jobs;
RESET claimqueue.debug_clock_offset;
-- Shorter than retention works the same way: failures kept an hour,
-- successes a day.
SELECT alter_queue('plain', failed_retention => '1 hour');
SELECT enqueue('plain', jsonb_build_object('n', g)) FROM generate_series(7, 8) g;
SELECT count(*) FROM dequeue('plain', 'w1', batch => 2);
SELECT complete(7, 1);
SELECT fail(8, 1, 'boom');
SET claimqueue.debug_clock_offset = '2h';
SELECT purge('plain');
SELECT id, queue, state FROM pg_temp.jobs;
RESET claimqueue.debug_clock_offset;
-- alter_queue() leaves failed_retention as it is unless it is given.
SELECT alter_queue('plain', retention => '2 days');
SELECT queue, retention, failed_retention FROM queue_settings ORDER BY queue;
-- Bad input changes nothing.
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT create_queue('bad', failed_retention => '-1 day')$$);
SELECT pg_temp.err($$SELECT alter_queue('plain', failed_retention => '-1 second')$$);
SELECT pg_temp.err($$SELECT alter_queue('plain', failed_retention => '101 years')$$);
SELECT pg_temp.err($$SELECT alter_queue('nope', failed_retention => '1 day')$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;

\i test/regress/setup.sql
SELECT create_queue('emails');
SELECT create_queue('empty');
SELECT drop_queue('empty');
-- Refused while jobs are ready or running, with a hint.
SELECT enqueue('emails', '{"n": 1}');
SELECT enqueue('emails', '{"n": 2}');
SELECT drop_queue('emails');
-- Finished jobs do not hold a queue back.
SELECT complete(id, attempt) FROM dequeue('emails', 'w1');
SELECT cancel(2);
SELECT drop_queue('emails');
SELECT count(*) AS jobs_left FROM claimqueue.jobs;
-- force deletes unfinished jobs with the queue.
SELECT create_queue('emails');
SELECT enqueue('emails') FROM generate_series(1, 3);
SELECT drop_queue('emails', force => true);
SELECT queue FROM queue_settings ORDER BY queue;
-- Bad input changes nothing.
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT drop_queue('emails')$$);
SELECT pg_temp.err($$SELECT drop_queue(NULL)$$);
SELECT pg_temp.err($$SELECT drop_queue('default', NULL)$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
-- A dropped queue is unknown from then on.
SELECT enqueue('emails');

\i test/regress/setup.sql
-- Concurrency limits: enqueue(..., concurrency_key), the queue settings
-- max_running and max_running_per_key (create_queue, alter_queue,
-- queue_settings), and what a claim takes under them. The races are in the
-- isolation specs limit_*; the restart in test/perl/limits.pl; the counts
-- under 16 workers in test/stress (STRESS_LIMITS).
SELECT create_queue('lim', max_running_per_key => 2);
SELECT queue, max_running, max_running_per_key FROM queue_settings WHERE queue = 'lim';
-- Four jobs of tenant a, then two of b, one of c and two without a key.
SELECT enqueue('lim', jsonb_build_object('n', g), concurrency_key => 'a') FROM generate_series(1, 4) g;
SELECT enqueue_batch('lim', ARRAY['{"n": 5}', '{"n": 6}']::jsonb[], concurrency_key => 'b');
SELECT enqueue('lim', '{"n": 7}', concurrency_key => 'c');
SELECT enqueue_batch('lim', ARRAY['{"n": 8}', '{"n": 9}']::jsonb[]);
SELECT id, concurrency_key FROM queue_jobs WHERE queue = 'lim' ORDER BY id;
-- A batch of 10 takes two of a (3 and 4 are held back, not blocking), both
-- of b, c, and the two without a key (limited by max_running only).
SELECT id, payload->>'n' AS n FROM dequeue('lim', 'w1', batch => 10) ORDER BY id;
-- Nothing more: a is at its limit.
SELECT count(*) FROM dequeue('lim', 'w2', batch => 10);
-- One of a completes: exactly one more of a can be claimed, in the same call.
SELECT id FROM complete_and_dequeue(1, 1, 'lim', 'w2', batch => 10);
SELECT count(*) FROM dequeue('lim', 'w2');
-- A failed attempt frees its slot too (job 2 is back to ready, behind job 4).
SELECT fail(2, 1, 'boom', retry_in => '0');
SELECT id FROM dequeue('lim', 'w2', batch => 10);
SELECT concurrency_key, count(*) FROM queue_jobs
 WHERE queue = 'lim' AND state = 'running' GROUP BY 1 ORDER BY 1;

-- max_running: the whole queue, keys or not.
SELECT create_queue('cap', max_running => 3);
SELECT enqueue('cap', jsonb_build_object('n', g), concurrency_key => 'k' || (g % 2))
  FROM generate_series(1, 5) g;
SELECT enqueue('cap', '{"n": 6}');
SELECT count(*) FROM dequeue('cap', 'w', batch => 10);
SELECT count(*) FROM dequeue('cap', 'w', batch => 10);
-- An expired lease still counts until it is reaped; the reap frees its slot.
SET claimqueue.debug_clock_offset = '1h';
SELECT count(*) FROM dequeue('cap', 'w', batch => 10);
SELECT reap('cap');
SELECT count(*) FROM dequeue('cap', 'w', batch => 10);
RESET claimqueue.debug_clock_offset;
SELECT count(*) AS running FROM queue_jobs WHERE queue = 'cap' AND state = 'running';
-- Both limits at once: max_running 3 and 1 per key.
SELECT alter_queue('cap', max_running_per_key => 1);
SELECT queue, max_running, max_running_per_key FROM queue_settings WHERE queue = 'cap';
UPDATE claimqueue.jobs SET state = 'done', finished_at = now(), lease_expires_at = NULL
 WHERE queue_id = (SELECT queue_id FROM claimqueue.queues WHERE name = 'cap') AND state = 'running';
SELECT enqueue('cap', jsonb_build_object('n', g), concurrency_key => 'same') FROM generate_series(7, 9) g;
SELECT concurrency_key FROM queue_jobs j JOIN dequeue('cap', 'w', batch => 10) d USING (id) ORDER BY 1 NULLS LAST;
-- alter_queue: 0 removes a limit, NULL leaves it; a queue without limits takes all.
SELECT alter_queue('cap', max_running => 0);
SELECT queue, max_running, max_running_per_key FROM queue_settings WHERE queue = 'cap';
SELECT alter_queue('cap', max_running_per_key => 0);
SELECT count(*) FROM dequeue('cap', 'w', batch => 10);
SELECT queue, max_running, max_running_per_key FROM queue_settings WHERE queue = 'cap';

-- Bad input: named, with its SQLSTATE, and nothing changes.
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT create_queue('bad', max_running => 0)$$);
SELECT pg_temp.err($$SELECT create_queue('bad', max_running_per_key => -3)$$);
SELECT pg_temp.err($$SELECT alter_queue('lim', max_running => -1)$$);
SELECT pg_temp.err($$SELECT alter_queue('lim', max_running_per_key => -2)$$);
SELECT pg_temp.err($$SELECT alter_queue('nope', max_running => 2)$$);
SELECT pg_temp.err($$SELECT enqueue('lim', '{}', concurrency_key => '')$$);
SELECT pg_temp.err($$SELECT enqueue('lim', '{}', concurrency_key => repeat('k', 600))$$);
SELECT pg_temp.err($$SELECT enqueue_batch('lim', ARRAY['{}']::jsonb[], concurrency_key => '')$$);
SELECT pg_temp.err($$UPDATE claimqueue.queues SET max_running = 0 WHERE name = 'lim'$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;

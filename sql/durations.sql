\i test/regress/setup.sql
-- One rule for every duration: extract(epoch ...), where a year is 365.25 days
-- (docs/sql-api.md, "Fencing, durations and backoff"). '1 year -365 days' is six hours by that rule; the
-- table's CHECKs used to compare intervals as PostgreSQL's < does (a year of
-- 360 days, so minus five days) and refused with 23514 what the argument check
-- had accepted.
SELECT extract(epoch FROM interval '1 year -365 days') / 3600 AS hours;
-- create_queue: each duration argument.
SELECT create_queue('q_lease', lease => '1 year -365 days');
SELECT create_queue('q_retention', retention => '1 year -365 days');
SELECT create_queue('q_base', backoff_base => '1 year -365 days', backoff_cap => '1 day');
SELECT create_queue('q_cap', backoff_base => '365 days', backoff_cap => '1 year');
SELECT queue, lease, backoff_base, backoff_cap, retention FROM queue_settings
WHERE queue LIKE 'q\_%' ORDER BY queue;
-- alter_queue: the same values, one argument at a time.
SELECT create_queue('q_alter');
SELECT alter_queue('q_alter', lease => '1 year -365 days');
SELECT alter_queue('q_alter', retention => '1 year -365 days');
SELECT alter_queue('q_alter', backoff_cap => '1 day', backoff_base => '1 year -365 days');
SELECT alter_queue('q_alter', backoff_cap => '1 year', backoff_base => '365 days');
SELECT queue, lease, backoff_base, backoff_cap, retention FROM queue_settings WHERE queue = 'q_alter';
-- The other way round: negative by the rule (minus six hours), refused by the
-- argument check with 22023 naming the value, and nothing changes.
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT create_queue('q_neg', lease => '-1 year 365 days')$$);
SELECT pg_temp.err($$SELECT create_queue('q_neg', retention => '-1 year 365 days')$$);
SELECT pg_temp.err($$SELECT create_queue('q_neg', backoff_base => '-1 year 365 days')$$);
SELECT pg_temp.err($$SELECT create_queue('q_neg', backoff_base => '1 year', backoff_cap => '365 days')$$);
SELECT pg_temp.err($$SELECT alter_queue('q_alter', lease => '-1 year 365 days')$$);
SELECT pg_temp.err($$SELECT alter_queue('q_alter', retention => '-1 year 365 days')$$);
SELECT pg_temp.err($$SELECT alter_queue('q_alter', backoff_base => '-1 year 365 days')$$);
SELECT pg_temp.err($$SELECT alter_queue('q_alter', backoff_cap => '364 days')$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
-- The same interval means the same lease as a dequeue() argument and as the
-- queue's lease: six hours from the claim, both ways.
SELECT enqueue('q_lease', '{"n": 1}');
SELECT enqueue('q_lease', '{"n": 2}');
SELECT extract(epoch FROM lease_expires_at - clock_timestamp()) BETWEEN 6 * 3600 - 60 AND 6 * 3600
       AS queue_lease_is_six_hours
FROM dequeue('q_lease', 'w');
SELECT extract(epoch FROM lease_expires_at - clock_timestamp()) BETWEEN 6 * 3600 - 60 AND 6 * 3600
       AS dequeue_lease_is_six_hours
FROM dequeue('q_lease', 'w', lease => '1 year -365 days');
-- And as a heartbeat's extension.
SELECT extract(epoch FROM heartbeat(id, attempt, '1 year -365 days') - clock_timestamp())
       BETWEEN 6 * 3600 - 60 AND 6 * 3600 AS heartbeat_is_six_hours
FROM claimqueue.jobs WHERE state = 'running' ORDER BY id LIMIT 1;

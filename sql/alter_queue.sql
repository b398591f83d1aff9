\i test/regress/setup.sql
SELECT create_queue('emails');
SELECT alter_queue('emails', lease => '2 minutes', max_attempts => 9);
SELECT queue, lease, max_attempts, backoff_base, backoff_cap, retention FROM queue_settings WHERE queue = 'emails';
-- NULL leaves a setting as it is.
SELECT alter_queue('emails', retention => '1 hour');
SELECT queue, lease, max_attempts, backoff_base, backoff_cap, retention FROM queue_settings WHERE queue = 'emails';
-- Jobs keep the max_attempts they were enqueued with.
SELECT enqueue('emails');
SELECT alter_queue('emails', max_attempts => 2);
SELECT id, max_attempts FROM pg_temp.jobs;
-- Bad input changes nothing.
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT alter_queue('nope', lease => '1 minute')$$);
SELECT pg_temp.err($$SELECT alter_queue(NULL)$$);
SELECT pg_temp.err($$SELECT alter_queue('emails', lease => '0')$$);
SELECT pg_temp.err($$SELECT alter_queue('emails', max_attempts => -1)$$);
-- The merged settings are checked: a base above the existing cap is refused.
SELECT pg_temp.err($$SELECT alter_queue('emails', backoff_base => '2 hours')$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
SELECT alter_queue('nope');

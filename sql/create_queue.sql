\i test/regress/setup.sql
SELECT create_queue('emails');
SELECT create_queue('reports.daily', lease => '5 minutes', max_attempts => 3,
                    backoff_base => '10 seconds', backoff_cap => '10 minutes',
                    retention => '1 day');
SELECT queue, lease, max_attempts, backoff_base, backoff_cap, retention FROM queue_settings ORDER BY queue;
-- An existing name is an error, or false with if_not_exists.
SELECT create_queue('emails');
SELECT create_queue('emails', if_not_exists => true);
-- Bad input: every error names the value, and nothing changes.
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT create_queue(NULL)$$);
SELECT pg_temp.err($$SELECT create_queue('')$$);
SELECT pg_temp.err($$SELECT create_queue('Emails')$$);
SELECT pg_temp.err($$SELECT create_queue('has space')$$);
SELECT pg_temp.err($$SELECT create_queue('.hidden')$$);
SELECT pg_temp.err($$SELECT create_queue(repeat('q', 64))$$);
SELECT pg_temp.err($$SELECT create_queue('ok', lease => '0')$$);
SELECT pg_temp.err($$SELECT create_queue('ok', lease => '-1 second')$$);
SELECT pg_temp.err($$SELECT create_queue('ok', lease => '400 days')$$);
SELECT pg_temp.err($$SELECT create_queue('ok', lease => NULL)$$);
SELECT pg_temp.err($$SELECT create_queue('ok', max_attempts => 0)$$);
SELECT pg_temp.err($$SELECT create_queue('ok', max_attempts => 10001)$$);
SELECT pg_temp.err($$SELECT create_queue('ok', backoff_base => '-1 s')$$);
SELECT pg_temp.err($$SELECT create_queue('ok', backoff_base => '2 hours', backoff_cap => '1 hour')$$);
SELECT pg_temp.err($$SELECT create_queue('ok', retention => '-1 day')$$);
SELECT pg_temp.err($$SELECT create_queue('ok', if_not_exists => NULL)$$);
SELECT pg_temp.err($$SELECT create_queue('ok', fair => NULL)$$);
SELECT pg_temp.err($$SELECT create_queue('ok', retention => '100 years 1 second')$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
-- The longest durations: 100 years counted as extract(epoch ...) counts them
-- (a year is 365.25 days), so '100 years' itself is within.
SELECT create_queue('century', retention => '100 years', backoff_cap => '100 years',
                    failed_retention => '1200 months');
SELECT alter_queue('century', backoff_base => '36525 days');
SELECT queue, backoff_base, backoff_cap, retention, failed_retention FROM queue_settings
WHERE queue = 'century';
SELECT drop_queue('century');
-- The full error, with its hint.
SELECT create_queue('Bad Name');
-- 63 bytes is the longest name.
SELECT create_queue(repeat('q', 63));
-- A new queue is written once: its row as inserted, with the limits and fair
-- given; a setting given as its default writes nothing more. (The counts are
-- this transaction's: flushed before it.)
SELECT pg_stat_force_next_flush();
BEGIN;
SELECT create_queue('written_once', fair => false);
SELECT pg_stat_get_xact_tuples_inserted('claimqueue.queues'::regclass) AS inserted,
       pg_stat_get_xact_tuples_updated('claimqueue.queues'::regclass) AS updated;
COMMIT;
SELECT pg_stat_force_next_flush();
BEGIN;
SELECT create_queue('written_twice', fair => true, max_running => 5);
SELECT pg_stat_get_xact_tuples_inserted('claimqueue.queues'::regclass) AS inserted,
       pg_stat_get_xact_tuples_updated('claimqueue.queues'::regclass) AS updated;
COMMIT;
SELECT queue, fair, max_running FROM queue_settings WHERE queue LIKE 'written_%' ORDER BY queue;

\i test/regress/setup.sql
SELECT create_queue('work', lease => '1 minute');
SELECT enqueue('work');
SELECT id, attempt FROM dequeue('work', 'w1', lease => '10 seconds');
-- Extends the lease by the queue's lease, or by extend.
SELECT heartbeat(1, 1) - now() BETWEEN interval '55 seconds' AND interval '2 minutes' AS by_queue_lease;
SELECT heartbeat(1, 1, '1 hour') - now() > interval '59 minutes' AS by_extend;
SELECT heartbeat(1, 1, '1 hour') AS new_expiry \gset
SELECT lease_expires_at = :'new_expiry' AS stored FROM claimqueue.jobs WHERE id = 1;
-- Only the current claim may heartbeat; bad input changes nothing.
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT heartbeat(1, 2)$$);
SELECT pg_temp.err($$SELECT heartbeat(2, 1)$$);
SELECT pg_temp.err($$SELECT heartbeat(NULL, 1)$$);
SELECT pg_temp.err($$SELECT heartbeat(1, NULL)$$);
SELECT pg_temp.err($$SELECT heartbeat(1, 1, '0')$$);
SELECT pg_temp.err($$SELECT heartbeat(1, 1, '-5 minutes')$$);
SELECT pg_temp.err($$SELECT heartbeat(1, 1, '1000 days')$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
SELECT complete(1, 1);
SELECT heartbeat(1, 1);
-- Leases are durations, as extract(epoch ...) counts them (a day is 24 hours,
-- a month 30 days), whatever the time zone: a 1-day lease over a DST change
-- is 24 hours, and a mixed-sign interval is its net duration.
SET TimeZone = 'America/New_York';
SELECT set_config('claimqueue.debug_clock_offset',
       (extract(epoch FROM timestamptz '2027-03-13 12:00:00' - now()))::int::text, false) IS NOT NULL;
SELECT enqueue('work');
SELECT id, attempt FROM dequeue('work', 'w1', lease => '1 day');
SELECT extract(epoch FROM lease_expires_at - started_at) AS lease_seconds FROM claimqueue.jobs WHERE id = 2;
SELECT heartbeat(2, 1, '1 month -30 days 1 second') AS hb \gset
SELECT extract(epoch FROM :'hb'::timestamptz - started_at) BETWEEN 1 AND 60 AS about_one_second
FROM claimqueue.jobs WHERE id = 2;
RESET claimqueue.debug_clock_offset;
RESET TimeZone;

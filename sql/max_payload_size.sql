\i test/regress/setup.sql
-- claimqueue.max_payload_size: the largest payload enqueue() takes, a
-- superuser setting with units (docs/settings.md).
SELECT setting, unit, context, boot_val FROM pg_settings WHERE name = 'claimqueue.max_payload_size';
SHOW claimqueue.max_payload_size;
-- Lowered: a payload over it is refused with 54000 naming both sizes, and
-- nothing is stored; one within it is taken.
SET claimqueue.max_payload_size = '100B';
SHOW claimqueue.max_payload_size;
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT enqueue('default', jsonb_build_object('pad', repeat('x', 200)))$$);
SELECT pg_temp.err($$SELECT enqueue_batch('default', ARRAY['{}', jsonb_build_object('pad', repeat('x', 200))])$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
SELECT enqueue('default', '{"small": true}') > 0 AS small_taken;
-- Raised above the default: a 2 MB payload is taken.
SET claimqueue.max_payload_size = '4MB';
SELECT enqueue('default', jsonb_build_object('pad', repeat('x', 2 * 1024 * 1024))) > 0 AS big_taken;
RESET claimqueue.max_payload_size;
SELECT pg_temp.err($$SELECT enqueue('default', jsonb_build_object('pad', repeat('x', 2 * 1024 * 1024)))$$);
-- Only a superuser sets it: an ordinary role gets 42501.
CREATE ROLE payload_user;
SET ROLE payload_user;
SELECT pg_temp.err($$SET claimqueue.max_payload_size = '1GB'$$);
RESET ROLE;
DROP ROLE payload_user;
-- Bad values are PostgreSQL's own errors.
SELECT pg_temp.err($$SET claimqueue.max_payload_size = '0'$$);
SELECT pg_temp.err($$SET claimqueue.max_payload_size = 'lots'$$);

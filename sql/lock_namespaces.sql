\i test/regress/setup.sql
-- Advisory-lock namespaces: registration, the documented mapping, the lock
-- family, the advisory_locks view and the error paths.

-- Everything the lock namespaces store: equal before and after = nothing changed.
CREATE FUNCTION pg_temp.lock_fingerprint() RETURNS text LANGUAGE sql AS $$
    SELECT md5(coalesce((SELECT string_agg(row(n.namespace_id, n.name, n.key_mode)::text, ','
                                           ORDER BY n.namespace_id) FROM claimqueue.lock_namespaces n), '')
            || '|' || coalesce((SELECT string_agg(row(k.key_id, k.namespace_id, k.key)::text, ','
                                           ORDER BY k.key_id) FROM claimqueue.lock_keys k), ''))
$$;
-- This session's locks in lock namespaces.
CREATE VIEW pg_temp.my_locks AS
SELECT namespace, namespace_id, key_mode, key, key_id, mode, granted
FROM advisory_locks WHERE pid = pg_backend_pid()
ORDER BY namespace_id, key_id, mode;

-- claimqueue's own namespace is registered by the install script, id 1.
SELECT namespace_id, name, key_mode FROM claimqueue.lock_namespaces ORDER BY namespace_id;
SELECT lock_namespace('claimqueue') AS reserved_id;

-- ------------------------------------------------------------ namespaces
-- Registering returns the id; registering again returns the same id.
SELECT lock_namespace('reports') AS reports;
SELECT lock_namespace('reports') AS reports_again;
SELECT lock_namespace('reports', 'hash') AS reports_hash;
SELECT lock_namespace('singletons', 'registered') AS singletons;
SELECT lock_namespace('shards', 'integer') AS shards;
SELECT namespace_id, name, key_mode FROM claimqueue.lock_namespaces ORDER BY namespace_id;
-- A rolled-back registration leaves a gap: ids are never handed out twice.
BEGIN;
SELECT lock_namespace('short-lived') AS short_lived;
ROLLBACK;
SELECT lock_namespace('after-gap') AS after_gap;
SELECT namespace_id, name FROM claimqueue.lock_namespaces WHERE namespace_id > 4 ORDER BY 1;

-- ------------------------------------------------------------ hash keys
-- 32-bit FNV-1a over the UTF-8 bytes, as int4 (the test vectors of docs/locks.md).
SELECT k AS key, lock_key_hash(k) AS key_id,
       to_hex(lock_key_hash(k)) AS hex
FROM unnest(ARRAY['', 'a', 'foobar', 'daily-revenue', 'reports:daily', 'é', '报表']) AS k;
-- In a hash namespace the key id is that hash; nothing is registered.
SELECT lock_key_id('reports', 'daily-revenue') AS daily_revenue,
       lock_key_id('reports', 'daily-revenue') = lock_key_hash('daily-revenue') AS is_the_hash;
SELECT count(*) AS keys_registered FROM claimqueue.lock_keys;

-- ------------------------------------------------------------ registered keys
SELECT register_lock_key('singletons', 'refresh-report') AS refresh;
SELECT register_lock_key('singletons', 'rebuild-index') AS rebuild;
SELECT register_lock_key('singletons', 'refresh-report') AS refresh_again;
SELECT lock_key_id('singletons', 'rebuild-index') AS rebuild_looked_up;
-- Keys whose hashes collide would still get their own ids: here 2000 keys.
SELECT count(*) AS registered, count(DISTINCT id) AS distinct_ids
FROM (SELECT register_lock_key('singletons', 'k' || i) AS id FROM generate_series(1, 2000) i) s;
-- One key name in two namespaces is two keys.
SELECT lock_namespace('other-singletons', 'registered') AS other_singletons;
SELECT register_lock_key('other-singletons', 'refresh-report') <> lock_key_id('singletons', 'refresh-report')
    AS distinct_across_namespaces;

-- ------------------------------------------------------------ session locks
-- The very lock pg_advisory_lock(namespace_id, key_id) takes (objsubid 2).
SELECT advisory_lock('reports', 'daily-revenue');
SELECT classid::int AS namespace_id, objid::bigint AS objid, objsubid, mode, granted
FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid();
SELECT * FROM pg_temp.my_locks;
-- Taken three times (once in a transaction that rolled back), so unlocked three
-- times; a fourth unlock says false, with PostgreSQL's warning.
SELECT try_advisory_lock('reports', 'daily-revenue') AS again;
BEGIN;
SELECT advisory_lock('reports', 'daily-revenue');
ROLLBACK;
-- ROLLBACK kept all three holds.
SELECT advisory_unlock('reports', 'daily-revenue') AS first,
       advisory_unlock('reports', 'daily-revenue') AS second;
SELECT count(*) AS still_held FROM pg_temp.my_locks;
SELECT advisory_unlock('reports', 'daily-revenue') AS third;
SELECT advisory_unlock('reports', 'daily-revenue') AS fourth;
SELECT count(*) AS held FROM pg_temp.my_locks;
-- Shared and exclusive holds are counted apart, as in PostgreSQL.
SELECT advisory_lock_shared('reports', 'daily-revenue'), try_advisory_lock_shared('reports', 'weekly');
SELECT * FROM pg_temp.my_locks;
SELECT advisory_unlock('reports', 'weekly') AS wrong_mode;
SELECT advisory_unlock_shared('reports', 'weekly') AS right_mode;
-- pg_advisory_unlock_shared(namespace_id, key_id) releases what advisory_lock_shared took.
SELECT pg_advisory_unlock_shared(lock_namespace('reports'), lock_key_id('reports', 'daily-revenue')) AS same_lock;
SELECT count(*) AS held FROM pg_temp.my_locks;

-- ------------------------------------------------------------ transaction locks
-- Outside a transaction block it warns: the lock ends with the statement.
SELECT advisory_xact_lock('reports', 'daily-revenue');
SELECT try_advisory_xact_lock_shared('reports', 'daily-revenue') AS taken;
SELECT count(*) AS held FROM pg_temp.my_locks;
BEGIN;
SELECT advisory_xact_lock('reports', 'daily-revenue');
SELECT try_advisory_xact_lock('reports', 'daily-revenue') AS reentrant;
SELECT advisory_xact_lock_shared('reports', 'weekly');
SELECT try_advisory_xact_lock_shared('reports', 'monthly') AS taken;
SELECT * FROM pg_temp.my_locks;
COMMIT;
SELECT count(*) AS held_after_commit FROM pg_temp.my_locks;

-- ------------------------------------------------------------ integer keys
SELECT advisory_lock_int('shards', 42), advisory_lock_shared_int('shards', -7),
       try_advisory_lock_int('shards', 2147483647) AS max_key;
BEGIN;
SELECT advisory_xact_lock_int('shards', 0), try_advisory_xact_lock_shared_int('shards', 1) AS taken,
       advisory_xact_lock_shared_int('shards', 2), try_advisory_xact_lock_int('shards', -2147483648) AS min_key;
SELECT * FROM pg_temp.my_locks;
COMMIT;
SELECT advisory_unlock_int('shards', 42) AS unlocked, advisory_unlock_shared_int('shards', -7) AS unlocked_shared;

-- ------------------------------------------------------------ the view, all modes
SELECT advisory_lock('singletons', 'refresh-report');
SELECT advisory_lock('reports', 'reports:daily');
BEGIN;
-- claimqueue's own locks decode too: enqueue holds its queue's lock (SHARE).
SELECT enqueue('default') > 0 AS enqueued;
SELECT * FROM pg_temp.my_locks;
SELECT namespace, key, mode, granted, pid = pg_backend_pid() AS mine,
       application_name = current_setting('application_name') AS app_name
FROM advisory_locks WHERE namespace = 'singletons';
ROLLBACK;

-- ------------------------------------------------------------ unlock all
SELECT advisory_lock('reports', 'a'), advisory_lock('reports', 'a'), advisory_lock_shared('reports', 'b');
SELECT advisory_unlock_all('reports') AS released;
SELECT * FROM pg_temp.my_locks;
SELECT advisory_unlock_all('reports') AS released_again;
-- A count made stale by pg_advisory_unlock_all() is dropped quietly.
SELECT advisory_lock('singletons', 'rebuild-index');
SELECT pg_advisory_unlock_all();
SELECT advisory_unlock_all('singletons') AS released_stale;
SELECT count(*) AS held FROM pg_temp.my_locks;

-- ------------------------------------------------------------ errors
-- Each names the bad value and changes nothing.
SELECT pg_temp.fingerprint() AS fp, pg_temp.lock_fingerprint() AS lock_fp \gset
SELECT pg_temp.err($$SELECT lock_namespace(NULL)$$);
SELECT pg_temp.err($$SELECT lock_namespace('')$$);
SELECT pg_temp.err($$SELECT lock_namespace('Reports')$$);
SELECT pg_temp.err($$SELECT lock_namespace('my reports')$$);
SELECT pg_temp.err(format('SELECT lock_namespace(%L)', repeat('n', 64)));
SELECT pg_temp.err($$SELECT lock_namespace('new-ns', 'text')$$);
SELECT pg_temp.err($$SELECT lock_namespace('new-ns', '')$$);
SELECT pg_temp.err($$SELECT lock_namespace('reports', 'registered')$$);
SELECT pg_temp.err($$SELECT lock_namespace('claimqueue', 'hash')$$);
SELECT pg_temp.err($$SELECT advisory_lock(NULL, 'k')$$);
SELECT pg_temp.err($$SELECT advisory_lock('reports', NULL)$$);
SELECT pg_temp.err($$SELECT advisory_lock('reports', '')$$);
SELECT pg_temp.err(format('SELECT advisory_lock(%L, %L)', 'reports', repeat('k', 513)));
SELECT pg_temp.err($$SELECT advisory_lock('no-such-ns', 'k')$$);
SELECT pg_temp.err($$SELECT advisory_unlock('no-such-ns', 'k')$$);
SELECT pg_temp.err($$SELECT advisory_unlock_all('no-such-ns')$$);
SELECT pg_temp.err($$SELECT lock_key_id('no-such-ns', 'k')$$);
SELECT pg_temp.err($$SELECT advisory_lock('singletons', 'never-registered')$$);
SELECT pg_temp.err($$SELECT lock_key_id('singletons', 'never-registered')$$);
SELECT pg_temp.err($$SELECT advisory_lock('shards', 'k')$$);
SELECT pg_temp.err($$SELECT advisory_lock_int('reports', 1)$$);
SELECT pg_temp.err($$SELECT advisory_lock_int('shards', NULL)$$);
SELECT pg_temp.err($$SELECT register_lock_key('reports', 'k')$$);
SELECT pg_temp.err($$SELECT register_lock_key('shards', 'k')$$);
SELECT pg_temp.err($$SELECT register_lock_key('no-such-ns', 'k')$$);
SELECT pg_temp.err($$SELECT lock_key_id('shards', 'k')$$);
SELECT pg_temp.err($$SELECT lock_key_hash(NULL)$$);
-- claimqueue's own namespace cannot be locked through the API.
SELECT pg_temp.err($$SELECT advisory_lock('claimqueue', 'k')$$);
SELECT pg_temp.err($$SELECT advisory_lock_int('claimqueue', 0)$$);
SELECT pg_temp.err($$SELECT register_lock_key('claimqueue', 'k')$$);
SELECT pg_temp.err($$SELECT advisory_unlock_all('claimqueue')$$);
SELECT pg_temp.fingerprint() = :'fp' AS queues_unchanged, pg_temp.lock_fingerprint() = :'lock_fp' AS locks_unchanged;
SELECT count(*) AS held FROM pg_temp.my_locks;

-- A session lock on a namespace or key registered by the open transaction is
-- refused (a rollback would undo the registration, not the lock); a
-- transaction lock is fine.
BEGIN;
SELECT lock_namespace('fresh', 'registered') > 0 AS registered;
SELECT register_lock_key('fresh', 'k') > 0 AS key_registered;
SELECT pg_temp.err($$SELECT advisory_lock('fresh', 'k')$$);
ROLLBACK;
BEGIN;
SELECT lock_namespace('fresh-hash') > 0 AS registered;
SAVEPOINT s;
SELECT advisory_lock('fresh-hash', 'k');
ROLLBACK TO s;
SELECT advisory_xact_lock('fresh-hash', 'k');
SELECT namespace, key_id = lock_key_hash('k') AS hashed, mode FROM pg_temp.my_locks;
ROLLBACK;
BEGIN;
SELECT register_lock_key('singletons', 'brand-new') > 0 AS key_registered;
SELECT pg_temp.err($$SELECT try_advisory_lock('singletons', 'brand-new')$$);
SELECT try_advisory_xact_lock('singletons', 'brand-new') AS xact_ok;
COMMIT;
SELECT advisory_lock('singletons', 'brand-new');
SELECT advisory_unlock('singletons', 'brand-new');
SELECT count(*) AS held FROM pg_temp.my_locks;

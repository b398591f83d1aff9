-- claimqueue advisory-lock namespaces, checked with pgTAP.
--
-- The contract: the functions' signatures and hardening (SECURITY DEFINER,
-- search_path pinned, not STRICT, EXECUTE not granted to PUBLIC); the tables,
-- kept by pg_dump; the documented mapping (stable namespace ids, the FNV-1a
-- test vectors of docs/locks.md, registered keys that never collide); the
-- advisory_locks view decoding both kinds of text key; the error SQLSTATEs,
-- with nothing changed.
--
-- Needs: CREATE EXTENSION pgtap; CREATE EXTENSION claimqueue; and a superuser
-- (it creates two roles). Everything happens inside one transaction that is
-- rolled back. Run: pg_prove -d DB test/pgtap/lock_namespaces.sql (see run.sh)

\ir setup.psql

SELECT plan(206);

-- ---------------------------------------------------------------------------
-- The functions
-- ---------------------------------------------------------------------------
CREATE TEMP TABLE lock_api (ord int PRIMARY KEY, fn name NOT NULL, args name[] NOT NULL,
                            returns text NOT NULL);
INSERT INTO lock_api VALUES
 (1, 'lock_namespace', '{text,text}', 'integer'),
 (2, 'register_lock_key', '{text,text}', 'integer'),
 (3, 'lock_key_id', '{text,text}', 'integer'),
 (4, 'lock_key_hash', '{text}', 'integer'),
 (5, 'advisory_unlock_all', '{text}', 'integer');
INSERT INTO lock_api
SELECT 5 + row_number() OVER (), f.fn || s.suffix, ARRAY['text', s.keytype]::name[], f.returns
FROM (VALUES (1, '', 'text'), (2, '_int', 'integer')) AS s(o, suffix, keytype),
     (VALUES (1, 'advisory_lock', 'void'), (2, 'advisory_lock_shared', 'void'),
             (3, 'try_advisory_lock', 'boolean'), (4, 'try_advisory_lock_shared', 'boolean'),
             (5, 'advisory_xact_lock', 'void'), (6, 'advisory_xact_lock_shared', 'void'),
             (7, 'try_advisory_xact_lock', 'boolean'), (8, 'try_advisory_xact_lock_shared', 'boolean'),
             (9, 'advisory_unlock', 'boolean'), (10, 'advisory_unlock_shared', 'boolean'))
         AS f(o, fn, returns)
ORDER BY s.o, f.o;

CREATE ROLE claimqueue_tap_lock_nobody NOLOGIN;
CREATE ROLE claimqueue_tap_locker NOLOGIN;

-- 25 x 6 per-function assertions.
SELECT has_function(:'cq', fn, args) FROM lock_api ORDER BY ord;
SELECT function_returns(:'cq', fn, args, returns) FROM lock_api ORDER BY ord;
SELECT is_definer(:'cq', fn, args) FROM lock_api ORDER BY ord;
SELECT isnt_strict(:'cq', fn, args) FROM lock_api ORDER BY ord;
SELECT is((SELECT p.proconfig FROM pg_catalog.pg_proc p
           WHERE p.oid = pg_catalog.to_regprocedure(
                     format('%I.%I(%s)', :'cq', fn, array_to_string(args, ',')))),
          ARRAY['search_path=pg_catalog, pg_temp'],
          format('%s() pins search_path = pg_catalog, pg_temp', fn))
FROM lock_api ORDER BY ord;
SELECT function_privs_are(:'cq', fn, args, 'public', '{}'::name[],
                          format('EXECUTE on %s() is not granted to PUBLIC', fn))
FROM lock_api ORDER BY ord;

-- No two functions share a name: untyped parameters always resolve.
SELECT is((SELECT count(*)::int FROM pg_catalog.pg_proc p
           WHERE p.pronamespace = :'cq'::regnamespace AND p.proname IN (SELECT fn FROM lock_api)),
          25, 'the 25 lock-namespace functions have 25 distinct names (no overloads)');
SELECT is(pg_catalog.pg_get_function_arguments(
              pg_catalog.to_regprocedure(format('%I.lock_namespace(text,text)', :'cq'))),
          'name text, key_mode text DEFAULT NULL::text',
          'lock_namespace(name, key_mode DEFAULT NULL)');
SELECT volatility_is(:'cq', 'lock_key_hash', '{text}'::name[], 'immutable');

-- ---------------------------------------------------------------------------
-- Tables and the view
-- ---------------------------------------------------------------------------
SELECT has_table('claimqueue', 'lock_namespaces', 'table claimqueue.lock_namespaces exists');
SELECT has_table('claimqueue', 'lock_keys', 'table claimqueue.lock_keys exists');
SELECT table_privs_are('claimqueue', 'lock_namespaces', 'public', '{}'::name[],
                       'PUBLIC has no privileges on claimqueue.lock_namespaces');
SELECT table_privs_are('claimqueue', 'lock_keys', 'public', '{}'::name[],
                       'PUBLIC has no privileges on claimqueue.lock_keys');
SELECT results_eq(
    $$SELECT c::regclass::text COLLATE "default", w COLLATE "default"
      FROM pg_catalog.pg_extension e, unnest(e.extconfig, e.extcondition) AS u(c, w)
      WHERE e.extname = 'claimqueue' AND c::regclass::text LIKE 'claimqueue.lock%' ORDER BY 1$$,
    $$VALUES ('claimqueue.lock_keys', ''), ('claimqueue.lock_keys_key_id_seq', ''),
             ('claimqueue.lock_namespaces', 'WHERE namespace_id <> 1'),
             ('claimqueue.lock_namespaces_namespace_id_seq', '')$$,
    'pg_dump keeps the namespaces (but the reserved one), the keys and both sequences');
SELECT has_view(:'cq', 'advisory_locks', 'view advisory_locks exists');
SELECT results_eq(
    format($$SELECT attname::text COLLATE "default", format_type(atttypid, atttypmod) FROM pg_catalog.pg_attribute
             WHERE attrelid = '%I.advisory_locks'::regclass AND attnum > 0 ORDER BY attnum$$, :'cq'),
    $$VALUES ('namespace', 'text'), ('namespace_id', 'integer'), ('key_mode', 'text'), ('key', 'text'),
             ('key_id', 'integer'), ('mode', 'text'), ('granted', 'boolean'), ('pid', 'integer'),
             ('application_name', 'text'), ('waitstart', 'timestamp with time zone')$$,
    'advisory_locks has the documented columns');
SELECT table_privs_are(:'cq', 'advisory_locks', 'public', '{}'::name[],
                       'PUBLIC has no privileges on advisory_locks');

-- ---------------------------------------------------------------------------
-- The mapping
-- ---------------------------------------------------------------------------
SELECT is(lock_namespace('claimqueue'), 1, 'claimqueue''s own namespace has id 1');
SELECT is((SELECT key_mode FROM claimqueue.lock_namespaces WHERE namespace_id = 1), 'internal',
          'namespace 1 has key mode internal');
SELECT lock_namespace('tap_hash') AS tap_hash \gset
SELECT cmp_ok(:tap_hash, '>', 1, 'a new namespace gets an id above the reserved one');
SELECT is(lock_namespace('tap_hash'), :tap_hash, 'registering again returns the same id');
SELECT is(lock_namespace('tap_hash', 'hash'), :tap_hash, 'so does naming its key mode');
SELECT is((SELECT key_mode FROM claimqueue.lock_namespaces WHERE name = 'tap_hash'), 'hash',
          'the default key mode is hash');
SELECT lock_namespace('tap_reg', 'registered') AS tap_reg \gset
SELECT lock_namespace('tap_int', 'integer') AS tap_int \gset
SELECT ok(:tap_reg > :tap_hash AND :tap_int > :tap_reg, 'ids grow in registration order');

-- The test vectors of docs/locks.md: 32-bit FNV-1a of the UTF-8 bytes, as int4.
SELECT is(lock_key_hash(k), v, format('lock_key_hash(%L) = %s (0x%s)', k, v, to_hex(v)))
FROM (VALUES ('', -2128831035), ('a', -468965076), ('foobar', -1080231576),
             ('daily-revenue', -674965897), ('reports:daily', -8506397),
             ('é', 513665217), ('报表', -1002689323)) AS t(k, v);
SELECT is(lock_key_id('tap_hash', 'daily-revenue'), -674965897,
          'a text key in a hash namespace locks its hash');

-- Registered keys: one id each, never shared.
SELECT register_lock_key('tap_reg', 'refresh') AS refresh_id \gset
SELECT is(register_lock_key('tap_reg', 'refresh'), :refresh_id, 'registering a key again returns its id');
SELECT is(lock_key_id('tap_reg', 'refresh'), :refresh_id, 'lock_key_id() finds a registered key');
SELECT is((SELECT count(DISTINCT register_lock_key('tap_reg', 'key-' || i))::int
           FROM generate_series(1, 5000) i), 5000,
          '5000 registered keys get 5000 distinct ids');
SELECT is((SELECT count(*)::int FROM claimqueue.lock_keys k
           WHERE k.namespace_id = :tap_reg AND k.key_id = :refresh_id), 1,
          'no other key of the namespace has the first key''s id');
SELECT lock_namespace('tap_reg2', 'registered') AS tap_reg2 \gset
SELECT isnt(register_lock_key('tap_reg2', 'refresh'), :refresh_id,
            'the same key name in another namespace is another key');

-- The view decodes both kinds of text key, and integer keys.
SELECT advisory_xact_lock('tap_reg', 'refresh');
SELECT advisory_xact_lock_shared('tap_hash', 'daily-revenue');
SELECT advisory_xact_lock_int('tap_int', -5);
SELECT results_eq(
    $$SELECT namespace, key_mode, key, key_id, mode, granted FROM advisory_locks
      WHERE pid = pg_backend_pid() AND namespace LIKE 'tap%' ORDER BY namespace$$,
    format($$VALUES ('tap_hash'::text, 'hash'::text, '-674965897'::text, -674965897, 'ShareLock'::text, true),
                    ('tap_int', 'integer', '-5', -5, 'ExclusiveLock', true),
                    ('tap_reg', 'registered', 'refresh', %s, 'ExclusiveLock', true)$$, :refresh_id),
    'advisory_locks shows the registered key by name and hash and integer keys by value');
SELECT results_eq(
    format($$SELECT classid::int, objid::bigint, objsubid::int FROM pg_locks
             WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND classid = %s$$, :tap_hash),
    format($$VALUES (%s, 3620001399::bigint, 2)$$, :tap_hash),
    'the lock is pg_locks (classid = namespace id, objid = key id as oid, objsubid = 2)');
SELECT is(pg_try_advisory_xact_lock_shared(:tap_hash, -674965897), true,
          'pg_advisory_lock(namespace_id, key_id) is the same lock (a second shared hold)');

-- ---------------------------------------------------------------------------
-- Errors: SQLSTATE, and nothing changed
-- ---------------------------------------------------------------------------
SELECT md5(string_agg(n::text, ',' ORDER BY namespace_id)) AS ns_before FROM claimqueue.lock_namespaces n \gset
SELECT md5(string_agg(k::text, ',' ORDER BY key_id)) AS keys_before FROM claimqueue.lock_keys k \gset

SELECT throws_ok($$SELECT lock_namespace(NULL)$$, '22004', NULL, 'lock_namespace(NULL) raises 22004');
SELECT throws_ok($$SELECT lock_namespace('')$$, '22023', NULL, 'an empty namespace name raises 22023');
SELECT throws_ok($$SELECT lock_namespace('Bad Name')$$, '22023', NULL,
                 'a badly spelt namespace name raises 22023');
SELECT throws_ok(format('SELECT lock_namespace(%L)', repeat('n', 64)), '42622', NULL,
                 'a 64-byte namespace name raises 42622');
SELECT throws_ok($$SELECT lock_namespace('tap_new', 'bogus')$$, '22023', NULL,
                 'an unknown key mode raises 22023');
SELECT throws_ok($$SELECT lock_namespace('tap_hash', 'integer')$$, 'QCL02', NULL,
                 'another key mode for an existing namespace raises QCL02');
SELECT throws_ok($$SELECT advisory_lock('tap_nowhere', 'k')$$, 'QCL01', NULL,
                 'locking in an unknown namespace raises QCL01 (and does not register it)');
SELECT throws_ok($$SELECT lock_key_id('tap_reg', 'unknown')$$, 'QCL03', NULL,
                 'an unregistered key raises QCL03 (and is not registered)');
SELECT throws_ok($$SELECT advisory_xact_lock_int('tap_hash', 1)$$, 'QCL02', NULL,
                 'an integer key in a hash namespace raises QCL02');
SELECT throws_ok($$SELECT advisory_xact_lock('tap_int', '1')$$, 'QCL02', NULL,
                 'a text key in an integer namespace raises QCL02');
SELECT throws_ok($$SELECT advisory_xact_lock('tap_hash', NULL)$$, '22004', NULL,
                 'a NULL key raises 22004');
SELECT throws_ok($$SELECT advisory_xact_lock('tap_hash', '')$$, '22023', NULL,
                 'an empty key raises 22023');
SELECT throws_ok(format('SELECT advisory_xact_lock(%L, %L)', 'tap_hash', repeat('k', 513)), '42622', NULL,
                 'a 513-byte key raises 42622');
SELECT lives_ok(format('SELECT advisory_xact_lock(%L, %L)', 'tap_hash', repeat('k', 512)),
                'a 512-byte key is fine');
SELECT throws_ok($$SELECT advisory_xact_lock('claimqueue', 'k')$$, '42939', NULL,
                 'claimqueue''s own namespace is reserved: 42939');
SELECT throws_ok($$SELECT advisory_lock('tap_hash', 'k')$$, '55000', NULL,
                 'a session lock in a namespace registered by this open transaction raises 55000');
SELECT is((SELECT md5(string_agg(n::text, ',' ORDER BY namespace_id)) FROM claimqueue.lock_namespaces n),
          :'ns_before', 'no error changed the namespaces');
SELECT is((SELECT md5(string_agg(k::text, ',' ORDER BY key_id)) FROM claimqueue.lock_keys k),
          :'keys_before', 'no error changed the keys');

-- ---------------------------------------------------------------------------
-- Privileges in action
-- ---------------------------------------------------------------------------
CREATE SCHEMA claimqueue_tap_locks;
CREATE FUNCTION claimqueue_tap_locks.as_nobody(sql text) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT
    AS $$DECLARE r text; BEGIN EXECUTE sql INTO r; RETURN r; END$$;
CREATE FUNCTION claimqueue_tap_locks.as_locker(sql text) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT
    AS $$DECLARE r text; BEGIN EXECUTE sql INTO r; RETURN r; END$$;
ALTER FUNCTION claimqueue_tap_locks.as_nobody(text) OWNER TO claimqueue_tap_lock_nobody;
ALTER FUNCTION claimqueue_tap_locks.as_locker(text) OWNER TO claimqueue_tap_locker;
GRANT USAGE ON SCHEMA :"cq" TO claimqueue_tap_locker;
GRANT EXECUTE ON FUNCTION try_advisory_xact_lock(text, text) TO claimqueue_tap_locker;
SELECT throws_ok($$SELECT claimqueue_tap_locks.as_nobody('SELECT try_advisory_xact_lock(''tap_hash'', ''p'')')$$,
                 '42501', NULL, 'a role without grants gets 42501 from try_advisory_xact_lock()');
SELECT is(claimqueue_tap_locks.as_locker($$SELECT try_advisory_xact_lock('tap_hash', 'p')::text$$), 'true',
          'a role granted EXECUTE locks without privileges on the tables');
SELECT throws_ok($$SELECT claimqueue_tap_locks.as_locker('SELECT lock_namespace(''tap_other'')')$$,
                 '42501', NULL, 'registering needs its own grant');
SELECT throws_ok($$SELECT claimqueue_tap_locks.as_locker('SELECT count(*) FROM advisory_locks')$$,
                 '42501', NULL, 'reading advisory_locks needs its own grant');

SELECT * FROM finish();
ROLLBACK;

-- Every object of the installed claimqueue extension, described by name (no
-- OIDs), one line each, sorted: two databases with the same description have
-- the same extension. Used by test/upgrade/run.sh. Besides the member objects:
-- each function's definition, privileges and comment; each relation's kind,
-- persistence, row security, privileges, options and comment (a view's
-- query); each column's place, type, default, privileges and comment; every
-- constraint, index and (non-internal) trigger of the tables; sequences with
-- their parameters and owning column; schemas with their privileges; the
-- config-dump marks; the queues and lock namespaces (a fresh install has the
-- default queue and the reserved namespace).
\pset tuples_only on
\pset format unaligned
WITH ext AS (
    SELECT oid, extversion, extconfig, extcondition FROM pg_extension WHERE extname = 'claimqueue'
), members AS (
    SELECT d.classid, d.objid, d.objsubid
    FROM pg_depend d, ext
    WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid AND d.deptype = 'e'
), lines AS (
    SELECT 'version ' || extversion FROM ext
    UNION ALL
    SELECT 'member ' || pg_describe_object(classid, objid, objsubid) FROM members
    UNION ALL
    SELECT 'config ' || c::regclass::text || ' where ' || coalesce(w, '')
    FROM ext, unnest(extconfig, extcondition) AS u(c, w)
    UNION ALL
    SELECT 'function ' || p.oid::regprocedure::text || E'\n' || pg_get_functiondef(p.oid)
           || E'\nacl ' || coalesce(p.proacl::text, 'default')
           || E'\ncomment ' || coalesce(obj_description(p.oid, 'pg_proc'), '')
    FROM members m JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
    UNION ALL
    SELECT 'relation ' || c.oid::regclass::text || ' kind ' || c.relkind::text
           || ' persistence ' || c.relpersistence::text || ' row security ' || c.relrowsecurity::text
           || ' acl ' || coalesce(c.relacl::text, 'default')
           || ' options ' || coalesce(c.reloptions::text, '')
           || ' comment ' || coalesce(obj_description(c.oid, 'pg_class'), '')
           || CASE WHEN c.relkind = 'v' THEN E'\n' || pg_get_viewdef(c.oid) ELSE '' END
    FROM members m JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid
    UNION ALL
    SELECT 'column ' || a.attrelid::regclass::text || '.' || a.attname
           -- the column's place among the live ones (an update appends, and drops leave gaps)
           || ' #' || row_number() OVER (PARTITION BY a.attrelid ORDER BY a.attnum) || ' '
           || format_type(a.atttypid, a.atttypmod) || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
           || coalesce(' default ' || pg_get_expr(ad.adbin, ad.adrelid), '')
           || ' acl ' || coalesce(a.attacl::text, 'default')
           || ' comment ' || coalesce(col_description(a.attrelid, a.attnum), '')
    FROM members m
    JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid AND c.relkind IN ('r', 'v', 'p')
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
    UNION ALL
    SELECT 'constraint ' || con.conrelid::regclass::text || ' ' || con.conname || ' '
           || pg_get_constraintdef(con.oid)
    FROM members m JOIN pg_constraint con ON m.classid = 'pg_class'::regclass AND con.conrelid = m.objid
    UNION ALL
    SELECT 'index ' || pg_get_indexdef(i.indexrelid)
    FROM members m JOIN pg_index i ON m.classid = 'pg_class'::regclass AND i.indrelid = m.objid
    UNION ALL
    SELECT 'trigger ' || pg_get_triggerdef(t.oid) || ' enabled ' || t.tgenabled::text
    FROM members m JOIN pg_trigger t ON m.classid = 'pg_class'::regclass AND t.tgrelid = m.objid
    WHERE NOT t.tgisinternal
    UNION ALL
    SELECT 'sequence ' || s.seqrelid::regclass::text || ' ' || format_type(s.seqtypid, NULL)
           || ' ' || s.seqstart || ' ' || s.seqincrement || ' ' || s.seqmax || ' ' || s.seqmin
           || ' ' || s.seqcache || ' ' || s.seqcycle
           || ' owned by ' || coalesce((SELECT d.refobjid::regclass::text || '.' || a.attname
                                         FROM pg_depend d
                                         JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
                                         WHERE d.classid = 'pg_class'::regclass AND d.objid = s.seqrelid
                                           AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')), 'none')
    FROM members m JOIN pg_sequence s ON m.classid = 'pg_class'::regclass AND s.seqrelid = m.objid
    UNION ALL
    SELECT 'schema ' || n.nspname || ' acl ' || coalesce(n.nspacl::text, 'default')
    FROM members m JOIN pg_namespace n ON m.classid = 'pg_namespace'::regclass AND n.oid = m.objid
    UNION ALL
    SELECT 'queue ' || row(q.queue_id, q.name, q.lease, q.max_attempts, q.backoff_base,
                           q.backoff_cap, q.retention)::text
    FROM claimqueue.queues q
    UNION ALL
    SELECT 'lock namespace ' || row(n.namespace_id, n.name, n.key_mode)::text
    FROM claimqueue.lock_namespaces n
)
SELECT * FROM lines AS l(line) ORDER BY 1;

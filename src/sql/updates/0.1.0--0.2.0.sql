-- 0.1.0 -> 0.2.0: the tables of the reaper's retention, the advisory-lock
-- namespaces and the queue privileges, and the queues 0.1.0 left open.
-- (0.2.0's functions became SECURITY INVOKER: the functions of src/sql/api/,
-- which follow in every upgrade script, are.)

-- Retention: finished jobs by queue and age, so purging never scans the
-- ready and running ones, nor the whole table.
CREATE INDEX jobs_finished_idx ON claimqueue.jobs (queue_id, finished_at)
    WHERE state IN ('done', 'failed', 'cancelled');

-- Advisory-lock namespaces (issue 4).
CREATE TABLE claimqueue.lock_namespaces (
    namespace_id  serial PRIMARY KEY,
    name          text NOT NULL UNIQUE
                  CHECK (name ~ '^[a-z0-9_][a-z0-9_.-]{0,62}$'),
    key_mode      text NOT NULL
                  CHECK (key_mode IN ('registered', 'hash', 'integer')
                         OR (key_mode = 'internal' AND namespace_id = 1)),
    created_at    timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE claimqueue.lock_namespaces
    IS 'advisory-lock namespaces: the first int4 key of each lock; ids are never reused';

CREATE TABLE claimqueue.lock_keys (
    key_id        serial PRIMARY KEY,
    namespace_id  integer NOT NULL REFERENCES claimqueue.lock_namespaces,
    key           text NOT NULL CHECK (octet_length(key) BETWEEN 1 AND 512),
    created_at    timestamptz NOT NULL DEFAULT pg_catalog.now(),
    UNIQUE (namespace_id, key)
);
COMMENT ON TABLE claimqueue.lock_keys
    IS 'registered lock keys: the second int4 key of locks in registered namespaces; ids are never reused';

INSERT INTO claimqueue.lock_namespaces (namespace_id, name, key_mode) VALUES (1, 'claimqueue', 'internal');
SELECT pg_catalog.setval('claimqueue.lock_namespaces_namespace_id_seq', 1);

-- Kept by pg_dump, all but the reserved namespace, which CREATE EXTENSION makes.
SELECT pg_catalog.pg_extension_config_dump('claimqueue.lock_namespaces', 'WHERE namespace_id <> 1');
SELECT pg_catalog.pg_extension_config_dump('claimqueue.lock_namespaces_namespace_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('claimqueue.lock_keys', '');
SELECT pg_catalog.pg_extension_config_dump('claimqueue.lock_keys_key_id_seq', '');

-- Per-queue privileges: produce (enqueue), consume (dequeue, complete, fail,
-- heartbeat) and manage (alter, drop, retry, cancel, reap, purge, grants).
-- Grantee 0 ('-') is PUBLIC. Members of claimqueue_admin, superusers and the
-- extension's owner need no grant.
CREATE TABLE claimqueue.queue_grants (
    queue_id  integer NOT NULL
              REFERENCES claimqueue.queues ON DELETE CASCADE ON UPDATE CASCADE,
    grantee   regrole NOT NULL,
    privilege text NOT NULL CHECK (privilege IN ('produce', 'consume', 'manage')),
    PRIMARY KEY (queue_id, grantee, privilege)
);
COMMENT ON TABLE claimqueue.queue_grants IS 'who may produce into, consume from or manage each queue (grantee 0: PUBLIC)';
SELECT pg_catalog.pg_extension_config_dump('claimqueue.queue_grants', '');

-- 0.1.0 had no per-queue privileges: whoever could EXECUTE a function could
-- use it on every queue. The queues that exist keep that (grants to PUBLIC;
-- revoke_queue(queue, privilege, 'public') closes them); new ones start closed.
INSERT INTO claimqueue.queue_grants (queue_id, grantee, privilege)
SELECT q.queue_id, 0::pg_catalog.oid::pg_catalog.regrole, p.privilege
FROM claimqueue.queues q
CROSS JOIN (VALUES ('produce'), ('consume'), ('manage')) AS p(privilege);

-- The tables: schema, tables, indexes, sequences, config-dump marks and the
-- rows CREATE EXTENSION starts with. First in the install script only; an
-- upgrade makes its table changes in src/sql/updates/ instead, so a change
-- here needs its twin there (src/sql/README.md).

-- Internals live in a schema of their own; the API goes into the extension's
-- schema (public by default) so clients can call dequeue() unqualified.
CREATE SCHEMA claimqueue;
REVOKE ALL ON SCHEMA claimqueue FROM PUBLIC;

CREATE TABLE claimqueue.queues (
    queue_id      serial PRIMARY KEY,
    name          text NOT NULL UNIQUE
                  CHECK (name ~ '^[a-z0-9_][a-z0-9_.-]{0,62}$'),
    -- Durations compare by the API's rule, extract(epoch ...): a day is 24 hours,
    -- a month 30 days, a year 365.25 days (interval's own < counts a year as
    -- 360 days, and would refuse values the API accepts).
    lease         interval NOT NULL DEFAULT '30 seconds'
                  CONSTRAINT queues_lease_check CHECK (extract(epoch FROM lease) > 0),
    max_attempts  integer NOT NULL DEFAULT 5 CHECK (max_attempts BETWEEN 1 AND 10000),
    backoff_base  interval NOT NULL DEFAULT '1 second'
                  CONSTRAINT queues_backoff_base_check CHECK (extract(epoch FROM backoff_base) >= 0),
    backoff_cap   interval NOT NULL DEFAULT '1 hour',
    retention     interval NOT NULL DEFAULT '7 days'
                  CONSTRAINT queues_retention_check CHECK (extract(epoch FROM retention) >= 0),
    created_at    timestamptz NOT NULL DEFAULT pg_catalog.now(),
    -- 0.4.0. A paused queue takes enqueues and claims nothing (pause_queue).
    paused        boolean NOT NULL DEFAULT false,
    -- How long failed jobs are kept; NULL: as long as retention says.
    failed_retention interval
                  CONSTRAINT queues_failed_retention_check
                  CHECK (extract(epoch FROM failed_retention) >= 0),
    -- 0.5.0. Concurrency limits (NULL: none): jobs running at once in the
    -- queue, and per concurrency key; a claim never exceeds either.
    max_running   integer CONSTRAINT queues_max_running_check CHECK (max_running >= 1),
    max_running_per_key integer
                  CONSTRAINT queues_max_running_per_key_check CHECK (max_running_per_key >= 1),
    -- 0.5.0. Fair claiming: claims rotate across the concurrency keys
    -- (tenants) of each priority instead of taking jobs in position order.
    fair          boolean NOT NULL DEFAULT false,
    CONSTRAINT queues_check
        CHECK (extract(epoch FROM backoff_cap) >= extract(epoch FROM backoff_base))
);
COMMENT ON TABLE claimqueue.queues IS 'claimqueue queues and their per-queue defaults';

-- One row per job. State machine: ready -> running -> done | ready (retry) | failed;
-- ready|running -> cancelled; failed|cancelled -> ready (retry()).
CREATE TABLE claimqueue.jobs (
    id               bigserial PRIMARY KEY,
    queue_id         integer NOT NULL,
    state            text NOT NULL DEFAULT 'ready'
                     CHECK (state IN ('ready', 'running', 'done', 'failed', 'cancelled')),
    priority         smallint NOT NULL DEFAULT 0 CHECK (priority BETWEEN -100 AND 100),
    attempt          integer NOT NULL DEFAULT 0,   -- the fencing token of the latest claim
    max_attempts     integer NOT NULL CHECK (max_attempts >= 1),
    run_at           timestamptz NOT NULL,
    created_at       timestamptz NOT NULL,
    started_at       timestamptz,
    finished_at      timestamptz,
    lease_expires_at timestamptz,
    worker           text,
    dedup_key        text,
    last_error       text,
    payload          jsonb NOT NULL,
    pos              bigint,       -- claim position while ready and due (0.3.0, jobs_ready_idx)
    result           jsonb,        -- what complete() stored (0.4.0); NULL: none
    -- 0.5.0: the owner token of a claim made with release_on_disconnect (the
    -- claiming session, src/owners/README.md); NULL: the claim lives until its
    -- lease. Set by the claim's own row update, cleared when it stops running.
    owner_session    bigint,
    concurrency_key  text,         -- the key max_running_per_key counts by (0.5.0); NULL: none
    -- 0.5.0: the error history, the latest 20 failed attempts, oldest first:
    -- [{"attempt": n, "at": timestamptz, "error": text, "detail": object}];
    -- NULL: none failed. fail() appends; job_errors() reads it.
    errors           jsonb
);
COMMENT ON TABLE claimqueue.jobs IS 'claimqueue jobs, all states';

-- The row dequeue() and complete_and_dequeue() return (0.5.0). A named type,
-- not RETURNS TABLE: the executor starts each call of a function with output
-- columns by building their row type from pg_proc, one type lookup per column,
-- where a named type's comes from the type cache (src/engine/README.md,
-- "The hot path": 11,233 instructions per call).
CREATE TYPE claimqueue.claimed_job AS (
    id               bigint,
    payload          jsonb,
    attempt          integer,
    max_attempts     integer,
    priority         integer,
    lease_expires_at timestamptz,
    enqueued_at      timestamptz);
COMMENT ON TYPE claimqueue.claimed_job IS 'a job dequeue() claimed: attempt is its fencing token';

-- Claim positions (0.3.0): every entry into the claimable set draws a fresh
-- position, and claims read each (queue, priority) lane in position order from
-- a cursor kept in shared memory, so a claim never walks the index entries of
-- jobs already claimed, even while an old snapshot keeps them
-- (src/cursors/README.md).
--
-- The claim path: claimable jobs only, one lane per (queue, priority) in
-- position order, so a claim's cost grows neither with the finished jobs kept
-- nor (with its cursor) with the jobs claimed before it.
CREATE INDEX jobs_ready_idx ON claimqueue.jobs (queue_id, priority DESC, pos)
    WHERE state = 'ready' AND pos IS NOT NULL;
-- Ready jobs waiting for their run_at, found when due.
CREATE INDEX jobs_scheduled_idx ON claimqueue.jobs (queue_id, run_at)
    WHERE state = 'ready' AND pos IS NULL;
-- Running jobs by queue and lease expiry (every claim sets a lease): the
-- reaper finds each queue's expired leases in expiry order, and a claim of a
-- queue with max_running counts the queue's running jobs (0.5.0: the queue
-- leads). The predicate names lease_expires_at so that only lease queries can
-- use this index: a lookup of one running job by id must take the primary
-- key, however few running jobs the statistics last saw.
CREATE INDEX jobs_running_idx ON claimqueue.jobs (queue_id, lease_expires_at)
    WHERE state = 'running' AND lease_expires_at IS NOT NULL;
-- Claims that die with their session (0.5.0): the reaper finds the running
-- jobs whose owner session has ended without reading the others.
CREATE INDEX jobs_owned_idx ON claimqueue.jobs (owner_session)
    WHERE state = 'running' AND owner_session IS NOT NULL;
-- Concurrency limits (0.5.0): a claim of a queue with max_running_per_key
-- counts the running jobs of one key here, reading no more entries than the
-- limit. Jobs without a key are left out: their claims write no entry here.
CREATE INDEX jobs_running_key_idx ON claimqueue.jobs (queue_id, concurrency_key)
    WHERE state = 'running' AND concurrency_key IS NOT NULL;
-- Fair claiming (0.5.0): the ready jobs that have a concurrency key, by a
-- 64-bit hash of the key and then position in each lane, so a fair queue's
-- claim goes from one tenant to the next in one descent each (a hash, not the
-- text: every column fixed-width keeps an index step cheap). Jobs without a
-- key are left out (they cost nothing here); a fair claim reads them from
-- jobs_ready_idx.
CREATE INDEX jobs_fair_idx ON claimqueue.jobs
    (queue_id, priority DESC, (pg_catalog.hashtextextended(concurrency_key, 0)), pos)
    WHERE state = 'ready' AND pos IS NOT NULL AND concurrency_key IS NOT NULL;
-- One live job per dedup key and queue; finished jobs free the key.
CREATE UNIQUE INDEX jobs_dedup_idx ON claimqueue.jobs (queue_id, dedup_key)
    WHERE dedup_key IS NOT NULL AND state IN ('ready', 'running');
-- Dead letters: failed and cancelled jobs by queue, state and age, for
-- retry_jobs and for retention (so purging them never scans the ready and
-- running ones; the failed jobs, kept for failed_retention, are not walked by
-- the purge of the cancelled ones). Done jobs have no index of their own
-- (0.5.0): a completion's done version then goes into the primary key alone,
-- one index entry where it made two (-6.6 % instructions per drained job, -14 %
-- per batch job, bench/instructions.sh), and retention reads the table for them in
-- ranges of blocks (src/engine/maintenance.hpp).
CREATE INDEX jobs_dead_letters_idx ON claimqueue.jobs (queue_id, state, finished_at)
    WHERE state IN ('failed', 'cancelled');

-- Queue history (0.5.0): the reaper samples every queue's queue_metrics totals
-- and gauges about once a minute and keeps two hours of samples, so the table
-- stays at about 120 rows a queue and a chart of the last hour's throughput
-- reads no job row. Not kept by pg_dump: the totals restart with the server.
CREATE TABLE claimqueue.queue_samples (
    queue_id           integer NOT NULL
                       REFERENCES claimqueue.queues ON DELETE CASCADE ON UPDATE CASCADE,
    sampled_at         timestamptz NOT NULL,
    enqueued           bigint NOT NULL,
    claimed            bigint NOT NULL,
    completed          bigint NOT NULL,
    failed             bigint NOT NULL,
    reaped             bigint NOT NULL,
    retried            bigint NOT NULL,
    cancelled          bigint NOT NULL,
    ready_or_scheduled bigint,          -- NULL: the gauges were not counted yet
    running            bigint,
    counters_since     timestamptz NOT NULL,
    PRIMARY KEY (queue_id, sampled_at)
);
COMMENT ON TABLE claimqueue.queue_samples
    IS 'queue_metrics sampled by the reaper about once a minute, two hours kept (queue_history)';

-- Kept by pg_dump, every row. The default queue is created by CREATE EXTENSION
-- itself, so on restore its dumped row (settings and id) is merged into the one
-- CREATE EXTENSION made, by the trigger merge_default_queue (api/queues.sql),
-- instead of colliding with it.
SELECT pg_catalog.pg_extension_config_dump('claimqueue.queues', '');
SELECT pg_catalog.pg_extension_config_dump('claimqueue.queues_queue_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('claimqueue.jobs', '');
SELECT pg_catalog.pg_extension_config_dump('claimqueue.jobs_id_seq', '');

INSERT INTO claimqueue.queues (queue_id, name) VALUES (1, 'default');
SELECT pg_catalog.setval('claimqueue.queues_queue_id_seq', 1);

-- Per-queue privileges: produce (enqueue), consume (dequeue, complete, fail,
-- heartbeat) and manage (alter, drop, retry, cancel, reap, purge, grants).
-- Grantee 0 ('-') is PUBLIC. Members of claimqueue_admin, superusers and the
-- extension's owner need no grant.
CREATE TABLE claimqueue.queue_grants (
    queue_id  integer NOT NULL
              REFERENCES claimqueue.queues ON DELETE CASCADE ON UPDATE CASCADE,
    grantee   regrole NOT NULL,
    privilege text NOT NULL CHECK (privilege IN ('produce', 'consume', 'manage')),
    -- The grantee's name when granted (NULL for PUBLIC): under Citus the
    -- grants are checked by it (a role's oid differs from node to node);
    -- on one server by grantee, which follows a rename.
    grantee_name name,
    PRIMARY KEY (queue_id, grantee, privilege)
);
COMMENT ON TABLE claimqueue.queue_grants IS 'who may produce into, consume from or manage each queue (grantee 0: PUBLIC)';
SELECT pg_catalog.pg_extension_config_dump('claimqueue.queue_grants', '');

-- Recurring jobs (0.4.0): a schedule enqueues one job into its queue for each
-- slot of its cron expression, in its time zone (api/schedules.sql,
-- src/engine/schedules.cpp). next_run_at is the earliest slot that has no job
-- yet (NULL: disabled, paused, or no slot before the year 10000); the reaper
-- enqueues a due slot's job and advances next_run_at in one transaction.
-- paused (0.5.0): an operator's pause_schedule(), kept when schedule()
-- replaces the definition; resume_schedule() starts again from now.
CREATE TABLE claimqueue.schedules (
    name          text PRIMARY KEY
                  CHECK (name ~ '^[a-z0-9_][a-z0-9_.-]{0,62}$'),
    queue_id      integer NOT NULL
                  REFERENCES claimqueue.queues ON DELETE CASCADE ON UPDATE CASCADE,
    cron          text NOT NULL,
    timezone      text NOT NULL,
    payload       jsonb NOT NULL CHECK (pg_catalog.jsonb_typeof(payload) = 'object'),
    priority      smallint NOT NULL CHECK (priority BETWEEN -100 AND 100),
    max_attempts  integer CHECK (max_attempts BETWEEN 1 AND 10000),  -- NULL: the queue's
    catch_up      text NOT NULL CHECK (catch_up IN ('one', 'all', 'none')),
    enabled       boolean NOT NULL,
    next_run_at   timestamptz,
    last_run_at   timestamptz,       -- the slot of the latest job enqueued
    last_job_id   bigint,            -- that job (it may have been purged since)
    created_at    timestamptz NOT NULL DEFAULT pg_catalog.now(),
    paused        boolean NOT NULL DEFAULT false
);
COMMENT ON TABLE claimqueue.schedules IS 'recurring jobs: one job into the queue per slot of the cron expression';
-- The reaper's pass finds the due schedules without reading the others.
CREATE INDEX schedules_due_idx ON claimqueue.schedules (next_run_at)
    WHERE next_run_at IS NOT NULL;
SELECT pg_catalog.pg_extension_config_dump('claimqueue.schedules', '');

-- Advisory-lock namespaces (api/locks.sql has the mapping): the first int4 key
-- of a lock is its namespace's id, the second a registered key's id in
-- 'registered' namespaces. Namespace 1 is claimqueue's own ('internal').
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

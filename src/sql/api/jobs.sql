-- Jobs: enqueue, claim (dequeue), complete (alone, in a batch, or with the
-- next claim in one call, each with an optional result), fail, snooze, heartbeat,
-- retry, cancel, retry and cancel in bulk, and the status and result of
-- finished jobs (job_status), and their error history (job_errors).
--
-- The hot path (dequeue, complete, complete_batch, complete_and_dequeue, fail,
-- heartbeat) has no SET search_path: these functions run no SQL of their own
-- on the way, and the clause's parse, save and restore cost 6.6 % of a drained
-- job (bench/instructions.sh; src/engine/README.md, "The hot path"). They pin search_path in C
-- wherever a name can be resolved: around every SPI statement a claim may run
-- (src/pg/search_path.hpp) and around their row writes when claimqueue.jobs
-- has a trigger or an added expression (run as the extension's owner).

CREATE OR REPLACE FUNCTION @extschema@.enqueue(
    queue        text,
    payload      jsonb       DEFAULT '{}',
    run_at       timestamptz DEFAULT NULL,
    priority     integer     DEFAULT 0,
    max_attempts integer     DEFAULT NULL,
    dedup_key    text        DEFAULT NULL,
    concurrency_key text     DEFAULT NULL)
RETURNS bigint
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_enqueue';
COMMENT ON FUNCTION @extschema@.enqueue(text, jsonb, timestamptz, integer, integer, text, text)
    IS 'add a job; claimable once this transaction commits and run_at has passed; a live job with the same dedup_key is returned instead; concurrency_key is what the queue''s max_running_per_key counts by';

CREATE OR REPLACE FUNCTION @extschema@.enqueue_batch(
    queue        text,
    payloads     jsonb[],
    run_at       timestamptz DEFAULT NULL,
    priority     integer     DEFAULT 0,
    max_attempts integer     DEFAULT NULL,
    concurrency_key text     DEFAULT NULL)
RETURNS SETOF bigint
LANGUAGE c VOLATILE SECURITY INVOKER ROWS 100
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_enqueue_batch';
COMMENT ON FUNCTION @extschema@.enqueue_batch(text, jsonb[], timestamptz, integer, integer, text)
    IS 'add one job per payload in one statement, all with the same concurrency_key; returns the ids in payload order';

-- release_on_disconnect (0.5.0): the claims die with this session; once it
-- has ended, the reaper returns them at once instead of at the lease's end.
-- Meant for direct connections, not a transaction-mode pooler (docs/workers.md).
CREATE OR REPLACE FUNCTION @extschema@.dequeue(
    queue  text,
    worker text,
    batch  integer  DEFAULT 1,
    lease  interval DEFAULT NULL,
    release_on_disconnect boolean DEFAULT false)
RETURNS SETOF claimqueue.claimed_job
LANGUAGE c VOLATILE SECURITY INVOKER ROWS 1
AS 'MODULE_PATHNAME', 'cq_dequeue';
COMMENT ON FUNCTION @extschema@.dequeue(text, text, integer, interval, boolean)
    IS 'claim up to batch ready jobs (priority, then FIFO) with FOR UPDATE SKIP LOCKED; attempt is the fencing token; release_on_disconnect: the reaper returns them once this session ends';

-- result (0.4.0) is stored in the same row update that marks the job done;
-- complete(id, attempt) stores none. One signature, not an overload: see
-- complete_batch below.
CREATE OR REPLACE FUNCTION @extschema@.complete(id bigint, attempt integer, result jsonb DEFAULT NULL)
RETURNS void
LANGUAGE c VOLATILE SECURITY INVOKER
AS 'MODULE_PATHNAME', 'cq_complete';
COMMENT ON FUNCTION @extschema@.complete(bigint, integer, jsonb)
    IS 'mark a running job done, storing result (NULL: none); raises QC003 (stale_claim) unless it is still running under this attempt';

-- Named apart from complete(): an overload would make complete($1, $2) with
-- untyped parameters (node-postgres, pgbench -M prepared) ambiguous.
CREATE OR REPLACE FUNCTION @extschema@.complete_batch(
    ids      bigint[],
    attempts integer[],
    results  jsonb[] DEFAULT NULL)
RETURNS void
LANGUAGE c VOLATILE SECURITY INVOKER
AS 'MODULE_PATHNAME', 'cq_complete_many';
COMMENT ON FUNCTION @extschema@.complete_batch(bigint[], integer[], jsonb[])
    IS 'complete up to 1000 running jobs in one statement, all or nothing, results[i] the result of ids[i] (NULL: none); QC003 names the first one no longer held';

-- retryable and error_detail (0.5.0): retryable => false fails the job at
-- once; error_detail (a JSON object: class, stack, ...) goes with error into
-- the job's error history, jobs.errors (job_errors() reads it).
CREATE OR REPLACE FUNCTION @extschema@.fail(
    id           bigint,
    attempt      integer,
    error        text     DEFAULT NULL,
    retry_in     interval DEFAULT NULL,
    retryable    boolean  DEFAULT true,
    error_detail jsonb    DEFAULT NULL)
RETURNS text
LANGUAGE c VOLATILE SECURITY INVOKER
AS 'MODULE_PATHNAME', 'cq_fail';
COMMENT ON FUNCTION @extschema@.fail(bigint, integer, text, interval, boolean, jsonb)
    IS 'record a failed attempt, with its error and error_detail in the job''s error history: back to ready after a backoff (or retry_in), or failed when attempts are used up or retryable is false; returns the new state';

-- snooze (0.5.0): the job goes back to ready at now() + delay without
-- spending an attempt (max_attempts grows by one, the attempt counter, the
-- fencing token, only goes up). A graceful shutdown hands a job back with
-- snooze(id, attempt).
CREATE OR REPLACE FUNCTION @extschema@.snooze(id bigint, attempt integer, delay interval DEFAULT '0 seconds')
RETURNS timestamptz
LANGUAGE c VOLATILE SECURITY INVOKER
AS 'MODULE_PATHNAME', 'cq_snooze';
COMMENT ON FUNCTION @extschema@.snooze(bigint, integer, interval)
    IS 'put a running job back to ready at now() + delay without spending an attempt; raises QC003 unless it is still running under this attempt; returns the new run_at';

CREATE OR REPLACE FUNCTION @extschema@.heartbeat(id bigint, attempt integer, extend interval DEFAULT NULL)
RETURNS timestamptz
LANGUAGE c VOLATILE SECURITY INVOKER
AS 'MODULE_PATHNAME', 'cq_heartbeat';
COMMENT ON FUNCTION @extschema@.heartbeat(bigint, integer, interval)
    IS 'extend the lease of a running job (by the queue''s lease, or extend); returns the new expiry';

-- The calls that finish a job, with the job's queue in front (0.5.0): on a
-- Citus cluster (docs/citus.md) the coordinator sends each call to the worker
-- that holds the queue (Citus's function delegation, by the queue argument),
-- which a job id alone cannot do. On one server they are complete(),
-- complete_batch(), fail(), heartbeat() and snooze(), after a check that the
-- queue exists (QC001); the job is found by its id as there. Named apart,
-- not overloads: complete($1, $2, $3) with untyped parameters would be
-- ambiguous.
CREATE OR REPLACE FUNCTION @extschema@.complete_in(queue text, id bigint, attempt integer, result jsonb DEFAULT NULL)
RETURNS void
LANGUAGE c VOLATILE SECURITY INVOKER
AS 'MODULE_PATHNAME', 'cq_complete_in';
COMMENT ON FUNCTION @extschema@.complete_in(text, bigint, integer, jsonb)
    IS 'complete(id, attempt, result) for a job of queue, routed to the queue''s node on Citus';

CREATE OR REPLACE FUNCTION @extschema@.complete_batch_in(
    queue    text,
    ids      bigint[],
    attempts integer[],
    results  jsonb[] DEFAULT NULL)
RETURNS void
LANGUAGE c VOLATILE SECURITY INVOKER
AS 'MODULE_PATHNAME', 'cq_complete_batch_in';
COMMENT ON FUNCTION @extschema@.complete_batch_in(text, bigint[], integer[], jsonb[])
    IS 'complete_batch(ids, attempts, results) for jobs of queue, routed to the queue''s node on Citus';

CREATE OR REPLACE FUNCTION @extschema@.fail_in(
    queue        text,
    id           bigint,
    attempt      integer,
    error        text     DEFAULT NULL,
    retry_in     interval DEFAULT NULL,
    retryable    boolean  DEFAULT true,
    error_detail jsonb    DEFAULT NULL)
RETURNS text
LANGUAGE c VOLATILE SECURITY INVOKER
AS 'MODULE_PATHNAME', 'cq_fail_in';
COMMENT ON FUNCTION @extschema@.fail_in(text, bigint, integer, text, interval, boolean, jsonb)
    IS 'fail(id, attempt, ...) for a job of queue, routed to the queue''s node on Citus';

CREATE OR REPLACE FUNCTION @extschema@.heartbeat_in(queue text, id bigint, attempt integer, extend interval DEFAULT NULL)
RETURNS timestamptz
LANGUAGE c VOLATILE SECURITY INVOKER
AS 'MODULE_PATHNAME', 'cq_heartbeat_in';
COMMENT ON FUNCTION @extschema@.heartbeat_in(text, bigint, integer, interval)
    IS 'heartbeat(id, attempt, extend) for a job of queue, routed to the queue''s node on Citus';

CREATE OR REPLACE FUNCTION @extschema@.snooze_in(queue text, id bigint, attempt integer, delay interval DEFAULT '0 seconds')
RETURNS timestamptz
LANGUAGE c VOLATILE SECURITY INVOKER
AS 'MODULE_PATHNAME', 'cq_snooze_in';
COMMENT ON FUNCTION @extschema@.snooze_in(text, bigint, integer, interval)
    IS 'snooze(id, attempt, delay) for a job of queue, routed to the queue''s node on Citus';

CREATE OR REPLACE FUNCTION @extschema@.retry(id bigint, run_at timestamptz DEFAULT NULL)
RETURNS void
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_retry';
COMMENT ON FUNCTION @extschema@.retry(bigint, timestamptz)
    IS 'put a failed or cancelled job back to ready with one more attempt';

CREATE OR REPLACE FUNCTION @extschema@.cancel(id bigint)
RETURNS void
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_cancel';
COMMENT ON FUNCTION @extschema@.cancel(bigint)
    IS 'cancel a ready or running job; a running job''s worker then gets QC003 on complete/fail';

-- Dead letters in bulk: many failed (or cancelled) jobs back to ready, or
-- many ready (or running) jobs cancelled, in statements of a bounded size,
-- skipping rows others hold.
CREATE OR REPLACE FUNCTION @extschema@.retry_jobs(
    queue           text,
    states          text[]      DEFAULT '{failed}',
    finished_before timestamptz DEFAULT NULL,
    max_jobs        integer     DEFAULT NULL)
RETURNS bigint
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_retry_jobs';
COMMENT ON FUNCTION @extschema@.retry_jobs(text, text[], timestamptz, integer)
    IS 'put the queue''s failed (or cancelled) jobs back to ready with a fresh budget of attempts; returns how many';

CREATE OR REPLACE FUNCTION @extschema@.cancel_jobs(
    queue          text,
    states         text[]      DEFAULT '{ready}',
    created_before timestamptz DEFAULT NULL,
    max_jobs       integer     DEFAULT NULL)
RETURNS bigint
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_cancel_jobs';
COMMENT ON FUNCTION @extschema@.cancel_jobs(text, text[], timestamptz, integer)
    IS 'cancel the queue''s ready (or running) jobs; returns how many';

-- A worker that commits once per job: the previous job's completion and the
-- next claim in one call, so a loop of one statement per job in autocommit
-- costs one round trip and one durable commit.
CREATE OR REPLACE FUNCTION @extschema@.complete_and_dequeue(
    id      bigint,
    attempt integer,
    queue   text,
    worker  text,
    batch   integer  DEFAULT 1,
    lease   interval DEFAULT NULL,
    result  jsonb    DEFAULT NULL,
    release_on_disconnect boolean DEFAULT false)
RETURNS SETOF claimqueue.claimed_job
LANGUAGE c VOLATILE SECURITY INVOKER ROWS 1
AS 'MODULE_PATHNAME', 'cq_complete_and_dequeue';
COMMENT ON FUNCTION @extschema@.complete_and_dequeue(bigint, integer, text, text, integer, interval, jsonb, boolean)
    IS 'complete(id, attempt, result), then dequeue(queue, worker, batch, lease, release_on_disconnect), in one call; a stale attempt raises QC003 and claims nothing; id and attempt NULL only claim';

-- Request/response and fan-in: the state, attempt, result and last error of
-- each job, one row per element of ids, in their order. A job in a queue the
-- caller holds no privilege on reads as one that does not exist: state and
-- the rest NULL, so existence does not leak across queues.
CREATE OR REPLACE FUNCTION @extschema@.job_status(ids bigint[])
RETURNS TABLE (
    id         bigint,
    state      text,
    attempt    integer,
    result     jsonb,
    last_error text)
LANGUAGE c VOLATILE SECURITY INVOKER ROWS 10
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_job_status';
COMMENT ON FUNCTION @extschema@.job_status(bigint[])
    IS 'state, attempt, result and last_error of each job, in the order of ids; NULLs for a job that does not exist or is in a queue the caller has no privilege on';

-- The error history: one row per failed attempt kept (the latest 20), oldest
-- first; as job_status, no row for a job in a queue the caller holds no
-- privilege on.
CREATE OR REPLACE FUNCTION @extschema@.job_errors(id bigint)
RETURNS TABLE (
    attempt   integer,
    failed_at timestamptz,
    error     text,
    detail    jsonb)
LANGUAGE c VOLATILE SECURITY INVOKER ROWS 5
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_job_errors';
COMMENT ON FUNCTION @extschema@.job_errors(bigint)
    IS 'the job''s failed attempts kept in its error history (the latest 20), oldest first: attempt, when, error and detail; no rows for a job that does not exist or is in a queue the caller has no privilege on';

REVOKE ALL ON FUNCTION
    @extschema@.enqueue(text, jsonb, timestamptz, integer, integer, text, text),
    @extschema@.enqueue_batch(text, jsonb[], timestamptz, integer, integer, text),
    @extschema@.dequeue(text, text, integer, interval, boolean),
    @extschema@.complete(bigint, integer, jsonb),
    @extschema@.complete_batch(bigint[], integer[], jsonb[]),
    @extschema@.fail(bigint, integer, text, interval, boolean, jsonb),
    @extschema@.snooze(bigint, integer, interval),
    @extschema@.heartbeat(bigint, integer, interval),
    @extschema@.complete_in(text, bigint, integer, jsonb),
    @extschema@.complete_batch_in(text, bigint[], integer[], jsonb[]),
    @extschema@.fail_in(text, bigint, integer, text, interval, boolean, jsonb),
    @extschema@.snooze_in(text, bigint, integer, interval),
    @extschema@.heartbeat_in(text, bigint, integer, interval),
    @extschema@.retry(bigint, timestamptz),
    @extschema@.cancel(bigint),
    @extschema@.retry_jobs(text, text[], timestamptz, integer),
    @extschema@.cancel_jobs(text, text[], timestamptz, integer),
    @extschema@.complete_and_dequeue(bigint, integer, text, text, integer, interval, jsonb, boolean),
    @extschema@.job_status(bigint[]),
    @extschema@.job_errors(bigint)
FROM PUBLIC;

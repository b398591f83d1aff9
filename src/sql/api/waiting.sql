-- Waiting dequeue (issue 7): dequeue_wait() sleeps in the server until a job
-- may be claimable, then claims; next_due() says when a queue's next ready job
-- is due. Waiting needs the library in shared_preload_libraries.
-- src/wait/README.md describes the wake-ups.

CREATE OR REPLACE FUNCTION @extschema@.next_due(queue text)
RETURNS timestamptz
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_next_due';
COMMENT ON FUNCTION @extschema@.next_due(text)
    IS 'when the queue''s next ready job is due (its earliest run_at; in the past if one is claimable now), NULL if it has no ready job';

-- A procedure, neither SECURITY DEFINER nor with SET search_path: PostgreSQL
-- lets a procedure COMMIT only without both, and dequeue_wait commits before
-- it sleeps so that a waiting worker holds back no snapshot (no xmin). It
-- reads no table itself: it calls dequeue() and next_due() (schema-qualified;
-- they check the caller's EXECUTE and queue grants), so a caller needs EXECUTE
-- on those two as well: claimqueue_consumer has all three.
CREATE OR REPLACE PROCEDURE @extschema@.dequeue_wait(
    queue  text,
    worker text,
    batch  integer  DEFAULT 1,
    lease  interval DEFAULT NULL,
    wait   interval DEFAULT '30 seconds',
    INOUT jobs jsonb DEFAULT NULL,
    release_on_disconnect boolean DEFAULT false)
LANGUAGE c
AS 'MODULE_PATHNAME', 'cq_dequeue_wait';
COMMENT ON PROCEDURE @extschema@.dequeue_wait(text, text, integer, interval, interval, jsonb, boolean)
    IS 'dequeue() that, when nothing is claimable, commits and sleeps until a job may be (enqueue commit, run_at, reaper) or wait runs out; jobs: jsonb array of the claimed jobs, [] if none; release_on_disconnect as dequeue()''s (after jobs, so positional calls keep their meaning)';

-- Request/response and fan-in (0.4.0): waits until every job in ids is
-- finished (done, failed or cancelled) or timeout runs out, woken by the
-- commit that finishes each job; jobs: job_status(ids) as a jsonb array. A
-- procedure for the same reason as dequeue_wait: it commits before it sleeps.
-- It reads no table itself: it calls job_status() (schema-qualified), which
-- checks the caller's EXECUTE and which queues it may see.
CREATE OR REPLACE PROCEDURE @extschema@.await_jobs(
    ids     bigint[],
    timeout interval DEFAULT '30 seconds',
    INOUT jobs jsonb DEFAULT NULL)
LANGUAGE c
AS 'MODULE_PATHNAME', 'cq_await_jobs';
COMMENT ON PROCEDURE @extschema@.await_jobs(bigint[], interval, jsonb)
    IS 'wait until every job in ids is done, failed or cancelled (woken by the finishing commits) or timeout runs out; jobs: job_status(ids) as a jsonb array';

-- This database's waiting workers, one row each (tests and monitoring):
-- deadline and timer_at on claimqueue's clock; wakeups counts the times a
-- commit, a timer hand-over or another waiter woke it; queue is NULL for a
-- session in await_jobs().
CREATE OR REPLACE FUNCTION claimqueue.waiters(
    OUT pid      integer,
    OUT queue    text,
    OUT since    timestamptz,
    OUT deadline timestamptz,
    OUT timer_at timestamptz,
    OUT wakeups  bigint)
RETURNS SETOF record
LANGUAGE c VOLATILE
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_waiters';

REVOKE ALL ON FUNCTION
    @extschema@.next_due(text),
    claimqueue.waiters()
FROM PUBLIC;
REVOKE ALL ON PROCEDURE
    @extschema@.dequeue_wait(text, text, integer, interval, interval, jsonb, boolean),
    @extschema@.await_jobs(bigint[], interval, jsonb)
FROM PUBLIC;

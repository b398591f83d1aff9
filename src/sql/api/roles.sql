-- Roles (0.2.0), last in every script: what each may call. Three NOLOGIN
-- roles, created unless they exist (roles belong to the cluster: DROP
-- EXTENSION leaves them, and pg_dump does not dump them; pg_dumpall does):
--   claimqueue_producer  EXECUTE on enqueue, enqueue_batch, job_status,
--                        job_errors, await_jobs
--   claimqueue_consumer  EXECUTE on dequeue, complete, complete_batch,
--                        complete_and_dequeue, fail, snooze, heartbeat, next_due,
--                        complete_in, complete_batch_in, fail_in, snooze_in,
--                        heartbeat_in,
--                        dequeue_wait, job_status, job_errors, await_jobs
--   claimqueue_admin     EXECUTE on all of these and the administration
--                        functions (schedule, unschedule, pause_schedule,
--                        resume_schedule, run_schedules among them); every
--                        queue without a grant
-- All three may read the views. Per-queue grants (grant_queue, api/access.sql)
-- come on top: a producer or consumer acts only on the queues it holds the
-- privilege for. Every function and view has had EXECUTE or SELECT revoked
-- from PUBLIC in its own file, before these grants.
DO $roles$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'claimqueue_producer') THEN
        CREATE ROLE claimqueue_producer NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'claimqueue_consumer') THEN
        CREATE ROLE claimqueue_consumer NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'claimqueue_admin') THEN
        CREATE ROLE claimqueue_admin NOLOGIN;
    END IF;
END
$roles$;

GRANT EXECUTE ON FUNCTION
    @extschema@.enqueue(text, jsonb, timestamptz, integer, integer, text, text),
    @extschema@.enqueue_batch(text, jsonb[], timestamptz, integer, integer, text)
TO claimqueue_producer, claimqueue_admin;
GRANT EXECUTE ON FUNCTION
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
    @extschema@.heartbeat_in(text, bigint, integer, interval)
TO claimqueue_consumer, claimqueue_admin;
GRANT EXECUTE ON FUNCTION
    @extschema@.create_queue(text, interval, integer, interval, interval, interval, boolean, interval, integer, integer, boolean),
    @extschema@.alter_queue(text, interval, integer, interval, interval, interval, interval, integer, integer, boolean),
    @extschema@.drop_queue(text, boolean),
    @extschema@.pause_queue(text),
    @extschema@.resume_queue(text),
    @extschema@.retry_jobs(text, text[], timestamptz, integer),
    @extschema@.cancel_jobs(text, text[], timestamptz, integer),
    @extschema@.retry(bigint, timestamptz),
    @extschema@.cancel(bigint),
    @extschema@.reap(text),
    @extschema@.purge(text),
    @extschema@.grant_queue(text, text, text),
    @extschema@.revoke_queue(text, text, text)
TO claimqueue_admin;
GRANT SELECT ON @extschema@.queue_stats, @extschema@.queue_jobs, @extschema@.queue_settings,
    @extschema@.queue_privileges, @extschema@.reaper_stats, @extschema@.all_reaper_stats
TO claimqueue_producer, claimqueue_consumer, claimqueue_admin;
GRANT EXECUTE ON FUNCTION
    @extschema@.next_due(text),
    @extschema@.complete_and_dequeue(bigint, integer, text, text, integer, interval, jsonb, boolean)
TO claimqueue_consumer, claimqueue_admin;
GRANT EXECUTE ON PROCEDURE @extschema@.dequeue_wait(text, text, integer, interval, interval, jsonb, boolean)
TO claimqueue_consumer, claimqueue_admin;
-- Whoever may see a queue may read its jobs' results and wait for them: a
-- producer awaits the jobs it enqueued.
GRANT EXECUTE ON FUNCTION @extschema@.job_status(bigint[]), @extschema@.job_errors(bigint)
TO claimqueue_producer, claimqueue_consumer, claimqueue_admin;
GRANT EXECUTE ON PROCEDURE @extschema@.await_jobs(bigint[], interval, jsonb)
TO claimqueue_producer, claimqueue_consumer, claimqueue_admin;
GRANT SELECT ON @extschema@.claim_cursor_usage
TO claimqueue_producer, claimqueue_consumer, claimqueue_admin;
GRANT EXECUTE ON FUNCTION
    @extschema@.schedule(text, text, text, jsonb, text, integer, integer, text, boolean),
    @extschema@.unschedule(text),
    @extschema@.pause_schedule(text),
    @extschema@.resume_schedule(text),
    @extschema@.run_schedules(text)
TO claimqueue_admin;
GRANT SELECT ON @extschema@.schedules
TO claimqueue_producer, claimqueue_consumer, claimqueue_admin;
-- A view calls its functions as its reader: the roles that may read these
-- views may call the functions behind them. queue_metrics_rows() shows each
-- caller only the queues it holds a privilege on.
GRANT SELECT ON @extschema@.queue_metrics, @extschema@.queue_history
TO claimqueue_producer, claimqueue_consumer, claimqueue_admin;
GRANT EXECUTE ON FUNCTION
    claimqueue.queue_metrics_rows(),
    claimqueue.reaper_status(),
    claimqueue.reaper_status_all(),
    claimqueue.claim_cursor_table()
TO claimqueue_producer, claimqueue_consumer, claimqueue_admin;

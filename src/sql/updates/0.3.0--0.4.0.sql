-- 0.3.0 -> 0.4.0: the duration checks of claimqueue.queues follow the API's
-- rule; jobs keep a result.

-- Durations compare by the API's rule, extract(epoch ...): a year is 365.25
-- days, where interval's own comparison counts 360 and refused values the API
-- had accepted. Every stored value passes (the API only ever wrote values
-- that are positive, or not negative, by this rule).
ALTER TABLE claimqueue.queues
    DROP CONSTRAINT queues_lease_check,
    DROP CONSTRAINT queues_backoff_base_check,
    DROP CONSTRAINT queues_retention_check,
    DROP CONSTRAINT queues_check,
    ADD CONSTRAINT queues_lease_check CHECK (extract(epoch FROM lease) > 0),
    ADD CONSTRAINT queues_backoff_base_check CHECK (extract(epoch FROM backoff_base) >= 0),
    ADD CONSTRAINT queues_retention_check CHECK (extract(epoch FROM retention) >= 0),
    ADD CONSTRAINT queues_check
        CHECK (extract(epoch FROM backoff_cap) >= extract(epoch FROM backoff_base));

-- A claim runs no SQL statement since 0.4.0 (src/engine/job_rows.hpp): there
-- is no plan left for explain_claim() to show.
DROP FUNCTION claimqueue.explain_claim(text, integer);

-- Results (0.4.0): complete() stores the job's result in the row it marks
-- done. NULL for every job finished before.
ALTER TABLE claimqueue.jobs ADD COLUMN result jsonb;

-- complete, complete_batch and complete_and_dequeue take a result as a new
-- last argument with a default, so existing calls keep working; a new
-- argument is a new function to PostgreSQL, so the old ones go (an overload
-- would make complete($1, $2) ambiguous) and api/ creates the new ones, with
-- the roles' grants. EXECUTE granted on an old one to a role directly goes
-- with it: say so, naming the roles, so it can be granted again.
DO $grants$
DECLARE
    lost record;
BEGIN
    FOR lost IN
        SELECT p.oid::pg_catalog.regprocedure AS fn,
               pg_catalog.string_agg(DISTINCT a.grantee::pg_catalog.regrole::pg_catalog.text, ', ') AS roles
        FROM pg_catalog.pg_proc p, pg_catalog.aclexplode(p.proacl) a
        WHERE p.oid IN (pg_catalog.to_regprocedure('@extschema@.complete(bigint, integer)'),
                        pg_catalog.to_regprocedure('@extschema@.complete_batch(bigint[], integer[])'),
                        pg_catalog.to_regprocedure('@extschema@.complete_and_dequeue(bigint, integer, text, text, integer, interval)'))
          AND a.grantee <> p.proowner AND a.grantee <> 0
          AND a.grantee::pg_catalog.regrole::pg_catalog.text NOT IN ('claimqueue_consumer', 'claimqueue_admin')
        GROUP BY p.oid
    LOOP
        RAISE WARNING 'EXECUTE on % granted to % is dropped with it', lost.fn, lost.roles
            USING HINT = 'Grant EXECUTE on its 0.4.0 signature (with a jsonb result argument) again, or grant the roles claimqueue_consumer.';
    END LOOP;
END
$grants$;
DROP FUNCTION IF EXISTS @extschema@.complete(bigint, integer);
DROP FUNCTION IF EXISTS @extschema@.complete_batch(bigint[], integer[]);
DROP FUNCTION IF EXISTS @extschema@.complete_and_dequeue(bigint, integer, text, text, integer, interval);

-- An experiment's table, not a workload: bench_floor (bench/sql/schema.sql)
-- with `state` as an enum (4 bytes, compared by its sort order) in place of
-- text: every index predicate rewritten for it, and no CHECK (the type admits
-- the five states alone). Literals such as 'running' read as the enum, so
-- the floor scripts run unchanged; the cast lets the fill copy
-- claimqueue.jobs' text states.
--   SETUP_SQL="$(cat bench/sql/setup_state_enum_floor.sql)" bash bench/instructions.sh floor_batch floor_drain
-- (src/engine/README.md, "The hot path": a narrower state.)
DO $$
DECLARE
    object record;
BEGIN
    FOR object IN SELECT indexrelid::regclass AS name FROM pg_index
                  WHERE indrelid = 'bench_floor'::regclass AND indpred IS NOT NULL LOOP
        EXECUTE format('DROP INDEX %s', object.name);
    END LOOP;
    FOR object IN SELECT conname FROM pg_constraint
                  WHERE conrelid = 'bench_floor'::regclass AND contype = 'c'
                    AND pg_get_constraintdef(oid) LIKE '%state%' LOOP
        EXECUTE format('ALTER TABLE bench_floor DROP CONSTRAINT %I', object.conname);
    END LOOP;
END $$;
CREATE TYPE bench_job_state AS ENUM ('ready', 'running', 'done', 'failed', 'cancelled');
CREATE CAST (text AS bench_job_state) WITH INOUT AS ASSIGNMENT;
ALTER TABLE bench_floor ALTER state DROP DEFAULT;
ALTER TABLE bench_floor ALTER state TYPE bench_job_state USING 'ready';
ALTER TABLE bench_floor ALTER state SET DEFAULT 'ready';
CREATE INDEX ON bench_floor (queue_id, priority DESC, pos) WHERE state = 'ready' AND pos IS NOT NULL;
CREATE INDEX ON bench_floor (queue_id, run_at) WHERE state = 'ready' AND pos IS NULL;
CREATE INDEX ON bench_floor (queue_id, lease_expires_at)
    WHERE state = 'running' AND lease_expires_at IS NOT NULL;
CREATE INDEX ON bench_floor (owner_session) WHERE state = 'running' AND owner_session IS NOT NULL;
CREATE INDEX ON bench_floor (queue_id, concurrency_key)
    WHERE state = 'running' AND concurrency_key IS NOT NULL;
CREATE INDEX ON bench_floor
    (queue_id, priority DESC, (pg_catalog.hashtextextended(concurrency_key, 0)), pos)
    WHERE state = 'ready' AND pos IS NOT NULL AND concurrency_key IS NOT NULL;
CREATE UNIQUE INDEX ON bench_floor (queue_id, dedup_key)
    WHERE dedup_key IS NOT NULL AND state IN ('ready', 'running');
CREATE INDEX ON bench_floor (queue_id, state, finished_at) WHERE state IN ('failed', 'cancelled');

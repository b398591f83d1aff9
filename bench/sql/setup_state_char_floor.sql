-- An experiment's table, not a workload: bench_floor (bench/sql/schema.sql)
-- with `state` as a one-byte "char" code (r ready, u running, d done,
-- f failed, c cancelled) in place of text, every index predicate and the CHECK
-- rewritten for the codes. The fill copies claimqueue.jobs' rows, whose
-- 'ready' becomes 'r' by the text-to-"char" cast (its first byte). Run with
-- the floor scripts that write the codes:
--   SETUP_SQL="$(cat bench/sql/setup_state_char_floor.sql)" \
--     bash bench/instructions.sh bench/sql/floor_batch_char.sql bench/sql/floor_drain_char.sql
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
ALTER TABLE bench_floor ALTER state DROP DEFAULT;
ALTER TABLE bench_floor ALTER state TYPE "char" USING 'r';
ALTER TABLE bench_floor ALTER state SET DEFAULT 'r';
ALTER TABLE bench_floor ADD CHECK (state IN ('r', 'u', 'd', 'f', 'c'));
CREATE INDEX ON bench_floor (queue_id, priority DESC, pos) WHERE state = 'r' AND pos IS NOT NULL;
CREATE INDEX ON bench_floor (queue_id, run_at) WHERE state = 'r' AND pos IS NULL;
CREATE INDEX ON bench_floor (queue_id, lease_expires_at)
    WHERE state = 'u' AND lease_expires_at IS NOT NULL;
CREATE INDEX ON bench_floor (owner_session) WHERE state = 'u' AND owner_session IS NOT NULL;
CREATE INDEX ON bench_floor (queue_id, concurrency_key)
    WHERE state = 'u' AND concurrency_key IS NOT NULL;
CREATE INDEX ON bench_floor
    (queue_id, priority DESC, (pg_catalog.hashtextextended(concurrency_key, 0)), pos)
    WHERE state = 'r' AND pos IS NOT NULL AND concurrency_key IS NOT NULL;
CREATE UNIQUE INDEX ON bench_floor (queue_id, dedup_key)
    WHERE dedup_key IS NOT NULL AND state IN ('r', 'u');
CREATE INDEX ON bench_floor (queue_id, state, finished_at) WHERE state IN ('f', 'c');

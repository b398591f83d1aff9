-- An experiment's table, not a workload: bench_floor (bench/sql/schema.sql)
-- with only the indexes a HOT design could keep, so the floor scripts measure
-- row writes that leave every index as it is. A transition sets state, the
-- lease, the worker and the times; with no index naming them (no partial
-- index either: a predicate's columns count too), an update whose new version
-- fits in its page is HOT. Left: the primary key and the lane's order,
-- (queue_id, priority, pos) over every job. fillfactor 50 leaves the room.
--   SETUP_SQL="$(cat bench/sql/setup_hot_floor.sql)" bash bench/instructions.sh floor_drain floor_batch
-- (src/engine/README.md, "The hot path": a table whose transitions are HOT.)
DO $$
DECLARE
    idx regclass;
BEGIN
    FOR idx IN SELECT indexrelid::regclass FROM pg_index
               WHERE indrelid = 'bench_floor'::regclass AND NOT indisprimary LOOP
        EXECUTE format('DROP INDEX %s', idx);
    END LOOP;
END $$;
CREATE INDEX bench_floor_lane_idx ON bench_floor (queue_id, priority DESC, pos);
ALTER TABLE bench_floor SET (fillfactor = 50);

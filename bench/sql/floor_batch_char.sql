-- bench/sql/floor_batch.sql writing the one-byte state codes of setup_state_char_floor.sql
-- (u running, d done): an experiment's script, not a workload of run.sh.
-- Row-write floor of the batch of 100: 100 job rows' running versions (one
-- transaction), then their done versions (another), by primary key range;
-- no search, lock or API.
WITH b AS (SELECT nextval('bench_floor_batch') AS lo),
u AS (
    UPDATE bench_floor f SET state = 'u', attempt = attempt + 1, worker = 'w' || :client_id,
           owner_session = NULL, started_at = now(), lease_expires_at = now() + interval '30 seconds'
    FROM b WHERE f.id >= b.lo AND f.id < b.lo + 100
    RETURNING f.id)
SELECT coalesce(min(id), 0) AS lo, coalesce(max(id), 0) AS hi FROM u \gset
UPDATE bench_floor SET state = 'd', owner_session = NULL, finished_at = now(),
       lease_expires_at = NULL
WHERE id BETWEEN :lo AND :hi;

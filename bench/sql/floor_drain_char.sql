-- bench/sql/floor_drain.sql writing the one-byte state codes of setup_state_char_floor.sql
-- (u running, d done): an experiment's script, not a workload of run.sh.
-- Row-write floor of the drain: the job row's running version (one
-- transaction), then its done version (another), written by primary key with
-- the columns claimqueue's claim and completion set; no search, lock or API.
WITH u AS (
    UPDATE bench_floor SET state = 'u', attempt = attempt + 1, worker = 'w' || :client_id,
           owner_session = NULL, started_at = now(), lease_expires_at = now() + interval '30 seconds'
    WHERE id = (SELECT nextval('bench_floor_next'))
    RETURNING id)
SELECT coalesce(max(id), 0) AS id FROM u \gset
\if :id
UPDATE bench_floor SET state = 'd', owner_session = NULL, finished_at = now(),
       lease_expires_at = NULL
WHERE id = :id;
\endif

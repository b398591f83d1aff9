-- Row-write floor of the drain: the job row's running version (one
-- transaction), then its done version (another), written by primary key with
-- the columns claimqueue's claim and completion set; no search, lock or API.
WITH u AS (
    UPDATE bench_floor SET state = 'running', attempt = attempt + 1, worker = 'w' || :client_id,
           owner_session = NULL, started_at = now(), lease_expires_at = now() + interval '30 seconds'
    WHERE id = (SELECT nextval('bench_floor_next'))
    RETURNING id)
SELECT coalesce(max(id), 0) AS id FROM u \gset
\if :id
UPDATE bench_floor SET state = 'done', owner_session = NULL, finished_at = now(),
       lease_expires_at = NULL
WHERE id = :id;
\endif

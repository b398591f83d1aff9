-- Plain-SQL drain: claim one row with SKIP LOCKED (one transaction), mark it done (another).
WITH c AS (
    UPDATE bench_plain SET status = 'running', claimed_at = now(), worker = 'w' || :client_id
    WHERE id = (SELECT id FROM bench_plain WHERE status = 'ready'
                ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
    RETURNING id)
SELECT coalesce(max(id), 0) AS id FROM c \gset
\if :id
UPDATE bench_plain SET status = 'done', finished_at = now() WHERE id = :id;
\endif

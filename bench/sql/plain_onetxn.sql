-- Plain-SQL, one commit per job: claim and mark done in the same transaction.
BEGIN;
WITH c AS (
    UPDATE bench_plain SET status = 'running', claimed_at = now(), worker = 'w' || :client_id
    WHERE id = (SELECT id FROM bench_plain WHERE status = 'ready'
                ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
    RETURNING id)
SELECT coalesce(max(id), 0) AS id FROM c \gset
\if :id
UPDATE bench_plain SET status = 'done', finished_at = now() WHERE id = :id;
\endif
COMMIT;

-- Plain-SQL batch: claim up to 100 rows with SKIP LOCKED in one transaction,
-- then mark them done in one statement (one transaction).
WITH c AS (
    UPDATE bench_plain SET status = 'running', claimed_at = now(), worker = 'w' || :client_id
    WHERE id IN (SELECT id FROM bench_plain WHERE status = 'ready'
                 ORDER BY id LIMIT 100 FOR UPDATE SKIP LOCKED)
    RETURNING id)
SELECT coalesce(array_agg(id), '{}') AS ids FROM c \gset
UPDATE bench_plain SET status = 'done', finished_at = now() WHERE id = ANY (:ids::bigint[]);

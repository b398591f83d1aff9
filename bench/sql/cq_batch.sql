-- claimqueue batch: claim up to 100 jobs in one transaction, then complete each
-- of them, all the completes in one transaction.
SELECT coalesce(array_agg(id), '{}') AS ids, coalesce(array_agg(attempt), '{}') AS attempts
FROM dequeue('bench', 'w' || :client_id, batch => 100) \gset
SELECT count(complete(j.id, j.attempt))
FROM unnest(:ids::bigint[], :attempts::int[]) AS j(id, attempt);

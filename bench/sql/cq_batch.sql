-- claimqueue batch: claim up to 100 jobs in one transaction, then complete
-- them all in one statement (complete_batch(ids[], attempts[])), in a second one.
SELECT coalesce(array_agg(id), '{}') AS ids, coalesce(array_agg(attempt), '{}') AS attempts
FROM dequeue('bench', 'w' || :client_id, batch => 100) \gset
SELECT complete_batch(:ids::bigint[], :attempts::integer[]);

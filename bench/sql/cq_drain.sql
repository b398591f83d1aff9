-- claimqueue drain: claim one job (one transaction), complete it (another).
-- An empty claim gives id 0 and the loop does nothing (counted from the table).
SELECT coalesce(max(id), 0) AS id, coalesce(max(attempt), 0) AS attempt
FROM dequeue('bench', 'w' || :client_id) \gset
\if :id
SELECT complete(:id, :attempt);
\endif

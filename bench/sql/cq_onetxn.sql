-- claimqueue, one commit per job: claim and complete in the same transaction.
BEGIN;
SELECT coalesce(max(id), 0) AS id, coalesce(max(attempt), 0) AS attempt
FROM dequeue('bench', 'w' || :client_id) \gset
\if :id
SELECT complete(:id, :attempt);
\endif
COMMIT;

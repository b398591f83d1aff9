-- claimqueue, one commit per job with complete_and_dequeue(): one statement
-- per job in autocommit completes the job claimed by the previous loop and
-- claims the next. pgbench starts every client with -D id=0 -D attempt=0
-- (nothing to complete); an empty claim gives id 0 again.
SELECT coalesce(max(id), 0) AS id, coalesce(max(attempt), 0) AS attempt
FROM complete_and_dequeue(nullif(:id, 0), nullif(:attempt, 0), 'bench', 'w' || :client_id) \gset

-- PGMQ one commit per job: pop() reads and deletes a message in one call; no
-- record of it is kept (its nearest twin of complete_and_dequeue()).
SELECT count(*) FROM pgmq.pop('bench');

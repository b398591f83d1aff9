-- PGMQ batch of 100: read up to 100 messages (one transaction), archive them
-- in one call (another).
SELECT coalesce(array_agg(msg_id), '{}') AS ids FROM pgmq.read('bench', 30, 100) \gset
SELECT count(*) FROM pgmq.archive('bench', :ids::bigint[]);

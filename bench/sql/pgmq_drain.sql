-- PGMQ drain (when the server has the pgmq extension): read one message with
-- a 30-s visibility timeout (one transaction), archive it (another), so the
-- message is kept as claimqueue keeps a finished job.
SELECT coalesce(max(msg_id), 0) AS id FROM pgmq.read('bench', 30, 1) \gset
\if :id
SELECT pgmq.archive('bench', :id::bigint);
\endif

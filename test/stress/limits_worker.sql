-- One worker transaction of test/stress/limits.sh (pgbench -M extended
-- -D queue=...): claim a batch of 1 to 3 (committed: the jobs are running for
-- everyone), hold them a moment, then record their effects and complete them
-- in one transaction, the last job through complete_and_dequeue(), whose
-- claim is held and completed in turn. Nothing claimable: nothing to do.
\set b random(1, 3)
SELECT coalesce(array_agg(id ORDER BY id), '{}') AS ids,
       coalesce(array_agg(attempt ORDER BY id), '{}') AS atts,
       count(*) AS n
FROM dequeue(:queue, 'w' || :client_id, :b) \gset
\if :n
SELECT pg_sleep(0.002);
BEGIN;
INSERT INTO effects (job_id, attempt, worker)
SELECT i, a, 'w' || :client_id FROM unnest(:ids::bigint[], :atts::int[]) AS t(i, a);
SELECT complete_batch(i[1 : cardinality(i) - 1], a[1 : cardinality(a) - 1])
FROM (SELECT :ids::bigint[] AS i, :atts::int[] AS a) s WHERE cardinality(i) > 1;
SELECT coalesce(max(c.id), 0) AS next_id, coalesce(max(c.attempt), 0) AS next_att
FROM (SELECT :ids::bigint[] AS i, :atts::int[] AS a) s,
     complete_and_dequeue(s.i[cardinality(s.i)], s.a[cardinality(s.a)], :queue, 'w' || :client_id) c \gset
COMMIT;
\if :next_id
SELECT pg_sleep(0.002);
BEGIN;
INSERT INTO effects (job_id, attempt, worker) VALUES (:next_id, :next_att, 'w' || :client_id);
SELECT complete(:next_id, :next_att);
COMMIT;
\endif
\endif

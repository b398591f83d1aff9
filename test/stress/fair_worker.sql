-- One worker iteration of test/stress/fair.sh (pgbench -M prepared
-- -D queue=... -D run=...): claim one job in a transaction of its own, then
-- record its effect and complete it in one transaction. The claim commits
-- first, as a real worker's does, so the job is running for everyone in
-- between, where the sampler of the capped run counts it. The claiming
-- statement also draws the claim's number from the sequence claim_order,
-- once dequeue() has returned: the order of claims that fair.sh ranks.
-- Nothing claimable: id = 0 (the aggregate always returns one row, so \gset
-- never fails), no number is drawn, and the worker waits a millisecond
-- before its next claim rather than spin while a key is at its limit.
SELECT coalesce(max(d.id), 0) AS id, coalesce(max(d.attempt), 0) AS attempt,
       coalesce(max(nextval('claim_order')), 0) AS claim
FROM dequeue(:queue, 'w' || :client_id) d \gset
\if :id
BEGIN;
INSERT INTO effects (claim, run, job_id, attempt, worker)
VALUES (:claim, :run, :id, :attempt, 'w' || :client_id);
SELECT complete(:id, :attempt);
COMMIT;
\else
\sleep 1 ms
\endif
